//! The rules of the release exercise: `release` deletes the caller's own lock, never
//! another client's, says truthfully whether it deleted, and returns the
//! error when a command fails.

use super::Call;
pub use super::Held;
use super::faults::{Claim, returned_the_error, unknown};
use crate::verdict::{Property, Violation};
use crate::wire::Hit;

/// Every rule a call of `release` can break, first broken first, from the
/// lock key's value before and after the call and what it returned.
pub fn releasing(
    call: &Call<'_>,
    held: Held<'_>,
    before: Option<&str>,
    after: Option<&str>,
    deleted: bool,
) -> Option<Violation> {
    frees_own_lock(call, held, after)
        .or_else(|| spares_others(call, held, before, after))
        .or_else(|| tells_truth(call, held, after, deleted))
}

/// [`Property::ReleaseFreesOwnLock`]: the caller's own lock is gone after
/// its release.
pub fn frees_own_lock(call: &Call<'_>, held: Held<'_>, after: Option<&str>) -> Option<Violation> {
    (held == Held::ByCaller && after.is_some()).then(|| {
        let what = format!(
            "{} released its own lock, but the key is still there",
            call.caller
        );
        call.broke(Property::ReleaseFreesOwnLock, what)
    })
}

/// [`Property::ReleaseSparesOthers`]: another client's lock is still there,
/// unchanged, after the caller's release.
pub fn spares_others(
    call: &Call<'_>,
    held: Held<'_>,
    before: Option<&str>,
    after: Option<&str>,
) -> Option<Violation> {
    let Held::By(other) = held else {
        return None;
    };
    let what = match after {
        _ if after == before => return None,
        None => format!("{other} holds the lock, and {} deleted it", call.name()),
        Some(_) => format!(
            "{other} holds the lock, and {} changed its key's value",
            call.name()
        ),
    };
    Some(call.broke(Property::ReleaseSparesOthers, what))
}

/// [`Property::ReleaseTellsTruth`]: the call returns true exactly when it
/// deleted the caller's own lock.
pub fn tells_truth(
    call: &Call<'_>,
    held: Held<'_>,
    after: Option<&str>,
    deleted: bool,
) -> Option<Violation> {
    let name = call.name();
    let what = match held {
        Held::ByCaller if after.is_none() && !deleted => {
            format!("{name} deleted its lock but returned false")
        }
        Held::By(other) if deleted => {
            format!("{name} returned true, but the lock was {other}'s and is still there")
        }
        Held::Nobody if deleted => {
            format!("{name} returned true, but there was no lock to delete")
        }
        _ => return None,
    };
    Some(call.broke(Property::ReleaseTellsTruth, what))
}

/// [`Property::ReleaseReportsFailure`]: after the fault `hit`, the call
/// returned the error; `returned` is its `Ok` answer if it gave one instead.
pub fn reports_failure(call: &Call<'_>, hit: &Hit, returned: Option<bool>) -> Option<Violation> {
    let claim = returned.map(|deleted| Claim {
        answer: format!("Ok({deleted})"),
        claims: if deleted {
            unknown(
                hit,
                "a release that did not happen",
                "a release it cannot know",
            )
        } else {
            "that the lock was no longer its own, which it does not know"
        },
    });
    returned_the_error(call, Property::ReleaseReportsFailure, hit, claim)
}
