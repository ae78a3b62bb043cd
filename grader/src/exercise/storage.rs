//! Storage: the storage's side of fencing, which refuses a token older than one it has seen.
//!
//! The exercise's descriptor: its functions, the chapter that explains it,
//! and its checks with their points. Everything else that lists the
//! exercises (the harness, the points, the layout tests, `cargo course`,
//! `.ci/learner-path`) reads it from [`super::EXERCISES`].

use super::{Exercise, chapter};
use crate::checks::Check;
use crate::checks::scenarios::scenario_check;
use crate::checks::storage;
use crate::exercise::points::{DIRECT, EXPLORED};
use crate::explore::{self, Subject};
use crate::lock::Lock;

/// The exercise.
pub const EXERCISE: Exercise = Exercise {
    name: "storage",
    functions: &["fenced_write", "fenced_read"],
    chapter: &chapter::FENCING_STORAGE,
    says_on_failure: &[crate::judge::faults::ON_ERROR],
    take,
    checks: &[
        Check {
            name: "storage::accepts_newer_and_equal_tokens",
            shows: "33, 33 again, then 34: all accepted",
            points: DIRECT,
            run: storage::accepts,
        },
        Check {
            name: "storage::rejects_an_older_token",
            shows: "34, then 33: refused",
            points: DIRECT,
            run: storage::rejects,
        },
        Check {
            name: "storage::remembers_the_highest_token",
            shows: "the row's fence field follows the highest token",
            points: DIRECT,
            run: storage::remembers,
        },
        Check {
            name: "storage::fences_reads",
            shows: "a read with 34 fences off 33",
            points: DIRECT,
            run: storage::reads,
        },
        Check {
            name: "storage::checks_and_writes_in_one_step",
            shows: "a newer write lands at any point: the stale one never overwrites it",
            points: DIRECT,
            run: storage::probe,
        },
        Check {
            name: "storage::fenced_reads",
            shows: "the fenced-reads scenario with your storage",
            points: DIRECT,
            run: |c| scenario_check(c, "fenced-reads", Subject::Storage.lock_under_test(c.lock)),
        },
        Check {
            name: "storage::long_pause_fenced",
            shows: "the 40 s pause with your storage",
            points: DIRECT,
            run: |c| {
                scenario_check(
                    c,
                    "long-pause-fenced",
                    Subject::Storage.lock_under_test(c.lock),
                )
            },
        },
        Check {
            name: "storage::explored",
            shows: "histories drawn from seeds, rows missing or partial, tokens across 9 → 10: the storage does what its model says",
            points: EXPLORED,
            run: |c| explore::check(c.check, c.lock, Subject::Storage),
        },
    ],
};

/// Puts this exercise's functions of `from` into `into`.
fn take(from: &Lock, into: &mut Lock) {
    into.fenced_write = from.fenced_write;
    into.fenced_read = from.fenced_read;
}
