//! Release: delete the lock only while it is still the caller's, in one step.
//!
//! The exercise's descriptor: its functions, the chapter that explains it,
//! and its checks with their points. Everything else that lists the
//! exercises (the harness, the points, the layout tests, `cargo course`,
//! `.ci/learner-path`) reads it from [`super::EXERCISES`].

use super::{Exercise, chapter};
use crate::checks::Check;
use crate::checks::release;
use crate::exercise::points::{DIRECT, EXPLORED};
use crate::explore::{self, Subject};
use crate::lock::Lock;

/// The exercise.
pub const EXERCISE: Exercise = Exercise {
    name: "release",
    functions: &["release"],
    chapter: &chapter::RELEASING,
    says_on_failure: &[crate::judge::faults::ON_ERROR],
    take,
    checks: &[
        Check {
            name: "release::releases_its_own_lock",
            shows: "release deletes the caller's own lock",
            points: DIRECT,
            run: release::own,
        },
        Check {
            name: "release::leaves_another_holders_lock",
            shows: "release leaves another client's lock alone",
            points: DIRECT,
            run: release::other,
        },
        Check {
            name: "release::never_deletes_a_lock_that_changed_hands",
            shows: "the lock changes hands at any point: release spares it",
            points: DIRECT,
            run: release::probe,
        },
        Check {
            name: "release::reports_a_failed_command",
            shows: "an error reply, a dropped connection, a lost or late reply: release returns the error",
            points: DIRECT,
            run: release::reports_a_failed_command,
        },
        Check {
            name: "release::slow_job",
            shows: "the slow-job scenario: A releases after its lock expired",
            points: DIRECT,
            run: release::slow_job,
        },
        Check {
            name: "release::explored",
            shows: "histories drawn from seeds, with clients stepping in: release does what its model says",
            points: EXPLORED,
            run: |c| explore::check(c.check, c.lock, Subject::Release),
        },
    ],
};

/// Puts this exercise's functions of `from` into `into`.
fn take(from: &Lock, into: &mut Lock) {
    into.release = from.release;
}
