//! Building a program of the course's workspace beside the one that needs it.
//!
//! The course is several programs: the learner's runner, the judge, the judge's Docker helper.
//! A program that needs another builds it on first need, into its own target directory and
//! profile (`cargo build -p PACKAGE --bin BIN`, a moment when nothing changed), so that what it
//! starts is never stale and the learner builds only what their way of grading needs. The
//! learner's test builds the judge this way ([`crate::launch`]), and the judge its Docker
//! helper.
//!
//! The first build takes minutes, so it says what it builds and about how long it takes, and
//! lets cargo print its progress: the build's stderr is this program's, which `cargo test`
//! leaves on the terminal (the learner's test has no harness to capture it, and no harness
//! captures a child's output anyway). Every later build, a moment when nothing changed, is
//! quiet, so that grading does not begin with cargo's "Finished" line each time.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A program of the workspace, as `cargo build` names it, and the profile to build it with.
#[derive(Debug, Clone, Copy)]
pub struct Program<'a> {
    /// Its package (`-p`).
    pub package: &'a str,
    /// Its binary (`--bin`).
    pub bin: &'a str,
    /// What it is, for the person waiting: "the judge", "the Docker helper".
    pub what: &'a str,
    /// The cargo profile it is built with (`--profile`): `judge` for the judge, which grades
    /// every save and is optimised, `dev` for the Docker helper, which only relays requests.
    pub profile: &'a str,
    /// How long its first build takes, as measured: "about 2 minutes on two cores".
    pub first_build: &'a str,
}

/// Builds `program` into the target directory of the running binary, with its own profile and
/// the workspace of `manifest` (any `Cargo.toml` in it), and returns the path of its binary. The
/// first build (no binary yet) says so on stderr and shows cargo's progress; a later one says so
/// only when it takes more than a moment. Says what to do when cargo cannot run or the build
/// fails.
pub fn build_beside(program: Program<'_>, manifest: &Path) -> Result<PathBuf, String> {
    let Program {
        package,
        bin,
        what,
        profile,
        first_build,
    } = program;
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find this program's own binary to build {what}: {e}"))?;
    let not_in_target = || {
        format!("this program is not in a cargo target directory: {what} cannot be built beside it")
    };
    // This program is target/<its profile>/deps/<test>-<hash> or target/<its profile>/<bin>;
    // the program goes to target/<the program's profile>/<bin>.
    let mut own_profile_dir = exe.parent().ok_or_else(not_in_target)?;
    if own_profile_dir
        .file_name()
        .is_some_and(|name| name == "deps")
    {
        own_profile_dir = own_profile_dir.parent().ok_or_else(not_in_target)?;
    }
    let target_dir = own_profile_dir.parent().ok_or_else(not_in_target)?;
    // Cargo's folder for a profile: `debug` for `dev` (and `test`), the profile's name otherwise.
    let profile_dir = target_dir.join(match profile {
        "dev" | "test" => "debug",
        other => other,
    });
    let binary = profile_dir.join(bin);
    let first = !binary.exists();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let command = format!("cargo build -p {package} --bin {bin}");
    if first {
        eprintln!(
            "grader: building {what}, once (`{command}`): {first_build}; cargo shows its \
             progress"
        );
    }
    let mut child = Command::new(&cargo)
        .arg("build")
        .args(if first { None } else { Some("--quiet") })
        .args(["-p", package, "--bin", bin, "--profile", profile])
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
    // A later build is a moment, unless the grader changed: then say so.
    let started = std::time::Instant::now();
    let mut told = first;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => return Err(format!("could not wait for cargo: {e}")),
        }
        if !told && started.elapsed() > Duration::from_secs(2) {
            eprintln!(
                "grader: rebuilding {what} (`{command}`): its sources or the toolchain \
                 changed since its last build"
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
    Ok(binary)
}
