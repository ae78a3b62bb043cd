//! Acquire: take a free lock with a TTL, in one command.
//!
//! The exercise's descriptor: its functions, the chapter that explains it,
//! and its checks with their points. Everything else that lists the
//! exercises (the harness, the points, the layout tests, `cargo course`,
//! `.ci/learner-path`) reads it from [`super::EXERCISES`].

use super::{Exercise, chapter};
use crate::checks::Check;
use crate::checks::acquire;
use crate::exercise::points::{DIRECT, EXPLORED};
use crate::explore::{self, Subject};
use crate::lock::Lock;

/// The exercise.
pub const EXERCISE: Exercise = Exercise {
    name: "acquire",
    functions: &["acquire"],
    chapter: &chapter::SINGLE_INSTANCE,
    says_on_failure: &[crate::judge::faults::ON_ERROR],
    take,
    checks: &[
        Check {
            name: "acquire::takes_a_free_lock",
            shows: "acquire takes a free lock with its token",
            points: DIRECT,
            run: |c| acquire::takes_a_free_lock(c, acquire::Taker::Plain(c.lock.acquire)),
        },
        Check {
            name: "acquire::refuses_a_held_lock",
            shows: "acquire leaves another holder's lock and TTL alone",
            points: DIRECT,
            run: |c| acquire::refuses_a_held_lock(c, acquire::Taker::Plain(c.lock.acquire)),
        },
        Check {
            name: "acquire::sets_the_ttl_in_milliseconds",
            shows: "a 1.5 s TTL becomes a 1.5 s expiry",
            points: DIRECT,
            run: |c| {
                acquire::sets_the_ttl_in_milliseconds(c, acquire::Taker::Plain(c.lock.acquire))
            },
        },
        Check {
            name: "acquire::one_winner_among_three",
            shows: "three clients racing command by command: one wins",
            points: DIRECT,
            run: acquire::race,
        },
        Check {
            name: "acquire::no_lock_without_ttl_after_a_crash",
            shows: "a crash at any point leaves no immortal lock",
            points: DIRECT,
            run: acquire::crash,
        },
        Check {
            name: "acquire::reports_a_failed_command",
            shows: "an error reply, a dropped connection, a lost or late reply: acquire returns the error",
            points: DIRECT,
            run: acquire::reports_a_failed_command,
        },
        Check {
            name: "acquire::a_crashed_holder_frees_the_lock",
            shows: "the crashed-holder scenario",
            points: DIRECT,
            run: acquire::crashed_holder,
        },
        Check {
            name: "acquire::explored",
            shows: "histories drawn from seeds, with clients stepping in: acquire does what its model says",
            points: EXPLORED,
            run: |c| explore::check(c.check, c.lock, Subject::Acquire),
        },
    ],
};

/// Puts this exercise's functions of `from` into `into`.
fn take(from: &Lock, into: &mut Lock) {
    into.acquire = from.acquire;
}
