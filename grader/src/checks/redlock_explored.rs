//! `redlock::explored`: the learner's `redlock_acquire`, then `redlock_release`, in situations
//! drawn from seeds.
//!
//! Each seed draws a few rounds ([`ROUNDS`]), each a [`Situation`] (a TTL; a node free, held by B,
//! paused or down, each reply on time or late to the millisecond) played on fresh nodes; the
//! [`model`](crate::model::redlock) says what a correct Redlock returns there and what it leaves
//! on the nodes; then A releases, B stepping in at one command boundary in some rounds, and no
//! node may keep A's token or lose B's. The first round where the learner's code does otherwise
//! is shrunk, node by node, to the simplest one that still goes wrong, and reported with the seed
//! that replays it (`GRADER_SEED`), as the other explorer checks do. The rounds played are
//! counted by the branches of the model they reached ([`explore`], [`Coverage`]).

use super::Ctx;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::redlock::{TOKEN_A, TOKEN_B, acquire, release};
use crate::error::GradeError;
use crate::explore::{self, Coverage};
use crate::lock::Lock;
use crate::model::redlock::{BRANCHES, Meets, ROUNDS, Situation, expect};
use crate::nodes::cluster::{Cluster, enter};
use crate::nodes::{Health, NODES};
use crate::report::{Report, Verdict, trace};
use crate::sandbox::Failure;
use crate::verdict::{Property, Violation};
use crate::wire::Step;

/// The calls a trace shows, as its heading names them.
const CALLS: &str = "redlock_acquire` then `redlock_release";

/// How long B's lock lasts: longer than all A's code can take here. A round lasts up to one and
/// a half TTLs (15 s), and A's acquire, the release after its refusal and its own release are
/// three rounds, each command perhaps sent twice (redis-rs loading the release's script), plus
/// the TTL B waits out before stepping in: about 100 s at most.
const B_TTL_MS: u64 = 600_000;

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
            let Some(found) = play(&ctx, &situation)? else {
                for branch in situation.branches() {
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
            if let Some(again) = play(ctx, &candidate)?
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

/// Plays `situation` with the learner's acquire; what went wrong, if anything.
fn play(ctx: &Ctx<'_>, situation: &Situation) -> Result<Option<Found>, GradeError> {
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
                Meets::Down => cluster.kill(i),
            }
        }
    }
    let ttl = situation.ttl;
    let got = acquire(&c, ctx.lock, TOKEN_A, ttl)?;
    let steps = enter(&c).steps();
    let value = match got.value {
        Ok(value) => value,
        Err(failure) => return Ok(Some(Found::Failed("redlock_acquire", failure, steps))),
    };
    let model = expect(situation, got.spent_ms);
    let (n, spent) = (situation.nodes.len(), got.spent_ms);
    let wrong = |property, what: String| {
        Ok(Some(Found::Wrong(
            Violation::anytime(property, what),
            steps.clone(),
        )))
    };
    match (value, model.validity) {
        (Some(v), None) if model.grants <= n / 2 => {
            return wrong(
                Property::RedlockNeedsMajority,
                format!(
                    "A's redlock_acquire granted the lock (valid for {} ms) with only {} of the {n} nodes",
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
                    "A's redlock_acquire returned None, though {} of the {n} nodes granted it and \
                     {} ms of validity were left",
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
                format!("A's redlock_acquire gave up but left A's token on node {i}"),
            ),
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
    release_phase(ctx, &c, situation)
}

/// A releases (B stepping in where the situation says); afterwards no running node holds A's
/// token, and B keeps every node it held.
fn release_phase(
    ctx: &Ctx<'_>,
    c: &crate::nodes::SharedCluster,
    situation: &Situation,
) -> Result<Option<Found>, GradeError> {
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
    let steps = enter(c).steps();
    if let Err(failure) = value {
        return Ok(Some(Found::Failed("redlock_release", failure, steps)));
    }
    let stolen = stolen.load(Ordering::SeqCst);
    let holders = enter(c).holders()?;
    for (i, meets) in situation.nodes.iter().enumerate() {
        if enter(c).health(i) != Health::Up {
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
        return Ok(Some(Found::Wrong(v, steps)));
    }
    Ok(None)
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
