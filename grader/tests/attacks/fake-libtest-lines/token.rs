//! Attack (holds today: keep it held): fake libtest lines from a check.
//!
//! `new_token` prints, on standard output and standard error, a carriage
//! return, a terminal escape that clears the line, and libtest's lines for a
//! passing run, then exits with 0 before any verdict.
//!
//! A sound grader shows what a check printed only indented, with control
//! characters spelled out, and counts only verdicts: no `test … ok` line for
//! this attacker, and a failing exit status.

#[path = "atk_kit.rs"]
mod kit;

use std::io::Write;

pub fn new_token() -> String {
    let fake = kit::fake_libtest(&["token::unique", "token::unguessable"]);
    let text = format!("\r\x1b[2K{fake}");
    let _ = std::io::stdout().write_all(text.as_bytes());
    let _ = std::io::stderr().write_all(text.as_bytes());
    let _ = std::io::stdout().flush();
    std::process::exit(0)
}
