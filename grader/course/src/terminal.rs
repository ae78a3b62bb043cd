//! The terminal, kept plain: single keys without Enter, and a screen redrawn
//! whole.
//!
//! The loop needs three things from a terminal: each key as it is pressed,
//! the terminal's height, and a way to replace what is on screen. crossterm
//! (which rustlings' loop uses too) gives them the same way over ssh, in tmux
//! and in a plain console: raw mode, whose keys, and the terminal's new size
//! when it is resized, come as events; and the standard commands that move
//! the cursor home and clear to the end. Raw mode reads Ctrl-C as a key too,
//! so that quitting always puts the terminal back. The loop has no use
//! without a terminal: there it says so and names the commands that grade
//! without one.

use std::io::{self, Write};
use std::sync::mpsc::Sender;
use std::thread;

use crossterm::cursor::MoveTo;
use crossterm::event::{self, KeyCode, KeyEventKind, KeyModifiers};
use crossterm::style::Print;
use crossterm::terminal::{self, Clear, ClearType};
use crossterm::{execute, queue};

use super::error::CourseError;

/// The terminal in raw mode, put back on drop.
pub struct RawMode(());

impl RawMode {
    /// Reads keys one at a time, unechoed, from now until drop; clears the
    /// screen, which [`show`] then draws over.
    pub fn enter() -> Result<RawMode, CourseError> {
        terminal::enable_raw_mode().map_err(|e| {
            CourseError::Usage(format!(
                "`cargo course` grades on every save in a terminal, and found none here ({e}): \
                 grade with `cargo course grade` or `cargo test -p exercises` instead"
            ))
        })?;
        let _ = execute!(io::stdout(), Clear(ClearType::All));
        Ok(RawMode(()))
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = terminal::disable_raw_mode();
    }
}

/// What the learner did at the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// A key that types this character.
    Key(char),
    /// This character's key with Ctrl held.
    Ctrl(char),
    /// The terminal was resized: its new height in lines, if it says.
    Resized(Option<usize>),
    /// The terminal can no longer be read.
    Closed,
}

/// Sends what the learner does, as `wrap(input)`, until the terminal closes
/// (sent last, as [`Input::Closed`]) or the receiver is gone.
pub fn read_input<E: Send + 'static>(events: Sender<E>, wrap: fn(Input) -> E) {
    thread::spawn(move || {
        loop {
            let input = match event::read() {
                Ok(event::Event::Key(key)) if key.kind == KeyEventKind::Press => match key.code {
                    KeyCode::Char(c) if key.modifiers.contains(KeyModifiers::CONTROL) => {
                        Input::Ctrl(c)
                    }
                    KeyCode::Char(c) => Input::Key(c),
                    _ => continue,
                },
                Ok(event::Event::Resize(_, rows)) => Input::Resized(lines(rows)),
                Ok(_) => continue,
                Err(_) => Input::Closed,
            };
            if events.send(wrap(input)).is_err() || input == Input::Closed {
                break;
            }
        }
    });
}

/// The terminal's height in lines, if there is a terminal.
pub fn height() -> Option<usize> {
    lines(terminal::size().ok()?.1)
}

/// A height of `rows`; none when the terminal says 0 (it does not know).
fn lines(rows: u16) -> Option<usize> {
    (rows > 0).then_some(usize::from(rows))
}

/// Replaces the screen with `text`.
pub fn show(text: &str) {
    let mut out = io::stdout().lock();
    // Home, then each line cleared to its end, then the rest of the screen.
    // No newline after the last line: on a full screen it would scroll.
    let _ = queue!(out, MoveTo(0, 0));
    for (n, line) in text.lines().enumerate() {
        let newline = if n == 0 { "" } else { "\r\n" };
        let _ = queue!(
            out,
            Print(newline),
            Print(line),
            Clear(ClearType::UntilNewLine)
        );
    }
    let _ = queue!(out, Clear(ClearType::FromCursorDown));
    let _ = out.flush();
}
