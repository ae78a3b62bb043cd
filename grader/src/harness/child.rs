//! The check's side: one check, one verdict, on the private channel.
//!
//! A process started by the harness finds the name of its check and the
//! number of its channel's file descriptor in its environment. It reads the
//! nonce from its standard input (which then stays at its end) and keeps the
//! channel from any process it starts, the learner's runner among them. It
//! starts that runner, connects to the Redis the harness chose, runs the check
//! ([`super::outcome_of`]), writes `NONCE VERDICT` as one line, and exits at once.
//! A runner that dies during the check ends it there, with a verdict that
//! says how ([`crate::remote::on_end`]).

use std::fs::File;
use std::io::{self, BufRead, Write};
use std::os::fd::AsFd;
use std::sync::{Arc, Mutex, PoisonError};

use crate::checks::{self, Check};
use crate::lock::Lock;
use crate::outcome::Outcome;
use crate::{remote, server, sys};

/// The environment variable that names the check a child runs.
pub(crate) const CHECK_VAR: &str = "GRADER_HARNESS_CHECK";
/// The environment variable that names the child's channel descriptor.
pub(super) const VERDICT_FD_VAR: &str = "GRADER_HARNESS_VERDICT_FD";
/// The descriptor the channel is given in the child.
pub(super) const VERDICT_FD: i32 = 3;

/// The check this process was started to run, if it is a check's process:
/// its name, read once from the environment and parsed into the check
/// itself, or the name that is no check (which the process answers with
/// [`Outcome::no_such_check`]).
pub(super) fn requested() -> Option<Result<&'static Check, String>> {
    let name = std::env::var(CHECK_VAR).ok()?;
    Some(checks::named(&name).ok_or(name))
}

/// Runs the `requested` check on `lock`, sends the verdict and exits.
pub(super) fn run(requested: Result<&'static Check, String>, lock: &Lock) -> ! {
    let fd = match std::env::var(VERDICT_FD_VAR).map(|v| v.parse::<i32>()) {
        Ok(Ok(fd)) if fd > 2 => fd,
        _ => refuse(&format!(
            "{CHECK_VAR} is set, but {VERDICT_FD_VAR} names no channel: this process runs one \
             check for the grader's harness, which sets both; unset {CHECK_VAR} to run the tests"
        )),
    };
    let Some(channel) = sys::handed_down(fd) else {
        refuse(&format!(
            "{VERDICT_FD_VAR}={fd} is not an open descriptor: \
             this process runs one check for the grader's harness"
        ))
    };
    let mut nonce = String::new();
    if io::stdin().lock().read_line(&mut nonce).is_err() || nonce.trim().is_empty() {
        refuse("no nonce on standard input: this process runs one check for the grader's harness");
    }
    let verdict = Arc::new(Verdict {
        channel: Mutex::new(Some(channel)),
        nonce: nonce.trim().to_string(),
    });
    // A runner that dies (or cannot start) ends the check there, with that as its verdict.
    let early = Arc::clone(&verdict);
    remote::on_end(Box::new(move |outcome| early.send_and_exit(&outcome)));
    // The learner's runner, if this check plays one, is started by this thread, which
    // outlives the check: the runner dies with it.
    if super::is_judge() {
        remote::start();
    }
    let outcome = match quietly(server::shared) {
        Ok(_) => match requested {
            Ok(check) => super::outcome_of(check, lock),
            Err(name) => Outcome::no_such_check(&name),
        },
        Err(e) => Outcome::NotRun {
            reason: format!("the grader could not run this check: {e}"),
        },
    };
    verdict.send_and_exit(&outcome)
}

/// The check's one verdict, sent once on the private channel.
struct Verdict {
    /// Taken by the first sender: a second verdict is never written.
    channel: Mutex<Option<File>>,
    nonce: String,
}

impl Verdict {
    /// Writes `NONCE VERDICT` and exits at once, whatever threads still run;
    /// the learner's runner, if any, goes first.
    fn send_and_exit(&self, outcome: &Outcome) -> ! {
        // The channel first: stopping the runner below wakes a call that was
        // waiting on it, which must then find the verdict already taken.
        let channel = self
            .channel
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let Some(mut channel) = channel else {
            // The other path is sending: it exits the process.
            loop {
                std::thread::park();
            }
        };
        remote::stop();
        let line = match serde_json::to_string(outcome) {
            Ok(json) => format!("{} {json}\n", self.nonce),
            // Nothing to send: the harness reports the missing verdict.
            Err(_) => std::process::exit(1),
        };
        let sent = channel.write_all(line.as_bytes()).is_ok();
        std::process::exit(if sent { 0 } else { 1 })
    }
}

/// Ends a process that was started as a check's but cannot be one.
fn refuse(message: &str) -> ! {
    eprintln!("grader harness: {message}");
    std::process::exit(2)
}

/// Runs `f` with standard error going nowhere: the server's one-line notice
/// belongs to the harness, which printed it already, not to each check.
/// No code under test runs yet, so no other thread writes to standard error
/// meanwhile.
fn quietly<T>(f: impl FnOnce() -> T) -> T {
    let stderr = io::stderr();
    let Ok(saved) = rustix::io::fcntl_dupfd_cloexec(stderr.as_fd(), 3) else {
        return f();
    };
    let Ok(null) = File::options().write(true).open("/dev/null") else {
        return f();
    };
    if rustix::stdio::dup2_stderr(&null).is_err() {
        return f();
    }
    drop(null);
    let value = f();
    let _ = rustix::stdio::dup2_stderr(&saved);
    value
}
