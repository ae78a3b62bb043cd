//! The rule of the extend exercise that its checks judge alike: `extend` returns the
//! error when a command fails. (Its other rules are judged where they are
//! checked, [`crate::checks`], and by its model, [`crate::model::extend`].)

use super::Call;
use super::faults::{Claim, returned_the_error, unknown};
use crate::verdict::{Property, Violation};
use crate::wire::Hit;

/// [`Property::ExtendReportsFailure`]: after the fault `hit`, the call
/// returned the error; `returned` is its `Ok` answer if it gave one instead.
pub fn reports_failure(call: &Call<'_>, hit: &Hit, returned: Option<bool>) -> Option<Violation> {
    let claim = returned.map(|renewed| Claim {
        answer: format!("Ok({renewed})"),
        claims: if renewed {
            unknown(
                hit,
                "a renewal that did not happen",
                "a renewal it cannot know",
            )
        } else {
            "that its lock is lost, which it does not know"
        },
    });
    returned_the_error(call, Property::ExtendReportsFailure, hit, claim)
}
