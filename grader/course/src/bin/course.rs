//! `cargo course`: the course's one command (a cargo alias in the
//! workspace's `.cargo/config.toml`). The work is in [`course`].
//!
//! The same binary is the judge of the checks it grades: it runs each of
//! them in a process of its own, this program started again
//! ([`grader::harness::judge`]), as `cargo test -p exercises` does with the
//! grader's `judge`.

use clap::Parser;

fn main() -> std::process::ExitCode {
    // Started as one of its own checks' processes, or by a runner: the judge.
    if grader::harness::is_judge() {
        grader::harness::judge();
    }
    course::main(course::Cli::parse())
}
