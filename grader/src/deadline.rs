//! A child run until it ends or a deadline passes, then stopped together with
//! everything it started.
//!
//! The child is started in a process group of its own (`process_group(0)`),
//! so that one signal reaches it and whatever it started: cargo and rustc, a
//! check's process and the learner's runner, a daemon a build script left
//! behind. It is watched without being reaped, so that its pid, and the id
//! of the group it leads, cannot be handed to another process while the
//! group is signalled. When it ends, or when the deadline passes, the group
//! is killed: at the deadline that stops the child, after an end it stops
//! what the child left behind, which would otherwise hold its pipes open.
//! Both the harness (each check's process) and `cargo course` (cargo, the
//! judge) wait this way.

use std::io;
use std::process::{Child, ExitStatus};
use std::thread;
use std::time::{Duration, Instant};

use crate::sys;

/// Waits, without reaping it, until `child` (the leader of a process group of
/// its own) has ended or `limit` has passed, looking every `poll`; then kills
/// its group. Whether it ended before the limit. The group is killed on an
/// error too, so that the caller's reaping (`Child::wait`, after which the
/// group's id may be reused) cannot wait forever.
pub fn end_group(child: &Child, limit: Option<Duration>, poll: Duration) -> io::Result<bool> {
    let started = Instant::now();
    let ended = loop {
        match sys::has_ended(child.id()) {
            Ok(false) => {}
            other => break other,
        }
        if limit.is_some_and(|limit| started.elapsed() >= limit) {
            break Ok(false);
        }
        thread::sleep(poll);
    };
    sys::kill_group(child.id());
    ended
}

/// As [`end_group`], then reaps `child`: how it exited, or `None` when it
/// overran `limit` and was killed.
pub fn wait(
    child: &mut Child,
    limit: Option<Duration>,
    poll: Duration,
) -> io::Result<Option<ExitStatus>> {
    let ended = end_group(child, limit, poll)?;
    let status = child.wait()?;
    Ok(ended.then_some(status))
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    use super::*;

    const POLL: Duration = Duration::from_millis(5);

    /// Whether a process `pid` is still there (a zombie counts as gone).
    fn alive(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| !stat.rsplit(") ").next().is_some_and(|s| s.starts_with('Z')))
    }

    #[test]
    fn a_child_that_overruns_is_killed_with_what_it_started() {
        let mut child = Command::new("sh")
            .args(["-c", "sleep 30 & echo $! > /dev/null; sleep 30"])
            .process_group(0)
            .spawn()
            .expect("sh");
        let started = Instant::now();
        let status = wait(&mut child, Some(Duration::from_millis(200)), POLL).expect("waits");
        assert_eq!(status, None, "it overran");
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn what_a_child_leaves_behind_is_killed_when_it_ends() {
        let mut child = Command::new("sh")
            // The sleep's output elsewhere, or reading the pid would wait for it.
            .args(["-c", "sleep 30 >/dev/null & echo $!"])
            .stdout(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("sh");
        let status = wait(&mut child, Some(Duration::from_secs(20)), POLL).expect("waits");
        assert!(status.is_some_and(|s| s.success()), "{status:?}");
        let mut out = String::new();
        let _ = std::io::Read::read_to_string(&mut child.stdout.take().expect("out"), &mut out);
        let leftover = out.trim();
        assert!(!leftover.is_empty());
        let deadline = Instant::now() + Duration::from_secs(5);
        while alive(leftover) && Instant::now() < deadline {
            thread::sleep(POLL);
        }
        assert!(
            !alive(leftover),
            "the background sleep {leftover} outlived its parent"
        );
    }
}
