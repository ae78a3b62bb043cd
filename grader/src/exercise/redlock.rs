//! Redlock: a lock on a majority of five nodes, for less than its TTL.
//!
//! The exercise's descriptor: its functions, the chapter that explains it,
//! and its checks with their points. Everything else that lists the
//! exercises (the harness, the points, the layout tests, `cargo course`,
//! `.ci/learner-path`) reads it from [`super::EXERCISES`].

use super::{Exercise, chapter};
use crate::checks::Check;
use crate::checks::redlock_stories;
use crate::checks::{redlock, redlock_explored, redlock_release};
use crate::exercise::points::{DIRECT, EXPLORED, STORY};
use crate::lock::Lock;

/// The exercise.
pub const EXERCISE: Exercise = Exercise {
    name: "redlock",
    functions: &["redlock_acquire", "redlock_release"],
    chapter: &chapter::REDLOCK_PRACTICE,
    says_on_failure: &[
        crate::judge::redlock::ON_ERROR,
        crate::judge::redlock::ON_RELEASE_ERROR,
    ],
    take,
    checks: &[
        Check {
            name: "redlock::takes_a_majority",
            shows: "five free nodes: the lock on all five, valid for the TTL minus the drift",
            points: DIRECT,
            run: redlock::takes_a_majority,
        },
        Check {
            name: "redlock::counts_the_time_spent",
            shows: "nodes that answer late: the time spent comes off the validity",
            points: DIRECT,
            run: redlock::counts_the_time_spent,
        },
        Check {
            name: "redlock::carries_on_without_two_nodes",
            shows: "a node paused and a node down: three nodes are still a majority",
            points: DIRECT,
            run: redlock::carries_on_without_two_nodes,
        },
        Check {
            name: "redlock::refuses_without_a_majority",
            shows: "two nodes of five: refused, and released on every node",
            points: DIRECT,
            run: redlock::refuses_without_a_majority,
        },
        Check {
            name: "redlock::gives_up_when_the_ttl_is_spent",
            shows: "a TTL spent while asking: refused, and released on every node",
            points: DIRECT,
            run: redlock::gives_up_when_the_ttl_is_spent,
        },
        Check {
            name: "redlock::counts_a_failed_node_as_a_no",
            shows: "B holds 2 of 5 nodes, and one of A's commands meets an error reply, a dropped connection, a lost or late reply: without that node's OK, no grant",
            points: DIRECT,
            run: redlock::counts_a_failed_node_as_a_no,
        },
        Check {
            name: "redlock::release_frees_every_node",
            shows: "release deletes the caller's lock on every node",
            points: DIRECT,
            run: redlock_release::release_frees_every_node,
        },
        Check {
            name: "redlock::release_spares_another_holder",
            shows: "release leaves the nodes another client took",
            points: DIRECT,
            run: redlock_release::release_spares_another_holder,
        },
        Check {
            name: "redlock::release_counts_what_came_back",
            shows: "one of the release's commands meets an error reply, a dropped connection, a lost or late reply: that node is not counted as freed",
            points: DIRECT,
            run: redlock_release::release_counts_what_came_back,
        },
        Check {
            name: "redlock::release_compares_and_deletes_in_one_step",
            shows: "another client stepping in at every boundary of the release keeps its lock",
            points: DIRECT,
            run: redlock_release::release_compares_and_deletes_in_one_step,
        },
        Check {
            name: "redlock::explored",
            shows: "situations drawn from seeds, nodes paused, down, held or late: acquire does what its model says",
            points: EXPLORED,
            run: redlock_explored::explored,
        },
        Check {
            name: "redlock::clock_jump",
            shows: "Kleppmann's clock jump: two clients each hold a majority",
            points: STORY,
            run: |c| redlock_stories::check(c, "clock_jump"),
        },
        Check {
            name: "redlock::restart_without_persistence",
            shows: "a node restarted empty grants the lock a second time",
            points: STORY,
            run: |c| redlock_stories::check(c, "restart_without_persistence"),
        },
        Check {
            name: "redlock::delayed_restart",
            shows: "a node that stays down for the TTL prevents the second grant",
            points: STORY,
            run: |c| redlock_stories::check(c, "delayed_restart"),
        },
        Check {
            name: "redlock::pause_longer_than_validity",
            shows: "a client paused past its validity: the next client takes the lock",
            points: STORY,
            run: |c| redlock_stories::check(c, "pause_longer_than_validity"),
        },
        Check {
            name: "redlock::pause_longer_than_validity_fenced",
            shows: "the same pause with fencing tokens from a counter: A's late write rejected",
            points: STORY,
            run: |c| redlock_stories::check(c, "pause_longer_than_validity_fenced"),
        },
    ],
};

/// Puts this exercise's functions of `from` into `into`.
fn take(from: &Lock, into: &mut Lock) {
    into.redlock_acquire = from.redlock_acquire;
    into.redlock_release = from.redlock_release;
}
