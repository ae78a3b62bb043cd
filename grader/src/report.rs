//! What a learner reads when a check fails.
//!
//! A failed check answers four questions, in this order: which rule broke,
//! what exactly happened and when, what it looked like (the timeline with the
//! moment marked, or the commands the lock sent with the grader's move in
//! between), and what to do next (the first of the rule's hints, the chapter,
//! the command to re-run).

use std::fmt;

use crate::call::{Failure, Step};
use crate::confine::{Refused, Watched};
use crate::error::GradeError;
use crate::verdict::{HINT_LEVELS, Property, Violation};

/// How a check ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every rule held.
    Pass,
    /// A function the check needs still holds its `todo!()`.
    NotStarted {
        /// The function, e.g. `acquire`.
        function: &'static str,
        /// The stub's message.
        message: String,
    },
    /// A rule broke, or the lock's code failed.
    Fail(Box<Report>),
}

impl Verdict {
    /// The verdict of `check` on the lock called `lock`, from what its run
    /// gave: a command the grader refused fails the check whatever the check
    /// itself concluded, and a storage row that holds no whole number
    /// ([`GradeError::RowNotANumber`]) breaks a rule, whichever check read it.
    /// Any other error stays an error.
    pub fn of_watched(
        check: &str,
        lock: &str,
        watched: Watched<Result<Verdict, GradeError>>,
    ) -> Result<Verdict, GradeError> {
        let verdict = match watched.outcome {
            Err(GradeError::RowNotANumber { field, held }) => {
                Verdict::Fail(Box::new(Report::broken(
                    check,
                    lock,
                    crate::judge::storage::row_not_a_number(field, &held),
                    Vec::new(),
                )))
            }
            outcome => outcome?,
        };
        Ok(match watched.refused {
            None => verdict,
            Some(refused) => Verdict::Fail(Box::new(Report::of_refused(check, lock, &refused))),
        })
    }
}

/// Why a check failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// A rule of a safe lock was broken.
    Broken(Violation),
    /// A function of the lock failed to return a value.
    Failed {
        /// The function, e.g. `release`.
        function: &'static str,
        /// How.
        failure: Failure,
    },
    /// The grader did not send a command of the lock's: it reaches beyond the
    /// check's namespace ([`crate::confine`]).
    Refused {
        /// The command, e.g. `FLUSHALL` or `SCRIPT FLUSH`.
        command: String,
        /// Why it was not sent.
        why: String,
    },
}

/// A failed check, ready to print.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The check, e.g. `release::never_deletes_a_lock_that_changed_hands`.
    pub check: String,
    /// The lock's name, e.g. `your lock`.
    pub lock: String,
    /// What went wrong.
    pub problem: Problem,
    /// What it looked like: a timeline or a command trace, already rendered.
    pub evidence: Vec<String>,
}

impl Report {
    /// A report for a broken rule.
    pub fn broken(check: &str, lock: &str, violation: Violation, evidence: Vec<String>) -> Report {
        Report {
            check: check.into(),
            lock: lock.into(),
            problem: Problem::Broken(violation),
            evidence,
        }
    }

    /// A report for a function that failed.
    pub fn failed(
        check: &str,
        lock: &str,
        function: &'static str,
        failure: Failure,
        evidence: Vec<String>,
    ) -> Report {
        Report {
            check: check.into(),
            lock: lock.into(),
            problem: Problem::Failed { function, failure },
            evidence,
        }
    }

    /// A report for a command the grader did not send.
    pub fn refused(
        check: &str,
        lock: &str,
        command: String,
        why: String,
        evidence: Vec<String>,
    ) -> Report {
        Report {
            check: check.into(),
            lock: lock.into(),
            problem: Problem::Refused { command, why },
            evidence,
        }
    }

    /// The report for a command the grader refused ([`crate::confine`]), with
    /// what the lock's code sent up to it.
    pub fn of_refused(check: &str, lock: &str, refused: &Refused) -> Report {
        let mut evidence = String::from("What your code sent, up to the refused command:\n");
        numbered(&mut evidence, &refused.record);
        Report::refused(
            check,
            lock,
            refused.refusal.command.replace('|', " "),
            refused.refusal.why.clone(),
            vec![evidence],
        )
    }

    /// The command the grader refused to send, if that is what failed the check.
    pub fn refused_command(&self) -> Option<&str> {
        match &self.problem {
            Problem::Refused { command, .. } => Some(command),
            _ => None,
        }
    }

    /// The property that broke, if a rule broke.
    pub fn property(&self) -> Option<Property> {
        match &self.problem {
            Problem::Broken(v) => Some(v.property),
            Problem::Failed { .. } | Problem::Refused { .. } => None,
        }
    }

    /// The exercise the check belongs to: `release` for `release::…`.
    fn exercise(&self) -> &str {
        self.check.split("::").next().unwrap_or(&self.check)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "✗ {} (lock: {})", self.check, self.lock)?;
        writeln!(f)?;
        match &self.problem {
            Problem::Broken(v) => {
                writeln!(f, "  Broken rule:   {}.", v.property.rule())?;
                writeln!(f, "  What happened: {v}.")?;
            }
            Problem::Failed { function, failure } => {
                let failure = theirs(&failure.to_string());
                writeln!(f, "  Your `{function}` {failure}.")?;
            }
            Problem::Refused { command, why } => {
                let (command, why) = (theirs(command), theirs(why));
                writeln!(
                    f,
                    "  Refused:       your code sent {command}, which the grader did not send on."
                )?;
                writeln!(f, "  Why:           {why}.")?;
            }
        }
        for block in &self.evidence {
            writeln!(f)?;
            for line in block.lines() {
                writeln!(f, "  {line}")?;
            }
        }
        writeln!(f)?;
        match &self.problem {
            Problem::Broken(v) => {
                // The first, gentlest hint only: `cargo course` gives the next ones
                // when asked, so a learner is never handed the answer unasked.
                let [nudge, ..] = v.property.hint_levels();
                writeln!(
                    f,
                    "  Hint 1 of {HINT_LEVELS}: {nudge} (h in `cargo course` shows the next)"
                )?;
                writeln!(f, "  Read: chapter {}", v.property.chapter())?;
            }
            Problem::Failed {
                failure: Failure::Error { .. },
                ..
            } => {
                writeln!(
                    f,
                    "  Hint: the error comes from Redis or from your code's `?`: check the command's arguments."
                )?;
            }
            Problem::Failed {
                failure: Failure::TimedOut { .. } | Failure::TooManyCommands,
                ..
            } => {
                writeln!(
                    f,
                    "  Hint: each function tries once and returns; waiting and retrying is the caller's job."
                )?;
            }
            Problem::Refused { .. } => {
                writeln!(
                    f,
                    "  Hint: a lock needs only commands on keys (any names: the grader keeps them in your check's own namespace), scripts and functions; nothing that acts on the whole server."
                )?;
            }
            Problem::Failed { .. } => {}
        }
        writeln!(f, "  Re-run: cargo test -p exercises {}::", self.exercise())
    }
}

/// Adds `steps` to `out` as numbered lines, the grader's moves in between;
/// returns how many commands there were.
pub fn numbered(out: &mut String, steps: &[Step]) -> usize {
    let mut n = 0;
    for step in steps {
        match step {
            Step::Sent { command, reply } => {
                n += 1;
                out.push_str(&format!("  {n}. {command} → {reply}\n"));
            }
            Step::Intervened(what) => out.push_str(&format!("  ⚡ {what}\n")),
        }
    }
    n
}

/// Text in which learner code had a say (a panic's message, an error's, a
/// command's name), written so that no line of it passes for one of the
/// report's own (a `Broken rule:` line, which summaries read): control
/// characters spelled out, and every line after the first behind a bar, as
/// a check's printed output is shown.
fn theirs(text: &str) -> String {
    crate::harness::spelled_out(text, &['\n', '\t']).replace('\n', "\n  │ ")
}

/// A call's record as numbered lines, with the grader's moves in between.
pub fn trace(who: &str, function: &str, steps: &[Step]) -> String {
    let mut out = format!("What {who}'s `{function}` sent, and what happened in between:\n");
    let n = numbered(&mut out, steps);
    if n == 0 {
        out.push_str("  (no commands)\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_names_the_rule_and_gives_only_the_first_hint() {
        for rule in Property::ALL {
            let report = Report::broken("x::y", "your lock", Violation::anytime(rule, "w"), vec![]);
            let text = report.to_string();
            let [nudge, idea, shape] = rule.hint_levels();
            assert!(
                text.contains(&format!("Broken rule:   {}.", rule.rule())),
                "{text}"
            );
            assert!(text.contains(&format!("Hint 1 of 3: {nudge} (")), "{text}");
            assert!(
                !text.contains(idea),
                "{rule:?}: the second hint is h's:\n{text}"
            );
            assert!(
                !text.contains(shape),
                "{rule:?}: the third hint is h's:\n{text}"
            );
        }
    }

    #[test]
    fn learner_text_cannot_write_a_line_of_the_report() {
        let forged = "boom\n  Broken rule:   forged.\r  Broken rule:   forged too.";
        let failure = Failure::Panicked {
            message: forged.to_owned(),
            location: Some("src/token.rs:3".to_owned()),
        };
        let report = Report::failed("token::unique", "your lock", "new_token", failure, vec![]);
        let refused = Report::refused(
            "x::y",
            "your lock",
            forged.to_owned(),
            forged.to_owned(),
            vec![],
        );
        for text in [report.to_string(), refused.to_string()] {
            assert!(
                !text
                    .lines()
                    .any(|l| l.trim_start().starts_with("Broken rule:")),
                "{text}"
            );
            assert!(text.contains("│   Broken rule:   forged."), "{text}");
        }
    }

    fn watched(
        outcome: Result<Verdict, GradeError>,
        refused: Option<Refused>,
    ) -> Watched<Result<Verdict, GradeError>> {
        Watched { outcome, refused }
    }

    #[test]
    fn a_refused_command_fails_a_check_that_passed_and_shows_what_led_to_it() {
        let refused = Refused {
            refusal: crate::confine::Refusal {
                command: "SCRIPT|FLUSH".into(),
                why: "it empties every check's script cache".into(),
            },
            record: vec![Step::Sent {
                command: "GET k".into(),
                reply: "(nil)".into(),
            }],
        };
        let verdict = Verdict::of_watched(
            "x::y",
            "your lock",
            watched(Ok(Verdict::Pass), Some(refused)),
        );
        let Ok(Verdict::Fail(report)) = verdict else {
            panic!("a refusal fails the check: {verdict:?}");
        };
        assert_eq!(report.refused_command(), Some("SCRIPT FLUSH"));
        assert!(report.to_string().contains("1. GET k → (nil)"), "{report}");
        let passed = Verdict::of_watched("x::y", "your lock", watched(Ok(Verdict::Pass), None));
        assert!(matches!(passed, Ok(Verdict::Pass)), "{passed:?}");
    }

    #[test]
    fn an_unreadable_row_breaks_the_rule_of_its_field_and_other_errors_stay_errors() {
        for (field, property) in [
            ("fence", Property::StorageRemembersHighest),
            ("value", Property::StorageKeepsValue),
        ] {
            let error = GradeError::RowNotANumber {
                field,
                held: "x".into(),
            };
            let verdict = Verdict::of_watched("x::y", "your lock", watched(Err(error), None));
            let Ok(Verdict::Fail(report)) = verdict else {
                panic!("an unreadable row fails the check: {verdict:?}");
            };
            assert_eq!(report.property(), Some(property));
        }
        let other = GradeError::Claim("no id".into());
        let verdict = Verdict::of_watched("x::y", "your lock", watched(Err(other), None));
        assert!(matches!(verdict, Err(GradeError::Claim(_))), "{verdict:?}");
    }
}
