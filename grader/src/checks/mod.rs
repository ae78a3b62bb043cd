//! The catalogue of checks: what `cargo test -p exercises` runs.
//!
//! A check is named `exercise::what_it_shows` and tests one exercise's
//! function, with the reference solution standing in for the other
//! exercises, so a learner sees progress exercise by exercise. The
//! `scenarios::…` checks at the end play the course's stories with the
//! learner's whole lock.
//!
//! Checks come in three shapes: a direct call on a prepared world ("B holds
//! the lock; your acquire for A must say no", [`bench`](mod@bench)), a
//! [`Probe`](crate::probe::Probe) that steps in at every command boundary,
//! and a scenario played with the lock and compared, rule by rule and then
//! second by second, with the reference lock's run ([`scenarios`]). Whatever
//! the shape, the rules are judged by [`crate::judge`].
//!
//! This file holds the table; each exercise's checks are in the module of
//! its name, as `exercises/src/` has a file per exercise.

mod acquire;
pub mod bench;
mod extend;
mod fencing;
mod keeper;
mod redlock;
mod redlock_explored;
mod redlock_release;
pub mod redlock_stories;
mod release;
pub mod scenarios;
mod storage;

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::error::GradeError;
use crate::explore::{self, Exercise};
use crate::lock::Lock;
use crate::report::Verdict;
use scenarios::scenario_check;

/// What a check runs with.
pub struct Ctx<'a> {
    /// The check's name.
    pub check: &'static str,
    /// The lock under test.
    pub lock: &'a Lock,
}

/// One check.
pub struct Check {
    /// `exercise::what_it_shows`.
    pub name: &'static str,
    /// What it shows, in one line.
    pub shows: &'static str,
    run: fn(&Ctx<'_>) -> Result<Verdict, GradeError>,
}

impl Check {
    /// Runs the check on `lock`. A check during which the machine stalled is run again
    /// ([`crate::stall`]); one whose lock sent a refused command fails
    /// ([`crate::confine`]).
    pub fn run(&self, lock: &Lock) -> Result<Verdict, GradeError> {
        let ctx = Ctx {
            check: self.name,
            lock,
        };
        crate::stall::rerun(|| {
            crate::confine::watched(self.name, lock, || {
                crate::world::row_not_a_number(self.name, lock, (self.run)(&ctx))
            })
        })
    }
}

/// Every check, exercise by exercise.
pub const CHECKS: &[Check] = &[
    Check {
        name: "token::unique",
        shows: "a thousand tokens are a thousand different tokens",
        run: crate::token::unique,
    },
    Check {
        name: "token::unguessable",
        shows: "tokens carry 120 random bits or more",
        run: crate::token::unguessable,
    },
    Check {
        name: "acquire::takes_a_free_lock",
        shows: "acquire takes a free lock with its token",
        run: |c| acquire::takes_a_free_lock(c, acquire::Taker::Plain(c.lock.acquire)),
    },
    Check {
        name: "acquire::refuses_a_held_lock",
        shows: "acquire leaves another holder's lock and TTL alone",
        run: |c| acquire::refuses_a_held_lock(c, acquire::Taker::Plain(c.lock.acquire)),
    },
    Check {
        name: "acquire::sets_the_ttl_in_milliseconds",
        shows: "a 1.5 s TTL becomes a 1.5 s expiry",
        run: |c| acquire::sets_the_ttl_in_milliseconds(c, acquire::Taker::Plain(c.lock.acquire)),
    },
    Check {
        name: "acquire::one_winner_among_three",
        shows: "three clients racing command by command: one wins",
        run: acquire::race,
    },
    Check {
        name: "acquire::no_lock_without_ttl_after_a_crash",
        shows: "a crash at any point leaves no immortal lock",
        run: acquire::crash,
    },
    Check {
        name: "acquire::a_crashed_holder_frees_the_lock",
        shows: "the crashed-holder scenario",
        run: acquire::crashed_holder,
    },
    Check {
        name: "acquire::explored",
        shows: "histories drawn from seeds, with clients stepping in: acquire does what its model says",
        run: |c| explore::check(c.check, c.lock, Exercise::Acquire),
    },
    Check {
        name: "release::releases_its_own_lock",
        shows: "release deletes the caller's own lock",
        run: release::own,
    },
    Check {
        name: "release::leaves_another_holders_lock",
        shows: "release leaves another client's lock alone",
        run: release::other,
    },
    Check {
        name: "release::never_deletes_a_lock_that_changed_hands",
        shows: "the lock changes hands at any point: release spares it",
        run: release::probe,
    },
    Check {
        name: "release::slow_job",
        shows: "the slow-job scenario: A releases after its lock expired",
        run: release::slow_job,
    },
    Check {
        name: "release::explored",
        shows: "histories drawn from seeds, with clients stepping in: release does what its model says",
        run: |c| explore::check(c.check, c.lock, Exercise::Release),
    },
    Check {
        name: "fencing::grants_a_token",
        shows: "a free lock comes with the next fencing token",
        run: |c| acquire::takes_a_free_lock(c, acquire::Taker::Fenced(c.lock.acquire_fenced)),
    },
    Check {
        name: "fencing::denied_while_held",
        shows: "a held lock gives no token and stays as it is",
        run: |c| acquire::refuses_a_held_lock(c, acquire::Taker::Fenced(c.lock.acquire_fenced)),
    },
    Check {
        name: "fencing::sets_the_ttl_in_milliseconds",
        shows: "a 1.5 s TTL becomes a 1.5 s expiry",
        run: |c| {
            acquire::sets_the_ttl_in_milliseconds(c, acquire::Taker::Fenced(c.lock.acquire_fenced))
        },
    },
    Check {
        name: "fencing::tokens_grow_with_every_grant",
        shows: "grant after grant, the token grows",
        run: fencing::grow,
    },
    Check {
        name: "fencing::lock_and_token_in_one_step",
        shows: "the lock changes hands at any point: the newest grant has the largest token",
        run: fencing::probe,
    },
    Check {
        name: "fencing::gc_pause_fenced",
        shows: "the GC-pause scenario with your fenced acquire",
        run: |c| {
            scenario_check(
                c,
                "gc-pause-fenced",
                Exercise::Fencing.lock_under_test(c.lock),
            )
        },
    },
    Check {
        name: "fencing::explored",
        shows: "histories drawn from seeds, counters near 9, 99 and 2^53: acquire_fenced does what its model says",
        run: |c| explore::check(c.check, c.lock, Exercise::Fencing),
    },
    Check {
        name: "storage::accepts_newer_and_equal_tokens",
        shows: "33, 33 again, then 34: all accepted",
        run: storage::accepts,
    },
    Check {
        name: "storage::rejects_an_older_token",
        shows: "34, then 33: refused",
        run: storage::rejects,
    },
    Check {
        name: "storage::remembers_the_highest_token",
        shows: "the row's fence field follows the highest token",
        run: storage::remembers,
    },
    Check {
        name: "storage::fences_reads",
        shows: "a read with 34 fences off 33",
        run: storage::reads,
    },
    Check {
        name: "storage::checks_and_writes_in_one_step",
        shows: "a newer write lands at any point: the stale one never overwrites it",
        run: storage::probe,
    },
    Check {
        name: "storage::fenced_reads",
        shows: "the fenced-reads scenario with your storage",
        run: |c| scenario_check(c, "fenced-reads", Exercise::Storage.lock_under_test(c.lock)),
    },
    Check {
        name: "storage::long_pause_fenced",
        shows: "the 40 s pause with your storage",
        run: |c| {
            scenario_check(
                c,
                "long-pause-fenced",
                Exercise::Storage.lock_under_test(c.lock),
            )
        },
    },
    Check {
        name: "storage::explored",
        shows: "histories drawn from seeds, rows missing or partial, tokens across 9 → 10: the storage does what its model says",
        run: |c| explore::check(c.check, c.lock, Exercise::Storage),
    },
    Check {
        name: "extend::renews_its_own_lock",
        shows: "A's lock, 6 s left: a renewal for 1.5 s makes it expire 1.5 s from now",
        run: extend::renews_its_own_lock,
    },
    Check {
        name: "extend::leaves_another_holders_lock",
        shows: "B's lock: A's renewal returns false and leaves its TTL alone",
        run: extend::leaves_another_holders_lock,
    },
    Check {
        name: "extend::never_brings_back_a_lost_lock",
        shows: "A's lock expired: A's renewal returns false and creates nothing",
        run: extend::never_brings_back_a_lost_lock,
    },
    Check {
        name: "extend::never_renews_a_lock_that_changed_hands",
        shows: "the lock changes hands at any point: B's lock keeps B's TTL",
        run: extend::never_renews_a_lock_that_changed_hands,
    },
    Check {
        name: "extend::explored",
        shows: "histories drawn from seeds, renewals by holders and others, before and after expiry: extend does what its model says",
        run: |c| explore::check(c.check, c.lock, Exercise::Extend),
    },
    Check {
        name: "keeper::renews_in_time",
        shows: "four leases of a healthy job: the lock never falls below two thirds of its TTL",
        run: keeper::renews_in_time,
    },
    Check {
        name: "keeper::stops_the_job_when_a_renewal_fails",
        shows: "A freezes past its TTL at every tick in turn: the job stops before its next write, for good",
        run: keeper::stops_the_job_when_a_renewal_fails,
    },
    Check {
        name: "keeper::renewal_pause",
        shows: "the renewal-pause scenario with your keeper: A stops before writing",
        run: keeper::renewal_pause,
    },
    Check {
        name: "keeper::explored",
        shows: "histories drawn from seeds, ticks at odd times, the key expiring, taken, deleted or a hash between them: each tick does what its model says",
        run: |c| explore::check(c.check, c.lock, Exercise::Keeper),
    },
    Check {
        name: "redlock::takes_a_majority",
        shows: "five free nodes: the lock on all five, valid for the TTL minus the drift",
        run: redlock::takes_a_majority,
    },
    Check {
        name: "redlock::counts_the_time_spent",
        shows: "nodes that answer late: the time spent comes off the validity",
        run: redlock::counts_the_time_spent,
    },
    Check {
        name: "redlock::carries_on_without_two_nodes",
        shows: "a node paused and a node down: three nodes are still a majority",
        run: redlock::carries_on_without_two_nodes,
    },
    Check {
        name: "redlock::refuses_without_a_majority",
        shows: "two nodes of five: refused, and released on every node",
        run: redlock::refuses_without_a_majority,
    },
    Check {
        name: "redlock::gives_up_when_the_ttl_is_spent",
        shows: "a TTL spent while asking: refused, and released on every node",
        run: redlock::gives_up_when_the_ttl_is_spent,
    },
    Check {
        name: "redlock::release_frees_every_node",
        shows: "release deletes the caller's lock on every node",
        run: redlock_release::release_frees_every_node,
    },
    Check {
        name: "redlock::release_spares_another_holder",
        shows: "release leaves the nodes another client took",
        run: redlock_release::release_spares_another_holder,
    },
    Check {
        name: "redlock::release_compares_and_deletes_in_one_step",
        shows: "another client stepping in at every boundary of the release keeps its lock",
        run: redlock_release::release_compares_and_deletes_in_one_step,
    },
    Check {
        name: "redlock::explored",
        shows: "situations drawn from seeds, nodes paused, down, held or late: acquire does what its model says",
        run: redlock_explored::explored,
    },
    Check {
        name: "redlock::clock_jump",
        shows: "Kleppmann's clock jump: two clients each hold a majority",
        run: |c| redlock_stories::check(c, "clock_jump"),
    },
    Check {
        name: "redlock::restart_without_persistence",
        shows: "a node restarted empty grants the lock a second time",
        run: |c| redlock_stories::check(c, "restart_without_persistence"),
    },
    Check {
        name: "redlock::delayed_restart",
        shows: "a node that stays down for the TTL prevents the second grant",
        run: |c| redlock_stories::check(c, "delayed_restart"),
    },
    Check {
        name: "redlock::pause_longer_than_validity",
        shows: "a client paused past its validity: the next client takes the lock",
        run: |c| redlock_stories::check(c, "pause_longer_than_validity"),
    },
    Check {
        name: "redlock::pause_longer_than_validity_fenced",
        shows: "the same pause with fencing tokens from a counter: A's late write rejected",
        run: |c| redlock_stories::check(c, "pause_longer_than_validity_fenced"),
    },
    Check {
        name: "scenarios::normal_run",
        shows: "three jobs, counter 3",
        run: |c| scenario_check(c, "normal-run", *c.lock),
    },
    Check {
        name: "scenarios::race",
        shows: "three clients at the same instant",
        run: |c| scenario_check(c, "race", *c.lock),
    },
    Check {
        name: "scenarios::gc_pause",
        shows: "A freezes past its TTL; no fencing",
        run: |c| scenario_check(c, "gc-pause", *c.lock),
    },
    Check {
        name: "scenarios::gc_pause_fenced",
        shows: "the same pause with fencing: A's write rejected",
        run: |c| scenario_check(c, "gc-pause-fenced", *c.lock),
    },
    Check {
        name: "scenarios::fenced_reads",
        shows: "B's fenced read fences A off",
        run: |c| scenario_check(c, "fenced-reads", *c.lock),
    },
    Check {
        name: "scenarios::slow_job",
        shows: "a 12 s job over a 10 s TTL",
        run: |c| scenario_check(c, "slow-job", *c.lock),
    },
    Check {
        name: "scenarios::long_pause",
        shows: "a 40 s pause over a 30 s TTL",
        run: |c| scenario_check(c, "long-pause", *c.lock),
    },
    Check {
        name: "scenarios::long_pause_fenced",
        shows: "the 40 s pause with fencing",
        run: |c| scenario_check(c, "long-pause-fenced", *c.lock),
    },
    Check {
        name: "scenarios::crashed_holder",
        shows: "the holder crashes; its lock frees itself",
        run: |c| scenario_check(c, "crashed-holder", *c.lock),
    },
    Check {
        name: "scenarios::failover_lost_lock",
        shows: "the primary dies before its replica has A's lock: B gets it too",
        run: |c| scenario_check(c, "failover-lost-lock", *c.lock),
    },
    Check {
        name: "scenarios::failover_wait",
        shows: "WAIT after each grant: a lock no replica has is given back",
        run: |c| scenario_check(c, "failover-wait", *c.lock),
    },
];

/// The reference's play of the story `name`, played once per process and then remembered.
///
/// A story check compares the lock's run with the reference's, and the reference's is the same
/// on every run (`tests/determinism.rs` holds it to that). A learner's check runs in a process of
/// its own and plays it once anyway; the grader's own tests grade many locks in one process, and
/// the failover stories spend real seconds on every play.
pub(crate) fn reference_play<T: Clone>(
    plays: &Mutex<BTreeMap<&'static str, T>>,
    name: &'static str,
    play: impl FnOnce() -> Result<T, GradeError>,
) -> Result<T, GradeError> {
    if let Some(known) = plays.lock().unwrap_or_else(|p| p.into_inner()).get(name) {
        return Ok(known.clone());
    }
    // Played outside the lock: two checks may both play it once, which is harmless.
    let played = play()?;
    plays
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(name, played.clone());
    Ok(played)
}

/// The check called `name`.
pub fn named(name: &str) -> Option<&'static Check> {
    CHECKS.iter().find(|c| c.name == name)
}

/// Whether the check called `name` spends real time: the failover stories wait for real
/// replication and for `WAIT`'s time-outs, seconds that no virtual clock can skip. The harness
/// starts such checks first, so that they run beside the others instead of after them.
pub fn waits_in_real_time(name: &str) -> bool {
    name.strip_prefix("scenarios::")
        .and_then(|story| crate::scenario::named(&story.replace('_', "-")))
        .is_some_and(|story| story.replicated.is_some())
}

/// Turns `Err(verdict)` into an early return of that verdict.
macro_rules! called {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(verdict) => return Ok(verdict),
        }
    };
}
pub(crate) use called;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_failover_stories_wait_in_real_time() {
        let slow: Vec<&str> = CHECKS
            .iter()
            .map(|c| c.name)
            .filter(|name| waits_in_real_time(name))
            .collect();
        assert_eq!(
            slow,
            ["scenarios::failover_lost_lock", "scenarios::failover_wait"]
        );
    }
}
