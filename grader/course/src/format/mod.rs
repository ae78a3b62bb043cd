//! Results for machines: the same grading in the shapes that CI systems,
//! GitHub Classroom and Exercism read.
//!
//! Every format is written from the same [`Row`]s: one per selected check,
//! with its status, its points from [`grader::exercise::points`], and the message a
//! person reads. A check counts as passed only when its outcome is
//! [`Outcome::Passed`]; when the exercises did not compile, every check is
//! there, as an error worth 0, so no format can show a pass for a check that
//! did not run.

pub mod exercism;
pub mod github;
pub mod json;
pub mod junit;
pub mod places;

pub use places::Places;

use super::Format;
use crate::results::{Results, message};
use grader::exercise::of_check as exercise_of;
use grader::exercise::points;
use grader::harness::Outcome;

/// How one check ended, in the three words every format knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The check ran and every rule held.
    Pass,
    /// The check ran and the learner's code did not pass it (a broken rule,
    /// a stub, a crash of the learner's code).
    Fail,
    /// The check could not run (no Redis; the exercises did not compile).
    Error,
}

impl Status {
    /// `pass`, `fail` or `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Error => "error",
        }
    }
}

/// One check, ready to be written in any format.
#[derive(Clone, Debug)]
pub struct Row {
    /// `exercise::check`.
    pub name: String,
    /// The exercise, e.g. `acquire`.
    pub exercise: String,
    /// How it ended.
    pub status: Status,
    /// The outcome's kind, as the harness names it (`passed`, `failed`,
    /// `not_started`, `not_run`, `crashed`), or `did_not_compile`.
    pub outcome: &'static str,
    /// Points earned: the check's points when it passed, else 0.
    pub points: u32,
    /// Points the check is worth.
    pub max_points: u32,
    /// What a person reads: the report, or why it did not run; empty for a pass.
    pub message: String,
    /// What the check's process printed.
    pub printed: String,
    /// The real time the check took (zero for one that did not run).
    pub duration: std::time::Duration,
}

/// The rows of `results`, in the course's order.
pub fn rows(results: &Results) -> Vec<Row> {
    match results {
        Results::Graded { checks } => checks
            .iter()
            .map(|c| {
                let max_points = points::of(&c.name);
                let (status, outcome) = match &c.outcome {
                    Outcome::Passed => (Status::Pass, "passed"),
                    Outcome::NotStarted { .. } => (Status::Fail, "not_started"),
                    Outcome::Failed { .. } => (Status::Fail, "failed"),
                    Outcome::Crashed { .. } => (Status::Fail, "crashed"),
                    Outcome::NotRun { .. } => (Status::Error, "not_run"),
                };
                Row {
                    name: c.name.clone(),
                    exercise: exercise_of(&c.name).to_string(),
                    status,
                    outcome,
                    points: if status == Status::Pass {
                        max_points
                    } else {
                        0
                    },
                    max_points,
                    message: message(&c.name, &c.outcome),
                    printed: c.printed.clone(),
                    duration: std::time::Duration::from_millis(c.duration_ms),
                }
            })
            .collect(),
        Results::CompileError { not_run, .. } => not_run
            .iter()
            .map(|name| Row {
                name: name.clone(),
                exercise: exercise_of(name).to_string(),
                status: Status::Error,
                outcome: "did_not_compile",
                points: 0,
                max_points: points::of(name),
                message: "not run: the exercises did not compile (cargo's message is in the \
                          results)"
                    .to_string(),
                printed: String::new(),
                duration: std::time::Duration::ZERO,
            })
            .collect(),
    }
}

/// The run's status: `pass` when every check passed, `error` when none could
/// run, `fail` otherwise.
pub fn overall(results: &Results, rows: &[Row]) -> Status {
    if matches!(results, Results::CompileError { .. })
        || rows.is_empty()
        || rows.iter().all(|r| r.status == Status::Error)
    {
        Status::Error
    } else if rows.iter().all(|r| r.status == Status::Pass) {
        Status::Pass
    } else {
        Status::Fail
    }
}

/// A file's usual name and its text.
pub struct Rendered {
    /// The file name the format is usually read under, e.g. `results.json`.
    pub file_name: &'static str,
    /// The file's content.
    pub text: String,
}

/// `results` in `format`; `places` says where in the learner's files each
/// check points, for the formats that name a line.
pub fn render(format: Format, results: &Results, places: &Places) -> Rendered {
    let rows = rows(results);
    match format {
        Format::Github => Rendered {
            file_name: "autograding.json",
            text: github::render(results, &rows, places),
        },
        Format::Exercism => Rendered {
            file_name: "results.json",
            text: exercism::render(results, &rows),
        },
        Format::Junit => Rendered {
            file_name: "junit.xml",
            text: junit::render(results, &rows),
        },
        Format::Json => Rendered {
            file_name: "course-results.json",
            text: json::render(results, &rows),
        },
    }
}

/// A duration in seconds, to the millisecond, as JSON and JUnit write it.
fn seconds(duration: std::time::Duration) -> f64 {
    duration.as_millis() as f64 / 1000.0
}

/// A JSON value as pretty text with a final newline.
fn pretty(value: &serde_json::Value) -> String {
    // A Value always serialises; the fallback is never reached.
    serde_json::to_string_pretty(value).unwrap_or_else(|_| "{}".to_string()) + "\n"
}
