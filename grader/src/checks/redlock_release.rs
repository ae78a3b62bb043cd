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
use crate::nodes::NODES;
use crate::nodes::SharedCluster;
use crate::nodes::cluster::{Cluster, enter};
use crate::report::Verdict;
use crate::verdict::{Property, Violation};
use crate::wire::Hit;

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
    let (held, on) = nodes_of(&c, TOKEN_A)?;
    let at = enter(&c).now_ms();
    if held > 0 || released != NODES {
        let what = format!(
            "A held all {NODES} nodes; after its redlock_release A's token is still on nodes: \
             {on}, and the release said it freed {released}"
        );
        return Ok(broken(
            ctx,
            &c,
            "redlock_release",
            Violation::at(Property::ReleaseFreesOwnLock, at, what),
        ));
    }
    Ok(Verdict::Pass)
}

/// A's lock expired on nodes 3 and 4 and B took them: A's release must leave them to B.
pub(crate) fn release_spares_another_holder(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let c = Cluster::open()?.shared();
    for i in 0..NODES {
        let token = if i < 3 { TOKEN_A } else { TOKEN_B };
        enter(&c).take(i, token, TTL.as_millis() as u64)?;
    }
    let released = match release(&c, ctx.lock, TOKEN_A)? {
        Ok(n) => n,
        Err(failure) => return Ok(failed(ctx, "redlock_release", failure, &c)),
    };
    let (b_held, b_on) = nodes_of(&c, TOKEN_B)?;
    let (a_held, a_on) = nodes_of(&c, TOKEN_A)?;
    let at = enter(&c).now_ms();
    if b_held != 2 {
        let what = format!(
            "B held nodes 3 and 4; after A's redlock_release B's token is on nodes: {b_on}"
        );
        return Ok(broken(
            ctx,
            &c,
            "redlock_release",
            Violation::at(Property::ReleaseSparesOthers, at, what),
        ));
    }
    if a_held > 0 || released != 3 {
        let what = format!(
            "A held nodes 0, 1 and 2; after its redlock_release A's token is still on nodes: \
             {a_on}, and the release said it freed {released}"
        );
        return Ok(broken(
            ctx,
            &c,
            "redlock_release",
            Violation::at(Property::ReleaseFreesOwnLock, at, what),
        ));
    }
    Ok(Verdict::Pass)
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
        let (b_held, b_on) = nodes_of(&c, TOKEN_B)?;
        let sent = enter(&c).commands();
        if b_held != NODES {
            let at = enter(&c).now_ms();
            let what = format!(
                "B took every node while A was releasing; afterwards B's token is on nodes: \
                 {b_on}: A's release deleted B's lock"
            );
            return Ok(broken(
                ctx,
                &c,
                "redlock_release",
                Violation::at(Property::ReleaseSparesOthers, at, what),
            ));
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
        let after: Vec<bool> = enter(c)
            .holders()?
            .iter()
            .map(|h| h.as_deref() == Some(TOKEN_A))
            .collect();
        let heard = deletes_heard(&[true; NODES], &after, Some(hit));
        let call = Call::at("A", "redlock_release", enter(c).now_ms());
        Ok(crate::judge::redlock::counts_what_came_back(
            &call,
            Some(hit),
            released,
            heard,
        ))
    })
}

/// How many of A's deletes came back done, from which nodes held A's token before the release
/// and after it: every node that lost it, but one whose delete ran and whose reply never came
/// (the node the fault `hit`, when it ran there and the token is gone).
pub(crate) fn deletes_heard(before: &[bool], after: &[bool], hit: Option<&Hit>) -> usize {
    let freed = |i: usize| before[i] && !after[i];
    let unheard = hit
        .and_then(|h| h.node.filter(|&i| h.fault.runs() && freed(i)))
        .is_some();
    (0..before.len()).filter(|&i| freed(i)).count() - usize::from(unheard)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Fault;

    fn hit(fault: Fault, node: usize) -> Hit {
        Hit {
            fault,
            command: "GET".into(),
            node: Some(node),
        }
    }

    #[test]
    fn a_lost_reply_takes_a_delete_from_the_count_only_where_the_token_went() {
        let before = [true; 5];
        // The delete on node 2 ran and its reply was lost: four came back.
        let gone = [false; 5];
        assert_eq!(
            deletes_heard(&before, &gone, Some(&hit(Fault::LostReply, 2))),
            4
        );
        // A lost reply to a read before the delete: node 2 kept the token, four came back.
        let kept = [false, false, true, false, false];
        assert_eq!(
            deletes_heard(&before, &kept, Some(&hit(Fault::LostReply, 2))),
            4
        );
        // An error reply stops the delete: node 2 keeps the token.
        assert_eq!(
            deletes_heard(&before, &kept, Some(&hit(Fault::ErrorReply, 2))),
            4
        );
        assert_eq!(deletes_heard(&before, &gone, None), 5);
    }
}
