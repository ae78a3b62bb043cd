//! Subject 2's model: `acquire` takes a free lock and touches nothing else.
//!
//! A free lock is taken with the caller's token and a TTL of exactly the one
//! asked for; a lock held by someone else stays as it is, TTL included. A
//! token is fresh for each acquisition (the exercise says so), so the
//! explorer never acquires with the token that holds the lock; should a
//! check do so anyway, the model allows a refusal or a fresh TTL.

use super::faulted::{RAN, STOPPED};
use super::{Answer, Branch, Diff, Divergence, State};
use crate::clock::Expiry;
use crate::verdict::{Property, Violation};

/// The branches the explorer must reach: a lock held by its caller is
/// asked again only outside the contract.
pub const BRANCHES: &[&str] = &[TAKEN, REFUSED, STOPPED, RAN];
const TAKEN: &str = "a free lock: taken";
const REFUSED: &str = "another's lock: refused";
const OWN_REFUSED: &str = "the caller's own lock (outside the contract): refused";
const OWN_TAKEN: &str = "the caller's own lock (outside the contract): taken again";

/// The ways `acquire(lock, token, ttl)` may go.
pub fn acquire(state: &State, token: &str, ttl_ms: u64) -> Vec<Branch> {
    let refused = |name| Branch::returns(name, Answer::Bool(false), state.clone());
    let taken = |name| Branch::returns(name, Answer::Bool(true), state.taken(token, ttl_ms));
    match &state.lock {
        None => vec![taken(TAKEN)],
        Some(held) if held.token == token => vec![refused(OWN_REFUSED), taken(OWN_TAKEN)],
        Some(_) => vec![refused(REFUSED)],
    }
}

/// The rule a divergent `acquire` or `acquire_fenced` broke about the lock
/// key itself, if it broke one.
pub fn judge_lock(d: &Divergence<'_>) -> Option<Violation> {
    let (caller, call, function) = (d.caller, d.call(), d.function);
    let own = d.token;
    if let Some((expected, got)) = d.find(|x| match x {
        Diff::LockValue { expected, got } => Some((expected.clone(), got.clone())),
        _ => None,
    }) {
        let shown = super::show_value(&got);
        let model = super::show_value(&expected);
        return Some(if expected.as_deref() == own && expected.is_some() {
            d.violation(
                Property::AcquireTakesFreeLock,
                format!(
                    "after {call}, the lock key holds {shown} instead of {caller}'s token {model}"
                ),
            )
        } else {
            d.violation(
                Property::AcquireRespectsHolder,
                format!("after {call}, the lock key holds {shown}; the lock was not free, and must still hold {model}"),
            )
        });
    }
    if let Some((expected, got)) = d.find(|x| match x {
        Diff::LockExpiry { expected, got } => Some((*expected, *got)),
        _ => None,
    }) {
        let holder_is_caller = d.after.lock.as_ref().map(|h| h.token.as_str()) == own
            && d.before.lock.as_ref().map(|h| h.token.as_str()) != own;
        let (shown, model) = (super::show_expiry(got), super::show_expiry(expected));
        let faulted = matches!(d.ops.get(d.under_test), Some(super::Op::Failed { .. }));
        return Some(if got == Expiry::Never && d.crashed {
            d.violation(
                Property::NoImmortalLock,
                format!("{caller} crashed during {call}, and the lock key it left behind has no TTL: nobody will ever get the lock again"),
            )
        } else if got == Expiry::Never && faulted && holder_is_caller {
            d.violation(
                Property::NoImmortalLock,
                format!("a command of {call} failed, and the lock key it left behind has no TTL: nobody will ever get the lock again"),
            )
        } else if holder_is_caller || got == Expiry::Never {
            d.violation(
                Property::LockHasTtl,
                format!("after {call} took the lock, the lock key {shown}; model: {model}"),
            )
        } else {
            d.violation(
                Property::AcquireLeavesHolderTtl,
                format!("{call} was refused, and moved the holder's TTL: the lock key {shown} (model: {model})"),
            )
        });
    }
    if let Some((expected, got)) = d.own_answer() {
        let granted = !matches!(got, Answer::Bool(false) | Answer::Token(None));
        return Some(if granted {
            d.violation(
                Property::AcquireRespectsHolder,
                format!("{call} returned {got}, but the lock was not free (model: {expected}): {function} must report a refusal"),
            )
        } else {
            d.violation(
                Property::AcquireTakesFreeLock,
                format!("{call} returned {got}, but the lock was free (model: {expected})"),
            )
        });
    }
    if let Some((op, other, expected, got)) = d.other_op_answer() {
        // A holder whose release finds its lock gone lost it to this call; an
        // acquire that also won means two winners.
        return Some(match op {
            Some(super::Op::Release { .. }) => d.violation(
                Property::AcquireRespectsHolder,
                format!("while {call} ran, {other} returned {got} (model: {expected}): the lock its holder held was taken from it"),
            ),
            _ => d.violation(
                Property::OneWinner,
                format!("while {call} ran, {other} returned {got} (model: {expected}): the two calls did not act as if one came wholly before the other"),
            ),
        });
    }
    None
}

/// The rule a divergent `acquire` broke.
pub fn judge(d: &Divergence<'_>) -> Violation {
    judge_lock(d).unwrap_or_else(|| d.unexplained())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Expected, Held};

    fn state(lock: Option<(&str, u64)>) -> State {
        State {
            now_ms: 1000,
            lock: lock.map(|(t, e)| Held {
                token: t.into(),
                expires_at: e,
            }),
            counter: 0,
            row: Default::default(),
            keeper: Default::default(),
        }
    }

    #[test]
    fn a_free_lock_is_taken_with_the_ttl_rounded_to_the_clock() {
        let b = acquire(&state(None), "a", 1500);
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].expected, Some(Expected::Exactly(Answer::Bool(true))));
        assert_eq!(b[0].state.lock.as_ref().map(|h| h.expires_at), Some(2500));
    }

    #[test]
    fn a_held_lock_stays_as_it_is_and_one_held_by_the_caller_may_go_either_way() {
        let held = state(Some(("b", 9000)));
        assert_eq!(
            acquire(&held, "a", 1000),
            vec![Branch::returns(REFUSED, Answer::Bool(false), held.clone())]
        );
        assert_eq!(acquire(&held, "b", 1000).len(), 2);
    }
}
