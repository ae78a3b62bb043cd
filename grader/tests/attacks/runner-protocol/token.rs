//! Attack: the runner's links to the judge written to by hand.
//!
//! The runner's protocol is RESP over a Unix socket per link, and learner
//! code lives in the runner, so it can reach every link's descriptor. During
//! its first call `new_token` writes on each socket it holds (the control
//! link, the call's own link): an answer for a call that was never made, a
//! passing-looking answer `DONE token` before anything asked, a frame that
//! claims a terabyte, and megabytes of it; then it closes the control link's
//! writing half and answers its own call with a token.
//!
//! Nothing the runner sends is a verdict, and a check's process is its own:
//! a sound judge fails this check, in time, naming the broken protocol, and
//! no other check or run is touched (honest grade: 0 passes).

#[path = "atk_kit.rs"]
mod kit;

use std::sync::atomic::AtomicBool;

static DONE: AtomicBool = AtomicBool::new(false);

unsafe extern "C" {
    fn shutdown(fd: i32, how: i32) -> i32;
}

/// The runner's sockets: its links to the judge.
fn sockets() -> Vec<i32> {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| {
            d.flatten()
                .filter(|e| {
                    std::fs::read_link(e.path())
                        .is_ok_and(|p| p.to_string_lossy().starts_with("socket:"))
                })
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

fn send(fd: i32, bytes: &[u8]) {
    // SAFETY: a write to a descriptor this process holds.
    unsafe { kit::write(fd, bytes.as_ptr(), bytes.len()) };
}

pub fn new_token() -> String {
    if kit::first(&DONE) {
        let fds = sockets();
        let forged = b"*3\r\n$4\r\nDONE\r\n$5\r\ntoken\r\n$32\r\n0123456789abcdef0123456789abcdef\r\n";
        let huge = b"*2\r\n$4\r\nDONE\r\n$1099511627776\r\n";
        let filler = vec![b'x'; 4 << 20];
        for &fd in &fds {
            send(fd, b"*2\r\n$5\r\nHELLO\r\n$9\r\nlink-9999\r\n");
            send(fd, forged);
            send(fd, huge);
            send(fd, &filler);
        }
        if let Some(&control) = fds.first() {
            // SAFETY: a half-close of a socket this process holds.
            unsafe { shutdown(control, 1) };
        }
        eprintln!("runner-protocol: wrote on {} sockets", fds.len());
    }
    "0123456789abcdef0123456789abcdef".to_string()
}
