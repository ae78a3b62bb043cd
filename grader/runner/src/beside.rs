//! Building a program of the course's workspace beside the one that needs it.
//!
//! The course is several programs: the learner's runner, the judge, the judge's Docker helper.
//! A program that needs another builds it on first need, into its own target directory and
//! profile (`cargo build -p PACKAGE --bin BIN`, a moment when nothing changed), so that what it
//! starts is never stale and the learner builds only what their way of grading needs. The
//! learner's test builds the judge this way ([`crate::launch`]), and the judge its Docker
//! helper.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A program of the workspace, as `cargo build` names it.
#[derive(Debug, Clone, Copy)]
pub struct Program<'a> {
    /// Its package (`-p`).
    pub package: &'a str,
    /// Its binary (`--bin`).
    pub bin: &'a str,
    /// What it is, for the person waiting: "the judge", "the Docker helper".
    pub what: &'a str,
}

/// Builds `program` into the target directory and profile of the running binary, with the
/// workspace of `manifest` (any `Cargo.toml` in it), and returns the path of its binary. Says so
/// on stderr when the build takes more than a moment; says what to do when cargo cannot run or
/// the build fails.
pub fn build_beside(program: Program<'_>, manifest: &Path) -> Result<PathBuf, String> {
    let Program { package, bin, what } = program;
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find this program's own binary to build {what}: {e}"))?;
    let not_in_target = || {
        format!("this program is not in a cargo target directory: {what} cannot be built beside it")
    };
    // target/<profile>/deps/<test>-<hash> or target/<profile>/<bin>: the program goes to
    // target/<profile>/<bin>.
    let mut profile_dir = exe.parent().ok_or_else(not_in_target)?;
    if profile_dir.file_name().is_some_and(|name| name == "deps") {
        profile_dir = profile_dir.parent().ok_or_else(not_in_target)?;
    }
    let target_dir = profile_dir.parent().ok_or_else(not_in_target)?;
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => "dev",
        Some(other) => other,
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let command = format!("cargo build -p {package} --bin {bin}");
    let mut child = Command::new(&cargo)
        .args([
            "build",
            "--quiet",
            "-p",
            package,
            "--bin",
            bin,
            "--profile",
            profile,
        ])
        .arg("--manifest-path")
        .arg(manifest)
        .env("CARGO_TARGET_DIR", target_dir)
        .spawn()
        .map_err(|e| {
            format!(
                "could not run cargo ({}) to build {what}: {e}. Install Rust with cargo \
                 (https://rustup.rs), or set CARGO to the cargo to use",
                Path::new(&cargo).display()
            )
        })?;
    // A first build takes minutes: say so, but only when it is not a quick no-op.
    let started = std::time::Instant::now();
    let mut told = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => return Err(format!("could not wait for cargo: {e}")),
        }
        if !told && started.elapsed() > Duration::from_secs(2) {
            eprintln!(
                "grader: building {what} (`{command}`): a few minutes the first time, a \
                 moment after that"
            );
            told = true;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if !status.success() {
        return Err(format!(
            "{what} did not build (cargo said why, above): `{command}` shows it again"
        ));
    }
    Ok(profile_dir.join(bin))
}
