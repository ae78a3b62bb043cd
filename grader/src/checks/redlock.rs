//! The checks of the `redlock` exercise, Redlock on five nodes.
//!
//! Each check opens a [`Cluster`] on the grader's five nodes, hurts some of them as a story
//! needs (a node paused, killed, answering late, another client holding the lock on a few), runs
//! the learner's `redlock_acquire` or `redlock_release` once, and holds what it returned and what
//! the nodes hold to the algorithm: a majority of the nodes, a validity of exactly the TTL minus
//! the virtual time spent minus the drift allowance, a release on every node after a failure, and
//! a release that compares the token on each node in one step. Virtual time makes the figures
//! exact, so the report can give them to the millisecond. The release checks are in
//! `redlock_release.rs`.

use std::time::Duration;

use super::Ctx;
use crate::error::GradeError;
use crate::judge::Call;
use crate::judge::redlock::{self as judge, Refusal};
use crate::model::redlock::drift;
use crate::nodes::NODES;
use crate::nodes::cluster::{Cluster, SharedCluster, enter};
use crate::report::{Report, Verdict, trace};
use crate::sandbox::Failure;
use crate::verdict::Violation;
use crate::wire::{Fault, Hit};

pub(crate) use crate::run::redlock::{Acquired, TOKEN_A, TOKEN_B, TTL, acquire, release};

/// The verdict when the function under check failed.
pub(crate) fn failed(
    ctx: &Ctx<'_>,
    function: &'static str,
    failure: Failure,
    c: &SharedCluster,
) -> Verdict {
    match failure {
        Failure::NotStarted { message } => Verdict::NotStarted { function, message },
        failure => Verdict::Fail(Box::new(Report::failed(
            ctx.check,
            ctx.lock.name,
            function,
            failure,
            vec![evidence(c, function)],
        ))),
    }
}

/// The commands the call sent, node by node, with the grader's moves in between.
fn evidence(c: &SharedCluster, function: &str) -> String {
    trace("A", function, &enter(c).steps())
}

/// A failed check: `property` broke, as `what` says.
pub(crate) fn broken(ctx: &Ctx<'_>, c: &SharedCluster, function: &str, v: Violation) -> Verdict {
    Verdict::Fail(Box::new(Report::broken(
        ctx.check,
        ctx.lock.name,
        v,
        vec![evidence(c, function)],
    )))
}

/// Which nodes hold `token`, node by node.
pub(crate) fn nodes_of(c: &SharedCluster, token: &str) -> Result<Vec<bool>, GradeError> {
    let holders = enter(c).holders()?;
    Ok(holders
        .iter()
        .map(|h| h.as_deref() == Some(token))
        .collect())
}

/// Holds a successful acquire to the algorithm: a grant, on the nodes `free` (those free and
/// answering), valid for exactly the TTL minus the time spent minus the drift.
fn judge_grant(
    ctx: &Ctx<'_>,
    c: &SharedCluster,
    got: Acquired,
    free: usize,
) -> Result<Verdict, GradeError> {
    let value = match got.value {
        Ok(value) => value,
        Err(failure) => return Ok(failed(ctx, "redlock_acquire", failure, c)),
    };
    let holding = nodes_of(c, TOKEN_A)?;
    let call = Call::at("A", "redlock_acquire", enter(c).now_ms());
    let reckoning = (TTL, got.spent_ms, drift(TTL));
    let violation = judge::granting(&call, free, value, &holding, reckoning);
    Ok(violation.map_or(Verdict::Pass, |v| broken(ctx, c, "redlock_acquire", v)))
}

/// Holds a refused acquire to the algorithm: `None`, and A's token on no node.
fn judge_refusal(
    ctx: &Ctx<'_>,
    c: &SharedCluster,
    got: Acquired,
    why: Refusal<'_>,
) -> Result<Verdict, GradeError> {
    let value = match got.value {
        Ok(value) => value,
        Err(failure) => return Ok(failed(ctx, "redlock_acquire", failure, c)),
    };
    let holding = nodes_of(c, TOKEN_A)?;
    let call = Call::at("A", "redlock_acquire", enter(c).now_ms());
    let violation = judge::refusing(&call, why, value, &holding);
    Ok(violation.map_or(Verdict::Pass, |v| broken(ctx, c, "redlock_acquire", v)))
}

/// All five nodes free: A gets them all, valid for the TTL minus the drift.
pub(crate) fn takes_a_majority(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let c = Cluster::open()?.shared();
    let got = acquire(&c, ctx.lock, TOKEN_A, TTL)?;
    judge_grant(ctx, &c, got, NODES)
}

/// Every node answers 400 ms late: the time spent comes off the validity.
pub(crate) fn counts_the_time_spent(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let c = Cluster::open()?.shared();
    for i in 0..NODES {
        enter(&c).delay(i, 400);
    }
    let got = acquire(&c, ctx.lock, TOKEN_A, TTL)?;
    judge_grant(ctx, &c, got, NODES)
}

/// Node 1 paused and node 3 down: three nodes are a majority still.
pub(crate) fn carries_on_without_two_nodes(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let c = Cluster::open()?.shared();
    {
        let mut cluster = enter(&c);
        cluster.pause(1)?;
        cluster.kill(3);
    }
    let got = acquire(&c, ctx.lock, TOKEN_A, TTL)?;
    judge_grant(ctx, &c, got, 3)
}

/// B holds nodes 0, 1 and 2: A gets two nodes, no majority, and must leave none locked.
pub(crate) fn refuses_without_a_majority(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let c = Cluster::open()?.shared();
    for i in 0..3 {
        enter(&c).take(i, TOKEN_B, TTL.as_millis() as u64)?;
    }
    let got = acquire(&c, ctx.lock, TOKEN_A, TTL)?;
    let why = Refusal::Minority {
        holder: "B",
        held: 3,
        nodes: NODES,
    };
    judge_refusal(ctx, &c, got, why)
}

/// A 1 s TTL and nodes that answer 300 ms late: the TTL is spent before the last node answers.
pub(crate) fn gives_up_when_the_ttl_is_spent(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let c = Cluster::open()?.shared();
    for i in 0..NODES {
        enter(&c).delay(i, 300);
    }
    let ttl = Duration::from_secs(1);
    let got = acquire(&c, ctx.lock, TOKEN_A, ttl)?;
    let why = Refusal::Spent {
        spent_ms: got.spent_ms,
        ttl,
    };
    judge_refusal(ctx, &c, got, why)
}

/// B holds nodes 0 and 1, so A's majority is the other three, all of them: each command of A's
/// acquire meets each fault in turn. A node whose `SET` failed, or whose `OK` was lost, said
/// no, and without its yes there is no majority.
pub(crate) fn counts_a_failed_node_as_a_no(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let open = || -> Result<SharedCluster, GradeError> {
        let c = Cluster::open()?.shared();
        for i in 0..2 {
            enter(&c).take(i, TOKEN_B, TTL.as_millis() as u64)?;
        }
        Ok(c)
    };
    let call = |c: &SharedCluster| Ok(acquire(c, ctx.lock, TOKEN_A, TTL)?.value);
    each_fault(ctx, "redlock_acquire", open, call, |c, value, hit| {
        let holding = nodes_of(c, TOKEN_A)?;
        let call = Call::at("A", "redlock_acquire", enter(c).now_ms());
        Ok(judge::failed_node_says_no(
            &call,
            hit,
            value.is_some(),
            &holding,
        ))
    })
}

/// Plays `call` on a cluster from `open` once as it is, then once for each fault at each command
/// that first run sent (each on a cluster of its own: one holds the nodes at a time); `judge`
/// sees each run a fault hit (its cluster, what `function` returned, what the fault hit) and
/// names the rule broken, if one was.
pub(crate) fn each_fault<T>(
    ctx: &Ctx<'_>,
    function: &'static str,
    open: impl Fn() -> Result<SharedCluster, GradeError>,
    call: impl Fn(&SharedCluster) -> Result<Result<T, Failure>, GradeError>,
    judge: impl Fn(&SharedCluster, T, &Hit) -> Result<Option<Violation>, GradeError>,
) -> Result<Verdict, GradeError> {
    let n = {
        let c = open()?;
        if let Err(failure) = call(&c)? {
            return Ok(failed(ctx, function, failure, &c));
        }
        enter(&c).commands()
    };
    for fault in Fault::ALL {
        for k in 0..n {
            let c = open()?;
            enter(&c).fail_at(k, fault);
            let value = match call(&c)? {
                Ok(value) => value,
                Err(failure) => return Ok(failed(ctx, function, failure, &c)),
            };
            let Some(hit) = enter(&c).fault_hit().cloned() else {
                continue;
            };
            if let Some(v) = judge(&c, value, &hit)? {
                return Ok(broken(ctx, &c, function, v));
            }
        }
    }
    Ok(Verdict::Pass)
}
