//! `cargo course`: the course's one command (a cargo alias in the
//! workspace's `.cargo/config.toml`). The work is in [`grader::course`].

use clap::Parser;

fn main() -> std::process::ExitCode {
    grader::course::main(grader::course::Cli::parse())
}
