//! What each learner function must do, as small pure state machines.
//!
//! The checks that call a lock with chosen inputs ([`crate::explore`]) need to
//! know, after every call, what a correct lock would have returned and left
//! in Redis. That knowledge lives here, one file per exercise, as plain Rust
//! over a [`State`]: the lock key (its token and virtual expiry), the fence
//! counter, and the storage row. The model is the specification: the
//! reference solutions agree with it, and where the course allows several
//! answers (a counter that an INCR-first script moves on a refused attempt, a
//! lock asked again by the client that already holds it) a step has several
//! [`Branch`]es and any of them is right.
//!
//! Only what the specification fixes is compared ([`compare`]): a missing row
//! field reads as 0, the counter may run ahead of the tokens handed out but
//! never behind them, and the counter and the row must carry no TTL but the
//! grader's own.

pub mod acquire;
pub mod fencing;
pub mod release;
pub mod storage;

use std::fmt;

use crate::clock::{Expiry, RESOLUTION_MS};
use crate::verdict::seconds;

/// The lock key, held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    /// The holder's token.
    pub token: String,
    /// Its virtual expiry, in ms.
    pub expires_at: u64,
}

/// The storage row; a missing field (or a missing row) reads as 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Row {
    /// The counter the clients write.
    pub value: i64,
    /// The highest fencing token the storage has seen.
    pub fence: u64,
}

/// Everything a learner function may touch, as a correct lock leaves it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    /// Virtual now, in ms.
    pub now_ms: u64,
    /// The lock key, when it exists.
    pub lock: Option<Held>,
    /// The fence counter (a missing counter reads as 0): every token handed
    /// out so far is at most this, and the next must be above it.
    pub counter: u64,
    /// The storage row.
    pub row: Row,
}

impl State {
    /// Moves virtual time to `t_ms` (never back); the lock expires when its
    /// time has come, as the clock deletes it.
    pub fn advance_to(&mut self, t_ms: u64) {
        self.now_ms = self.now_ms.max(t_ms);
        if self
            .lock
            .as_ref()
            .is_some_and(|h| h.expires_at <= self.now_ms)
        {
            self.lock = None;
        }
    }

    /// The lock held with `token` for `ttl_ms` from now, rounded up to the
    /// clock's resolution as the clock measures it.
    fn taken(&self, token: &str, ttl_ms: u64) -> State {
        let mut next = self.clone();
        next.lock = Some(Held {
            token: token.to_string(),
            expires_at: self.now_ms + ttl_ms.div_ceil(RESOLUTION_MS) * RESOLUTION_MS,
        });
        next
    }
}

/// One call, or one move of time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// `acquire(lock, token, ttl)`.
    Acquire { token: String, ttl_ms: u64 },
    /// `release(lock, token)`.
    Release { token: String },
    /// `acquire_fenced(lock, fence, token, ttl)`.
    AcquireFenced { token: String, ttl_ms: u64 },
    /// `fenced_write(row, token, value)`.
    Write { token: u64, value: i64 },
    /// `fenced_read(row, token)`.
    Read { token: u64 },
    /// Virtual time moves to this instant.
    AdvanceTo(u64),
}

/// What a function returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// `acquire`, `release`, `fenced_write`.
    Bool(bool),
    /// `acquire_fenced`.
    Token(Option<u64>),
    /// `fenced_read`.
    Read(Option<i64>),
}

impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Answer::Bool(b) => write!(f, "{b}"),
            Answer::Token(Some(t)) => write!(f, "Some({t})"),
            Answer::Read(Some(v)) => write!(f, "Some({v})"),
            Answer::Token(None) | Answer::Read(None) => write!(f, "None"),
        }
    }
}

/// What the model allows a function to return.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expected {
    /// This answer and no other.
    Exactly(Answer),
    /// `Some(t)` with a fencing token `t` above this number.
    TokenAbove(u64),
}

impl Expected {
    /// Whether `answer` is allowed.
    pub fn admits(&self, answer: &Answer) -> bool {
        match self {
            Expected::Exactly(a) => a == answer,
            Expected::TokenAbove(n) => matches!(answer, Answer::Token(Some(t)) if t > n),
        }
    }
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::Exactly(a) => write!(f, "{a}"),
            Expected::TokenAbove(n) => write!(f, "Some(a token above {n})"),
        }
    }
}

/// One way a step may go: what it returns, and the state after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Branch {
    /// What the call must return (`None` for a move of time).
    pub expected: Option<Expected>,
    /// The state after it.
    pub state: State,
}

impl Branch {
    fn returns(answer: Answer, state: State) -> Branch {
        Branch {
            expected: Some(Expected::Exactly(answer)),
            state,
        }
    }
}

/// The ways `op` may go from `state`. `got` is what the call returned (if it
/// returned): a grant's token is only known once handed out, and becomes the
/// counter's new floor.
pub fn apply(state: &State, op: &Op, got: Option<&Answer>) -> Vec<Branch> {
    match op {
        Op::Acquire { token, ttl_ms } => acquire::acquire(state, token, *ttl_ms),
        Op::Release { token } => release::release(state, token),
        Op::AcquireFenced { token, ttl_ms } => fencing::acquire_fenced(state, token, *ttl_ms, got),
        Op::Write { token, value } => storage::fenced_write(state, *token, *value),
        Op::Read { token } => storage::fenced_read(state, *token),
        Op::AdvanceTo(t) => {
            let mut next = state.clone();
            next.advance_to(*t);
            vec![Branch {
                expected: None,
                state: next,
            }]
        }
    }
}

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

/// `expiry` as a report shows it.
pub fn show_expiry(expiry: Expiry) -> String {
    match expiry {
        Expiry::Missing => "gone".into(),
        Expiry::Never => "no TTL".into(),
        Expiry::At(ms) => format!("expires at t = {}", seconds(ms)),
    }
}

/// A field or key as a report shows it.
pub fn show_value(value: &Option<String>) -> String {
    value.as_ref().map_or("(none)".into(), |v| format!("{v:?}"))
}

impl fmt::Display for Diff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Diff::Answer { expected, got, .. } => write!(f, "returned {got}; model: {expected}"),
            Diff::LockValue { expected, got } => {
                write!(f, "lock key: {}; model: {}", show_value(got), show_value(expected))
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
pub fn compare(model: &mut State, got: &Observed, baseline: &Baseline) -> Vec<Diff> {
    let mut diffs = Vec::new();
    let expected_lock = model.lock.as_ref().map(|h| h.token.clone());
    if got.lock != expected_lock {
        diffs.push(Diff::LockValue {
            expected: expected_lock,
            got: got.lock.clone(),
        });
    } else if let Some(held) = &model.lock {
        let expected = Expiry::At(held.expires_at);
        let got_expiry = got.lock_expiry.unwrap_or(Expiry::Missing);
        if got_expiry != expected {
            diffs.push(Diff::LockExpiry {
                expected,
                got: got_expiry,
            });
        }
    }
    match got.counter.as_deref().map_or(Some(0), |c| c.parse::<u64>().ok()) {
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
    if got.row_fence.as_deref().map_or(Some(0), |v| v.parse::<u64>().ok()) != Some(model.row.fence)
    {
        diffs.push(Diff::RowFence {
            expected: model.row.fence,
            got: got.row_fence.clone(),
        });
    }
    if got.row_value.as_deref().map_or(Some(0), |v| v.parse::<i64>().ok()) != Some(model.row.value)
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

/// A step that went differently from every way the model allows, for the
/// exercise's judge to name the rule it broke.
pub struct Divergence<'a> {
    /// Virtual now after the step, in ms.
    pub now_ms: u64,
    /// Who called the function under test, e.g. `A`.
    pub caller: &'a str,
    /// The caller's lock token, for the lock's own functions.
    pub token: Option<&'a str>,
    /// The fencing token the caller passed, for the storage's functions.
    pub fencing_token: Option<u64>,
    /// The function under test, e.g. `release`.
    pub function: &'static str,
    /// The calls of the step in the order the model tried them, as text
    /// (`A's release(lock, "tok-A")`); [`Diff::Answer::op`] indexes it.
    pub calls: &'a [String],
    /// Which of `calls` is the call under test.
    pub under_test: usize,
    /// The model's state before the step.
    pub before: &'a State,
    /// The model's state after the step, in the order tried.
    pub after: &'a State,
    /// Whether the caller crashed in the middle of its call.
    pub crashed: bool,
    /// How Redis differs from the model.
    pub diffs: &'a [Diff],
}

impl Divergence<'_> {
    /// The answer the call under test gave, when it differs from the model's.
    pub fn own_answer(&self) -> Option<(&Expected, &Answer)> {
        self.diffs.iter().find_map(|d| match d {
            Diff::Answer { op, expected, got } if *op == self.under_test => Some((expected, got)),
            _ => None,
        })
    }

    /// Another client's call whose answer differs from the model's.
    pub fn other_answer(&self) -> Option<(&str, &Expected, &Answer)> {
        self.diffs.iter().find_map(|d| match d {
            Diff::Answer { op, expected, got } if *op != self.under_test => {
                Some((self.calls[*op].as_str(), expected, got))
            }
            _ => None,
        })
    }

    /// The first difference of the kind `pick` selects.
    pub fn find<T>(&self, pick: impl Fn(&Diff) -> Option<T>) -> Option<T> {
        self.diffs.iter().find_map(pick)
    }

    /// The call under test, as text.
    pub fn call(&self) -> &str {
        &self.calls[self.under_test]
    }

    /// A violation of `property` now.
    pub fn violation(&self, property: crate::verdict::Property, what: String) -> crate::verdict::Violation {
        crate::verdict::Violation::at(property, self.now_ms, what)
    }

    /// The fallback: a difference no rule of this exercise names.
    pub fn unexplained(&self) -> crate::verdict::Violation {
        let what = match self.diffs.first() {
            Some(d) => format!("after {}, {d}", self.call()),
            None => format!("{} went differently from the model", self.call()),
        };
        self.violation(crate::verdict::Property::SameAsReference, what)
    }
}
