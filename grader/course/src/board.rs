//! What the learner's loop knows: every check's latest outcome, exercise by
//! exercise.
//!
//! The watch loop grades part of the course at a time (the exercise whose
//! file was saved, then the scenarios) and keeps each check's latest outcome
//! here. From it come the exercises' progress, the current exercise (the
//! first with a check that does not pass), the one report that matters most,
//! and which exercises a grading has just completed.

use grader::checks::CHECKS;
use grader::exercise::of_check as exercise_of;
use grader::harness::Outcome;
use grader::verdict::Property;

use super::results::CheckResult;

/// The exercise that `exercises/src/NAME.rs` holds, if it is one.
pub fn exercise_of_file(file_name: &str) -> Option<&'static str> {
    let stem = file_name.strip_suffix(".rs")?;
    grader::exercise::named(stem).map(|row| row.name)
}

/// One check and what it came to last (`None`: not graded yet).
#[derive(Clone, Debug)]
pub struct Entry {
    /// `exercise::check`.
    pub name: &'static str,
    /// The latest outcome.
    pub outcome: Option<Outcome>,
}

/// One exercise's checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tally {
    /// Checks that passed.
    pub passed: usize,
    /// All its checks.
    pub total: usize,
}

impl Tally {
    /// Whether every check passed.
    pub fn done(self) -> bool {
        self.total > 0 && self.passed == self.total
    }
}

/// Every check's latest outcome.
#[derive(Clone, Debug)]
pub struct Board {
    entries: Vec<Entry>,
}

impl Default for Board {
    fn default() -> Self {
        Board::new()
    }
}

impl Board {
    /// Every check of the catalogue, none graded yet.
    pub fn new() -> Board {
        Board {
            entries: CHECKS
                .iter()
                .map(|c| Entry {
                    name: c.name,
                    outcome: None,
                })
                .collect(),
        }
    }

    /// The exercises, in order.
    pub fn exercises(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        for entry in &self.entries {
            let exercise = exercise_of(entry.name);
            if out.last() != Some(&exercise) {
                out.push(exercise);
            }
        }
        out
    }

    /// The checks of `exercise`, in order.
    pub fn checks_of<'a>(&'a self, exercise: &'a str) -> impl Iterator<Item = &'a Entry> + 'a {
        self.entries
            .iter()
            .filter(move |e| exercise_of(e.name) == exercise)
    }

    /// How far `exercise` is.
    pub fn tally(&self, exercise: &str) -> Tally {
        let mut tally = Tally {
            passed: 0,
            total: 0,
        };
        for entry in self.checks_of(exercise) {
            tally.total += 1;
            if entry.outcome.as_ref().is_some_and(Outcome::passed) {
                tally.passed += 1;
            }
        }
        tally
    }

    /// Whether every check has been graded at least once.
    pub fn complete(&self) -> bool {
        self.entries.iter().all(|e| e.outcome.is_some())
    }

    /// The current exercise: the first with a check that does not pass
    /// (`None` when every check passes).
    pub fn current(&self) -> Option<&'static str> {
        self.exercises()
            .into_iter()
            .find(|exercise| !self.tally(exercise).done())
    }

    /// Records a grading's results, and returns the exercises it completed:
    /// those that had a check not passing before and pass every check now.
    pub fn record(&mut self, results: &[CheckResult]) -> Vec<&'static str> {
        let before: Vec<(&'static str, bool)> = self
            .exercises()
            .into_iter()
            .map(|x| (x, self.tally(x).done()))
            .collect();
        for result in results {
            if let Some(entry) = self.entries.iter_mut().find(|e| e.name == result.name) {
                entry.outcome = Some(result.outcome.clone());
            }
        }
        before
            .into_iter()
            .filter(|(x, was_done)| !was_done && self.tally(x).done())
            .map(|(x, _)| x)
            .collect()
    }

    /// The check of `exercise` whose report matters most: one the grader
    /// could not run (nothing else can be trusted then), else the first that
    /// failed or crashed, else the first not started.
    pub fn headline<'a>(&'a self, exercise: &'a str) -> Option<&'a Entry> {
        let first = |wanted: fn(&Outcome) -> bool| {
            self.checks_of(exercise)
                .find(|e| e.outcome.as_ref().is_some_and(wanted))
        };
        first(|o| matches!(o, Outcome::NotRun { .. }))
            .or_else(|| first(|o| matches!(o, Outcome::Failed { .. } | Outcome::Crashed { .. })))
            .or_else(|| first(|o| matches!(o, Outcome::NotStarted { .. })))
    }
}

/// The rule a failed check's report names, if a rule broke (the report's
/// "Broken rule:" line, as [`grader::report::Report`] writes it).
pub fn broken_rule(outcome: &Outcome) -> Option<Property> {
    let Outcome::Failed { report } = outcome else {
        return None;
    };
    let line = report
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("Broken rule:"))?;
    let rule = line.trim().trim_end_matches('.');
    Property::ALL.into_iter().find(|p| p.rule() == rule)
}

/// Every check of an exercise graded alike: how the loop's tests fill a board.
#[cfg(test)]
pub(crate) fn grade_all(board: &mut Board, exercise: &str, outcome: &Outcome) {
    let results: Vec<CheckResult> = board
        .checks_of(exercise)
        .map(|e| tests::result(e.name, outcome.clone()))
        .collect();
    board.record(&results);
}

#[cfg(test)]
mod tests {
    use super::*;
    use grader::report::Report;
    use grader::verdict::Violation;

    pub(super) fn result(name: &str, outcome: Outcome) -> CheckResult {
        CheckResult {
            name: name.to_string(),
            outcome,
            printed: String::new(),
            duration_ms: 0,
        }
    }

    fn all_of(board: &Board, exercise: &str, outcome: Outcome) -> Vec<CheckResult> {
        board
            .checks_of(exercise)
            .map(|e| result(e.name, outcome.clone()))
            .collect()
    }

    #[test]
    fn the_exercises_follow_the_books_chapters_and_end_with_the_scenarios() {
        let board = Board::new();
        assert_eq!(
            board.exercises(),
            [
                "token",
                "acquire",
                "release",
                "extend",
                "keeper",
                "fencing",
                "storage",
                "redlock",
                "scenarios"
            ]
        );
        for exercise in board.exercises() {
            assert!(board.tally(exercise).total > 0, "{exercise} has checks");
        }
        assert_eq!(exercise_of_file("release.rs"), Some("release"));
        assert_eq!(exercise_of_file("lib.rs"), None);
        assert_eq!(exercise_of_file("scenarios.rs"), None);
    }

    #[test]
    fn completing_an_exercise_moves_the_current_one_on() {
        let mut board = Board::new();
        assert_eq!(board.current(), Some("token"));
        let not_started = Outcome::NotStarted {
            message: "not started".into(),
        };
        assert!(
            board
                .record(&all_of(&board, "token", not_started))
                .is_empty()
        );
        let done = board.record(&all_of(&board, "token", Outcome::Passed));
        assert_eq!(done, ["token"]);
        assert_eq!(board.current(), Some("acquire"));
        assert!(
            board
                .record(&all_of(&board, "token", Outcome::Passed))
                .is_empty(),
            "an exercise is announced once, when it becomes complete"
        );
    }

    #[test]
    fn the_headline_is_a_failure_before_a_stub() {
        let mut board = Board::new();
        let names: Vec<&str> = board.checks_of("release").map(|e| e.name).collect();
        board.record(&[
            result(
                names[0],
                Outcome::NotStarted {
                    message: "stub".into(),
                },
            ),
            result(names[1], Outcome::Passed),
            result(
                names[2],
                Outcome::Failed {
                    report: "broke".into(),
                },
            ),
        ]);
        assert_eq!(board.headline("release").map(|e| e.name), Some(names[2]));
        assert_eq!(board.tally("release").passed, 1);
    }

    #[test]
    fn a_report_names_its_broken_rule() {
        let violation = Violation::at(Property::ReleaseSparesOthers, 3000, "A deleted B's lock");
        let report = Report::broken("release::slow_job", "your lock", violation, vec![]);
        let outcome = Outcome::Failed {
            report: report.to_string(),
        };
        assert_eq!(broken_rule(&outcome), Some(Property::ReleaseSparesOthers));
        for rule in Property::ALL {
            let report = Report::broken("x::y", "l", Violation::anytime(rule, "w"), vec![]);
            let outcome = Outcome::Failed {
                report: report.to_string(),
            };
            assert_eq!(broken_rule(&outcome), Some(rule), "{rule:?} reads back");
        }
        assert_eq!(broken_rule(&Outcome::Passed), None);
    }
}
