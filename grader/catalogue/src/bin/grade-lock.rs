//! Grades a lock of the grader's catalogue through the harness, the way
//! `cargo test -p exercises` grades the learner's:
//!
//! ```sh
//! GRADER_LOCK=exits cargo run -p lock-catalogue --bin grade-lock -- acquire::
//! ```
//!
//! `GRADER_LOCK` names the lock (the reference lock when unset); the command
//! line is the test harness's (filters, `--list`, `-q`…). With
//! `GRADER_LOCK_IN=runner` the lock's functions run in a runner of their own
//! (this same binary, started by the judge), the way `cargo test -p exercises`
//! runs the learner's. The grader's tests
//! (`tests/harness.rs`) run it on the locks that end, abort, stop or starve
//! their process, which no test in the grader's own process could survive.

use grader::Lock;
use grader::checks::CHECKS;
use grader::reference::{LOCK as REFERENCE, RUNNER_LOCK};
use lock_catalogue::misbehaving::IN_A_RUNNER;
use lock_catalogue::misbehaving::{
    ABORTS, ERRS, EXITS, FAKES_RESULTS, HAMMERS, HOGS_MEMORY, PANICS, PANICS_WHILE_UNWINDING,
    SPINS, STOPS,
};

/// The locks by the names `GRADER_LOCK` knows them by.
const LOCKS: &[(&str, Lock)] = &[
    ("reference", REFERENCE),
    ("exits", EXITS),
    ("aborts", ABORTS),
    ("fakes-results", FAKES_RESULTS),
    ("panics-while-unwinding", PANICS_WHILE_UNWINDING),
    ("hogs-memory", HOGS_MEMORY),
    ("stops", STOPS),
    ("panics", PANICS),
    ("spins", SPINS),
    ("hammers", HAMMERS),
    ("errs", ERRS),
];

/// Set to `runner` to play the lock in a runner of its own, as learner code is played.
const IN_VAR: &str = "GRADER_LOCK_IN";

fn main() {
    let wanted = std::env::var("GRADER_LOCK").unwrap_or_else(|_| "reference".into());
    let Some((_, lock)) = LOCKS.iter().find(|(name, _)| *name == wanted) else {
        let names: Vec<&str> = LOCKS.iter().map(|(name, _)| *name).collect();
        eprintln!(
            "GRADER_LOCK={wanted:?} names no lock; set it to one of: {}",
            names.join(", ")
        );
        std::process::exit(2);
    };
    // Started by a judge as its runner: serve the lock's functions.
    if std::env::var_os(lock_runner::protocol::SOCKET_VAR).is_some() {
        let runner = IN_A_RUNNER
            .iter()
            .find(|(name, _)| *name == wanted)
            .map_or(RUNNER_LOCK, |(_, lock)| *lock);
        lock_runner::main(runner);
    }
    if std::env::var(IN_VAR).is_ok_and(|v| v == "runner") {
        let me = std::env::current_exe().unwrap_or_default();
        // SAFETY: no other thread runs yet, so nothing reads the environment meanwhile.
        #[allow(unsafe_code)]
        unsafe {
            std::env::set_var(grader::remote::RUNNER_VAR, me)
        };
        grader::harness::judge();
    }
    let checks: Vec<&str> = CHECKS.iter().map(|check| check.name).collect();
    grader::harness::main(lock, &checks)
}
