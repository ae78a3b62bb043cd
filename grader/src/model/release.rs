//! Subject 3's model: `release` deletes the lock only while it holds the
//! caller's token, and says whether it did.

use super::faulted::{RAN, STOPPED};
use super::{Answer, Branch, Diff, Divergence, State};
use crate::verdict::{Property, Violation};

/// The branches the explorer must reach.
pub const BRANCHES: &[&str] = &[OWN, OTHERS, NONE, STOPPED, RAN];
const OWN: &str = "the caller's lock: deleted";
const OTHERS: &str = "another's lock: left alone";
const NONE: &str = "no lock: nothing to delete";

/// The ways `release(lock, token)` may go.
pub fn release(state: &State, token: &str) -> Vec<Branch> {
    match &state.lock {
        Some(h) if h.token == token => {
            let mut next = state.clone();
            next.lock = None;
            vec![Branch::returns(OWN, Answer::Bool(true), next)]
        }
        Some(_) => vec![Branch::returns(OTHERS, Answer::Bool(false), state.clone())],
        None => vec![Branch::returns(NONE, Answer::Bool(false), state.clone())],
    }
}

/// The rule a divergent `release` broke.
pub fn judge(d: &Divergence<'_>) -> Violation {
    let call = d.call();
    if let Some((expected, got)) = d.find(|x| match x {
        Diff::LockValue { expected, got } => Some((expected.clone(), got.clone())),
        _ => None,
    }) {
        let (shown, model) = (super::show_value(&got), super::show_value(&expected));
        return if expected.is_none() && d.before.lock.is_some() && !d.crashed {
            d.violation(
                Property::ReleaseFreesOwnLock,
                format!("after {call}, the lock key still holds {shown}; it held the caller's token and must be gone"),
            )
        } else {
            d.violation(
                Property::ReleaseSparesOthers,
                format!("after {call}, the lock key holds {shown}; it was not the caller's lock, and must hold {model}"),
            )
        };
    }
    if let Some((other, expected, got)) = d.other_answer() {
        return d.violation(
            Property::ReleaseSparesOthers,
            format!("while {call} ran, {other} returned {got} (model: {expected}): for a moment the lock was not as its holder left it, and another client saw the gap"),
        );
    }
    if let Some((expected, got)) = d.find(|x| match x {
        Diff::LockExpiry { expected, got } => Some((*expected, *got)),
        _ => None,
    }) {
        return d.violation(
            Property::ReleaseSparesOthers,
            format!(
                "{call} moved the holder's TTL: the lock key {} (model: {})",
                super::show_expiry(got),
                super::show_expiry(expected)
            ),
        );
    }
    if let Some((expected, got)) = d.own_answer() {
        return d.violation(
            Property::ReleaseTellsTruth,
            format!("{call} returned {got}; it must return {expected}"),
        );
    }
    d.unexplained()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Held;

    #[test]
    fn only_the_holders_token_deletes() {
        let s = State {
            now_ms: 0,
            lock: Some(Held {
                token: "b".into(),
                expires_at: 10_000,
            }),
            counter: 0,
            row: Default::default(),
            keeper: Default::default(),
        };
        assert_eq!(
            release(&s, "a"),
            vec![Branch::returns(OTHERS, Answer::Bool(false), s.clone())]
        );
        let gone = release(&s, "b");
        assert_eq!(gone[0].state.lock, None);
        assert_eq!(
            gone[0].expected,
            Some(super::super::Expected::Exactly(Answer::Bool(true)))
        );
    }
}
