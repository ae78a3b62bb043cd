//! Keeper: a lease keeper renews in time and stops the job once a renewal fails.
//!
//! The exercise's descriptor: its functions, the chapter that explains it,
//! and its checks with their points. Everything else that lists the
//! exercises (the harness, the points, the layout tests, `cargo course`,
//! `.ci/learner-path`) reads it from [`super::EXERCISES`].

use super::{Exercise, chapter};
use crate::checks::Check;
use crate::checks::keeper;
use crate::exercise::points::{DIRECT, EXPLORED};
use crate::explore::{self, Subject};
use crate::lock::Lock;

/// The exercise.
pub const EXERCISE: Exercise = Exercise {
    name: "keeper",
    functions: &["keep_alive"],
    chapter: &chapter::RENEWAL,
    says_on_failure: &[crate::judge::keeper::ON_FAILED_RENEWAL],
    take,
    checks: &[
        Check {
            name: "keeper::renews_in_time",
            shows: "four leases of a healthy job: the lock never falls below two thirds of its TTL",
            points: DIRECT,
            run: keeper::renews_in_time,
        },
        Check {
            name: "keeper::stops_the_job_when_a_renewal_fails",
            shows: "A freezes past its TTL at every tick in turn: the job stops before its next write, for good",
            points: DIRECT,
            run: keeper::stops_the_job_when_a_renewal_fails,
        },
        Check {
            name: "keeper::reports_a_failed_command",
            shows: "a renewal is due, and its command meets an error reply, a dropped connection, a lost or late reply: the keeper sets `lost`",
            points: DIRECT,
            run: keeper::reports_a_failed_command,
        },
        Check {
            name: "keeper::renewal_pause",
            shows: "the renewal-pause scenario with your keeper: A stops before writing",
            points: DIRECT,
            run: keeper::renewal_pause,
        },
        Check {
            name: "keeper::explored",
            shows: "histories drawn from seeds, ticks at odd times, the key expiring, taken, deleted or a hash between them: each tick does what its model says",
            points: EXPLORED,
            run: |c| explore::check(c.check, c.lock, Subject::Keeper),
        },
    ],
};

/// Puts this exercise's functions of `from` into `into`.
fn take(from: &Lock, into: &mut Lock) {
    into.keep_alive = from.keep_alive;
}
