//! The rules of the extend exercise: `extend` renews the caller's own lock to exactly the TTL
//! asked for, never renews, changes or brings back a lock that is not the caller's, says
//! truthfully whether it renewed, and returns the error when a command fails.
//!
//! A direct check meets one lock ([`Met`]) and looks at the key after the call; a probe hands
//! the lock to another client in the middle of the renewal ([`keeps_new_holders_ttl`]). The
//! explorer's histories are judged by the exercise's model, [`crate::model::extend`].

use std::time::Duration;

use super::faults::{Claim, returned_the_error, unknown};
use super::{Call, Held, show_expiry, show_value};
use crate::clock::{Expiry, as_asked};
use crate::verdict::{Property, Violation, seconds};
use crate::wire::Hit;

/// The lock the renewal met.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Met<'a> {
    /// The caller's own, holding `token`, with `left_ms` to live.
    Own {
        /// The caller's token.
        token: &'a str,
        /// How long the lock had left, in ms.
        left_ms: u64,
    },
    /// Another client's, `holder`'s, holding `token`, with `left_ms` to live until `expiry`.
    Other {
        /// The holder's name.
        holder: &'a str,
        /// The holder's token.
        token: &'a str,
        /// How long the lock had left, in ms.
        left_ms: u64,
        /// Its expiry before the call.
        expiry: Expiry,
    },
    /// The caller's, expired `ago_ms` ago, and nobody took it since.
    Lost {
        /// How long ago it expired, in ms.
        ago_ms: u64,
    },
}

/// The lock key right after the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct After<'a> {
    /// Its value (`None`: the key does not exist).
    pub value: Option<&'a str>,
    /// Its expiry.
    pub expiry: Expiry,
}

/// Every rule a call of `extend` that was asked for `asked` and returned `renewed` can break,
/// first broken first, from the lock it met and the key after it, at `now_ms`.
pub fn renewing(
    call: &Call<'_>,
    met: Met<'_>,
    asked: Duration,
    renewed: bool,
    now_ms: u64,
    after: After<'_>,
) -> Option<Violation> {
    spares_others(call, met, asked, renewed, after)
        .or_else(|| renews_own_lock(call, met, asked, renewed, now_ms, after))
        .or_else(|| tells_truth(call, met, renewed))
}

/// [`Property::ExtendSparesOthers`]: the caller's own lock keeps its token, another client's
/// keeps its token and its expiry, and a lost lock stays gone.
pub fn spares_others(
    call: &Call<'_>,
    met: Met<'_>,
    asked: Duration,
    renewed: bool,
    after: After<'_>,
) -> Option<Violation> {
    let (caller, name) = (call.caller, call.name());
    let shown = || show_value(&after.value.map(str::to_owned));
    let what = match met {
        Met::Own { token, .. } if after.value != Some(token) => format!(
            "{caller} renewed its own lock, and the lock key now holds {}",
            shown()
        ),
        Met::Other { holder, token, .. } if after.value != Some(token) => format!(
            "{holder} holds the lock, and after {name} the lock key holds {}",
            shown()
        ),
        Met::Other {
            holder,
            left_ms,
            expiry,
            ..
        } if after.expiry != expiry => {
            let believes = if renewed {
                format!(", and {caller}, told true, believes it holds a lock it does not")
            } else {
                String::new()
            };
            format!(
                "{holder} holds the lock with {} left, and {name} gave it {}: {holder}'s lock \
                 outlives {holder} if {holder} crashes{believes}",
                seconds(left_ms),
                seconds(asked.as_millis() as u64)
            )
        }
        Met::Lost { ago_ms } if after.value.is_some() => {
            let ago = seconds(ago_ms);
            format!(
                "{caller}'s lock expired {ago} ago, and {name} brought it back (the key holds \
                 {}): whatever happened in those {ago}, {caller} now holds a lock it lost",
                shown()
            )
        }
        _ => return None,
    };
    Some(call.broke(Property::ExtendSparesOthers, what))
}

/// [`Property::ExtendRenewsOwnLock`]: after renewing its own lock, the key expires `asked` from
/// `now_ms`, give or take the clock's slack ([`as_asked`]).
pub fn renews_own_lock(
    call: &Call<'_>,
    met: Met<'_>,
    asked: Duration,
    renewed: bool,
    now_ms: u64,
    after: After<'_>,
) -> Option<Violation> {
    let Met::Own { left_ms, .. } = met else {
        return None;
    };
    let asked_ms = asked.as_millis() as u64;
    let left = match after.expiry {
        Expiry::At(at) if at >= now_ms && as_asked(asked_ms, at - now_ms) => return None,
        Expiry::At(at) => format!("expires after {}", seconds(at.saturating_sub(now_ms))),
        Expiry::Never => "never expires".into(),
        Expiry::Missing => "is gone".into(),
    };
    let what = format!(
        "{}'s lock had {} left; {} was asked for {} and returned {renewed}, and the lock key {left}",
        call.caller,
        seconds(left_ms),
        call.function,
        seconds(asked_ms)
    );
    Some(call.broke(Property::ExtendRenewsOwnLock, what))
}

/// [`Property::ExtendTellsTruth`]: the call returns true exactly when it renewed the caller's
/// own lock.
pub fn tells_truth(call: &Call<'_>, met: Met<'_>, renewed: bool) -> Option<Violation> {
    let name = call.name();
    let what = match met {
        Met::Own { .. } if !renewed => format!("{name} renewed its own lock but returned false"),
        Met::Other { holder, .. } if renewed => format!(
            "{holder} holds the lock, and {name} returned true: {}'s job would go on writing \
             under {holder}'s lock",
            call.caller
        ),
        Met::Lost { ago_ms } if renewed => format!(
            "{}'s lock expired {} ago, and {name} returned true",
            call.caller,
            seconds(ago_ms)
        ),
        _ => return None,
    };
    Some(call.broke(Property::ExtendTellsTruth, what))
}

/// [`Property::ExtendSparesOthers`], when the lock changed hands during the renewal: `holder`
/// took it for `ttl` and holds it (`held`) at `now_ms`, and its key must expire within that
/// TTL. A true from a renewal that came before the new grant is the truth: only the new
/// holder's TTL is judged.
pub fn keeps_new_holders_ttl(
    call: &Call<'_>,
    holder: &str,
    ttl: Duration,
    held: Held<'_>,
    now_ms: u64,
    expiry: Expiry,
) -> Option<Violation> {
    if held != Held::By(holder) {
        return None;
    }
    let ttl_ms = ttl.as_millis() as u64;
    match expiry {
        Expiry::At(at) if at <= now_ms + ttl_ms => None,
        other => {
            let what = format!(
                "{} renewed {holder}'s lock: {holder} took it for {}, and the key {}",
                call.name(),
                seconds(ttl_ms),
                show_expiry(other)
            );
            Some(call.broke(Property::ExtendSparesOthers, what))
        }
    }
}

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
