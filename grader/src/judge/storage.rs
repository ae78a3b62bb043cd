//! The rules of the storage exercise: the storage refuses tokens older than the
//! highest it has seen, accepts the others, remembers the highest, keeps the
//! last accepted value, and hands a failed command's error on.
//!
//! The judges name the function that answered (`A's fenced_read`), so that
//! a read that breaks a rule is never blamed on a write.

use super::Call;
use super::faults::{Claim, returned_the_error, unknown};
use crate::verdict::{Property, Violation};
use crate::wire::Hit;

/// The token a request's token is held against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seen {
    /// The highest token the storage had seen before the request (`None`:
    /// none yet, the row or its `fence` field did not exist).
    Row(Option<u64>),
    /// The newest fencing token the lock has handed out (in a scenario,
    /// where the storage may not have seen it yet: the caller holds the
    /// lock exactly when its token is this one).
    Granted(u64),
}

/// [`Property::StaleRequestsRejected`], [`Property::EqualTokensAccepted`]
/// and [`Property::FreshTokensAccepted`]: whether the request with fencing
/// token `token` was rightly accepted or refused.
pub fn answered(call: &Call<'_>, token: u64, accepted: bool, seen: Seen) -> Option<Violation> {
    let name = call.name();
    let (property, what) = match seen {
        Seen::Row(None) if !accepted => (
            Property::FreshTokensAccepted,
            format!("{name} with token {token} was refused by a row that had seen no token yet"),
        ),
        Seen::Row(Some(highest)) if token < highest && accepted => (
            Property::StaleRequestsRejected,
            format!("after token {highest}, {name} with the older token {token} was accepted"),
        ),
        Seen::Row(Some(highest)) if token == highest && !accepted => (
            Property::EqualTokensAccepted,
            format!("after token {highest}, {name} with the same token was refused"),
        ),
        Seen::Row(Some(highest)) if token > highest && !accepted => (
            Property::FreshTokensAccepted,
            format!("after token {highest}, {name} with the newer token {token} was refused"),
        ),
        Seen::Granted(newest) if token < newest && accepted => (
            Property::StaleRequestsRejected,
            format!(
                "the storage accepted {name} with token {token} after the lock had been granted \
                 with token {newest}"
            ),
        ),
        Seen::Granted(newest) if token == newest && !accepted => (
            Property::EqualTokensAccepted,
            format!(
                "the storage refused {name} with token {token} although {} holds the lock with it",
                call.caller
            ),
        ),
        _ => return None,
    };
    Some(call.broke(property, what))
}

/// What a storage request answered: a write's verdict, or a read's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answered {
    /// `fenced_write` returned `Ok(accepted)`.
    Write(bool),
    /// `fenced_read` returned `Ok(value)`.
    Read(Option<i64>),
}

/// [`Property::StorageReportsFailure`]: after the fault `hit`, the request
/// returned the error; `returned` is its `Ok` answer if it gave one instead.
pub fn reports_failure(
    call: &Call<'_>,
    hit: &Hit,
    returned: Option<Answered>,
) -> Option<Violation> {
    let claim = returned.map(|answered| match answered {
        Answered::Write(accepted) => Claim {
            answer: format!("Ok({accepted})"),
            claims: if accepted {
                unknown(hit, "a write that did not happen", "a write it cannot know")
            } else {
                "a refusal, as if the row had seen a newer token, which it does not know"
            },
        },
        Answered::Read(value) => Claim {
            answer: match value {
                Some(v) => format!("Ok(Some({v}))"),
                None => "Ok(None)".to_owned(),
            },
            claims: match value {
                Some(_) => "a value the storage never handed back",
                None => "a refusal, as if the row had seen a newer token, which it does not know",
            },
        },
    });
    returned_the_error(call, Property::StorageReportsFailure, hit, claim)
}

/// [`Property::StorageRemembersHighest`]: after the request with `token`,
/// the row's `fence` field holds `highest`, the highest token seen so far.
pub fn remembers_highest(
    call: &Call<'_>,
    token: u64,
    fence: u64,
    highest: u64,
) -> Option<Violation> {
    (fence != highest).then(|| {
        let what = format!(
            "after {} with token {token}, the row's `fence` field holds {fence} instead of {highest}",
            call.name()
        );
        call.broke(Property::StorageRemembersHighest, what)
    })
}

/// [`Property::StaleRequestsRejected`], judged by its effect: a request
/// with `token` that raced a newer one (`newer`, value `newer_value`) left
/// the row as the newer one made it, whichever order they landed in.
pub fn stale_left_no_trace(
    call: &Call<'_>,
    token: u64,
    (newer, newer_value): (u64, i64),
    (fence, value): (u64, i64),
) -> Option<Violation> {
    (fence != newer || value != newer_value).then(|| {
        let what = format!(
            "{} with token {token} landed after the storage had accepted token {newer}: the row \
             now holds value {value} and fence {fence}",
            call.name()
        );
        call.broke(Property::StaleRequestsRejected, what)
    })
}

/// What the storage should have kept, and what it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kept {
    /// An accepted write of `value`; the row's value is `row`.
    Written {
        /// The value written.
        value: i64,
        /// The row's value after it.
        row: i64,
    },
    /// An accepted read that returned `got`; the row's value is `row`
    /// (0 when the field is missing).
    Read {
        /// The value the read returned.
        got: i64,
        /// The row's value.
        row: i64,
    },
    /// A refused request; the row's value was `before` and is `row`.
    Refused {
        /// The row's value before the request.
        before: i64,
        /// The row's value after it.
        row: i64,
    },
}

/// [`Property::StorageKeepsValue`]: an accepted write stores its value, an
/// accepted read returns the stored one, and a refused request changes
/// nothing.
pub fn keeps_value(call: &Call<'_>, token: u64, kept: Kept) -> Option<Violation> {
    let name = call.name();
    let what = match kept {
        Kept::Written { value, row } if value != row => format!(
            "{name} of {value} with token {token} was accepted, but the row's value is {row}"
        ),
        Kept::Read { got, row } if got != row => {
            format!("{name} with token {token} returned {got}, but the row's value is {row}")
        }
        Kept::Refused { before, row } if before != row => format!(
            "{name} with token {token} was refused, but the row's value went from {before} to {row}"
        ),
        _ => return None,
    };
    Some(call.broke(Property::StorageKeepsValue, what))
}

/// [`Property::StorageRemembersHighest`] or [`Property::StorageKeepsValue`]: the storage wrote a
/// row whose `field` (`fence` or `value`) holds `held`, which is no whole number: broken
/// whichever check read the row.
pub fn row_not_a_number(field: &str, held: &str) -> Violation {
    let property = match field {
        "fence" => Property::StorageRemembersHighest,
        _ => Property::StorageKeepsValue,
    };
    Violation::anytime(
        property,
        format!(
            "the row's `{field}` field holds {held:?}, not a whole number: the storage \
             must write the token it compared into `fence` and the value into `value`"
        ),
    )
}
