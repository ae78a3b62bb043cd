//! The rules of the Redlock exercise that a failed command tests: a node whose command
//! failed said no, and a node whose delete failed was not freed. (Redlock's other rules are
//! judged by its checks, [`crate::checks`], and its model, [`crate::model::redlock`].)

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

/// [`Property::RedlockReleaseTellsTruth`]: the release returns `heard`, the nodes whose delete
/// came back done (after the fault `hit`, if one hit); it returned `released`.
pub fn counts_what_came_back(
    call: &Call<'_>,
    hit: Option<&Hit>,
    released: usize,
    heard: usize,
) -> Option<Violation> {
    (released != heard).then(|| {
        let what = match hit {
            Some(hit) => format!(
                "{}, and {} returned {released}, but {heard} of its deletes came back done. {}",
                hit.did(),
                call.name(),
                doc_says(ON_RELEASE_ERROR)
            ),
            None => format!(
                "{} returned {released}, but it freed {heard} nodes",
                call.name()
            ),
        };
        call.broke(Property::RedlockReleaseTellsTruth, what)
    })
}

/// [`Property::RedlockNeedsMajority`]: after the fault `hit`, a grant needs a
/// majority of the `nodes` to have answered `OK`; `seen` of them did (the
/// nodes that hold the caller's token, `on`, but for one whose reply was lost).
pub fn failed_node_says_no(
    call: &Call<'_>,
    hit: &Hit,
    granted: bool,
    seen: usize,
    on: &str,
    nodes: usize,
) -> Option<Violation> {
    let majority = nodes / 2 + 1;
    (granted && seen < majority).then(|| {
        let what = format!(
            "{}, and {} granted the lock: A's token is on nodes {on}, but only {seen} OKs came \
             back, fewer than the {majority} of {nodes} a grant needs. {}",
            hit.did(),
            call.name(),
            doc_says(ON_ERROR)
        );
        call.broke(Property::RedlockNeedsMajority, what)
    })
}
