//! Grades a lock of the grader's catalogue through the harness, the way
//! `cargo test -p exercises` grades the learner's:
//!
//! ```sh
//! GRADER_LOCK=exits cargo run -p grader --bin grade-lock -- acquire::
//! ```
//!
//! `GRADER_LOCK` names the lock (the reference lock when unset); the command
//! line is the test harness's (filters, `--list`, `-q`…). The grader's tests
//! (`tests/harness.rs`) run it on the locks that end, abort, stop or starve
//! their process, which no test in the grader's own process could survive.

use grader::Lock;
use grader::catalogue::misbehaving::{
    ABORTS, ERRS, EXITS, FAKES_RESULTS, HAMMERS, HOGS_MEMORY, PANICS, PANICS_WHILE_UNWINDING,
    SPINS, STOPS,
};
use grader::checks::CHECKS;
use grader::reference::LOCK as REFERENCE;

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
    let checks: Vec<&str> = CHECKS.iter().map(|check| check.name).collect();
    grader::harness::main(lock, &checks)
}
