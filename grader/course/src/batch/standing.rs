//! Where each student stands, as data both outputs read: their rows (one per
//! selected check), how far they got, and the rule a failed check names.
//! [`super::report`] writes them as CSV, [`super::summary`] as the class at a
//! glance.

use super::Graded;
use crate::format::{Row, Status, rows};
use crate::grade::selected;
use crate::results::Results;
use grader::harness::Outcome;

/// A student's rows: the graded checks, or every selected check as not graded.
pub fn student_rows(graded: &Graded, filters: &[String]) -> Vec<Row> {
    match &graded.results {
        Ok(results) => rows(results),
        Err(why) => selected(filters)
            .into_iter()
            .map(|name| Row {
                exercise: grader::exercise::of_check(&name).to_string(),
                max_points: grader::exercise::points::of(&name),
                name,
                status: Status::Error,
                outcome: "not_graded",
                points: 0,
                message: why.clone(),
                printed: String::new(),
                duration: std::time::Duration::ZERO,
            })
            .collect(),
    }
}

/// How far a student got, as the summary sorts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Some check ran on the student's own code.
    Working,
    /// Every check stopped at a stub: nothing of the student's was graded.
    NothingSubmitted,
    /// The exercises did not compile.
    DidNotCompile,
    /// The grader could not grade the submission (it says why).
    NotGraded,
}

/// Where `graded` stands.
pub fn standing(graded: &Graded) -> Standing {
    match &graded.results {
        Err(_) => Standing::NotGraded,
        Ok(Results::CompileError { .. }) => Standing::DidNotCompile,
        Ok(Results::Graded { checks }) => {
            let stub = |o: &Outcome| matches!(o, Outcome::NotStarted { .. });
            if !checks.is_empty() && checks.iter().all(|c| stub(&c.outcome)) {
                Standing::NothingSubmitted
            } else {
                Standing::Working
            }
        }
    }
}

/// The rule a failed check's report names, if it names one.
pub fn broken_rule(message: &str) -> Option<String> {
    message.lines().find_map(|line| {
        line.trim()
            .strip_prefix("Broken rule:")
            .map(|rule| rule.trim().trim_end_matches('.').to_string())
    })
}
