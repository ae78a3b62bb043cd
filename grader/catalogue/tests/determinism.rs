//! Virtual time and seeded histories make grading a fixed story: the same
//! lock gets the same verdict and the same report, word for word, on every
//! run, even with four runs at a time loading the machine and the server.
//!
//! Each test plays its check `GRADER_DETERMINISM_RUNS` times (default
//! [`DEFAULT_RUNS`], or [`DEFAULT_RUNNER_RUNS`] for the whole gradings through a
//! runner; the figure the course promises is 200 out of 200:
//! `GRADER_DETERMINISM_RUNS=200 cargo test -p lock-catalogue --test determinism`).

use std::process::Command;
use std::thread;

use grader::checks;
use grader::lock::Lock;
use grader::reference::LOCK as REFERENCE;
use grader::report::Verdict;
use grader::{run, scenario};
use lock_catalogue::every_wrong;

/// Runs per test unless `GRADER_DETERMINISM_RUNS` says otherwise.
const DEFAULT_RUNS: usize = 40;
/// Runs of a whole grading through a runner unless `GRADER_DETERMINISM_RUNS`
/// says otherwise: each starts the judge, a process per check and a runner per
/// check, so there are fewer of them by default.
const DEFAULT_RUNNER_RUNS: usize = 4;
const AT_ONCE: usize = 4;

fn runs() -> usize {
    runs_or(DEFAULT_RUNS)
}

fn runs_or(default: usize) -> usize {
    match std::env::var("GRADER_DETERMINISM_RUNS") {
        Ok(n) => n
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("GRADER_DETERMINISM_RUNS={n:?} is not a number of runs")),
        Err(_) => default,
    }
}

/// How many of `runs` calls of `f`, four at a time, differ from the first.
fn differing<T: PartialEq + Send + Sync>(runs: usize, f: impl Fn() -> T + Sync) -> usize {
    let first = f();
    let per_worker = runs.div_ceil(AT_ONCE);
    thread::scope(|s| {
        let workers: Vec<_> = (0..AT_ONCE)
            .map(|w| {
                let (f, first) = (&f, &first);
                let mine = per_worker.min(runs.saturating_sub(w * per_worker));
                s.spawn(move || (0..mine).filter(|_| f() != *first).count())
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a worker"))
            .sum()
    })
}

fn same_timeline_every_time(name: &str) {
    let scenario = scenario::named(name).expect("a scenario");
    let runs = runs();
    let n = differing(runs, || {
        run::run(&scenario, &REFERENCE).expect("runs").timeline
    });
    assert_eq!(n, 0, "{n} of {runs} runs of {name} differed from the first");
}

/// The verdict of `check` on `lock`, as a learner reads it: pass, or the
/// report's whole text.
fn graded(check: &str, lock: &Lock) -> String {
    let check = checks::named(check).unwrap_or_else(|| panic!("no check {check}"));
    match check.run(lock).expect("the check runs") {
        Verdict::Pass => "pass".to_string(),
        Verdict::NotStarted { function, message } => format!("not started: {function}: {message}"),
        Verdict::Fail(report) => report.to_string(),
    }
}

fn same_verdict_every_time(check: &str, lock: &Lock, passes: bool) {
    let first = graded(check, lock);
    assert_eq!(
        first == "pass",
        passes,
        "{} on {check} should {}:\n{first}",
        lock.name,
        if passes { "pass" } else { "fail" }
    );
    let runs = runs();
    let n = differing(runs, || graded(check, lock));
    assert_eq!(
        n, 0,
        "{n} of {runs} runs of {check} on {} gave another verdict or report than the first:\n{first}",
        lock.name
    );
}

fn wrong(name: &str) -> (&'static str, Lock) {
    let w = every_wrong()
        .find(|w| w.lock.name == name)
        .unwrap_or_else(|| panic!("no wrong lock {name:?} in the catalogue"));
    (w.fails, w.lock)
}

#[test]
fn the_gc_pause_is_the_same_every_time() {
    same_timeline_every_time("gc-pause-fenced");
}

#[test]
fn the_40_s_pause_is_the_same_every_time() {
    same_timeline_every_time("long-pause");
}

#[test]
fn a_correct_lock_passes_every_time() {
    same_verdict_every_time(
        "release::never_deletes_a_lock_that_changed_hands",
        &REFERENCE,
        true,
    );
    same_verdict_every_time("scenarios::gc_pause_fenced", &REFERENCE, true);
    same_verdict_every_time("storage::explored", &REFERENCE, true);
    same_verdict_every_time("release::reports_a_failed_command", &REFERENCE, true);
}

#[test]
fn a_wrong_lock_gets_the_same_report_every_time() {
    // A probe, a scenario, and an explored history, shrunk; and probes that make commands
    // fail: one that stops a script's command, one that loses a reply after it ran.
    for name in [
        "GET then DEL release",
        "GET then SET",
        "stale read that lowers the fence",
        "release that takes an error for a release",
        "acquire that takes a time-out for a grant",
    ] {
        let (check, lock) = wrong(name);
        same_verdict_every_time(check, &lock, false);
    }
}

/// What a learner reads of a grading of the catalogue's lock `lock` through the
/// harness, with its functions in a runner of their own (as learner code runs):
/// every line but the summary's timing, which is real time, and the exit status.
fn graded_in_a_runner(lock: &str, filters: &[&str]) -> (String, Option<i32>) {
    let server = grader::server::shared().unwrap_or_else(|e| panic!("no Redis: {e}"));
    let out = Command::new(env!("CARGO_BIN_EXE_grade-lock"))
        .args(filters)
        .env("GRADER_LOCK", lock)
        .env("GRADER_LOCK_IN", "runner")
        .envs(server.child_env())
        .env_remove("GRADER_CHECK_TIME_LIMIT")
        .output()
        .expect("grade-lock runs");
    let shown = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.starts_with("test result: "))
        .collect::<Vec<_>>()
        .join("\n");
    (shown, out.status.code())
}

/// The runner, its socket and the judge's threads that serve it add no order
/// of their own: a lock that passes, panics, returns errors or exits its
/// process reads the same on every run.
#[test]
fn in_a_runner_the_same_lock_gets_the_same_report_every_time() {
    let runs = runs_or(DEFAULT_RUNNER_RUNS);
    for lock in ["reference", "panics", "errs", "exits"] {
        let grading = || graded_in_a_runner(lock, &["acquire::", "release::"]);
        let first = grading();
        assert_eq!(
            first.1 == Some(0),
            lock == "reference",
            "{lock} should {} acquire:: and release::\n{}",
            if lock == "reference" { "pass" } else { "fail" },
            first.0
        );
        let n = differing(runs, grading);
        assert_eq!(
            n, 0,
            "{n} of {runs} gradings of {lock} through a runner differed from the first:\n{}",
            first.0
        );
    }
}
