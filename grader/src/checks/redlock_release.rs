//! The checks of the `redlock` exercise's `redlock_release`.
//!
//! A's release must free every node A holds, leave alone the nodes another client took after
//! A's lock expired there, and compare and delete on each node in one step: at every command
//! boundary of the release in turn, A's lock expires everywhere and B takes every node, and B must
//! still hold every node afterwards. And the count it returns is what the nodes' replies said:
//! each of its commands meets each fault in turn, and a node whose delete failed, or whose reply
//! was lost, is not one it freed.

use super::Ctx;
use super::redlock::{TOKEN_A, TOKEN_B, TTL, broken, each_fault, failed, nodes_of, release};
use crate::error::GradeError;
use crate::judge::Call;
use crate::judge::redlock as judge;
use crate::nodes::NODES;
use crate::nodes::SharedCluster;
use crate::nodes::cluster::{Cluster, enter};
use crate::report::Verdict;
use crate::verdict::Violation;

/// A holds every node: its release frees all five.
pub(crate) fn release_frees_every_node(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let c = Cluster::open()?.shared();
    for i in 0..NODES {
        enter(&c).take(i, TOKEN_A, TTL.as_millis() as u64)?;
    }
    let released = match release(&c, ctx.lock, TOKEN_A)? {
        Ok(n) => n,
        Err(failure) => return Ok(failed(ctx, "redlock_release", failure, &c)),
    };
    let after = nodes_of(&c, TOKEN_A)?;
    let call = Call::at("A", "redlock_release", enter(&c).now_ms());
    let violation = judge::frees_own_nodes(&call, &[true; NODES], &after, released);
    Ok(verdict(ctx, &c, violation))
}

/// A's lock expired on nodes 3 and 4 and B took them: A's release must leave them to B.
pub(crate) fn release_spares_another_holder(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let c = Cluster::open()?.shared();
    let a_before: [bool; NODES] = std::array::from_fn(|i| i < 3);
    for (i, &a) in a_before.iter().enumerate() {
        let token = if a { TOKEN_A } else { TOKEN_B };
        enter(&c).take(i, token, TTL.as_millis() as u64)?;
    }
    let released = match release(&c, ctx.lock, TOKEN_A)? {
        Ok(n) => n,
        Err(failure) => return Ok(failed(ctx, "redlock_release", failure, &c)),
    };
    let (b_after, a_after) = (nodes_of(&c, TOKEN_B)?, nodes_of(&c, TOKEN_A)?);
    let b_before = a_before.map(|a| !a);
    let call = Call::at("A", "redlock_release", enter(&c).now_ms());
    let violation = judge::spares_other_nodes(&call, "B", &b_before, &b_after)
        .or_else(|| judge::frees_own_nodes(&call, &a_before, &a_after, released));
    Ok(verdict(ctx, &c, violation))
}

/// At every command boundary of A's release in turn, A's lock expires everywhere and B takes
/// every node: a release that reads, then deletes, deletes B's lock.
pub(crate) fn release_compares_and_deletes_in_one_step(
    ctx: &Ctx<'_>,
) -> Result<Verdict, GradeError> {
    let mut boundary = 0;
    loop {
        let c = Cluster::open()?.shared();
        for i in 0..NODES {
            enter(&c).take(i, TOKEN_A, TTL.as_millis() as u64)?;
        }
        enter(&c).intervene(
            boundary,
            Box::new(|cluster: &mut Cluster| {
                cluster.advance(TTL.as_millis() as u64);
                for i in 0..cluster.len() {
                    cluster.take(i, TOKEN_B, TTL.as_millis() as u64)?;
                }
                Ok("A's lock expires on every node, and B takes every node".to_owned())
            }),
        );
        if let Err(failure) = release(&c, ctx.lock, TOKEN_A)? {
            return Ok(failed(ctx, "redlock_release", failure, &c));
        }
        let b_after = nodes_of(&c, TOKEN_B)?;
        let sent = enter(&c).commands();
        let call = Call::at("A", "redlock_release", enter(&c).now_ms());
        if let Some(v) = judge::spares_who_stepped_in(&call, "B", &b_after) {
            return Ok(broken(ctx, &c, "redlock_release", v));
        }
        if boundary >= sent {
            return Ok(Verdict::Pass);
        }
        boundary += 1;
    }
}

/// A holds every node, and each command of A's release meets each fault in turn (an error reply,
/// a dropped connection, a lost or late reply): the release counts the nodes whose delete came
/// back done, which leaves out the faulted node whether its delete ran or not.
pub(crate) fn release_counts_what_came_back(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let open = || -> Result<SharedCluster, GradeError> {
        let c = Cluster::open()?.shared();
        for i in 0..NODES {
            enter(&c).take(i, TOKEN_A, TTL.as_millis() as u64)?;
        }
        Ok(c)
    };
    let call = |c: &SharedCluster| release(c, ctx.lock, TOKEN_A);
    each_fault(ctx, "redlock_release", open, call, |c, released, hit| {
        let after = nodes_of(c, TOKEN_A)?;
        let call = Call::at("A", "redlock_release", enter(c).now_ms());
        let (before, after) = (&[true; NODES][..], &after[..]);
        Ok(judge::counts_what_came_back(
            &call,
            Some(hit),
            released,
            (before, after),
        ))
    })
}

/// The verdict for the first broken rule found, if any, with the release's trace.
fn verdict(ctx: &Ctx<'_>, c: &SharedCluster, violation: Option<Violation>) -> Verdict {
    violation.map_or(Verdict::Pass, |v| broken(ctx, c, "redlock_release", v))
}
