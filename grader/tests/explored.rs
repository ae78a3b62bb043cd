//! The explorer against the reference: every explored history of every
//! explorer check goes as the model says. `GRADER_EXPLORE=1000` raises the
//! count (the figure in the grader's README comes from that run).

use grader::explore::{self, Exercise};
use grader::reference::LOCK as REFERENCE;
use grader::report::Verdict;

/// Histories per check here, unless `GRADER_EXPLORE` says otherwise.
const HISTORIES: u64 = 100;

fn reference_agrees(check: &str, exercise: Exercise) {
    let count = std::env::var(explore::EXPLORE_VAR)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(HISTORIES);
    let seeds = explore::seed_list(check, count);
    let verdict = explore::explore(check, &REFERENCE, exercise, &seeds)
        .unwrap_or_else(|e| panic!("{check}: {e}"));
    if let Verdict::Fail(report) = &verdict {
        panic!("the reference disagrees with the model:\n{report}");
    }
    assert_eq!(verdict, Verdict::Pass);
}

#[test]
fn the_reference_acquire_agrees_with_its_model() {
    reference_agrees("acquire::explored", Exercise::Acquire);
}

#[test]
fn the_reference_release_agrees_with_its_model() {
    reference_agrees("release::explored", Exercise::Release);
}

#[test]
fn the_reference_fenced_acquire_agrees_with_its_model() {
    reference_agrees("fencing::explored", Exercise::Fencing);
}

#[test]
fn the_reference_storage_agrees_with_its_model() {
    reference_agrees("storage::explored", Exercise::Storage);
}
