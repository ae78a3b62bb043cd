//! The rules of `redlock_release`: it frees the caller's nodes, spares the nodes another client
//! holds (before the release, or taken while it went on), and counts the deletes that came back
//! done.

use super::{ON_RELEASE_ERROR, count, listed, shown};
use crate::judge::Call;
use crate::judge::faults::doc_says;
use crate::verdict::{Property, Violation};
use crate::wire::Hit;

/// [`Property::ReleaseFreesOwnLock`]: the caller held the nodes `before`; after its release its
/// token is on none (`after`), and it returned `released`, the count it freed.
pub fn frees_own_nodes(
    call: &Call<'_>,
    before: &[bool],
    after: &[bool],
    released: usize,
) -> Option<Violation> {
    (count(after) > 0 || released != count(before)).then(|| {
        let what = format!(
            "{} held {}; after its {} {}'s token is still on nodes: {}, and the release said it \
             freed {released}",
            call.caller,
            listed(before),
            call.function,
            call.caller,
            shown(after)
        );
        call.broke(Property::ReleaseFreesOwnLock, what)
    })
}

/// [`Property::ReleaseSparesOthers`]: `other` held the nodes `before` the caller's release, and
/// holds them all after it (`after`).
pub fn spares_other_nodes(
    call: &Call<'_>,
    other: &str,
    before: &[bool],
    after: &[bool],
) -> Option<Violation> {
    let lost = before.iter().zip(after).any(|(&b, &a)| b && !a);
    lost.then(|| {
        let what = format!(
            "{other} held {}; after {} {other}'s token is on nodes: {}",
            listed(before),
            call.name(),
            shown(after)
        );
        call.broke(Property::ReleaseSparesOthers, what)
    })
}

/// [`Property::ReleaseSparesOthers`], when `other` took every node while the caller was
/// releasing: it still holds them all (`after`).
pub fn spares_who_stepped_in(call: &Call<'_>, other: &str, after: &[bool]) -> Option<Violation> {
    (count(after) != after.len()).then(|| {
        let what = format!(
            "{other} took every node while {} was releasing; afterwards {other}'s token is on \
             nodes: {}: {}'s release deleted {other}'s lock",
            call.caller,
            shown(after),
            call.caller
        );
        call.broke(Property::ReleaseSparesOthers, what)
    })
}

/// How many of the caller's deletes came back done, from which nodes held its token `before`
/// the release and `after` it: every node that lost it, but one whose delete ran and whose
/// reply never came (the node the fault `hit`, when it ran there and the token is gone).
pub fn deletes_heard(before: &[bool], after: &[bool], hit: Option<&Hit>) -> usize {
    let freed = |i: usize| before[i] && !after[i];
    let unheard = hit
        .and_then(|h| h.node.filter(|&i| h.fault.runs() && freed(i)))
        .is_some();
    (0..before.len()).filter(|&i| freed(i)).count() - usize::from(unheard)
}

/// [`Property::RedlockReleaseTellsTruth`]: the release returns the number of nodes whose delete
/// came back done ([`deletes_heard`], from which nodes held the caller's token `before` and
/// `after` it, and the fault `hit`, if one hit); it returned `released`.
pub fn counts_what_came_back(
    call: &Call<'_>,
    hit: Option<&Hit>,
    released: usize,
    (before, after): (&[bool], &[bool]),
) -> Option<Violation> {
    let heard = deletes_heard(before, after, hit);
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
