//! Shared by the attacks (installed as `exercises/src/atk_kit.rs` beside each
//! attack's files, and declared by them with `#[path = "atk_kit.rs"] mod kit;`).
//! Nothing here attacks by itself: it finds things and writes evidence.
//!
//! The driver (`grader/tests/attacks.rs`) replaces `@COURSE@` (the scratch
//! copy of the course), `@DROP@` (where evidence of a successful attack is
//! written: a sound grader keeps learner code from writing there), `@OUT@`
//! (where `cargo course grade --out` writes), `@SUBMISSIONS@` (the batch's
//! folder of submissions), `@RESULTS@` (where the batch writes its results,
//! beside the submissions) and `@LISTEN@` (the port of the driver's TCP
//! listener on 127.0.0.1: a connection there is learner code reaching the
//! network). Every helper that touches processes or Redis only
//! reaches processes of the scratch course and servers on 127.0.0.1 that a
//! process of the scratch course started; every loop is bounded.
#![allow(dead_code)]

use std::ffi::c_char;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

pub const COURSE: &str = "@COURSE@";
pub const DROP: &str = "@DROP@";
pub const OUT: &str = "@OUT@";
pub const SUBMISSIONS: &str = "@SUBMISSIONS@";
pub const RESULTS: &str = "@RESULTS@";

pub const SIGKILL: i32 = 9;
pub const SIGHUP: i32 = 1;
pub const SIGTERM: i32 = 15;

unsafe extern "C" {
    pub fn fork() -> i32;
    pub fn setsid() -> i32;
    pub fn _exit(code: i32) -> !;
    pub fn kill(pid: i32, signal: i32) -> i32;
    pub fn getppid() -> i32;
    pub fn getpid() -> i32;
    pub fn getpgid(pid: i32) -> i32;
    pub fn signal(signal: i32, handler: usize) -> usize;
    pub fn prctl(option: i32, ...) -> i32;
    pub fn close(fd: i32) -> i32;
    pub fn open(path: *const c_char, flags: i32, ...) -> i32;
    pub fn dup2(from: i32, to: i32) -> i32;
    pub fn waitpid(pid: i32, status: *mut i32, options: i32) -> i32;
    pub fn write(fd: i32, bytes: *const u8, len: usize) -> isize;
}

/// True the first time it is called with `flag` in this process.
pub fn first(flag: &AtomicBool) -> bool {
    !flag.swap(true, Ordering::SeqCst)
}

/// Says on stderr (the check's own output) and in `@DROP@` what the attack got.
pub fn evidence(attack: &str, text: &str) {
    eprintln!("ATTACK-EVIDENCE {attack}: {text}");
    let path = Path::new(DROP).join(format!("{attack}-{}.txt", std::process::id()));
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(file, "{text}");
    }
}

fn link(pid: i32, what: &str) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/{what}")).ok()
}

/// Whether the process `pid` runs a program of the scratch course, or in it.
pub fn of_the_course(pid: i32) -> bool {
    ["exe", "cwd"]
        .iter()
        .filter_map(|what| link(pid, what))
        .any(|p| p.starts_with(COURSE))
}

/// The parent of `pid`, from `/proc/PID/stat`.
pub fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

/// This process's ancestors, nearest first (at most 32).
pub fn ancestors(pid: i32) -> Vec<i32> {
    let mut found = Vec::new();
    let mut at = pid;
    while found.len() < 32 {
        match parent_of(at) {
            Some(p) if p > 1 => {
                found.push(p);
                at = p;
            }
            _ => break,
        }
    }
    found
}

/// Every process id on the machine.
pub fn all_pids() -> Vec<i32> {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

pub fn comm(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

pub fn cmdline(pid: i32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap_or_default()
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

/// `redis://127.0.0.1:PORT` of every redis-server that a process of the
/// scratch course started (its parent or grandparent belongs to the course).
pub fn grader_redis_urls() -> Vec<String> {
    let mut urls = Vec::new();
    for pid in all_pids() {
        if !comm(pid).starts_with("redis-server") {
            continue;
        }
        if !ancestors(pid).iter().take(4).any(|&a| of_the_course(a)) {
            continue;
        }
        let args = cmdline(pid);
        let joined = args.join(" ");
        let port = args
            .iter()
            .position(|a| a == "--port")
            .and_then(|i| args.get(i + 1).cloned())
            .or_else(|| {
                let tail = joined.split(' ').find(|w| w.starts_with("127.0.0.1:"))?;
                Some(tail.trim_start_matches("127.0.0.1:").to_string())
            });
        if let Some(port) = port.and_then(|p| p.parse::<u16>().ok()) {
            urls.push(format!("redis://127.0.0.1:{port}"));
        }
    }
    urls.sort();
    urls.dedup();
    urls
}

/// Forks a process that outlives the check: a session of its own, SIGHUP and
/// SIGTERM ignored, named `atk-NAME` (how the driver finds it), its standard
/// descriptors on /dev/null and every other descriptor closed. True in that
/// process; false in the caller.
pub fn daemonize(name: &str) -> bool {
    // SAFETY: plain system calls; the child only goes on to do the attack.
    unsafe {
        let pid = fork();
        if pid < 0 {
            return false;
        }
        if pid > 0 {
            let mut status = 0;
            waitpid(pid, &mut status, 0);
            return false;
        }
        setsid();
        if fork() != 0 {
            _exit(0);
        }
        signal(SIGHUP, 1);
        signal(SIGTERM, 1);
        let mut title = [0u8; 16];
        let full = format!("atk-{name}");
        for (i, b) in full.bytes().take(15).enumerate() {
            title[i] = b;
        }
        prctl(15, title.as_ptr());
        let null = open(c"/dev/null".as_ptr(), 2);
        for fd in 0..3 {
            dup2(null, fd);
        }
        for fd in 3..1024 {
            if fd != null {
                close(fd);
            }
        }
        close(null);
    }
    true
}

/// The descriptors a verdict could go to: the one the harness names, else
/// every inherited pipe among 3 to 9.
pub fn verdict_fds() -> Vec<i32> {
    if let Some(fd) = std::env::var("GRADER_HARNESS_VERDICT_FD")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return vec![fd];
    }
    (3..10)
        .filter(|fd| {
            link(std::process::id() as i32, &format!("fd/{fd}"))
                .is_some_and(|p| p.to_string_lossy().starts_with("pipe:"))
        })
        .collect()
}

/// A passing verdict for each of `nonces`, as the verdict channel carries one.
fn passing_verdicts(nonces: &[String]) -> String {
    nonces
        .iter()
        .map(|nonce| format!("{nonce} {{\"status\":\"passed\"}}\n"))
        .collect()
}

/// Writes a passing verdict for each of `nonces` on every verdict descriptor.
pub fn send_passing_verdicts(nonces: &[String]) {
    let lines = passing_verdicts(nonces);
    for fd in verdict_fds() {
        // SAFETY: a write to a descriptor this process holds.
        unsafe { write(fd, lines.as_ptr(), lines.len()) };
    }
}

/// Writes a passing verdict for each of `nonces` into every pipe process `pid` holds, opened
/// through `/proc/PID/fd/N` (which a process of the same user may open). Returns how many pipes
/// took them.
pub fn send_passing_verdicts_into(pid: i32, nonces: &[String]) -> usize {
    let lines = passing_verdicts(nonces);
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return 0;
    };
    let mut written = 0;
    for entry in fds.flatten().take(256) {
        let path = entry.path();
        if !std::fs::read_link(&path).is_ok_and(|p| p.to_string_lossy().starts_with("pipe:")) {
            continue;
        }
        // A pipe opened for writing through /proc is the same pipe, whichever end `pid` holds.
        if let Ok(mut pipe) = std::fs::OpenOptions::new().write(true).open(&path)
            && pipe.write_all(lines.as_bytes()).is_ok()
        {
            written += 1;
        }
    }
    written
}

fn is_hex(b: u8) -> bool {
    b.is_ascii_digit() || (b'a'..=b'f').contains(&b)
}

/// Every run of 32 hex digits followed by a newline (the shape of the harness's nonce) in the
/// writable memory of process `pid` (`self` for this one), read through `/proc/PID/mem`, at most
/// 10,000 of them.
pub fn nonces_in_memory(pid: &str) -> std::collections::BTreeSet<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut found = std::collections::BTreeSet::new();
    let Ok(maps) = std::fs::read_to_string(format!("/proc/{pid}/maps")) else { return found };
    let Ok(mut mem) = std::fs::File::open(format!("/proc/{pid}/mem")) else { return found };
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
    found
}

/// The checks an attack claims, when it forges a whole run.
pub const CHECKS: &[&str] = &[
    "token::unique",
    "token::unguessable",
    "acquire::takes_a_free_lock",
    "acquire::refuses_a_held_lock",
    "acquire::sets_the_ttl_in_milliseconds",
    "acquire::one_winner_among_three",
    "acquire::no_lock_without_ttl_after_a_crash",
    "acquire::a_crashed_holder_frees_the_lock",
    "acquire::explored",
];

/// The checks of [`CHECKS`] that a harness given `args` would run.
pub fn selected(args: &[String]) -> Vec<&'static str> {
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    CHECKS
        .iter()
        .copied()
        .filter(|c| filters.is_empty() || filters.iter().any(|f| c.contains(f.as_str())))
        .collect()
}

/// A libtest-shaped report of every check in `checks` passing.
pub fn fake_libtest(checks: &[&str]) -> String {
    let mut out = format!("\nrunning {} tests\n", checks.len());
    for c in checks {
        out.push_str(&format!("test {c} ... ok\n"));
    }
    out.push_str(&format!(
        "\ntest result: ok. {} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s\n\n",
        checks.len()
    ));
    out
}
