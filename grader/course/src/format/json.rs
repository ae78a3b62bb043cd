//! The course's own JSON: everything the other formats hold, in one shape.
//!
//! ```json
//! {
//!   "version": 1,
//!   "status": "fail",
//!   "score": 6,
//!   "max_score": 113,
//!   "compile_error": null,
//!   "checks": [
//!     {
//!       "name": "token::unique",
//!       "exercise": "token",
//!       "status": "pass",
//!       "outcome": "passed",
//!       "points": 3,
//!       "max_points": 3,
//!       "message": "",
//!       "printed": "",
//!       "duration": 0.412
//!     }
//!   ]
//! }
//! ```
//!
//! - `status`: `pass` (every check passed), `fail` (some check did not), or
//!   `error` (no check could run: a compile error, no Redis).
//! - `score` and `max_score`: points earned and possible, from the course's
//!   points table (each check's, in its exercise's descriptor under `grader/src/exercise/`).
//! - `compile_error`: cargo's text when the exercises did not compile, else
//!   `null`; every check is then listed with status `error`.
//! - per check: `status` as above; `outcome` says more: `passed`, `failed` (a
//!   rule broke), `not_started` (a stub), `crashed` (the check's process
//!   exited, aborted or ran out of time or memory), `not_run` (the grader could
//!   not run it) or `did_not_compile`; `message` is the report a learner
//!   reads (empty for a pass); `printed` is what the check's process printed;
//!   `duration` the real seconds the check took (0 for one that did not run).
//!
//! `version` changes when a field changes meaning or goes away.

use serde_json::json;

use super::{Row, overall, pretty, seconds};
use crate::results::Results;

/// The course's JSON for `results`.
pub fn render(results: &Results, rows: &[Row]) -> String {
    let checks: Vec<serde_json::Value> = rows
        .iter()
        .map(|row| {
            json!({
                "name": row.name,
                "exercise": row.exercise,
                "status": row.status.as_str(),
                "outcome": row.outcome,
                "points": row.points,
                "max_points": row.max_points,
                "message": row.message,
                "printed": row.printed,
                "duration": seconds(row.duration),
            })
        })
        .collect();
    let compile_error = match results {
        Results::CompileError { output, .. } => json!(output),
        Results::Graded { .. } => json!(null),
    };
    pretty(&json!({
        "version": 1,
        "status": overall(results, rows).as_str(),
        "score": rows.iter().map(|r| r.points).sum::<u32>(),
        "max_score": rows.iter().map(|r| r.max_points).sum::<u32>(),
        "compile_error": compile_error,
        "checks": checks,
    }))
}
