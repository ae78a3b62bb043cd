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
//! The table of checks is the exercises' descriptors ([`crate::exercise`]),
//! gathered in [`CHECKS`]; each exercise's checks are in the module of its
//! name here, as `exercises/src/` has a file per exercise.

pub(crate) mod acquire;
pub mod bench;
pub(crate) mod extend;
pub(crate) mod fencing;
pub(crate) mod keeper;
pub(crate) mod redlock;
pub mod redlock_explored;
pub(crate) mod redlock_release;
pub mod redlock_stories;
pub(crate) mod release;
pub mod scenarios;
pub(crate) mod storage;
pub(crate) mod token;

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::error::GradeError;
use crate::exercise::EXERCISES;
use crate::lock::Lock;
use crate::report::Verdict;

/// What a check runs with.
pub struct Ctx<'a> {
    /// The check's name.
    pub check: &'static str,
    /// The lock under test.
    pub lock: &'a Lock,
}

/// One check.
#[derive(Clone, Copy)]
pub struct Check {
    /// `exercise::what_it_shows`.
    pub name: &'static str,
    /// What it shows, in one line.
    pub shows: &'static str,
    /// What it is worth in the results instructors read
    /// ([`crate::exercise::points`]).
    pub points: u32,
    /// What it does.
    pub(crate) run: fn(&Ctx<'_>) -> Result<Verdict, GradeError>,
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
            let watched = crate::confine::watched(|| (self.run)(&ctx));
            Verdict::of_watched(self.name, lock.name, watched)
        })
    }
}

/// Every check, exercise by exercise in the course's order, then the
/// stories played with the whole lock: the checks of the exercises'
/// descriptors ([`crate::exercise::EXERCISES`]), gathered when the grader is
/// compiled, so that no list of checks is kept by hand.
pub const CHECKS: &[Check] = &GATHERED;

/// How many checks the descriptors hold.
const COUNT: usize = {
    let mut n = crate::exercise::scenarios::CHECKS.len();
    let mut i = 0;
    while i < EXERCISES.len() {
        n += EXERCISES[i].checks.len();
        i += 1;
    }
    n
};

/// The descriptors' checks, one after the other.
const GATHERED: [Check; COUNT] = {
    let groups = EXERCISES;
    // Every slot is written below; the first check only fills the array until then.
    let mut all = [crate::exercise::scenarios::CHECKS[0]; COUNT];
    let mut at = 0;
    let mut g = 0;
    while g <= groups.len() {
        let checks = if g < groups.len() {
            groups[g].checks
        } else {
            crate::exercise::scenarios::CHECKS
        };
        let mut c = 0;
        while c < checks.len() {
            all[at] = checks[c];
            at += 1;
            c += 1;
        }
        g += 1;
    }
    all
};

/// The reference's play of the story `name`, played once per process and then remembered.
///
/// A story check compares the lock's run with the reference's, and the reference's is the same
/// on every run (`grader/catalogue/tests/determinism.rs` holds it to that). A learner's check
/// runs in a process of its own and plays it once anyway; the grader's own tests grade many locks
/// in one process, and the failover stories spend real seconds on every play.
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
/// replication (a replica that joins, `WAIT` on a linked one), which no virtual clock can skip.
/// The harness starts such checks first ([`start_rank`]), so that they run beside the others
/// instead of after them.
pub fn waits_in_real_time(name: &str) -> bool {
    name.strip_prefix("scenarios::")
        .and_then(|story| crate::scenario::named(&story.replace('_', "-")))
        .is_some_and(|story| matches!(story.topology, crate::story::Topology::Replicated { .. }))
}

/// Where the check called `name` comes in the order the harness starts checks in: the longest
/// first, so that a run does not end with one long check alone on the machine while the others
/// have long finished. First the stories that wait in real time, then the explorer that plays
/// its histories on nodes of its own (Redlock's), then the other explorers, which play many
/// histories each, then the other checks that start nodes, then the rest, each rank in the
/// course's order.
pub fn start_rank(name: &str) -> u8 {
    let explored = name.ends_with("::explored");
    match (waits_in_real_time(name), explored, starts_nodes(name)) {
        (true, _, _) => 0,
        (false, true, true) => 1,
        (false, true, false) => 2,
        (false, false, true) => 3,
        (false, false, false) => 4,
    }
}

/// Whether the check called `name` starts nodes of its own: Redlock's five, or the primary and
/// replica of a failover story.
pub fn starts_nodes(name: &str) -> bool {
    name.starts_with("redlock::") || waits_in_real_time(name)
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

    /// The harness starts the long checks first: the failover stories, then Redlock's
    /// explorer, then the other explorers, then the checks with nodes, then the rest.
    #[test]
    fn the_longest_checks_start_first() {
        let mut names: Vec<&str> = CHECKS.iter().map(|c| c.name).collect();
        names.sort_by_key(|name| start_rank(name));
        assert_eq!(
            names[..4],
            [
                "scenarios::failover_lost_lock",
                "scenarios::failover_wait",
                "redlock::explored",
                "acquire::explored",
            ]
        );
        let last_explorer = names.iter().rposition(|n| n.ends_with("::explored"));
        let first_plain = names
            .iter()
            .position(|n| !n.ends_with("::explored") && !starts_nodes(n));
        assert!(last_explorer < first_plain, "{names:?}");
    }
}
