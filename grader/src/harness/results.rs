//! The run's results as data, for `cargo course`.
//!
//! libtest's lines are for people; a program that wants every check's
//! [`Outcome`] must not read them, because the code under test can print
//! lines of the same shape. So when `cargo course` runs the test binary it
//! sets [`RESULTS_FILE_VAR`] to a path and writes a random nonce on the
//! binary's standard input; the harness (the parent process, where no check
//! runs) reads that nonce before starting any check, and when every check has
//! ended writes one JSON file holding the nonce and every check's outcome.
//! The checks' processes get neither: the variable is taken out of their
//! environment and their standard input is the harness's own pipe. The reader
//! ([`ResultsFile::read`]) accepts the file only with its own nonce, so a file
//! left by an earlier run, or written by a check's process that outlived it,
//! is refused.

use std::fs;
use std::io::{self, BufRead, Read};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::supervise::Finished;
use crate::outcome::Outcome;

/// The environment variable that asks the harness for a results file, at that path.
pub const RESULTS_FILE_VAR: &str = "GRADER_RESULTS_FILE";

/// The most a nonce line on standard input may hold.
const NONCE_MAX: usize = 256;

/// What the harness writes when asked: the run's nonce and every selected
/// check's result, in the checks' order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultsFile {
    /// The nonce the reader handed the harness on its standard input.
    pub nonce: String,
    /// One entry per selected check.
    pub checks: Vec<CheckResult>,
}

/// One check's result in the file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckResult {
    /// The check, as `exercise::check`.
    pub name: String,
    /// How it ended.
    pub outcome: Outcome,
    /// What its process printed (stdout and stderr), control characters spelled out.
    pub printed: String,
    /// The real time its process took, in milliseconds (0 in a file from a
    /// version that did not record it).
    #[serde(default)]
    pub duration_ms: u64,
}

/// Where to write the results, and the nonce to write with them: `None`
/// unless [`RESULTS_FILE_VAR`] is set. Reads the nonce from standard input.
pub(super) fn requested() -> Result<Option<(String, String)>, String> {
    let Ok(path) = std::env::var(RESULTS_FILE_VAR) else {
        return Ok(None);
    };
    let mut line = String::new();
    let read = io::stdin()
        .lock()
        .take(NONCE_MAX as u64)
        .read_line(&mut line);
    let nonce = line.trim();
    if read.is_err() || nonce.is_empty() {
        return Err(format!(
            "{RESULTS_FILE_VAR} is set, but no nonce came on standard input: `cargo course` sets \
             both; unset {RESULTS_FILE_VAR} to run the tests by hand"
        ));
    }
    Ok(Some((path, nonce.to_string())))
}

/// Writes the results of `results` to `path`, with `nonce`.
pub(super) fn write(path: &str, nonce: &str, results: &[(&str, Finished)]) -> io::Result<()> {
    let file = ResultsFile {
        nonce: nonce.to_string(),
        checks: results
            .iter()
            .map(|(name, finished)| CheckResult {
                name: name.to_string(),
                outcome: finished.outcome.clone(),
                printed: if finished.output.is_empty() {
                    String::new()
                } else {
                    finished.output.indented("")
                },
                duration_ms: u64::try_from(finished.took.as_millis()).unwrap_or(u64::MAX),
            })
            .collect(),
    };
    let json = serde_json::to_vec_pretty(&file).map_err(io::Error::other)?;
    fs::write(path, json)
}

impl ResultsFile {
    /// Reads the file at `path` and accepts it only if it carries `nonce`.
    pub fn read(path: &Path, nonce: &str) -> Result<ResultsFile, String> {
        let bytes = fs::read(path).map_err(|e| {
            format!(
                "the harness wrote no results file at {}: {e}",
                path.display()
            )
        })?;
        let file: ResultsFile = serde_json::from_slice(&bytes)
            .map_err(|e| format!("the results file {} is not readable: {e}", path.display()))?;
        if file.nonce != nonce {
            return Err(format!(
                "the results file {} does not carry this run's nonce: it was not written by \
                 this run's harness",
                path.display()
            ));
        }
        Ok(file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_with_another_nonce_is_refused() {
        let dir = std::env::temp_dir().join(format!("grader-results-{}", std::process::id()));
        fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("results.json");
        let file = ResultsFile {
            nonce: "right".into(),
            checks: vec![CheckResult {
                name: "token::unique".into(),
                outcome: Outcome::Passed,
                printed: String::new(),
                duration_ms: 12,
            }],
        };
        fs::write(&path, serde_json::to_vec(&file).expect("serialises")).expect("writes");
        assert_eq!(ResultsFile::read(&path, "right"), Ok(file));
        assert!(ResultsFile::read(&path, "wrong").is_err());
        let _ = fs::remove_dir_all(&dir);
    }
}
