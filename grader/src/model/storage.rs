//! Subject 5's model: the storage row refuses tokens older than the
//! highest it has seen, and remembers the highest.
//!
//! A write with a token at least the row's `fence` stores the value and the
//! token; an older one changes nothing. A read with such a token stores the
//! token and returns the value; an older one is refused. A row that does not
//! exist, or lacks a field, reads as 0 there. Tokens are numbers: 10 is
//! newer than 9.

use super::faulted::{RAN, STOPPED};
use super::{Answer, Branch, Diff, Divergence, Expected, State};
use crate::verdict::{Property, Violation};

/// The branches the explorer must reach.
pub const BRANCHES: &[&str] = &[
    WRITE_NEWER,
    WRITE_SAME,
    WRITE_OLDER,
    READ_NEWER,
    READ_SAME,
    READ_OLDER,
    STOPPED,
    RAN,
];
const WRITE_NEWER: &str = "write, a newer token: stored";
const WRITE_SAME: &str = "write, the row's own token: stored";
const WRITE_OLDER: &str = "write, an older token: refused";
const READ_NEWER: &str = "read, a newer token: the value";
const READ_SAME: &str = "read, the row's own token: the value";
const READ_OLDER: &str = "read, an older token: refused";

/// The ways `fenced_write(row, token, value)` may go.
pub fn fenced_write(state: &State, token: u64, value: i64) -> Vec<Branch> {
    if token < state.row.fence {
        return vec![Branch::returns(
            WRITE_OLDER,
            Answer::Bool(false),
            state.clone(),
        )];
    }
    let name = if token == state.row.fence {
        WRITE_SAME
    } else {
        WRITE_NEWER
    };
    let mut next = state.clone();
    next.row.fence = token;
    next.row.value = value;
    vec![Branch::returns(name, Answer::Bool(true), next)]
}

/// The ways `fenced_read(row, token)` may go.
pub fn fenced_read(state: &State, token: u64) -> Vec<Branch> {
    if token < state.row.fence {
        return vec![Branch::returns(
            READ_OLDER,
            Answer::Read(None),
            state.clone(),
        )];
    }
    let name = if token == state.row.fence {
        READ_SAME
    } else {
        READ_NEWER
    };
    let mut next = state.clone();
    next.row.fence = token;
    vec![Branch::returns(
        name,
        Answer::Read(Some(state.row.value)),
        next,
    )]
}

/// The rule a divergent `fenced_write` or `fenced_read` broke.
pub fn judge(d: &Divergence<'_>) -> Violation {
    let call = d.call();
    let highest = d.before.row.fence;
    if let Some((expected, got)) = d.own_answer() {
        let accepted = matches!(got, Answer::Bool(true) | Answer::Read(Some(_)));
        let should = matches!(
            expected,
            Expected::Exactly(Answer::Bool(true) | Answer::Read(Some(_)))
        );
        return match (accepted, should) {
            (true, false) => d.violation(
                Property::StaleRequestsRejected,
                format!("{call} returned {got}, but the storage had seen token {highest}: it must return {expected}"),
            ),
            (false, true) if d.fencing_token == Some(highest) => d.violation(
                Property::EqualTokensAccepted,
                format!("{call} returned {got}; the highest token seen was {highest}, the same, so it must return {expected}"),
            ),
            (false, true) => d.violation(
                Property::FreshTokensAccepted,
                format!("{call} returned {got}; the highest token seen was only {highest}, so it must return {expected}"),
            ),
            _ => d.violation(
                Property::StorageKeepsValue,
                format!("{call} returned {got}; the row's value was {}, so it must return {expected}", d.before.row.value),
            ),
        };
    }
    if let Some((expected, got)) = d.find(|x| match x {
        Diff::RowFence { expected, got } => Some((*expected, got.clone())),
        _ => None,
    }) {
        return d.violation(
            Property::StorageRemembersHighest,
            format!("after {call}, the row's `fence` field holds {}; it must hold {expected}, the highest token seen", super::show_value(&got)),
        );
    }
    if let Some((expected, got)) = d.find(|x| match x {
        Diff::RowValue { expected, got } => Some((*expected, got.clone())),
        _ => None,
    }) {
        return d.violation(
            Property::StorageKeepsValue,
            format!(
                "after {call}, the row's `value` field holds {}; it must hold {expected}",
                super::show_value(&got)
            ),
        );
    }
    if let Some(got) = d.find(|x| match x {
        Diff::RowExpiry { got } => Some(*got),
        _ => None,
    }) {
        return d.violation(
            Property::FencesNeverExpire,
            format!("after {call}, the row {}: when it runs out, the storage forgets the highest token it has seen", super::show_expiry(got)),
        );
    }
    if let Some((other, expected, got)) = d.other_answer() {
        return d.violation(
            Property::StaleRequestsRejected,
            format!("while {call} ran, {other} returned {got} (model: {expected}): the two requests did not act as if one came wholly before the other"),
        );
    }
    d.unexplained()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Row;

    fn row(value: i64, fence: u64) -> State {
        State {
            now_ms: 0,
            lock: None,
            counter: 0,
            row: Row { value, fence },
            keeper: Default::default(),
        }
    }

    #[test]
    fn tokens_compare_as_numbers_and_equal_ones_pass() {
        assert_eq!(
            fenced_write(&row(1, 9), 10, 5)[0].state.row,
            Row {
                value: 5,
                fence: 10
            }
        );
        assert_eq!(
            fenced_write(&row(1, 10), 9, 5)[0].state.row,
            Row {
                value: 1,
                fence: 10
            }
        );
        assert_eq!(
            fenced_read(&row(4, 10), 10)[0].expected,
            Some(Expected::Exactly(Answer::Read(Some(4))))
        );
        assert_eq!(
            fenced_read(&row(4, 10), 9)[0].expected,
            Some(Expected::Exactly(Answer::Read(None)))
        );
    }
}
