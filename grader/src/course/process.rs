//! A command run to its end with its output captured, or stopped at a
//! deadline together with everything it started.
//!
//! Cargo and the test binary are both run this way. The command gets a
//! process group of its own, so that at the deadline one signal reaches it
//! and whatever it started (rustc, the checks' processes), and a submission
//! that hangs cannot hold a batch up.

use std::io::{self, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// How often a running command is looked at.
const POLL: Duration = Duration::from_millis(20);

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
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if limit.is_some_and(|limit| started.elapsed() >= limit) {
            // SAFETY: a plain system call on the child's own group; the child
            // is not reaped yet, so the group id cannot have been reused.
            unsafe { libc::killpg(child.id() as libc::pid_t, libc::SIGKILL) };
            let _ = child.wait();
            break None;
        }
        thread::sleep(POLL);
    };
    Ok(Ran {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}
