//! The terminal, kept plain: single keys without Enter, and a screen redrawn
//! whole.
//!
//! The loop needs two things from a terminal: each key as it is pressed, and
//! a way to replace what is on screen. Both work the same over ssh, in tmux
//! and in a plain console with the system's own terminal settings (termios:
//! no line editing, no echo) and two standard escape sequences (cursor home,
//! clear to the end). When standard input is not a terminal, keys are read
//! as they come, a line at a time, which is how a script drives the loop.
//!
//! The settings are read and written through `rustix`'s termios, which the
//! grader uses for its other system calls: three calls do not need a
//! terminal library's event loop and signal handling.

use std::io::{self, IsTerminal, Read, Write};
use std::sync::mpsc::Sender;
use std::thread;

use rustix::termios::{LocalModes, OptionalActions, SpecialCodeIndex, Termios};

/// Standard input's settings as they were, put back on drop.
pub struct RawKeys {
    saved: Option<Termios>,
}

impl RawKeys {
    /// Reads keys one at a time, unechoed, from now until drop. Ctrl-C is read
    /// as a key too, so that quitting always puts the terminal back. A
    /// failure leaves the terminal as it is.
    pub fn enter() -> RawKeys {
        let stdin = io::stdin();
        if !stdin.is_terminal() {
            return RawKeys { saved: None };
        }
        let Ok(saved) = rustix::termios::tcgetattr(&stdin) else {
            return RawKeys { saved: None };
        };
        let mut raw = saved.clone();
        raw.local_modes &= !(LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG);
        raw.special_codes[SpecialCodeIndex::VMIN] = 1;
        raw.special_codes[SpecialCodeIndex::VTIME] = 0;
        if rustix::termios::tcsetattr(&stdin, OptionalActions::Now, &raw).is_err() {
            return RawKeys { saved: None };
        }
        RawKeys { saved: Some(saved) }
    }
}

impl Drop for RawKeys {
    fn drop(&mut self) {
        if let Some(saved) = &self.saved {
            let _ = rustix::termios::tcsetattr(io::stdin(), OptionalActions::Now, saved);
        }
    }
}

/// Sends every byte read from standard input, as `wrap(byte)`, until it ends
/// or the receiver is gone; at its end sends `wrap(None)`.
pub fn read_keys<E: Send + 'static>(events: Sender<E>, wrap: fn(Option<u8>) -> E) {
    thread::spawn(move || {
        let mut stdin = io::stdin().lock();
        let mut byte = [0u8; 1];
        loop {
            let key = match stdin.read(&mut byte) {
                Ok(1) => Some(byte[0]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                _ => None,
            };
            if events.send(wrap(key)).is_err() || key.is_none() {
                break;
            }
        }
    });
}

/// The terminal's height in lines, if standard output is a terminal.
pub fn height() -> Option<usize> {
    let size = rustix::termios::tcgetwinsize(io::stdout()).ok()?;
    (size.ws_row > 0).then_some(usize::from(size.ws_row))
}

/// Replaces the screen with `text`.
pub fn show(text: &str) {
    let mut out = io::stdout().lock();
    // Home, then each line cleared to its end, then the rest of the screen.
    // No newline after the last line: on a full screen it would scroll.
    let lines: Vec<&str> = text.lines().collect();
    let frame = format!("\x1b[H{}\x1b[K\x1b[J", lines.join("\x1b[K\r\n"));
    let _ = out.write_all(frame.as_bytes());
    let _ = out.flush();
}
