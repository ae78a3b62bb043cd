//! What a grading came to, as data: every selected check's outcome, or the
//! compile error that stopped them all. [`crate::grade::run`] makes it; the
//! learner's screen, the formats for machines and the batch read it.

use serde::{Deserialize, Serialize};

use grader::harness::Outcome;

/// What a grading came to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Results {
    /// The exercises compiled, and every selected check has its outcome.
    Graded {
        /// One entry per selected check, in the course's order.
        checks: Vec<CheckResult>,
    },
    /// The exercises did not compile: no check ran.
    CompileError {
        /// What cargo said, as it says it.
        output: String,
        /// The checks that would have run, none of which did.
        not_run: Vec<String>,
    },
}

/// One check's result.
pub type CheckResult = grader::harness::results::CheckResult;

impl Results {
    /// The checks' results; none when the exercises did not compile.
    pub fn checks(&self) -> &[CheckResult] {
        match self {
            Results::Graded { checks } => checks,
            Results::CompileError { .. } => &[],
        }
    }

    /// Whether every check passed (and at least one ran).
    pub fn all_passed(&self) -> bool {
        let checks = self.checks();
        !checks.is_empty() && checks.iter().all(|c| c.outcome.passed())
    }
}

/// The text a person reads for one outcome: empty for a pass.
pub fn message(name: &str, outcome: &Outcome) -> String {
    match outcome {
        Outcome::Passed => String::new(),
        Outcome::NotStarted { message } => message.clone(),
        Outcome::Failed { report } => report.clone(),
        Outcome::NotRun { reason } => reason.clone(),
        Outcome::Crashed { cause } => format!(
            "{name}: {cause}. Re-run: cargo test -p exercises {}::",
            grader::exercise::of_check(name)
        ),
    }
}
