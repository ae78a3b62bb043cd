//! `cargo course doctor` names the Redis a run would use and why, says what to
//! install for each missing piece, and fails when grading cannot run. Each
//! test runs the `course` binary with an environment of its own: a fake
//! `redis-server` that only answers `--version`, and empty tool folders.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A folder with a `redis-server` that reports `version`, and nothing else.
fn fake_redis(name: &str, version: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("course-doctor-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("creates the folder");
    let path = dir.join("redis-server");
    let script = format!("#!/bin/sh\necho \"Redis server v={version} sha=00000000:0 bits=64\"\n");
    fs::write(&path, script).expect("writes the fake");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("makes it executable");
    dir
}

/// Runs `cargo course doctor` with `GRADER_REDIS=process`, `PATH` = `dir`.
fn doctor(dir: &Path) -> (Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_course"))
        .arg("doctor")
        .env_remove("REDIS_URL")
        .env_remove("REDIS_SERVER")
        .env("GRADER_REDIS", "process")
        .env("PATH", dir)
        .env("HOME", dir)
        .env("CARGO_HOME", dir)
        .output()
        .expect("the course binary runs");
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    let _ = fs::remove_dir_all(dir);
    (output.status.code(), text)
}

#[test]
fn a_recent_redis_server_is_the_source_and_grading_can_run() {
    let (code, text) = doctor(&fake_redis("recent", "7.2.4"));
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("version 7.2.4"), "{text}");
    assert!(text.contains("grading uses redis-server"), "{text}");
    assert!(text.contains("because GRADER_REDIS=process"), "{text}");
    // The book's tools are not in the empty folders: each says how to get it.
    assert!(text.contains("mdbook-quiz"), "{text}");
    assert!(text.contains("book/serve install"), "{text}");
}

#[test]
fn an_old_redis_server_cannot_grade_and_says_what_to_install() {
    let (code, text) = doctor(&fake_redis("old", "6.2.14"));
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("needs 7.0 or newer"), "{text}");
    assert!(text.contains("grading cannot run"), "{text}");
}

#[test]
fn no_redis_server_cannot_grade_and_names_the_install_commands() {
    let dir = std::env::temp_dir().join(format!("course-doctor-{}-none", std::process::id()));
    fs::create_dir_all(&dir).expect("creates the folder");
    let (code, text) = doctor(&dir);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("apt-get install redis-server"), "{text}");
    assert!(text.contains("brew install redis"), "{text}");
}
