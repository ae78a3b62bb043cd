//! The run as libtest prints it, from the verdicts received.
//!
//! A line per check (or a character with `-q`) in the checks' own order, then
//! the report of each failed check with what its process printed, indented
//! behind a bar, then libtest's summary line, whose counts come from verdicts:
//! `passed` counts passing verdicts, and every selected check without one is
//! `failed`. Cargo, CI scripts and editors read this shape.
//!
//! An exercise not started (every check stopped at a stub, see [`groups`])
//! is one line instead of a line and a report per check, and the run ends
//! with where to go next: the exercise to work on and its chapter.

use std::io::{self, Write};
use std::time::Duration;

use super::groups;
use super::supervise::Finished;
use crate::outcome::Outcome;

/// How the learner's output is set off from the harness's lines.
const BAR: &str = "  │ ";
/// Checks per line with `-q`, as libtest.
const QUIET_WIDTH: usize = 88;

/// Prints the run as it goes.
pub(super) struct Printer<'a> {
    /// One character per check.
    pub quiet: bool,
    /// Show what passing checks printed, too.
    pub show_output: bool,
    /// The lock's name, for reports the harness writes itself.
    pub lock: &'a str,
    /// The selected checks, in their order.
    selected: &'a [&'a str],
    /// How many results are in so far.
    printed: usize,
    /// The results of the exercise in progress, held until its last check
    /// is in: an exercise not started is then one line.
    pending: Vec<(&'a str, Outcome)>,
}

/// The counts of the summary line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts {
    /// Checks that sent a passing verdict and exited cleanly.
    pub passed: usize,
    /// Selected checks that did not.
    pub failed: usize,
    /// Checks the filters left out.
    pub filtered_out: usize,
}

impl<'a> Printer<'a> {
    /// A printer for a run of the `selected` checks.
    pub(super) fn new(
        lock: &'a str,
        quiet: bool,
        show_output: bool,
        selected: &'a [&'a str],
    ) -> Self {
        Printer {
            quiet,
            show_output,
            lock,
            selected,
            printed: 0,
            pending: Vec::new(),
        }
    }

    /// The opening lines.
    pub(super) fn start(&self, out: &mut impl Write) -> io::Result<()> {
        let total = self.selected.len();
        let s = if total == 1 { "" } else { "s" };
        writeln!(out)?;
        writeln!(out, "running {total} test{s}")
    }

    /// One check's result, which comes in the checks' order: its character
    /// at once with `-q`, else its line once its exercise's last check is in.
    pub(super) fn result(
        &mut self,
        out: &mut impl Write,
        name: &'a str,
        finished: &Finished,
    ) -> io::Result<()> {
        self.printed += 1;
        let total = self.selected.len();
        if self.quiet {
            let passed = finished.outcome.passed();
            write!(out, "{}", if passed { '.' } else { 'F' })?;
            if self.printed.is_multiple_of(QUIET_WIDTH) {
                write!(out, " {}/{total}", self.printed)?;
                writeln!(out)?;
            }
            return out.flush();
        }
        self.pending.push((name, finished.outcome.clone()));
        let exercise = crate::exercise::of_check(name);
        let last_of_exercise = self
            .selected
            .get(self.printed)
            .is_none_or(|next| crate::exercise::of_check(next) != exercise);
        if !last_of_exercise {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.pending);
        if groups::untouched(pending.iter().map(|(_, o)| o)) {
            writeln!(out, "{}", groups::untouched_line(exercise, pending.len()))?;
        } else {
            for (name, outcome) in &pending {
                let mark = if outcome.passed() { "ok" } else { "FAILED" };
                writeln!(out, "test {name} ... {mark}")?;
            }
        }
        out.flush()
    }

    /// The reports, the list of failures and the summary line.
    pub(super) fn finish(
        &self,
        out: &mut impl Write,
        results: &[(&str, Finished)],
        filtered_out: usize,
        took: Duration,
    ) -> io::Result<Counts> {
        if self.quiet && !self.printed.is_multiple_of(QUIET_WIDTH) {
            writeln!(out)?;
        }
        // The exercises not started are said in one line each, not check by check.
        let untouched: Vec<(&str, usize)> = groups::by_exercise(results, |(name, _)| name)
            .into_iter()
            .filter(|(_, checks)| groups::untouched(checks.iter().map(|(_, f)| &f.outcome)))
            .map(|(exercise, checks)| (exercise, checks.len()))
            .collect();
        let collapsed = |name: &str| {
            untouched
                .iter()
                .any(|(x, _)| *x == crate::exercise::of_check(name))
        };
        let (passes, failures): (Vec<_>, Vec<_>) =
            results.iter().partition(|(_, f)| f.outcome.passed());
        if self.show_output {
            let shown: Vec<_> = passes
                .iter()
                .filter(|(_, f)| !f.output.is_empty())
                .collect();
            if !shown.is_empty() {
                writeln!(out, "\nsuccesses:\n")?;
                for (name, finished) in &shown {
                    writeln!(out, "---- {name} ----")?;
                    write!(out, "{}", printed_block(finished))?;
                    writeln!(out)?;
                }
                writeln!(out, "\nsuccesses:")?;
                for (name, _) in &shown {
                    writeln!(out, "    {name}")?;
                }
            }
        }
        let reported: Vec<_> = failures
            .iter()
            .filter(|(name, _)| !collapsed(name))
            .collect();
        if !reported.is_empty() {
            writeln!(out, "\nfailures:\n")?;
            for (name, finished) in &reported {
                writeln!(out, "---- {name} ----")?;
                write!(out, "{}", self.body(name, &finished.outcome))?;
                if !finished.output.is_empty() {
                    writeln!(out)?;
                    write!(out, "{}", printed_block(finished))?;
                }
                writeln!(out)?;
            }
            writeln!(out, "\nfailures:")?;
            for (name, _) in &reported {
                writeln!(out, "    {name}")?;
            }
        }
        if self.quiet && !untouched.is_empty() {
            writeln!(out)?;
            for (exercise, checks) in &untouched {
                writeln!(out, "{}", groups::untouched_line(exercise, *checks))?;
            }
        }
        let outcomes: Vec<(&str, &Outcome)> = results
            .iter()
            .map(|(name, f)| (*name, &f.outcome))
            .collect();
        if let Some(step) = groups::next_step(&outcomes) {
            writeln!(out)?;
            writeln!(out, "{step}")?;
        }
        let counts = Counts {
            passed: passes.len(),
            failed: self.selected.len() - passes.len(),
            filtered_out,
        };
        writeln!(out)?;
        writeln!(out, "{}", summary_line(counts, took))?;
        writeln!(out)?;
        out.flush()?;
        Ok(counts)
    }

    /// What a failed check's report says.
    fn body(&self, name: &str, outcome: &Outcome) -> String {
        let text = match outcome {
            Outcome::Passed => String::new(),
            Outcome::NotStarted { message } => message.clone(),
            Outcome::Failed { report } => report.clone(),
            Outcome::NotRun { reason } => reason.clone(),
            Outcome::Crashed { cause } => {
                let exercise = name.split("::").next().unwrap_or(name);
                format!(
                    "✗ {name} (lock: {})\n\n  {}.\n\n  Re-run: cargo test -p exercises {exercise}::",
                    self.lock,
                    capitalised(&cause.to_string())
                )
            }
        };
        format!("{}\n", text.trim_end())
    }
}

/// libtest's summary line: `test result: ok. 34 passed; 0 failed; …`.
pub fn summary_line(counts: Counts, took: Duration) -> String {
    let result = if counts.failed == 0 { "ok" } else { "FAILED" };
    format!(
        "test result: {result}. {} passed; {} failed; 0 ignored; 0 measured; {} filtered out; \
         finished in {:.2}s",
        counts.passed,
        counts.failed,
        counts.filtered_out,
        took.as_secs_f64()
    )
}

/// What a check's process printed, set off behind the bar.
fn printed_block(finished: &Finished) -> String {
    format!(
        "  What the check's process printed (stdout and stderr):\n{}",
        finished.output.indented(BAR)
    )
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Output;

    fn finished(outcome: Outcome) -> Finished {
        Finished {
            outcome,
            output: Output::default(),
            took: Duration::ZERO,
        }
    }

    fn stub() -> Outcome {
        Outcome::NotStarted {
            message: "not started: `new_token` in exercises/src/token.rs still says todo!(…)"
                .into(),
        }
    }

    /// Prints a run of `results` and returns what it printed.
    fn printed(results: &[(&str, Finished)], quiet: bool) -> String {
        let names: Vec<&str> = results.iter().map(|(n, _)| *n).collect();
        let mut out = Vec::new();
        let mut printer = Printer::new("your lock", quiet, false, &names);
        printer.start(&mut out).expect("prints");
        for (name, f) in results {
            printer.result(&mut out, name, f).expect("prints");
        }
        printer
            .finish(&mut out, results, 0, Duration::ZERO)
            .expect("prints");
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn an_exercise_not_started_is_one_line_and_the_started_one_is_reported() {
        let results = [
            ("token::unique", finished(Outcome::Passed)),
            ("token::unguessable", finished(Outcome::Passed)),
            (
                "release::releases_its_own_lock",
                finished(Outcome::Failed {
                    report: "✗ release::releases_its_own_lock\n  Broken rule: x.".into(),
                }),
            ),
            ("release::slow_job", finished(stub())),
            ("fencing::a", finished(stub())),
            ("fencing::b", finished(stub())),
        ];
        let text = printed(&results, false);
        assert!(text.contains("test token::unique ... ok\n"), "{text}");
        assert!(
            text.contains("test release::releases_its_own_lock ... FAILED\n"),
            "{text}"
        );
        assert!(
            text.contains("test release::slow_job ... FAILED\n"),
            "a started exercise keeps every line:\n{text}"
        );
        assert!(
            text.contains("\nfencing: 2 checks, not started — fill in exercises/src/fencing.rs\n"),
            "{text}"
        );
        assert!(!text.contains("fencing::a"), "{text}");
        assert!(text.contains("---- release::slow_job ----"), "{text}");
        assert!(
            text.contains("\nNext: release, in exercises/src/release.rs: 0 of 2 checks pass."),
            "{text}"
        );
        assert!(
            text.contains("test result: FAILED. 2 passed; 4 failed;"),
            "{text}"
        );

        let quiet = printed(&results, true);
        assert!(quiet.contains("\n..FFFF\n"), "{quiet}");
        assert!(
            quiet.contains("\nfencing: 2 checks, not started — fill in exercises/src/fencing.rs\n"),
            "{quiet}"
        );
    }
}
