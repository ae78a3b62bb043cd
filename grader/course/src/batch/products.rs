//! What a submission's build leaves in its worker's target directory, and its
//! removal before the next submission is built there.
//!
//! Each worker builds its submissions one after the other in one target
//! directory, so that the runner's dependencies are compiled once. The build
//! of a submission may write nothing there but what rustc makes of it, yet it
//! may read anything there, at compile time (`include_bytes!`): the previous
//! submission's compiled crate, its runner and its test binary, a classmate's
//! whole lock in a program that a runner could start in its own place. So
//! before a build, everything built from the `exercises` package (its library,
//! the `runner`, the `grade` test, their object files, incremental caches and
//! fingerprints) goes; the dependencies, which are the course's, stay.

use std::fs;
use std::io;
use std::path::Path;

/// The targets of the `exercises` package, as their files are named in
/// `deps/`, `incremental/` and `.fingerprint/` (`NAME-HASH…`, `libNAME-HASH…`).
const TARGETS: &[&str] = &["exercises", "runner", "grade"];

/// The folders of a profile's output where a target's files are kept.
const KEPT_IN: &[&str] = &["deps", "incremental", ".fingerprint"];

/// Removes from `target` (a cargo target directory) every file and folder
/// built from the `exercises` package, in every profile.
pub fn remove(target: &Path) -> io::Result<()> {
    let Ok(profiles) = fs::read_dir(target) else {
        // Nothing built yet.
        return Ok(());
    };
    for profile in profiles.flatten() {
        if !profile.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let profile = profile.path();
        for name in TARGETS {
            for file in [name.to_string(), format!("{name}.d")] {
                remove_any(&profile.join(file))?;
            }
        }
        for folder in KEPT_IN {
            let Ok(entries) = fs::read_dir(profile.join(folder)) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                let name = name.strip_prefix("lib").unwrap_or(&name);
                if TARGETS.iter().any(|t| {
                    name.strip_prefix(t)
                        .is_some_and(|rest| rest.starts_with('-'))
                }) {
                    remove_any(&entry.path())?;
                }
            }
        }
    }
    Ok(())
}

/// Removes a file, a link or a folder with all it holds; nothing there is no error.
fn remove_any(path: &Path) -> io::Result<()> {
    let removed = match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) => Err(e),
    };
    match removed {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_was_built_from_the_exercises_package_goes() {
        let target = std::env::temp_dir().join(format!("products-test-{}", std::process::id()));
        let debug = target.join("debug");
        let made = [
            "debug/runner",
            "debug/runner.d",
            "debug/deps/libexercises-0a1b.rlib",
            "debug/deps/exercises-0a1b.x.rcgu.o",
            "debug/deps/runner-77aa",
            "debug/deps/grade-12ef",
            "debug/incremental/exercises-3c4d/s-1/query-cache.bin",
            "debug/.fingerprint/runner-77aa/bin-runner",
        ];
        let kept = [
            "debug/deps/libredis-9f9f.rlib",
            "debug/deps/liblock_runner-1234.rlib",
            "debug/deps/runnerish.txt",
            "debug/.fingerprint/redis-9f9f/lib-redis",
            "debug/incremental/lock_runner-5e5e/s-1/dep-graph.bin",
        ];
        for file in made.iter().chain(&kept) {
            let path = target.join(file);
            fs::create_dir_all(path.parent().expect("a parent")).expect("creates a folder");
            fs::write(&path, b"x").expect("writes a file");
        }
        remove(&target).expect("removes");
        for file in made {
            assert!(!target.join(file).exists(), "{file} is still there");
        }
        for file in kept {
            assert!(target.join(file).exists(), "{file} was removed");
        }
        assert!(debug.join("deps").is_dir());
        let _ = fs::remove_dir_all(&target);
    }
}
