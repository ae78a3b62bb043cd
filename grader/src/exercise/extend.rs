//! Extend: the holder, and only the holder, renews its lock.
//!
//! The exercise's descriptor: its functions, the chapter that explains it,
//! and its checks with their points. Everything else that lists the
//! exercises (the harness, the points, the layout tests, `cargo course`,
//! `.ci/learner-path`) reads it from [`super::EXERCISES`].

use super::{Exercise, chapter};
use crate::checks::Check;
use crate::checks::extend;
use crate::exercise::points::{DIRECT, EXPLORED};
use crate::explore::{self, Subject};
use crate::lock::Lock;

/// The exercise.
pub const EXERCISE: Exercise = Exercise {
    name: "extend",
    functions: &["extend"],
    chapter: &chapter::RENEWAL,
    says_on_failure: &[crate::judge::faults::ON_ERROR],
    take,
    checks: &[
        Check {
            name: "extend::renews_its_own_lock",
            shows: "A's lock, 6 s left: a renewal for 1.5 s makes it expire 1.5 s from now",
            points: DIRECT,
            run: extend::renews_its_own_lock,
        },
        Check {
            name: "extend::leaves_another_holders_lock",
            shows: "B's lock: A's renewal returns false and leaves its TTL alone",
            points: DIRECT,
            run: extend::leaves_another_holders_lock,
        },
        Check {
            name: "extend::never_brings_back_a_lost_lock",
            shows: "A's lock expired: A's renewal returns false and creates nothing",
            points: DIRECT,
            run: extend::never_brings_back_a_lost_lock,
        },
        Check {
            name: "extend::never_renews_a_lock_that_changed_hands",
            shows: "the lock changes hands at any point: B's lock keeps B's TTL",
            points: DIRECT,
            run: extend::never_renews_a_lock_that_changed_hands,
        },
        Check {
            name: "extend::reports_a_failed_command",
            shows: "an error reply, a dropped connection, a lost or late reply: extend returns the error",
            points: DIRECT,
            run: extend::reports_a_failed_command,
        },
        Check {
            name: "extend::explored",
            shows: "histories drawn from seeds, renewals by holders and others, before and after expiry: extend does what its model says",
            points: EXPLORED,
            run: |c| explore::check(c.check, c.lock, Subject::Extend),
        },
    ],
};

/// Puts this exercise's functions of `from` into `into`.
fn take(from: &Lock, into: &mut Lock) {
    into.extend = from.extend;
}
