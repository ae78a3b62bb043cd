//! Subject 6's model: `extend` renews the lock only while it holds the
//! caller's token, to exactly the TTL asked for, and says whether it did.
//!
//! A lock held by someone else, or gone, stays as it is: no TTL moved, no
//! key brought back.

use super::faulted::{RAN, STOPPED};
use super::{Answer, Branch, Diff, Divergence, State};
use crate::verdict::{Property, Violation};

/// The branches the explorer must reach.
pub const BRANCHES: &[&str] = &[OWN, OTHERS, NONE, STOPPED, RAN];
const OWN: &str = "the caller's lock: renewed";
const OTHERS: &str = "another's lock: left alone";
const NONE: &str = "no lock: nothing brought back";

/// The ways `extend(lock, token, ttl)` may go.
pub fn extend(state: &State, token: &str, ttl_ms: u64) -> Vec<Branch> {
    match &state.lock {
        Some(h) if h.token == token => vec![Branch::returns(
            OWN,
            Answer::Bool(true),
            state.taken(token, ttl_ms),
        )],
        Some(_) => vec![Branch::returns(OTHERS, Answer::Bool(false), state.clone())],
        None => vec![Branch::returns(NONE, Answer::Bool(false), state.clone())],
    }
}

/// The rule a divergent `extend` broke.
pub fn judge(d: &Divergence<'_>) -> Violation {
    let call = d.call();
    let own = d.token;
    if let Some((expected, got)) = d.find(|x| match x {
        Diff::LockValue { expected, got } => Some((expected.clone(), got.clone())),
        _ => None,
    }) {
        let (shown, model) = (super::show_value(&got), super::show_value(&expected));
        return d.violation(
            Property::ExtendSparesOthers,
            format!("after {call}, the lock key holds {shown}; a renewal changes no value, and it must hold {model}"),
        );
    }
    if let Some((other, expected, got)) = d.other_answer() {
        return d.violation(
            Property::ExtendSparesOthers,
            format!("while {call} ran, {other} returned {got} (model: {expected}): the renewal and the other call did not act as if one came wholly before the other"),
        );
    }
    if let Some((expected, got)) = d.find(|x| match x {
        Diff::LockExpiry { expected, got } => Some((*expected, *got)),
        _ => None,
    }) {
        let (shown, model) = (super::show_expiry(got), super::show_expiry(expected));
        let callers = d.after.lock.as_ref().map(|h| h.token.as_str()) == own
            && d.before.lock.as_ref().map(|h| h.token.as_str()) == own;
        return if callers && !d.crashed {
            d.violation(
                Property::ExtendRenewsOwnLock,
                format!("after {call}, the caller's lock key {shown} (model: {model})"),
            )
        } else {
            d.violation(
                Property::ExtendSparesOthers,
                format!("{call} moved the TTL of a lock that was not the caller's: the lock key {shown} (model: {model})"),
            )
        };
    }
    if let Some((expected, got)) = d.own_answer() {
        return d.violation(
            Property::ExtendTellsTruth,
            format!("{call} returned {got}; it must return {expected}"),
        );
    }
    d.unexplained()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Expected, Held};

    fn held_by(token: &str) -> State {
        State {
            now_ms: 4000,
            lock: Some(Held {
                token: token.into(),
                expires_at: 6000,
            }),
            counter: 0,
            row: Default::default(),
            keeper: Default::default(),
        }
    }

    #[test]
    fn only_the_holders_token_renews() {
        let s = held_by("b");
        assert_eq!(
            extend(&s, "a", 10_000),
            vec![Branch::returns(OTHERS, Answer::Bool(false), s.clone())]
        );
        let renewed = extend(&s, "b", 10_000);
        assert_eq!(
            renewed[0].expected,
            Some(Expected::Exactly(Answer::Bool(true)))
        );
        assert_eq!(
            renewed[0].state.lock.as_ref().map(|h| h.expires_at),
            Some(14_000)
        );
    }

    #[test]
    fn a_lost_lock_stays_lost() {
        let mut s = held_by("a");
        s.lock = None;
        assert_eq!(
            extend(&s, "a", 10_000),
            vec![Branch::returns(NONE, Answer::Bool(false), s.clone())]
        );
    }
}
