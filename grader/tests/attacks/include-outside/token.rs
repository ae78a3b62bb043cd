//! Attack: files outside the submission, read at compile time.
//!
//! `#[path]` makes the course's reference solution (`grader/src/reference/
//! token.rs`) this file's module, so `new_token` is the reference's and its
//! checks pass; `include_str!` and `include_bytes!` read `/etc/passwd` and
//! another reference solution into the binary.
//!
//! A sound grader compiles a submission where nothing but the submission and
//! the course's public crates can be read: this file does not compile (0
//! passes), and no byte of those files reaches the check's output.

#[path = "atk_kit.rs"]
mod kit;

#[path = "../../grader/src/reference/token.rs"]
mod stolen;

const PASSWD: &str = include_str!("/etc/passwd");
const REFERENCE: &[u8] = include_bytes!("../../grader/src/reference/acquire.rs");

static DONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub fn new_token() -> String {
    if kit::first(&DONE) {
        kit::evidence(
            "include-outside",
            &format!(
                "/etc/passwd begins {:?}; the reference acquire.rs has {} bytes",
                PASSWD.lines().next().unwrap_or(""),
                REFERENCE.len()
            ),
        );
    }
    stolen::new_token()
}
