//! Fencing: every grant comes with a larger fencing token, in the same step.
//!
//! The exercise's descriptor: its functions, the chapter that explains it,
//! and its checks with their points. Everything else that lists the
//! exercises (the harness, the points, the layout tests, `cargo course`,
//! `.ci/learner-path`) reads it from [`super::EXERCISES`].

use super::{Exercise, chapter};
use crate::checks::Check;
use crate::checks::scenarios::scenario_check;
use crate::checks::{acquire, fencing};
use crate::exercise::points::{DIRECT, EXPLORED};
use crate::explore::{self, Subject};
use crate::lock::Lock;

/// The exercise.
pub const EXERCISE: Exercise = Exercise {
    name: "fencing",
    functions: &["acquire_fenced"],
    chapter: &chapter::FENCING,
    says_on_failure: &[crate::judge::faults::ON_ERROR],
    take,
    checks: &[
        Check {
            name: "fencing::grants_a_token",
            shows: "a free lock comes with the next fencing token",
            points: DIRECT,
            run: |c| acquire::takes_a_free_lock(c, acquire::Taker::Fenced(c.lock.acquire_fenced)),
        },
        Check {
            name: "fencing::denied_while_held",
            shows: "a held lock gives no token and stays as it is",
            points: DIRECT,
            run: |c| acquire::refuses_a_held_lock(c, acquire::Taker::Fenced(c.lock.acquire_fenced)),
        },
        Check {
            name: "fencing::sets_the_ttl_in_milliseconds",
            shows: "a 1.5 s TTL becomes a 1.5 s expiry",
            points: DIRECT,
            run: |c| {
                acquire::sets_the_ttl_in_milliseconds(
                    c,
                    acquire::Taker::Fenced(c.lock.acquire_fenced),
                )
            },
        },
        Check {
            name: "fencing::tokens_grow_with_every_grant",
            shows: "grant after grant, the token grows",
            points: DIRECT,
            run: fencing::grow,
        },
        Check {
            name: "fencing::lock_and_token_in_one_step",
            shows: "the lock changes hands at any point: the newest grant has the largest token",
            points: DIRECT,
            run: fencing::probe,
        },
        Check {
            name: "fencing::gc_pause_fenced",
            shows: "the GC-pause scenario with your fenced acquire",
            points: DIRECT,
            run: |c| {
                scenario_check(
                    c,
                    "gc-pause-fenced",
                    Subject::Fencing.lock_under_test(c.lock),
                )
            },
        },
        Check {
            name: "fencing::explored",
            shows: "histories drawn from seeds, counters near 9, 99 and 2^53: acquire_fenced does what its model says",
            points: EXPLORED,
            run: |c| explore::check(c.check, c.lock, Subject::Fencing),
        },
    ],
};

/// Puts this exercise's functions of `from` into `into`.
fn take(from: &Lock, into: &mut Lock) {
    into.acquire_fenced = from.acquire_fenced;
}
