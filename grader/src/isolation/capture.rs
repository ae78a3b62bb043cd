//! A sandboxed program's standard output or error, kept up to a cap.
//!
//! The bytes are only ever text to show: they are decoded lossily, never
//! parsed, so nothing a program prints can pass for a result. Past the cap
//! the pipe is still read (a writer blocked on a full pipe would hang until
//! the time limit) and the rest is counted and dropped.

use std::fmt;
use std::io::Read;
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::Duration;

/// What one stream held, up to the cap.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Captured {
    /// The first bytes, decoded as UTF-8 (invalid sequences replaced).
    pub text: String,
    /// How many bytes past the cap were read and dropped.
    pub dropped: u64,
}

impl fmt::Display for Captured {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)?;
        if self.dropped > 0 {
            if !self.text.ends_with('\n') {
                writeln!(f)?;
            }
            write!(
                f,
                "[… the rest, {} bytes, was dropped: the output is capped]",
                self.dropped
            )?;
        }
        Ok(())
    }
}

/// A stream being read on a thread of its own.
pub(crate) struct Capture(Receiver<Captured>);

impl Capture {
    /// What was read, once the stream has ended; `None` if it has not ended
    /// within `wait` (a process outside the sandbox holds the pipe: the
    /// thread is then left to finish on its own).
    pub(crate) fn finish(self, wait: Duration) -> Option<Captured> {
        self.0.recv_timeout(wait).ok()
    }
}

/// Reads `source` to its end on a thread of its own, keeping `cap` bytes.
pub(crate) fn spawn(source: Option<impl Read + Send + 'static>, cap: usize) -> Capture {
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        let mut kept = Vec::new();
        let mut dropped = 0u64;
        if let Some(mut source) = source {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match source.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let room = cap.saturating_sub(kept.len()).min(n);
                        kept.extend_from_slice(&buf[..room]);
                        dropped += (n - room) as u64;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
        }
        let captured = Captured {
            text: String::from_utf8_lossy(&kept).into_owned(),
            dropped,
        };
        // The receiver may have given up waiting; nothing to do then.
        let _ = sender.send(captured);
    });
    Capture(receiver)
}
