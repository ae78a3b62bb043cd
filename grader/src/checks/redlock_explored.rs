//! `redlock::explored`: the learner's `redlock_acquire`, then `redlock_release`, in situations
//! drawn from seeds.
//!
//! Each seed draws a few rounds ([`ROUNDS`]), each a [`Situation`] (a TTL; a node free, held by B,
//! paused or down, each reply on time or late to the millisecond; a fault on one command) played
//! on the nodes with a key of its own (a paused node is stopped for real; a down one is out of
//! every command's reach, [`Cluster::make_unreachable`]); the [`model`](crate::model::redlock) says what a correct Redlock returns there
//! and what it leaves on the nodes, a node whose `SET` met the fault counting as a no. Then A
//! releases, B stepping in at one command boundary in some rounds and a fault meeting one of its
//! commands in others: no node may keep A's token (but one whose delete the fault stopped) or
//! lose B's, and the release counts the nodes whose delete came back done. The first round where
//! the learner's code does otherwise
//! is shrunk, node by node, to the simplest one that still goes wrong, and reported with the seed
//! that replays it (`GRADER_SEED`), as the other explorer checks do. The rounds played are
//! counted by the branches of the model they reached ([`explore`], [`Coverage`]).

use super::Ctx;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::redlock::{TOKEN_A, TOKEN_B, acquire, release};
use super::redlock_release::deletes_heard;
use crate::clock::SLACK_MS;
use crate::error::GradeError;
use crate::explore::{self, Coverage};
use crate::judge::Call;
use crate::judge::redlock::counts_what_came_back;
use crate::lock::Lock;
use crate::model::redlock::{BRANCHES, Meets, ROUNDS, Situation, expect, lost_grant};
use crate::nodes::cluster::{Cluster, enter};
use crate::nodes::{Health, NODES};
use crate::report::{Report, Verdict, trace};
use crate::sandbox::Failure;
use crate::verdict::{Property, Violation};
use crate::wire::{Hit, Step};

/// The calls a trace shows, as its heading names them.
const CALLS: &str = "redlock_acquire` then `redlock_release";

/// How long B's lock lasts: longer than all A's code can take here. A round lasts up to one and
/// a half TTLs (15 s), and A's acquire, the release after its refusal and its own release are
/// three rounds, each command perhaps sent twice (redis-rs loading the release's script), plus
/// the TTL B waits out before stepping in: about 100 s at most.
const B_TTL_MS: u64 = 600_000;

/// One situation played: what went wrong, if anything, and the branches of the model it reached.
struct Round {
    found: Option<Found>,
    branches: Vec<&'static str>,
}

impl Round {
    /// A round that went wrong.
    fn found(found: Found) -> Result<Round, GradeError> {
        Ok(Round {
            found: Some(found),
            branches: Vec::new(),
        })
    }
}

/// What went wrong in one situation.
enum Found {
    Failed(&'static str, Failure, Vec<Step>),
    Wrong(Violation, Vec<Step>),
}

impl Found {
    /// Whether `other` goes wrong the same way, for shrinking.
    fn same_kind(&self, other: &Found) -> bool {
        match (self, other) {
            (Found::Failed(..), Found::Failed(..)) => true,
            (Found::Wrong(a, _), Found::Wrong(b, _)) => a.property == b.property,
            _ => false,
        }
    }
}

/// Explores the seeds of [`explore::seeds`].
pub(crate) fn explored(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    Ok(explore(ctx.check, ctx.lock, &explore::seeds(ctx.check)?)?.0)
}

/// Explores `seeds` with `lock`: the verdict, and the branches of the model the rounds played
/// until then reached.
pub fn explore(
    check: &'static str,
    lock: &Lock,
    seeds: &[u64],
) -> Result<(Verdict, Coverage), GradeError> {
    let ctx = Ctx { check, lock };
    let mut coverage = Coverage::new(check, BRANCHES);
    for &seed in seeds {
        coverage.histories += 1;
        for (round, situation) in Situation::history(seed, NODES).into_iter().enumerate() {
            let played = play(&ctx, &situation)?;
            let Some(found) = played.found else {
                for branch in played.branches {
                    coverage.hit(branch);
                }
                continue;
            };
            if let Found::Failed(function, Failure::NotStarted { message }, _) = found {
                return Ok((Verdict::NotStarted { function, message }, coverage));
            }
            let (situation, found) = shrink(&ctx, situation, found)?;
            return Ok((report(&ctx, seed, round, &situation, found), coverage));
        }
    }
    Ok((Verdict::Pass, coverage))
}

/// The simplest situation, one change at a time from `situation`, that goes wrong as `found`.
fn shrink(
    ctx: &Ctx<'_>,
    mut situation: Situation,
    mut found: Found,
) -> Result<(Situation, Found), GradeError> {
    'simpler: loop {
        for candidate in situation.simpler() {
            if let Some(again) = play(ctx, &candidate)?.found
                && found.same_kind(&again)
            {
                situation = candidate;
                found = again;
                continue 'simpler;
            }
        }
        return Ok((situation, found));
    }
}

/// Plays `situation` with the learner's acquire, then release.
fn play(ctx: &Ctx<'_>, situation: &Situation) -> Result<Round, GradeError> {
    let c = Cluster::open()?.shared();
    {
        let mut cluster = enter(&c);
        for (i, (meets, delay)) in situation.nodes.iter().zip(&situation.delays).enumerate() {
            cluster.delay(i, *delay);
            match meets {
                Meets::Free => {}
                Meets::HeldByB => {
                    cluster.take(i, TOKEN_B, B_TTL_MS)?;
                }
                Meets::Paused => cluster.pause(i)?,
                // Down from the round's start to its end: see `make_unreachable`.
                Meets::Down => cluster.make_unreachable(i),
            }
        }
        if let Some((k, fault)) = situation.fault {
            cluster.fail_at(k, fault);
        }
    }
    let ttl = situation.ttl;
    let got = acquire(&c, ctx.lock, TOKEN_A, ttl)?;
    let (steps, hit) = {
        let mut c = enter(&c);
        // A fault the acquire never met is not the release's.
        let hit = c.take_fault();
        (c.steps(), hit)
    };
    let value = match got.value {
        Ok(value) => value,
        Err(failure) => return Round::found(Found::Failed("redlock_acquire", failure, steps)),
    };
    let lost = lost_grant(situation, hit.as_ref());
    let model = expect(situation, got.spent_ms, lost);
    let (n, spent) = (situation.nodes.len(), got.spent_ms);
    // Why a node said no, when a fault made it: its SET failed, or its OK never came back.
    let said_no = match (&hit, lost) {
        (Some(hit), Some(i)) => format!(" ({}: node {i} said no)", hit.did()),
        _ => String::new(),
    };
    let wrong = |property, what: String| {
        Round::found(Found::Wrong(
            Violation::anytime(property, what),
            steps.clone(),
        ))
    };
    match (value, model.validity) {
        (Some(v), None) if model.grants <= n / 2 => {
            return wrong(
                Property::RedlockNeedsMajority,
                format!(
                    "A's redlock_acquire granted the lock (valid for {} ms) with only {} of the {n} \
                     nodes{said_no}",
                    v.as_millis(),
                    model.grants
                ),
            );
        }
        (Some(v), None) => {
            return wrong(
                Property::RedlockNeedsMajority,
                format!(
                    "A's redlock_acquire granted the lock (valid for {} ms), but asking took {spent} ms \
                     of the {} ms TTL: nothing was left after the drift allowance",
                    v.as_millis(),
                    ttl.as_millis()
                ),
            );
        }
        (None, Some(e)) => {
            return wrong(
                Property::RedlockTakesMajority,
                format!(
                    "A's redlock_acquire returned None, though {} of the {n} nodes granted it{said_no} \
                     and {} ms of validity were left",
                    model.grants,
                    e.as_millis()
                ),
            );
        }
        (Some(v), Some(e)) if v.as_millis().abs_diff(e.as_millis()) > 1 => {
            return wrong(
                Property::RedlockValidity,
                format!(
                    "A's redlock_acquire said valid for {} ms; asking took {spent} ms, so a correct \
                     Redlock says {} ms",
                    v.as_millis(),
                    e.as_millis()
                ),
            );
        }
        _ => {}
    }
    let holders = enter(&c).holders()?;
    for (i, meets) in situation.nodes.iter().enumerate() {
        let held = holders[i].as_deref();
        let (property, what) = match meets {
            Meets::HeldByB if held != Some(TOKEN_B) => (
                Property::ReleaseSparesOthers,
                format!("B held node {i}; after A's redlock_acquire it does not"),
            ),
            Meets::Free if model.validity.is_none() && held == Some(TOKEN_A) => (
                Property::RedlockReleasesOnFailure,
                if lost == Some(i) {
                    format!(
                        "A's redlock_acquire gave up but left A's token on node {i}{said_no}: \
                         a node that seemed to refuse may have set the key, so a refusal \
                         releases on every node"
                    )
                } else {
                    format!("A's redlock_acquire gave up but left A's token on node {i}")
                },
            ),
            // A fault's node may hold A's token or not: its SET may have run.
            Meets::Free if lost == Some(i) => continue,
            Meets::Free if model.validity.is_some() && held != Some(TOKEN_A) => (
                Property::RedlockTakesMajority,
                format!(
                    "A's redlock_acquire granted the lock, but node {i}, free, does not hold A's token"
                ),
            ),
            _ => continue,
        };
        return wrong(property, what);
    }
    let (found, release_hit) = release_phase(ctx, &c, situation)?;
    Ok(Round {
        found,
        branches: situation.branches(hit.as_ref(), release_hit.as_ref()),
    })
}

/// A releases (B stepping in, or a fault meeting a command, where the situation says);
/// afterwards no running node holds A's token (but one whose delete the fault stopped), B keeps
/// every node it held, and the count returned is the nodes whose delete came back done. Also
/// returns what the fault hit.
fn release_phase(
    ctx: &Ctx<'_>,
    c: &crate::nodes::SharedCluster,
    situation: &Situation,
) -> Result<(Option<Found>, Option<Hit>), GradeError> {
    let a_before = a_holds(c)?;
    // How long A's key has left on each node, and when the release begins: a key that runs out
    // while the release goes on is gone without A's delete.
    let (left, started) = {
        let mut c = enter(c);
        let left = (0..c.len())
            .map(|i| c.ttl_left(i))
            .collect::<Result<Vec<_>, _>>()?;
        (left, c.now_ms())
    };
    if let Some((k, fault)) = situation.release_fault {
        let base = enter(c).commands();
        enter(c).fail_at(base + k, fault);
    }
    let stolen = Arc::new(AtomicBool::new(false));
    if let Some(k) = situation.steal_at {
        let ttl_ms = situation.ttl.as_millis() as u64;
        let base = enter(c).commands();
        let flag = Arc::clone(&stolen);
        enter(c).intervene(
            base + k,
            Box::new(move |cluster: &mut Cluster| {
                cluster.advance(ttl_ms);
                for i in 0..cluster.len() {
                    cluster.take(i, TOKEN_B, B_TTL_MS)?;
                }
                flag.store(true, Ordering::SeqCst);
                Ok("A's lock expires everywhere, and B takes every running node".to_owned())
            }),
        );
    }
    let value = release(c, ctx.lock, TOKEN_A)?;
    let (steps, hit) = {
        let mut c = enter(c);
        let hit = c.take_fault();
        (c.steps(), hit)
    };
    let released = match value {
        Ok(released) => released,
        Err(failure) => {
            return Ok((Some(Found::Failed("redlock_release", failure, steps)), hit));
        }
    };
    let stolen = stolen.load(Ordering::SeqCst);
    let holders = enter(c).holders()?;
    // The node whose command the fault stopped may keep A's token: it expires with its TTL.
    let kept = hit
        .as_ref()
        .filter(|h| !h.fault.runs())
        .and_then(|h| h.node);
    for (i, meets) in situation.nodes.iter().enumerate() {
        if enter(c).health(i) != Health::Up || Some(i) == kept {
            continue;
        }
        let held = holders[i].as_deref();
        let b_held = stolen || *meets == Meets::HeldByB;
        let (property, what) = if b_held && held != Some(TOKEN_B) {
            (
                Property::ReleaseSparesOthers,
                format!("B held node {i}; after A's redlock_release it does not"),
            )
        } else if held == Some(TOKEN_A) {
            (
                Property::ReleaseFreesOwnLock,
                format!("after A's redlock_release, node {i} still holds A's token"),
            )
        } else {
            continue;
        };
        let v = Violation::anytime(property, what);
        return Ok((Some(Found::Wrong(v, steps)), hit));
    }
    // Who freed which node is not for the count to say once B stepped in, or once A's key ran
    // out on a node while the release went on.
    let elapsed = enter(c).now_ms() - started;
    let ran_out =
        (0..left.len()).any(|i| a_before[i] && left[i].is_some_and(|ms| ms <= elapsed + SLACK_MS));
    if stolen || ran_out {
        return Ok((None, hit));
    }
    let a_after = a_holds(c)?;
    let heard = deletes_heard(&a_before, &a_after, hit.as_ref());
    let call = Call::at("A", "redlock_release", enter(c).now_ms());
    let wrong = counts_what_came_back(&call, hit.as_ref(), released, heard);
    Ok((wrong.map(|v| Found::Wrong(v, steps)), hit))
}

/// Which nodes are up and hold A's token.
fn a_holds(c: &crate::nodes::SharedCluster) -> Result<Vec<bool>, GradeError> {
    let mut c = enter(c);
    let holders = c.holders()?;
    Ok((0..holders.len())
        .map(|i| c.health(i) == Health::Up && holders[i].as_deref() == Some(TOKEN_A))
        .collect())
}

fn report(ctx: &Ctx<'_>, seed: u64, round: usize, situation: &Situation, found: Found) -> Verdict {
    let replay = format!(
        "Replay: GRADER_SEED={seed:#018x} cargo test -p exercises {}",
        ctx.check
    );
    let shown = format!(
        "The situation (seed {seed:#018x}, round {} of {ROUNDS}, shrunk):\n{situation}",
        round + 1
    );
    match found {
        Found::Failed(function, failure, steps) => Verdict::Fail(Box::new(Report::failed(
            ctx.check,
            ctx.lock.name,
            function,
            failure,
            vec![shown, trace("A", CALLS, &steps), replay],
        ))),
        Found::Wrong(violation, steps) => Verdict::Fail(Box::new(Report::broken(
            ctx.check,
            ctx.lock.name,
            violation,
            vec![shown, trace("A", CALLS, &steps), replay],
        ))),
    }
}
