//! The rule of the keeper exercise that a failed command tests: once a renewal fails,
//! the keeper tells the job. (Its rules in time are judged by its checks,
//! [`crate::checks`], and its model, [`crate::model::keeper`].)

use super::Call;
use super::faults::doc_says;
use crate::verdict::{Property, Violation};
use crate::wire::Hit;

/// What the keeper's doc text says a failed renewal must give, word for word.
pub const ON_FAILED_RENEWAL: &str = "when the renewal fails (it returns `false`, or an error: an \
     error reply, a dropped connection, a reply lost or late), set `lost`, which the job reads \
     before every write.";

/// [`Property::KeeperStopsJob`]: after the fault `hit` on a due renewal, the
/// tick set `lost`; `returned` is what it returned (`Ok(())` or the error).
pub fn stops_job(call: &Call<'_>, hit: &Hit, lost: bool, returned: &str) -> Option<Violation> {
    (!lost).then(|| {
        let what = format!(
            "the renewal was due, {}, and {} returned {returned} with `lost` unset: the job \
             writes next, on a lock that may be gone. {}",
            hit.did(),
            call.name(),
            doc_says(ON_FAILED_RENEWAL)
        );
        call.broke(Property::KeeperStopsJob, what)
    })
}
