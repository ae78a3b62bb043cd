//! The rules of the Redlock exercise: a grant takes a majority of the nodes, for the TTL minus
//! the time spent minus the drift allowance, and only with a majority of `OK`s that came back; a
//! refusal leaves no node locked; the release frees the caller's nodes, spares another client's,
//! and counts the deletes that came back done.
//!
//! The direct checks judge one call on a cluster hurt as a story needs, with what they know of
//! it ([`Refusal`], the drift allowance); the explorer judges a drawn round against what the
//! model ([`crate::model::redlock`]) says a correct Redlock does there ([`Modelled`]). Which
//! nodes hold a client's token is given node by node, `true` where one does.

mod explored;
mod release;

pub use explored::{Modelled, as_modelled, node_after_acquire, node_after_release};
pub use release::{
    counts_what_came_back, deletes_heard, frees_own_nodes, spares_other_nodes,
    spares_who_stepped_in,
};

use std::time::Duration;

use super::Call;
use super::faults::doc_says;
use crate::verdict::{Property, Violation};
use crate::wire::Hit;

/// What Redlock's doc text says a node's error must give, word for word.
pub const ON_ERROR: &str = "A node said yes only with an `OK` that came back: an error (an error \
     reply, a node down, a dropped connection, a reply lost or late) counts as a refusal.";

/// What `redlock_release`'s doc text says of a node that fails, word for word.
pub const ON_RELEASE_ERROR: &str = "A node that fails or does not answer is skipped, and not \
     counted: its key expires with its TTL.";

/// The most a validity may be off by, in ms, for a learner's rounding of 1 % of the TTL.
pub const VALIDITY_SLACK_MS: u64 = 1;

/// How many nodes `holding` marks.
fn count(holding: &[bool]) -> usize {
    holding.iter().filter(|&&h| h).count()
}

/// The nodes `holding` marks, as "0, 2, 4" (or "none").
fn shown(holding: &[bool]) -> String {
    let on: Vec<String> = (0..holding.len())
        .filter(|&i| holding[i])
        .map(|i| i.to_string())
        .collect();
    if on.is_empty() {
        "none".to_owned()
    } else {
        on.join(", ")
    }
}

/// The nodes `holding` marks, as a sentence says them: "all 5 nodes", "nodes 3 and 4".
fn listed(holding: &[bool]) -> String {
    let on: Vec<String> = (0..holding.len())
        .filter(|&i| holding[i])
        .map(|i| i.to_string())
        .collect();
    match on.split_last() {
        _ if on.len() == holding.len() => format!("all {} nodes", holding.len()),
        Some((last, rest)) if !rest.is_empty() => format!("nodes {} and {last}", rest.join(", ")),
        Some((only, _)) => format!("node {only}"),
        None => "no node".to_owned(),
    }
}

/// Whether a validity `said` is off a correct one, `expected`, by more than the slack.
fn off(said: Duration, expected: Duration) -> bool {
    (said.as_millis()).abs_diff(expected.as_millis()) > u128::from(VALIDITY_SLACK_MS)
}

/// Every rule a grant can break where a correct Redlock grants: it takes the `free` nodes of
/// `holding.len()` (those free and answering), and is valid for exactly the `ttl` minus the
/// `spent_ms` minus the `drift` allowance.
pub fn granting(
    call: &Call<'_>,
    free: usize,
    returned: Option<Duration>,
    holding: &[bool],
    (ttl, spent_ms, drift): (Duration, u64, Duration),
) -> Option<Violation> {
    takes_majority(call, free, returned, holding)
        .or_else(|| validity(call, returned?, ttl, spent_ms, drift))
}

/// [`Property::RedlockTakesMajority`]: with `free` nodes of `holding.len()` free and answering,
/// the call grants the lock, and the caller's token is on those nodes (`holding`).
pub fn takes_majority(
    call: &Call<'_>,
    free: usize,
    returned: Option<Duration>,
    holding: &[bool],
) -> Option<Violation> {
    let (name, held, on) = (call.name(), count(holding), shown(holding));
    let what = if returned.is_none() {
        format!(
            "{name} returned None, though {free} of the {} nodes were free and answering ({}'s \
             token is on nodes: {on})",
            holding.len(),
            call.caller
        )
    } else if held != free {
        format!(
            "{name} granted the lock, but {}'s token is on {held} nodes ({on}), not on the {free} \
             that were free and answering",
            call.caller
        )
    } else {
        return None;
    };
    Some(call.broke(Property::RedlockTakesMajority, what))
}

/// [`Property::RedlockValidity`]: the validity `said` is the `ttl` minus the `spent_ms` minus
/// the `drift` allowance, give or take [`VALIDITY_SLACK_MS`].
pub fn validity(
    call: &Call<'_>,
    said: Duration,
    ttl: Duration,
    spent_ms: u64,
    drift: Duration,
) -> Option<Violation> {
    let expected = ttl
        .saturating_sub(Duration::from_millis(spent_ms))
        .saturating_sub(drift);
    off(said, expected).then(|| {
        let what = format!(
            "{} said the lock is valid for {} ms; the TTL is {} ms, asking took {spent_ms} ms of \
             the clock, and the drift allowance is {} ms, so it is valid for {} ms",
            call.name(),
            said.as_millis(),
            ttl.as_millis(),
            drift.as_millis(),
            expected.as_millis()
        );
        call.broke(Property::RedlockValidity, what)
    })
}

/// Why a correct Redlock refuses, as a direct check set it up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal<'a> {
    /// Another client, `holder`, held `held` of the `nodes`.
    Minority {
        /// The other client.
        holder: &'a str,
        /// How many nodes it held.
        held: usize,
        /// How many nodes there are.
        nodes: usize,
    },
    /// Asking the nodes took `spent_ms` of the `ttl`.
    Spent {
        /// The virtual ms the round took.
        spent_ms: u64,
        /// The TTL asked for.
        ttl: Duration,
    },
}

impl Refusal<'_> {
    /// The reason, in a report's words, for `caller`.
    fn words(&self, caller: &str) -> String {
        match *self {
            Refusal::Minority {
                holder,
                held,
                nodes,
            } => format!(
                "{holder} held {held} of the {nodes} nodes, so {caller} could get only {}",
                nodes - held
            ),
            Refusal::Spent { spent_ms, ttl } => format!(
                "asking the nodes took {spent_ms} ms of its {} ms TTL",
                ttl.as_millis()
            ),
        }
    }
}

/// Every rule a call can break where a correct Redlock refuses (`why`): it grants nothing, and
/// leaves its token on no node (`holding`).
pub fn refusing(
    call: &Call<'_>,
    why: Refusal<'_>,
    returned: Option<Duration>,
    holding: &[bool],
) -> Option<Violation> {
    needs_majority(call, why, returned).or_else(|| releases_on_failure(call, why, holding))
}

/// [`Property::RedlockNeedsMajority`]: where a correct Redlock refuses (`why`), the call
/// returns no validity.
pub fn needs_majority(
    call: &Call<'_>,
    why: Refusal<'_>,
    returned: Option<Duration>,
) -> Option<Violation> {
    returned.map(|validity| {
        let what = format!(
            "{} granted the lock, valid for {} ms, though {}",
            call.name(),
            validity.as_millis(),
            why.words(call.caller)
        );
        call.broke(Property::RedlockNeedsMajority, what)
    })
}

/// [`Property::RedlockReleasesOnFailure`]: a call that gave up (`why`) leaves its token on no
/// node (`holding`).
pub fn releases_on_failure(
    call: &Call<'_>,
    why: Refusal<'_>,
    holding: &[bool],
) -> Option<Violation> {
    (count(holding) > 0).then(|| {
        let what = format!(
            "{} gave up ({}) but left {}'s token on nodes {}: they stay locked for the rest of \
             the TTL",
            call.name(),
            why.words(call.caller),
            call.caller,
            shown(holding)
        );
        call.broke(Property::RedlockReleasesOnFailure, what)
    })
}

/// [`Property::RedlockNeedsMajority`]: after the fault `hit`, a grant needs a majority of the
/// nodes to have answered `OK`. The caller's token is on the nodes `holding`, but for one whose
/// `OK` was lost (the node the fault hit, when its `SET` ran there): that one said no.
pub fn failed_node_says_no(
    call: &Call<'_>,
    hit: &Hit,
    granted: bool,
    holding: &[bool],
) -> Option<Violation> {
    let nodes = holding.len();
    let unseen = hit
        .node
        .is_some_and(|i| hit.fault.runs() && holding.get(i) == Some(&true));
    let seen = count(holding) - usize::from(unseen);
    let majority = nodes / 2 + 1;
    (granted && seen < majority).then(|| {
        let what = format!(
            "{}, and {} granted the lock: {}'s token is on nodes {}, but only {seen} OKs came \
             back, fewer than the {majority} of {nodes} a grant needs. {}",
            hit.did(),
            call.name(),
            call.caller,
            shown(holding),
            doc_says(ON_ERROR)
        );
        call.broke(Property::RedlockNeedsMajority, what)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_are_listed_as_a_sentence_says_them() {
        assert_eq!(listed(&[true; 5]), "all 5 nodes");
        assert_eq!(
            listed(&[true, true, true, false, false]),
            "nodes 0, 1 and 2"
        );
        assert_eq!(listed(&[false, false, false, true, true]), "nodes 3 and 4");
        assert_eq!(shown(&[false; 5]), "none");
        assert_eq!(shown(&[true, false, true, false, true]), "0, 2, 4");
    }

    /// The words of the direct checks' reports, as they were before the judges took them over
    /// (those no catalogue entry's snapshot shows).
    #[test]
    fn the_direct_checks_words_stay() {
        let call = Call::at("A", "redlock_acquire", 0);
        let why = Refusal::Spent {
            spent_ms: 1500,
            ttl: Duration::from_secs(1),
        };
        let v = refusing(&call, why, None, &[false, true, false, false, true]).expect("broken");
        assert_eq!(
            v.what,
            "A's redlock_acquire gave up (asking the nodes took 1500 ms of its 1000 ms TTL) but \
             left A's token on nodes 1, 4: they stay locked for the rest of the TTL"
        );
        let release = Call::at("A", "redlock_release", 0);
        let v = frees_own_nodes(&release, &[true; 5], &[false, false, true, false, false], 4)
            .expect("broken");
        assert_eq!(
            v.what,
            "A held all 5 nodes; after its redlock_release A's token is still on nodes: 2, and \
             the release said it freed 4"
        );
        let a_before = [true, true, true, false, false];
        let v = frees_own_nodes(&release, &a_before, &[false; 5], 2).expect("broken");
        assert_eq!(
            v.what,
            "A held nodes 0, 1 and 2; after its redlock_release A's token is still on nodes: \
             none, and the release said it freed 2"
        );
        assert_eq!(frees_own_nodes(&release, &a_before, &[false; 5], 3), None);
    }
}
