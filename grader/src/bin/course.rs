//! `cargo course`: the course's one command (a cargo alias in the
//! workspace's `.cargo/config.toml`). The work is in [`grader::course`].
//!
//! The same binary is the judge of `cargo test -p exercises`: the learner's
//! runner builds it and hands over to it ([`grader::harness::judge`]).

use clap::Parser;

fn main() -> std::process::ExitCode {
    // Started by the learner's runner (`cargo test -p exercises`), or as one
    // of its checks' processes: this binary is the judge.
    if grader::harness::is_judge() {
        grader::harness::judge();
    }
    grader::course::main(grader::course::Cli::parse())
}
