//! Attack: the harness's own process, forged before `main`.
//!
//! The test binary that `cargo test -p exercises` and `cargo course grade`
//! run is also the harness that writes the run's results. A function in
//! `.init_array` runs in it before `main`: asked for a results file
//! (`GRADER_RESULTS_FILE`), it reads the nonce from standard input and writes
//! a results file in which every selected check passed; otherwise it prints
//! libtest's lines for a passing run. Either way it exits with 0.
//!
//! A sound grader keeps learner code out of the process that writes the
//! results or prints the summary: this attacker gets 0 passes and a failing
//! exit status.

#[path = "atk_kit.rs"]
mod kit;

use std::io::Read;
use std::os::fd::FromRawFd;

#[used]
#[unsafe(link_section = ".init_array")]
static FORGE: extern "C" fn() = forge;

extern "C" fn forge() {
    if std::env::var_os("GRADER_HARNESS_CHECK").is_some() {
        return;
    }
    let args: Vec<String> = kit::cmdline(std::process::id() as i32).into_iter().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let checks = kit::selected(&args);
    if let Some(path) = std::env::var_os("GRADER_RESULTS_FILE") {
        // SAFETY: standard input is open; it is forgotten, not closed, below.
        let mut stdin = unsafe { std::fs::File::from_raw_fd(0) };
        let mut nonce = Vec::new();
        let mut byte = [0u8; 1];
        while nonce.len() < 256 && matches!(stdin.read(&mut byte), Ok(1)) && byte[0] != b'\n' {
            nonce.push(byte[0]);
        }
        std::mem::forget(stdin);
        let entries: Vec<String> = checks
            .iter()
            .map(|c| format!("{{\"name\":\"{c}\",\"outcome\":{{\"status\":\"passed\"}},\"printed\":\"\"}}"))
            .collect();
        let json = format!(
            "{{\"nonce\":\"{}\",\"checks\":[{}]}}",
            String::from_utf8_lossy(&nonce).trim(),
            entries.join(",")
        );
        let _ = std::fs::write(path, json);
    }
    print!("{}", kit::fake_libtest(&checks));
    std::process::exit(0);
}

pub fn new_token() -> String {
    todo!("return 16 to 20 random bytes as text (see the comment above)")
}
