//! A command run to its end with its output captured, or stopped at a
//! deadline together with everything it started ([`grader::deadline`]).
//!
//! Cargo and the test binary are both run this way, so that a submission
//! that hangs cannot hold a batch up. The groups still running are listed,
//! so that a program that ends early (the watch loop, when the learner quits
//! in the middle of a grading) can stop them all with [`stop_all`] instead
//! of leaving a cargo build running behind it.

use std::io::{self, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

use grader::{deadline, sys};

/// How often a running command is looked at.
const POLL: Duration = Duration::from_millis(20);

/// The process groups of the commands running now.
static RUNNING: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Kills every command still running, with all it started.
pub fn stop_all() {
    let groups = std::mem::take(&mut *RUNNING.lock().unwrap_or_else(|p| p.into_inner()));
    for group in groups {
        // A group this process started and whose leader it has not reaped
        // (reaping takes it off the list).
        sys::kill_group(group);
    }
}

/// Takes a group off the list once its leader is about to be reaped.
fn finished(group: u32) {
    RUNNING
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .retain(|g| *g != group);
}

/// What a command did.
#[derive(Debug)]
pub struct Ran {
    /// How it exited; `None` when it was stopped at the deadline.
    pub status: Option<ExitStatus>,
    /// What it wrote to standard output.
    pub stdout: String,
    /// What it wrote to standard error.
    pub stderr: String,
}

/// Runs `command` with `input` on its standard input, until it ends or until
/// `limit` has passed, whichever comes first.
pub fn run(command: &mut Command, input: &[u8], limit: Option<Duration>) -> io::Result<Ran> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command.spawn()?;
    let group = child.id();
    RUNNING
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(group);
    let reader = |source: Option<Box<dyn Read + Send>>| {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut source) = source {
                let _ = source.read_to_end(&mut bytes);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = reader(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let stderr = reader(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    if let Some(mut stdin) = child.stdin.take() {
        // A command that does not read its input is not an error.
        let _ = stdin.write_all(input);
    }
    let ended = deadline::end_group(&child, limit, POLL);
    // Off the list before the leader is reaped, after which its group's id
    // may be handed out again.
    finished(group);
    let reaped = child.wait();
    let status = if ended? { Some(reaped?) } else { None };
    Ok(Ran {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}
