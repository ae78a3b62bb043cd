//! Subject 4's model: `acquire_fenced` is `acquire` plus a token that grows.
//!
//! The lock key behaves as in [`super::acquire`]. A grant returns a token
//! above every token handed out before (and above the counter's value at the
//! start), and the counter is left at least at that token, so the next grant
//! is larger still. A refusal returns `None`; the counter may still move on
//! (a script that INCRs first wastes a number, harmlessly), but never back.
//! Neither the counter nor anything else gets a TTL but the lock key.

use super::faulted::{RAN, STOPPED};
use super::{Answer, Branch, Diff, Divergence, Expected, State};
use crate::verdict::{Property, Violation};

/// The branches the explorer must reach: a lock held by its caller is
/// asked again only outside the contract.
pub const BRANCHES: &[&str] = &[GRANTED, REFUSED, STOPPED, RAN];
const GRANTED: &str = "a free lock: granted, with a token above the counter";
const REFUSED: &str = "another's lock: refused";
const OWN_REFUSED: &str = "the caller's own lock (outside the contract): refused";
const OWN_GRANTED: &str = "the caller's own lock (outside the contract): granted again";

/// The ways `acquire_fenced(lock, fence, token, ttl)` may go; `got` is what
/// the call returned, whose token becomes the counter's floor.
pub fn acquire_fenced(
    state: &State,
    token: &str,
    ttl_ms: u64,
    got: Option<&Answer>,
) -> Vec<Branch> {
    let refused = |name| Branch::returns(name, Answer::Token(None), state.clone());
    let mut taken = state.taken(token, ttl_ms);
    if let Some(Answer::Token(Some(t))) = got {
        taken.counter = taken.counter.max(*t);
    }
    let granted = |name| Branch {
        name,
        expected: Some(Expected::TokenAbove(state.counter)),
        state: taken.clone(),
    };
    match &state.lock {
        None => vec![granted(GRANTED)],
        Some(held) if held.token == token => vec![refused(OWN_REFUSED), granted(OWN_GRANTED)],
        Some(_) => vec![refused(REFUSED)],
    }
}

/// The rule a divergent `acquire_fenced` broke.
pub fn judge(d: &Divergence<'_>) -> Violation {
    let call = d.call();
    if let Some((Expected::TokenAbove(floor), Answer::Token(Some(t)))) = d.own_answer() {
        return d.violation(
            Property::TokensGrow,
            format!("{call} was granted token {t}, but the fence counter already stood at {floor}: a grant must come with a token above every earlier one"),
        );
    }
    // Two grants in one moment, the later call with the larger number:
    // whichever counts as first, one rule breaks; the tokens say which
    // matters to the storage.
    if let Some((Expected::Exactly(Answer::Token(None)), Answer::Token(Some(t)))) = d.own_answer()
        && let Some((other, u)) = d.smaller_grant(*t)
    {
        return d.violation(
            Property::TokensGrow,
            format!("{call} returned Some({t}), and {other} was granted Some({u}) while it ran: the lock changed hands between the two grants, and the newer holder got the smaller token"),
        );
    }
    // Another call's grant below the counter's floor, while this one ran: a
    // token of 1 is what `INCR` gives a counter that is gone, so the counter
    // vanished (it expired, or was deleted) rather than merely failed to grow.
    if let Some((other, Expected::TokenAbove(floor), Answer::Token(Some(u)))) = d.other_answer()
        && u <= floor
    {
        return if *u == 1 {
            d.violation(
                Property::FencesNeverExpire,
                format!("while {call} ran, {other} was granted token 1, though the fence counter had already reached {floor}: the counter was gone, and tokens started again from 1"),
            )
        } else {
            d.violation(
                Property::TokensGrow,
                format!("while {call} ran, {other} was granted token {u}, though the fence counter had already reached {floor}: a grant must come with a token above every earlier one"),
            )
        };
    }
    if let Some(v) = super::acquire::judge_lock(d) {
        return v;
    }
    if let Some((at_least, got)) = d.find(|x| match x {
        Diff::Counter { at_least, got } => Some((*at_least, got.clone())),
        _ => None,
    }) {
        return d.violation(
            Property::TokensGrow,
            format!("after {call}, the fence counter holds {}, though token {at_least} was handed out: the next grant would not get a larger token", super::show_value(&got)),
        );
    }
    if let Some(got) = d.find(|x| match x {
        Diff::CounterExpiry { got } => Some(*got),
        _ => None,
    }) {
        return d.violation(
            Property::FencesNeverExpire,
            format!(
                "after {call}, the fence counter {}: when it runs out, tokens start again from 1",
                super::show_expiry(got)
            ),
        );
    }
    if let Some((other, expected, got)) = d.other_answer() {
        return d.violation(
            Property::TokensGrow,
            format!("while {call} ran, {other} returned {got} (model: {expected}): the two grants did not come one wholly after the other"),
        );
    }
    d.unexplained()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn free(counter: u64) -> State {
        State {
            now_ms: 0,
            lock: None,
            counter,
            row: Default::default(),
            keeper: Default::default(),
        }
    }

    #[test]
    fn a_grant_needs_a_token_above_the_counter_and_raises_the_floor() {
        let b = acquire_fenced(&free(9), "a", 1000, Some(&Answer::Token(Some(10))));
        assert_eq!(b[0].expected, Some(Expected::TokenAbove(9)));
        assert!(
            b[0].expected
                .as_ref()
                .is_some_and(|e| e.admits(&Answer::Token(Some(10))))
        );
        assert!(
            !b[0]
                .expected
                .as_ref()
                .is_some_and(|e| e.admits(&Answer::Token(Some(9))))
        );
        assert_eq!(b[0].state.counter, 10);
    }
}
