//! Exercism's `results.json`, version 3 (the test runner interface).
//!
//! Top level: `version` 3, `status` (`pass`, `fail`, `error`) and, for
//! `error` only, `message` (here: cargo's compile error). Each test has
//! `name`, `test_code`, `status`, `message` (for a failure), `output` (what
//! the check's process printed, at most 500 characters as the interface asks)
//! and `task_id`: the exercise's number in the course's table of exercises
//! (1 `token`, 2 `acquire`, …), and one more for the `scenarios` that play
//! the whole lock. Tests come in the course's
//! order. When nothing could run, `tests` is left out, as the interface says.

use serde_json::json;

use super::{Row, Status, overall, pretty};
use crate::results::Results;

/// The most a test's `output` may hold, in characters.
const OUTPUT_MAX: usize = 500;
/// The most the top-level `message` may hold, in characters.
const MESSAGE_MAX: usize = 65_535;

/// The task id of `exercise`: its number in the course's table of
/// exercises; the `scenarios`, which play the whole lock, come after the last.
pub fn task_id(exercise: &str) -> usize {
    grader::exercise::named(exercise).map_or(
        grader::exercise::EXERCISES.len() + 1,
        grader::exercise::Exercise::number,
    )
}

/// Exercism's results for `results`.
pub fn render(results: &Results, rows: &[Row]) -> String {
    let status = overall(results, rows);
    let mut value = json!({ "version": 3, "status": status.as_str() });
    if status == Status::Error {
        let message = match results {
            Results::CompileError { output, .. } => output.clone(),
            Results::Graded { .. } => rows.first().map_or_else(
                || "no check was selected".to_string(),
                |r| r.message.clone(),
            ),
        };
        value["message"] = json!(truncate(&message, MESSAGE_MAX));
        return pretty(&value);
    }
    let tests: Vec<serde_json::Value> = rows
        .iter()
        .map(|row| {
            let mut test = json!({
                "name": row.name,
                "test_code": format!("cargo test -p exercises -- --exact {}", row.name),
                "status": row.status.as_str(),
                "task_id": task_id(&row.exercise),
            });
            if row.status != Status::Pass {
                test["message"] = json!(row.message);
            }
            if !row.printed.is_empty() {
                test["output"] = json!(truncate(&row.printed, OUTPUT_MAX));
            }
            test
        })
        .collect();
    value["tests"] = json!(tests);
    pretty(&value)
}

/// At most `max` characters of `text`, the cut marked.
fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let marker = "\n[… cut]";
    let kept: String = text.chars().take(max - marker.chars().count()).collect();
    kept + marker
}
