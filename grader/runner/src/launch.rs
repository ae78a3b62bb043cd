//! `cargo test -p exercises`: the test hands over to the judge.
//!
//! Cargo runs the `grade` test binary, which holds none of your code: your
//! functions are in the runner (`exercises/runner/main.rs`), which cargo
//! builds beside it. The grader (the judge) is a program of its own, built
//! once from the course's `grader` crate and never relinked when you save an
//! exercise. So the test makes sure the judge is built (`cargo build -p
//! grader --bin judge`, in the same target directory and profile; a moment
//! when nothing changed) and then becomes the judge, with the runner's path to
//! start for each check. Everything you pass to `cargo test` after `--` goes
//! to the judge.

use std::path::{Path, PathBuf};
use std::process::Command;

#[cfg(unix)]
use crate::beside::{Program, build_beside};

/// The environment variable that tells the judge which runner to start.
pub const RUNNER_VAR: &str = "GRADER_RUNNER";

/// The judge's binary, in the `grader` crate.
const JUDGE_BIN: &str = "judge";

/// Builds the judge if needed and runs it in place of this process, with
/// the runner at `runner` (`env!("CARGO_BIN_EXE_runner")` in the learner's
/// test): the `main` of `exercises/tests/grade.rs`.
#[cfg(unix)]
pub fn launch(runner: &str) -> ! {
    match judge() {
        Ok(judge) => run_judge(&judge, Path::new(runner)),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(101)
        }
    }
}

/// Says that the judge needs a Unix, and which way to go on Windows.
#[cfg(not(unix))]
pub fn launch(_runner: &str) -> ! {
    eprintln!(
        "error: the grader's judge runs on Linux and macOS only. On Windows, grade your \
         exercises in WSL 2 (https://learn.microsoft.com/windows/wsl/): your crate itself \
         builds here, but its checks need the judge"
    );
    std::process::exit(101)
}

/// Builds the judge beside this binary and says where it is.
#[cfg(unix)]
fn judge() -> Result<PathBuf, String> {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(|dir| PathBuf::from(dir).join("Cargo.toml"))
        .ok_or(
            "CARGO_MANIFEST_DIR is not set: run the exercises' checks with \
             `cargo test -p exercises`, which sets it",
        )?;
    let judge = Program {
        package: "grader",
        bin: JUDGE_BIN,
        what: "the grader's judge",
        profile: "judge",
        // After the test's own build: 24 s at a load of 1 to 3, 43 s at 6 to 7.
        first_build: "under a minute on two cores",
    };
    build_beside(judge, &manifest)
}

#[cfg(unix)]
fn run_judge(judge: &Path, runner: &Path) -> ! {
    use std::os::unix::process::CommandExt;
    let error = Command::new(judge)
        .args(std::env::args_os().skip(1))
        .env(RUNNER_VAR, runner)
        .exec();
    eprintln!(
        "error: could not start the grader's judge {}: {error}",
        judge.display()
    );
    std::process::exit(101)
}
