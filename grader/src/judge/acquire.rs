//! The rules of `acquire` (and of `acquire_fenced`'s lock half): `acquire` takes
//! a free lock, with the TTL asked for, and leaves a held one as it is.
//!
//! `acquire_fenced` keeps the same rules, so these judges serve both; only
//! the words for a grant and a refusal differ (`true`/`false` against a
//! token/`None`).

use std::time::Duration;

use super::Call;
use super::faults::{Claim, returned_the_error, unknown};
use crate::clock::{Expiry, RESOLUTION_MS, as_asked};
use crate::verdict::{Property, Violation};
use crate::wire::Hit;

/// A grant: `Some(None)` from `acquire`, `Some(Some(token))` from
/// `acquire_fenced`, `None` when refused.
pub type Grant = Option<Option<u64>>;

/// Who held the lock just before the call, as far as the grader knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Before<'a> {
    /// The lock key did not exist.
    Free,
    /// Another client held it (its name, or `another client`).
    HeldBy(&'a str),
    /// The caller itself held it, or someone the grader cannot name.
    Unknown,
}

/// What the lock key holds right after the call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Key {
    /// Nothing: the key does not exist.
    Missing,
    /// The caller's token.
    Own,
    /// The token of the client that held the lock before.
    Holders,
    /// Something else, described for the report (`"tok-B"`, `B's token`).
    Other(String),
}

impl Key {
    fn describe(&self, call: &Call<'_>, holder: Option<&str>) -> String {
        match self {
            Key::Missing => "nothing (the key is gone)".into(),
            Key::Own => format!("{}'s token", call.caller),
            Key::Holders => format!("{}'s token", holder.unwrap_or("the holder")),
            Key::Other(what) => what.clone(),
        }
    }
}

/// What the function returns when it refuses, as a learner writes it.
pub fn refusal(function: &str) -> &'static str {
    if function == "acquire_fenced" {
        "None"
    } else {
        "false"
    }
}

/// What it returned when it granted, as a learner reads it.
pub fn granted(grant: Grant) -> String {
    match grant.flatten() {
        Some(t) => format!("token {t}"),
        None => "true".into(),
    }
}

/// Every rule a call of `acquire` or `acquire_fenced` can break by what it
/// returns and what it leaves in the lock key, first broken first: it never
/// takes a held lock, and it takes a free one.
pub fn taking(call: &Call<'_>, before: Before<'_>, grant: Grant, key: &Key) -> Option<Violation> {
    respects_holder(call, before, grant, key).or_else(|| takes_free_lock(call, before, grant, key))
}

/// [`Property::AcquireRespectsHolder`]: while another client holds the lock,
/// the call grants nothing and leaves the holder's token in the key.
pub fn respects_holder(
    call: &Call<'_>,
    before: Before<'_>,
    grant: Grant,
    key: &Key,
) -> Option<Violation> {
    let Before::HeldBy(holder) = before else {
        return None;
    };
    let what = if grant.is_some() {
        format!(
            "{holder} holds the lock, and {} returned {}",
            call.name(),
            granted(grant)
        )
    } else if *key != Key::Holders {
        format!(
            "{holder} holds the lock, and after {} the key holds {}",
            call.name(),
            key.describe(call, Some(holder))
        )
    } else {
        return None;
    };
    Some(call.broke(Property::AcquireRespectsHolder, what))
}

/// [`Property::AcquireTakesFreeLock`]: a grant leaves the caller's token in
/// the key, a free lock is granted, and a refusal leaves no token of the
/// caller's behind.
pub fn takes_free_lock(
    call: &Call<'_>,
    before: Before<'_>,
    grant: Grant,
    key: &Key,
) -> Option<Violation> {
    let name = call.name();
    let what = match (grant, key) {
        (Some(_), Key::Own) => return None,
        (Some(_), Key::Missing) => format!(
            "{name} returned {}, but the lock key does not exist",
            granted(grant)
        ),
        (Some(_), _) if matches!(before, Before::HeldBy(_)) => return None,
        (Some(_), other) => format!(
            "{name} returned {}, but the lock key holds {} instead of its token",
            granted(grant),
            other.describe(call, None)
        ),
        (None, Key::Own) => format!(
            "{name} returned {}, but the lock key holds its token",
            refusal(call.function)
        ),
        (None, _) if before == Before::Free => format!(
            "{name} returned {} although the lock was free",
            refusal(call.function)
        ),
        (None, _) => return None,
    };
    Some(call.broke(Property::AcquireTakesFreeLock, what))
}

/// [`Property::AcquireLeavesHolderTtl`]: a refused call leaves the holder's
/// expiry where it was.
pub fn leaves_holder_ttl(
    call: &Call<'_>,
    holder: &str,
    grant: Grant,
    before: Expiry,
    after: Expiry,
) -> Option<Violation> {
    (grant.is_none() && before != after).then(|| {
        let what = format!(
            "{holder} holds the lock, and {}, refused, reset its TTL: a crashed holder's lock would \
             never expire while others keep trying",
            call.name()
        );
        call.broke(Property::AcquireLeavesHolderTtl, what)
    })
}

/// [`Property::LockHasTtl`]: right after a grant at `now_ms`, the lock key
/// expires after the TTL asked for, to the millisecond, give or take the
/// clock's slack ([`as_asked`]: up to [`crate::clock::SLACK_MS`] over, a millisecond under).
pub fn lock_has_ttl(
    call: &Call<'_>,
    asked: Duration,
    now_ms: u64,
    expiry: Expiry,
) -> Option<Violation> {
    let asked_ms = asked.as_millis() as u64;
    let left_ms = match expiry {
        // A TTL that had run out by the look reads as 0; the clock rounds
        // every other one up to its resolution.
        Expiry::At(at) => at.saturating_sub(now_ms).max(RESOLUTION_MS),
        // Right after a grant, a key already gone was set with a TTL shorter
        // than the clock's resolution (milliseconds asked as seconds, say),
        // and reads as one that expires within it, the same words whichever
        // way the race with the look went.
        Expiry::Missing => RESOLUTION_MS,
        Expiry::Never => {
            let what = format!(
                "after {}, the lock key has no TTL: if {} crashes, nobody gets the lock again",
                call.name(),
                call.caller
            );
            return Some(call.broke(Property::LockHasTtl, what));
        }
    };
    (!as_asked(asked_ms, left_ms)).then(|| {
        let what = format!(
            "{} was asked for a TTL of {asked_ms} ms, and the lock key expires after {left_ms} ms",
            call.name()
        );
        call.broke(Property::LockHasTtl, what)
    })
}

/// [`Property::NoImmortalLock`]: after the caller crashed somewhere in its
/// call, the lock key it may have left behind has a TTL.
pub fn no_immortal_lock(call: &Call<'_>, expiry: Expiry) -> Option<Violation> {
    (expiry == Expiry::Never).then(|| {
        let what = format!(
            "{} crashed, and the lock key it left behind has no TTL: nobody will ever get the lock again",
            call.caller
        );
        call.broke(Property::NoImmortalLock, what)
    })
}

/// [`Property::OneWinner`]: of clients that raced for a free lock, at most
/// one was granted it (`winners` names those that were).
pub fn one_winner(function: &'static str, at_ms: u64, winners: &[&str]) -> Option<Violation> {
    (winners.len() > 1).then(|| {
        let call = Call::at(winners[0], function, at_ms);
        let what = format!(
            "the {function} calls of {} all returned true: {} clients believe they hold the lock",
            winners.join(", "),
            winners.len()
        );
        call.broke(Property::OneWinner, what)
    })
}

/// [`Property::AcquireReportsFailure`]: after the fault `hit`, the call
/// returned the error; `returned` is its `Ok` answer if it gave one instead.
pub fn reports_failure(call: &Call<'_>, hit: &Hit, returned: Option<Grant>) -> Option<Violation> {
    let claim = returned.map(|grant| Claim {
        answer: format!("Ok({})", shown(call.function, grant)),
        claims: match grant {
            Some(_) => unknown(hit, "a grant that did not happen", "a grant it cannot know"),
            None => "a refusal, as if another client held the lock, which it does not know",
        },
    });
    returned_the_error(call, Property::AcquireReportsFailure, hit, claim)
}

/// `grant` as `function` returns it: `true`/`false`, or `Some(33)`/`None`.
fn shown(function: &str, grant: Grant) -> String {
    match grant {
        Some(Some(token)) => format!("Some({token})"),
        Some(None) if function == "acquire_fenced" => "Some(_)".into(),
        Some(None) => "true".into(),
        None => refusal(function).into(),
    }
}
