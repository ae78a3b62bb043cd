//! A machine that keeps stopping gives the same verdicts as a quiet one.
//!
//! Verdicts stand on virtual time, but Redis keeps real time, and a learner's
//! machine is rarely quiet: a laptop on battery, a class's shared server, a
//! CI runner with twenty jobs. So this test grades a set of checks on a quiet
//! process first, then again while another process stops and continues this
//! one (`SIGSTOP`, `SIGCONT`) at seeded random moments, for a few to a few
//! dozen milliseconds at a time, the way a starved CPU or a preempted VM
//! stops it. Every verdict and every report must read as on the quiet run:
//! every key a check sets has its TTL on the virtual clock, and a stop that
//! real time could make matter is noticed and the check run again
//! ([`grader::stall`]), never blamed on the lock.
//!
//! The set holds a check of every kind for every exercise (direct checks,
//! explorers, scenarios, Redlock's stories, the failover stories whose
//! replication is real), on the reference lock and on wrong locks whose
//! reports must not change. `GRADER_THROTTLED_RUNS` (default [`DEFAULT_RUNS`])
//! says how many throttled runs each gets; the figure the course promises for
//! the failover stories is 500 out of 500:
//! `GRADER_THROTTLED_RUNS=500 cargo test -p grader --test throttled failover`.

use std::process::{Child, Command, Stdio};

use grader::checks;
use grader::lock::Lock;
use grader::reference::LOCK as REFERENCE;
use grader::report::Verdict;
use lock_catalogue::wrong::ALL;

/// Throttled runs per check unless `GRADER_THROTTLED_RUNS` says otherwise.
const DEFAULT_RUNS: usize = 2;

/// The longest single stop, in milliseconds: longer than a scheduler's slice,
/// shorter than the shortest TTL a check gives its keys (so that what a stop
/// can break is noticed by the clock, not hidden by luck).
const LONGEST_STOP_MS: u64 = 40;

/// The longest stretch the process runs between two stops, in milliseconds.
const LONGEST_RUN_MS: u64 = 120;

fn runs() -> usize {
    match std::env::var("GRADER_THROTTLED_RUNS") {
        Ok(n) => n
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("GRADER_THROTTLED_RUNS={n:?} is not a number of runs")),
        Err(_) => DEFAULT_RUNS,
    }
}

/// Another process that stops and continues this one until it is dropped.
///
/// It is a shell loop over a seeded list of (stop, run) lengths, so two runs
/// with the same seed stop the process in the same rhythm (though not at the
/// same instructions: that is the point). On `SIGTERM` it continues this
/// process before it exits, so that the test can never be left stopped.
struct Throttle {
    child: Child,
}

impl Throttle {
    fn start(seed: u64) -> Throttle {
        let mut state = seed | 1;
        let mut next = move |bound: u64| {
            // xorshift64: enough to vary the rhythm, and the same on every machine.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            1 + state % bound
        };
        let steps: String = (0..64)
            .map(|_| {
                let (stop, run) = (next(LONGEST_STOP_MS), next(LONGEST_RUN_MS));
                format!(
                    "kill -STOP $1 || exit 0; sleep 0.{stop:03}; kill -CONT $1 || exit 0; sleep 0.{run:03}\n"
                )
            })
            .collect();
        let script = format!("trap 'kill -CONT $1; exit 0' TERM\nwhile :; do\n{steps}done\n");
        let child = Command::new("sh")
            .args(["-c", &script, "throttle"])
            .arg(std::process::id().to_string())
            .stdin(Stdio::null())
            .spawn()
            .expect("sh starts the throttle");
        Throttle { child }
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        // TERM, not KILL: the trap continues this process should the last
        // signal the loop sent have been a stop that is yet to land.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

/// The verdict of `check` on `lock`, as a learner reads it.
fn graded(check: &str, lock: &Lock) -> String {
    let check = checks::named(check).unwrap_or_else(|| panic!("no check {check}"));
    match check.run(lock) {
        Ok(Verdict::Pass) => "pass".to_string(),
        Ok(Verdict::NotStarted { function, message }) => {
            format!("not started: {function}: {message}")
        }
        Ok(Verdict::Fail(report)) => report.to_string(),
        // A check that stalls every time gives no verdict: on a machine that
        // runs at all, that is a failure of the grader, not of the lock.
        Err(e) => format!("no verdict: {e}"),
    }
}

/// The catalogue's wrong lock `name`, with the check it fails.
fn wrong(name: &str) -> (&'static str, Lock) {
    let w = ALL
        .iter()
        .find(|w| w.lock.name == name)
        .unwrap_or_else(|| panic!("no wrong lock {name:?} in the catalogue"));
    (w.fails, w.lock)
}

/// Grades each of `cases` on a quiet process, then `runs()` times throttled,
/// and fails with every verdict that changed.
fn same_verdicts_throttled(cases: &[(&str, Lock)], seed: u64) {
    let quiet: Vec<String> = cases.iter().map(|(c, l)| graded(c, l)).collect();
    for (verdict, (check, lock)) in quiet.iter().zip(cases) {
        assert!(
            !verdict.starts_with("no verdict"),
            "{} on {check} gave no verdict even on a quiet process:\n{verdict}",
            lock.name
        );
    }
    let mut changed = Vec::new();
    for run in 0..runs() {
        let throttle = Throttle::start(seed.wrapping_add(run as u64 * 0x9e37_79b9));
        let throttled: Vec<String> = cases.iter().map(|(c, l)| graded(c, l)).collect();
        drop(throttle);
        for ((before, after), (check, lock)) in quiet.iter().zip(&throttled).zip(cases) {
            if before != after {
                changed.push(format!(
                    "run {run}: {} on {check}\n  quiet:\n{before}\n  throttled:\n{after}",
                    lock.name
                ));
            }
        }
    }
    assert!(
        changed.is_empty(),
        "{} verdicts changed under throttling:\n{}",
        changed.len(),
        changed.join("\n")
    );
}

#[test]
fn a_throttled_process_grades_every_exercise_as_a_quiet_one() {
    let cases = [
        ("acquire::a_crashed_holder_frees_the_lock", REFERENCE),
        ("acquire::explored", REFERENCE),
        (
            "release::never_deletes_a_lock_that_changed_hands",
            REFERENCE,
        ),
        ("release::slow_job", REFERENCE),
        ("fencing::gc_pause_fenced", REFERENCE),
        ("storage::explored", REFERENCE),
        ("extend::never_brings_back_a_lost_lock", REFERENCE),
        ("keeper::renews_in_time", REFERENCE),
        ("keeper::explored", REFERENCE),
        ("scenarios::long_pause_fenced", REFERENCE),
        wrong("GET then DEL release"),
        wrong("GET then SET"),
        wrong("stale read that lowers the fence"),
        wrong("SET NX, then PEXPIRE every time"),
    ];
    same_verdicts_throttled(&cases, 0x5eed_0001);
}

#[test]
fn a_throttled_process_grades_redlock_as_a_quiet_one() {
    let cases = [
        ("redlock::counts_the_time_spent", REFERENCE),
        ("redlock::gives_up_when_the_ttl_is_spent", REFERENCE),
        ("redlock::pause_longer_than_validity_fenced", REFERENCE),
        ("redlock::explored", REFERENCE),
        wrong("Redlock ignoring the time spent"),
    ];
    same_verdicts_throttled(&cases, 0x5eed_0002);
}

#[test]
fn a_throttled_process_grades_the_failover_stories_as_a_quiet_one() {
    let cases = [
        ("scenarios::failover_lost_lock", REFERENCE),
        ("scenarios::failover_wait", REFERENCE),
        (
            "scenarios::failover_lost_lock",
            wrong("plain DEL release").1,
        ),
    ];
    same_verdicts_throttled(&cases, 0x5eed_0003);
}
