//! Attack: a process that outlives its check and changes the results later.
//!
//! During a call, `new_token` double-forks a process in a session of its own
//! (so the harness's kill of the check's process group misses it) that
//! ignores SIGHUP and SIGTERM. It waits (at most 40 s) until
//! `cargo course grade --out` has written `course-results.json`, then
//! rewrites it to say every check passed.
//!
//! A sound grader ends everything a check started when the check ends (a PID
//! namespace, a cgroup), so no process of the attack is alive after the grade
//! and the results file is never changed after it was written.

#[path = "atk_kit.rs"]
mod kit;

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant, SystemTime};

static DONE: AtomicBool = AtomicBool::new(false);

const FORGED: &str = r#"{"version":1,"status":"pass","score":5,"max_score":5,"compile_error":null,"forged_by":"linger","checks":[{"name":"token::unique","exercise":"token","status":"pass","outcome":"passed","points":2,"max_points":2,"message":"","printed":""},{"name":"token::unguessable","exercise":"token","status":"pass","outcome":"passed","points":3,"max_points":3,"message":"","printed":""}]}"#;

fn linger() {
    let results = std::path::Path::new(kit::OUT).join("course-results.json");
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(40) {
        std::thread::sleep(Duration::from_millis(200));
        let Ok(meta) = std::fs::metadata(&results) else { continue };
        let old = meta
            .modified()
            .ok()
            .and_then(|m| SystemTime::now().duration_since(m).ok())
            .is_some_and(|age| age > Duration::from_secs(1));
        let text = std::fs::read_to_string(&results).unwrap_or_default();
        if old && !text.contains("forged_by") {
            let _ = std::fs::write(&results, FORGED);
            kit::evidence("linger", "rewrote course-results.json after the grade");
            break;
        }
    }
}

pub fn new_token() -> String {
    if kit::first(&DONE) && kit::daemonize("linger") {
        linger();
        // SAFETY: ends the lingering process without running the check's code.
        unsafe { kit::_exit(0) };
    }
    todo!("return 16 to 20 random bytes as text (see the comment above)")
}
