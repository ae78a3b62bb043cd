//! The JSON that GitHub Classroom's grading reporter reads.
//!
//! The reporter (`classroom-resources/autograding-grading-reporter`) takes,
//! per runner, a base64-encoded JSON object from the environment variable
//! `<RUNNER>_RESULTS`: `version`, `status` (`pass`, `fail` or `error`),
//! `max_score`, and `tests`, each with `name`, `status`, `score` and
//! `message` (the grader actions add `test_code`, `filename`, `line_no` and
//! `duration`, the real time the test took, in seconds). Here `filename` and
//! `line_no` are the learner's file of the exercise a check tests and the line
//! its first function starts on ([`Places`]). The points Classroom records are
//! the sum of the tests' `score` out of the sum of `max_score`. The workflow in
//! `grader/classroom/` encodes this file and hands it to the reporter.

use serde_json::json;

use super::{Places, Row, overall, pretty, seconds};
use crate::results::Results;

/// The reporter's JSON for `results`.
pub fn render(results: &Results, rows: &[Row], places: &Places) -> String {
    let tests: Vec<serde_json::Value> = rows
        .iter()
        .map(|row| {
            let (filename, line_no) = places.of(&row.name);
            json!({
                "name": row.name,
                "status": row.status.as_str(),
                "score": row.points,
                "max_score": row.max_points,
                "message": row.message,
                "test_code": format!("cargo test -p exercises -- --exact {}", row.name),
                "filename": filename,
                "line_no": line_no,
                // Seconds, as the Classroom graders write it.
                "duration": seconds(row.duration),
            })
        })
        .collect();
    let mut value = json!({
        "version": 1,
        "status": overall(results, rows).as_str(),
        "max_score": rows.iter().map(|r| r.max_points).sum::<u32>(),
        "tests": tests,
    });
    if let Results::CompileError { output, .. } = results {
        value["message"] = json!(output);
    }
    pretty(&value)
}
