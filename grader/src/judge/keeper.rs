//! The rules of the keeper exercise: a lease keeper renews by the time a third of the TTL has
//! passed, tells the job once a renewal fails (or after a pause that cost it the lock), and
//! keeps it stopped for good.
//!
//! The direct checks call the keeper tick by tick and hand each tick's evidence to these
//! judges; the book's renewal-pause story is judged from its timeline; the explorer's
//! histories are judged by the exercise's model, [`crate::model::keeper`].

use std::time::Duration;

use super::faults::doc_says;
use super::{Call, Held};
use crate::clock::Expiry;
use crate::timeline::Timeline;
use crate::verdict::{Property, Violation, seconds};
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

/// One tick of a healthy job, as the keeper left it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HealthyTick<'a> {
    /// The tick's virtual instant, in ms.
    pub at_ms: u64,
    /// Who holds the lock after the tick.
    pub held: Held<'a>,
    /// The lock key's expiry after the tick.
    pub expiry: Expiry,
    /// When the keeper last renewed, in ms.
    pub renewed_at_ms: u64,
    /// Whether `lost` is set.
    pub lost: bool,
}

/// [`Property::KeeperRenewsInTime`]: while the job is healthy, after every tick the caller's
/// lock has at least two thirds of its `lease` left (a renewal is due every third), and
/// `lost` stays unset.
pub fn renews_in_time(
    call: &Call<'_>,
    lease: Duration,
    tick: HealthyTick<'_>,
) -> Option<Violation> {
    let (caller, lease_ms, t) = (call.caller, lease.as_millis() as u64, tick.at_ms);
    let left = match tick.expiry {
        Expiry::At(at) if tick.held == Held::ByCaller => at.saturating_sub(t),
        _ => 0,
    };
    let what = if left < lease_ms * 2 / 3 {
        let last = tick.renewed_at_ms;
        let why = if last == t {
            format!(
                "{caller}'s keeper renewed it at t = {}, for less than the full TTL",
                seconds(t)
            )
        } else {
            format!(
                "the last renewal was at t = {}, and one was due at t = {} (a third of the TTL later)",
                seconds(last),
                seconds(last + lease_ms / 3)
            )
        };
        format!(
            "{caller}'s job is healthy, and its lock has {} of its {} TTL left: {why}",
            seconds(left),
            seconds(lease_ms),
        )
    } else if tick.lost {
        format!(
            "{caller}'s keeper set `lost` while {caller}'s lock was alive and {caller}'s: the \
             healthy job stopped"
        )
    } else {
        return None;
    };
    Some(call.broke(Property::KeeperRenewsInTime, what))
}

/// [`Property::KeeperStopsForGood`]: once the keeper has set `lost` (at `lost_since`, in ms),
/// it stays set, though `other` held the lock and wrote in between.
pub fn stops_for_good(
    call: &Call<'_>,
    other: &str,
    lost_since: Option<u64>,
    lost: bool,
) -> Option<Violation> {
    let since = lost_since.filter(|_| !lost)?;
    let what = format!(
        "{}'s keeper set `lost` at t = {} and cleared it again: {other} held the lock and wrote in \
         between, and {}'s job went on as if nothing had happened",
        call.caller,
        seconds(since),
        call.caller
    );
    Some(call.broke(Property::KeeperStopsForGood, what))
}

/// [`Property::KeeperStopsJob`], after a pause that cost the caller its lock: the job wrote
/// (`wrote_under`: who held the lock when it did; `None`, it did not write) only under the
/// caller's own lock.
pub fn stops_job_after_pause(call: &Call<'_>, wrote_under: Option<Held<'_>>) -> Option<Violation> {
    let whose = match wrote_under? {
        Held::ByCaller => return None,
        Held::By(other) => format!("{other}'s"),
        Held::Nobody => "gone".to_owned(),
    };
    let what = format!(
        "{}'s job wrote, and the lock is {whose}: its keeper had not set `lost` after the pause",
        call.caller
    );
    Some(call.broke(Property::KeeperStopsJob, what))
}

/// [`Property::KeeperStopsJob`], in a story: no action of `client`'s was on a lock that was no
/// longer its own (the first such action, at its second).
pub fn stops_job_in_story(client: &str, timeline: &Timeline) -> Option<Violation> {
    let (t, text) = timeline.seconds.iter().find_map(|s| {
        let actions = &s.clients.get(client)?.actions;
        actions.iter().find(|x| x.unsafe_).map(|x| (s.t, &x.text))
    })?;
    let what = format!(
        "{client}'s keeper did not stop the job after the pause: {client} {text} on a lock that \
         was no longer its own"
    );
    Some(Violation::at(Property::KeeperStopsJob, t * 1000, what))
}
