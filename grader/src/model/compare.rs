//! Redis after a step, set beside the model.
//!
//! Only what the specification fixes is compared: a missing row field
//! reads as 0; the counter may run ahead of the tokens handed out, never
//! behind; the counter and the row may carry no TTL but the grader's own.

use std::fmt;

use super::{Answer, Expected, State};
use crate::clock::{Expiry, as_asked};
use crate::judge::{show_expiry, show_value};

/// What Redis holds, as the grader read it after a step.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Observed {
    /// The lock key's value (`<hash>` and the like when it is not a string).
    pub lock: Option<String>,
    /// The lock key's virtual expiry.
    pub lock_expiry: Option<Expiry>,
    /// The fence counter's value.
    pub counter: Option<String>,
    /// The fence counter's virtual expiry.
    pub counter_expiry: Option<Expiry>,
    /// The row's `value` field.
    pub row_value: Option<String>,
    /// The row's `fence` field.
    pub row_fence: Option<String>,
    /// The row's virtual expiry.
    pub row_expiry: Option<Expiry>,
}

/// The expiries the grader itself gave the counter and the row (its safety
/// TTL), which are not a lock's doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Baseline {
    /// The counter's, right after set-up.
    pub counter: Expiry,
    /// The row's, right after set-up.
    pub row: Expiry,
}

/// One way Redis differs from the model after a step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Diff {
    /// Call number `op` of the step (0: the first in the order tried)
    /// returned what the model does not allow.
    Answer {
        /// Which call of the step, in the order the model tried.
        op: usize,
        /// What the model allows.
        expected: Expected,
        /// What it returned.
        got: Answer,
    },
    /// The lock key holds another value (or exists, or not).
    LockValue {
        /// The model's.
        expected: Option<String>,
        /// Redis'.
        got: Option<String>,
    },
    /// The lock key expires at another time.
    LockExpiry {
        /// The model's.
        expected: Expiry,
        /// Redis'.
        got: Expiry,
    },
    /// The counter fell behind a token handed out (or is not a number).
    Counter {
        /// The least it may hold.
        at_least: u64,
        /// What it holds.
        got: Option<String>,
    },
    /// The counter has a TTL of the lock's making.
    CounterExpiry {
        /// Redis'.
        got: Expiry,
    },
    /// The row's `value` field.
    RowValue {
        /// The model's.
        expected: i64,
        /// Redis'.
        got: Option<String>,
    },
    /// The row's `fence` field.
    RowFence {
        /// The model's.
        expected: u64,
        /// Redis'.
        got: Option<String>,
    },
    /// The row has a TTL of the lock's making.
    RowExpiry {
        /// Redis'.
        got: Expiry,
    },
}

impl fmt::Display for Diff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Diff::Answer { expected, got, .. } => write!(f, "returned {got}; model: {expected}"),
            Diff::LockValue { expected, got } => {
                write!(
                    f,
                    "lock key: {}; model: {}",
                    show_value(got),
                    show_value(expected)
                )
            }
            Diff::LockExpiry { expected, got } => write!(
                f,
                "lock key {}; model: {}",
                show_expiry(*got),
                show_expiry(*expected)
            ),
            Diff::Counter { at_least, got } => write!(
                f,
                "fence counter: {}; model: a number of at least {at_least}",
                show_value(got)
            ),
            Diff::CounterExpiry { got } => {
                write!(f, "fence counter {}; model: no TTL", show_expiry(*got))
            }
            Diff::RowValue { expected, got } => {
                write!(f, "row's value: {}; model: {expected}", show_value(got))
            }
            Diff::RowFence { expected, got } => {
                write!(f, "row's fence: {}; model: {expected}", show_value(got))
            }
            Diff::RowExpiry { got } => write!(f, "row {}; model: no TTL", show_expiry(*got)),
        }
    }
}

/// Whether a counter or row expiry is one a lock may leave: none, or the
/// grader's own.
fn untimed(got: Option<Expiry>, baseline: Expiry) -> bool {
    match got {
        None | Some(Expiry::Missing) | Some(Expiry::Never) => true,
        Some(e) => e == baseline,
    }
}

/// Compares Redis with the model after a step. The counter may run ahead
/// of the model; when it does, the model adopts it as its new floor.
/// `before` is the state before the step, and `may_set` whether the step
/// holds a call that may set the lock's TTL ([`super::Op::sets_a_ttl`]): only an
/// expiry the step itself set may be read a little off ([`as_asked`]), a
/// renewal to the very instant the lock had included.
pub fn compare(
    before: &State,
    model: &mut State,
    got: &Observed,
    baseline: &Baseline,
    may_set: bool,
) -> Vec<Diff> {
    let mut diffs = Vec::new();
    let expected_lock = model.lock.as_ref().map(|h| h.token.clone());
    if got.lock != expected_lock {
        diffs.push(Diff::LockValue {
            expected: expected_lock,
            got: got.lock.clone(),
        });
    } else if let Some(held) = &mut model.lock {
        let model_now = model.now_ms.min(held.expires_at);
        let set_now = may_set || before.lock.as_ref() != Some(&*held);
        let expected = Expiry::At(held.expires_at);
        let got_expiry = got.lock_expiry.unwrap_or(Expiry::Missing);
        // A TTL read a millisecond or two over, or one under, is the one asked
        // for ([`as_asked`]); the model then expires it when Redis does.
        if let Expiry::At(at) = got_expiry
            && set_now
            && at != held.expires_at
            && at >= model_now
            && as_asked(held.expires_at - model_now, at - model_now)
        {
            held.expires_at = at;
        } else if got_expiry != expected {
            diffs.push(Diff::LockExpiry {
                expected,
                got: got_expiry,
            });
        }
    }
    match got
        .counter
        .as_deref()
        .map_or(Some(0), |c| c.parse::<u64>().ok())
    {
        Some(n) if n >= model.counter => model.counter = n,
        _ => diffs.push(Diff::Counter {
            at_least: model.counter,
            got: got.counter.clone(),
        }),
    }
    if !untimed(got.counter_expiry, baseline.counter) {
        diffs.push(Diff::CounterExpiry {
            got: got.counter_expiry.unwrap_or(Expiry::Missing),
        });
    }
    if got
        .row_fence
        .as_deref()
        .map_or(Some(0), |v| v.parse::<u64>().ok())
        != Some(model.row.fence)
    {
        diffs.push(Diff::RowFence {
            expected: model.row.fence,
            got: got.row_fence.clone(),
        });
    }
    if got
        .row_value
        .as_deref()
        .map_or(Some(0), |v| v.parse::<i64>().ok())
        != Some(model.row.value)
    {
        diffs.push(Diff::RowValue {
            expected: model.row.value,
            got: got.row_value.clone(),
        });
    }
    if !untimed(got.row_expiry, baseline.row) {
        diffs.push(Diff::RowExpiry {
            got: got.row_expiry.unwrap_or(Expiry::Missing),
        });
    }
    diffs
}
