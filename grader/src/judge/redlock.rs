//! The rule of the Redlock exercise that a failed command tests: a node whose command
//! failed said no. (Redlock's other rules are judged by its checks,
//! [`crate::checks`], and its model, [`crate::model::redlock`].)

use super::Call;
use super::faults::doc_says;
use crate::verdict::{Property, Violation};
use crate::wire::Hit;

/// What Redlock's doc text says a node's error must give, word for word.
pub const ON_ERROR: &str = "A node said yes only with an `OK` that came back: an error (an error \
     reply, a node down, a dropped connection, a reply lost or late) counts as a refusal.";

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
