//! Attack: a forged verdict from code that runs before `main`.
//!
//! A function pointer in `.init_array` runs when the test binary starts,
//! before the harness's `main` reads its nonce. In a check's process it reads
//! the nonce from standard input itself, writes a passing verdict on the
//! verdict descriptor and exits with 0, so every selected check "passes"
//! while `new_token` is still a `todo!()`.
//!
//! A sound grader never links learner code into a process that can speak for
//! a check: the judge's verdict comes from a process with no learner code, so
//! this attacker's checks all fail (honest grade: 0 passes).

#[path = "atk_kit.rs"]
mod kit;

use std::io::Read;
use std::os::fd::FromRawFd;

#[used]
#[unsafe(link_section = ".init_array")]
static FORGE: extern "C" fn() = forge;

extern "C" fn forge() {
    if std::env::var_os("GRADER_HARNESS_CHECK").is_none() {
        return;
    }
    // SAFETY: standard input is open; it is forgotten, not closed, below.
    let mut stdin = unsafe { std::fs::File::from_raw_fd(0) };
    let mut nonce = Vec::new();
    let mut byte = [0u8; 1];
    while nonce.len() < 256 && matches!(stdin.read(&mut byte), Ok(1)) && byte[0] != b'\n' {
        nonce.push(byte[0]);
    }
    std::mem::forget(stdin);
    kit::send_passing_verdicts(&[String::from_utf8_lossy(&nonce).into_owned()]);
    std::process::exit(0);
}

pub fn new_token() -> String {
    todo!("return 16 to 20 random bytes as text (see the comment above)")
}
