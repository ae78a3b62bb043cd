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
use crate::clock::SLACK_MS;
use crate::error::GradeError;
use crate::explore::{self, Coverage};
use crate::judge::redlock::{self as judge, Modelled};
use crate::judge::{Call, Held};
use crate::lock::Lock;
use crate::model::redlock::{BRANCHES, Meets, ROUNDS, Situation, expect, lost_grant};
use crate::nodes::cluster::{Cluster, enter};
use crate::nodes::{Health, NODES};
use crate::report::{Report, Verdict, trace};
use crate::sandbox::Failure;
use crate::verdict::Violation;
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
    // A grant is judged by the whole call, a refusal by when the lock reckoned its time: the
    // release that follows a refusal costs time of its own.
    let spent_ms = if value.is_some() {
        got.spent_ms
    } else {
        got.reckoned_ms
    };
    let outcome = expect(situation, spent_ms, lost);
    let model = Modelled {
        grants: outcome.grants,
        validity: outcome.validity,
        or_refused: outcome.or_refused,
        nodes: situation.nodes.len(),
        spent_ms,
        ttl: situation.ttl,
        lost: lost.zip(hit.as_ref()),
    };
    let call = Call::anytime("A", "redlock_acquire");
    if let Some(v) = judge::as_modelled(&call, value, &model) {
        return Round::found(Found::Wrong(v, steps));
    }
    // Where the model takes a grant or a refusal, the nodes are judged by what the lock chose.
    let model = Modelled {
        validity: model.validity.filter(|_| value.is_some()),
        ..model
    };
    let holders = enter(&c).holders()?;
    for (i, meets) in situation.nodes.iter().enumerate() {
        let before = match meets {
            Meets::Free => Some(Held::Nobody),
            Meets::HeldByB => Some(Held::By("B")),
            // A paused or down node holds what it held: nothing of this round's.
            Meets::Paused | Meets::Down => None,
        };
        let after = held(holders[i].as_deref());
        if let Some(v) = judge::node_after_acquire(&call, i, before, after, &model) {
            return Round::found(Found::Wrong(v, steps));
        }
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
    let call = Call::anytime("A", "redlock_release");
    for (i, meets) in situation.nodes.iter().enumerate() {
        // A node that is not running shows nothing of the release.
        if enter(c).health(i) != Health::Up {
            continue;
        }
        let other = (stolen || *meets == Meets::HeldByB).then_some("B");
        let after = held(holders[i].as_deref());
        if let Some(v) = judge::node_after_release(&call, i, other, after, hit.as_ref()) {
            return Ok((Some(Found::Wrong(v, steps)), hit));
        }
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
    let call = Call::at("A", "redlock_release", enter(c).now_ms());
    let wrong = judge::counts_what_came_back(&call, hit.as_ref(), released, (&a_before, &a_after));
    Ok((wrong.map(|v| Found::Wrong(v, steps)), hit))
}

/// Who holds a node's key, for the judges: A, B, or nobody.
fn held(value: Option<&str>) -> Held<'static> {
    match value {
        Some(TOKEN_A) => Held::ByCaller,
        Some(TOKEN_B) => Held::By("B"),
        Some(_) => Held::By("another client"),
        None => Held::Nobody,
    }
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
