//! What can stop `cargo course` itself, as opposed to a check failing: cargo
//! that cannot be run, a test binary that gives no results, a file that cannot
//! be written. Each message says what to do.

use std::path::PathBuf;

/// A problem of the course's command, not of the learner's lock.
#[derive(Debug, thiserror::Error)]
pub enum CourseError {
    /// Cargo itself could not be started.
    #[error("could not run `{cargo}`: {source} (is the Rust toolchain installed and on PATH?)")]
    Cargo {
        /// The cargo that was run.
        cargo: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// Cargo built the learner's crate but named no runner binary for it.
    #[error(
        "cargo built the exercises but named no `runner` binary; are exercises/runner/main.rs \
         and exercises/Cargo.toml as the course has them? (`git checkout exercises/runner \
         exercises/Cargo.toml` puts them back)\n{output}"
    )]
    NoTestBinary {
        /// What cargo printed.
        output: String,
    },
    /// The test binary ran but its harness gave no trustworthy results.
    #[error("the grader's harness gave no results: {problem}\n{output}")]
    NoResults {
        /// Why the results were not accepted.
        problem: String,
        /// What the test binary printed.
        output: String,
    },
    /// The run overran its time limit and was stopped.
    #[error(
        "grading took longer than {secs} s and was stopped (something in the exercises does \
         not end; a check's own limit is GRADER_CHECK_TIME_LIMIT)"
    )]
    TimedOut {
        /// The limit, in seconds.
        secs: u64,
    },
    /// A file or folder could not be read or written.
    #[error("{what} {}: {source}", path.display())]
    File {
        /// What was being done, e.g. "could not write".
        what: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// Something the command needs is missing or wrong; the message says what to do.
    #[error("{0}")]
    Usage(String),
    /// The operating system refused something the command needs.
    #[error("{what}: {source}")]
    System {
        /// What was being done.
        what: &'static str,
        /// The operating system's error.
        source: std::io::Error,
    },
}
