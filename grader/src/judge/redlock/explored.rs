//! Redlock's rules in an explored round, judged against what the model
//! ([`crate::model::redlock`]) says a correct Redlock does there: what the acquire returned, and
//! what each node holds after the acquire and after the release.

use std::time::Duration;

use super::off;
use crate::judge::{Call, Held};
use crate::verdict::{Property, Violation};
use crate::wire::Hit;

/// What the model says a correct Redlock does in an explored round.
#[derive(Clone, Copy, Debug)]
pub struct Modelled<'a> {
    /// How many nodes granted the caller the lock.
    pub grants: usize,
    /// The validity a correct Redlock returns (`None`: it refuses).
    pub validity: Option<Duration>,
    /// Whether a refusal is correct too ([`crate::model::redlock::Outcome::or_refused`]).
    pub or_refused: bool,
    /// How many nodes there are.
    pub nodes: usize,
    /// The virtual ms the round took.
    pub spent_ms: u64,
    /// The TTL asked for.
    pub ttl: Duration,
    /// The free node whose grant the fault took, and the fault, if one did.
    pub lost: Option<(usize, &'a Hit)>,
}

impl Modelled<'_> {
    /// Why a node said no, when a fault made it: its `SET` failed, or its `OK` never came back.
    fn said_no(&self) -> String {
        match self.lost {
            Some((i, hit)) => format!(" ({}: node {i} said no)", hit.did()),
            None => String::new(),
        }
    }
}

/// [`Property::RedlockNeedsMajority`], [`Property::RedlockTakesMajority`] and
/// [`Property::RedlockValidity`] in an explored round: the call returned what the model says
/// (`returned` against `model.validity`).
pub fn as_modelled(
    call: &Call<'_>,
    returned: Option<Duration>,
    model: &Modelled<'_>,
) -> Option<Violation> {
    let (name, n, said_no) = (call.name(), model.nodes, model.said_no());
    let (property, what) = match (returned, model.validity) {
        (Some(v), None) if model.grants <= n / 2 => (
            Property::RedlockNeedsMajority,
            format!(
                "{name} granted the lock (valid for {} ms) with only {} of the {n} nodes{said_no}",
                v.as_millis(),
                model.grants
            ),
        ),
        (Some(v), None) => (
            Property::RedlockNeedsMajority,
            format!(
                "{name} granted the lock (valid for {} ms), but asking took {} ms of the {} ms \
                 TTL: nothing was left after the drift allowance",
                v.as_millis(),
                model.spent_ms,
                model.ttl.as_millis()
            ),
        ),
        (None, Some(_)) if model.or_refused => return None,
        (None, Some(e)) => (
            Property::RedlockTakesMajority,
            format!(
                "{name} returned None, though {} of the {n} nodes granted it{said_no} and {} ms of \
                 validity were left",
                model.grants,
                e.as_millis()
            ),
        ),
        (Some(v), Some(e)) if off(v, e) => (
            Property::RedlockValidity,
            format!(
                "{name} said valid for {} ms; asking took {} ms, so a correct Redlock says {} ms",
                v.as_millis(),
                model.spent_ms,
                e.as_millis()
            ),
        ),
        _ => return None,
    };
    Some(call.broke(property, what))
}

/// What a node held after an explored round's acquire, judged against what the round began
/// with there (`before`: another client's lock, or free; `None`, paused or down) and what the
/// model says (`model`): another client's lock stays; a refusal leaves the caller's token
/// nowhere; a grant holds every free node but the one whose grant the fault took.
pub fn node_after_acquire(
    call: &Call<'_>,
    node: usize,
    before: Option<Held<'_>>,
    after: Held<'_>,
    model: &Modelled<'_>,
) -> Option<Violation> {
    let name = call.name();
    let lost_here = model.lost.is_some_and(|(i, _)| i == node);
    let (property, what) = match before? {
        Held::By(other) if after != Held::By(other) => (
            Property::ReleaseSparesOthers,
            format!("{other} held node {node}; after {name} it does not"),
        ),
        Held::Nobody if model.validity.is_none() && after == Held::ByCaller => (
            Property::RedlockReleasesOnFailure,
            if lost_here {
                format!(
                    "{name} gave up but left {}'s token on node {node}{}: a node that seemed to \
                     refuse may have set the key, so a refusal releases on every node",
                    call.caller,
                    model.said_no()
                )
            } else {
                format!(
                    "{name} gave up but left {}'s token on node {node}",
                    call.caller
                )
            },
        ),
        // A fault's node may hold the caller's token or not: its SET may have run.
        Held::Nobody if lost_here => return None,
        Held::Nobody if model.validity.is_some() && after != Held::ByCaller => (
            Property::RedlockTakesMajority,
            format!(
                "{name} granted the lock, but node {node}, free, does not hold {}'s token",
                call.caller
            ),
        ),
        _ => return None,
    };
    Some(call.broke(property, what))
}

/// What a running node held after an explored round's release: another client's lock
/// (`other`, which held it before or stepped in) is still there, and the caller's is gone,
/// unless the fault `hit` stopped the delete on this node (its key expires with its TTL).
pub fn node_after_release(
    call: &Call<'_>,
    node: usize,
    other: Option<&str>,
    after: Held<'_>,
    hit: Option<&Hit>,
) -> Option<Violation> {
    let stopped = hit.is_some_and(|h| !h.fault.runs() && h.node == Some(node));
    if stopped {
        return None;
    }
    let (property, what) = match other {
        Some(other) if after != Held::By(other) => (
            Property::ReleaseSparesOthers,
            format!(
                "{other} held node {node}; after {} it does not",
                call.name()
            ),
        ),
        _ if after == Held::ByCaller => (
            Property::ReleaseFreesOwnLock,
            format!(
                "after {}, node {node} still holds {}'s token",
                call.name(),
                call.caller
            ),
        ),
        _ => return None,
    };
    Some(call.broke(property, what))
}
