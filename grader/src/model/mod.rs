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
mod compare;
mod divergence;
pub mod extend;
pub mod faulted;
pub mod fencing;
pub mod keeper;
pub mod redlock;
pub mod release;
pub mod storage;

pub use crate::judge::{show_expiry, show_value};
pub use compare::{Baseline, Diff, Observed, compare};
pub use divergence::Divergence;
pub use keeper::{Keeper, Touch};

use std::fmt;

use crate::clock::{RESOLUTION_MS, SLACK_MS};

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
    /// The lease keeper's own state (the keeper exercise).
    pub keeper: Keeper,
}

impl State {
    /// Moves virtual time to `t_ms` (never back); the lock expires when its
    /// time has come, as the clock deletes it.
    pub fn advance_to(&mut self, t_ms: u64) {
        self.now_ms = self.now_ms.max(t_ms);
        if self
            .lock
            .as_ref()
            .is_some_and(|h| h.expires_at <= self.now_ms + SLACK_MS)
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
    Acquire {
        /// The token to take the lock with.
        token: String,
        /// The time to live asked for, in milliseconds.
        ttl_ms: u64,
    },
    /// `release(lock, token)`.
    Release {
        /// The token the lock was taken with.
        token: String,
    },
    /// `acquire_fenced(lock, fence, token, ttl)`.
    AcquireFenced {
        /// The token to take the lock with.
        token: String,
        /// The time to live asked for, in milliseconds.
        ttl_ms: u64,
    },
    /// `fenced_write(row, token, value)`.
    Write {
        /// The fencing token the write carries.
        token: u64,
        /// The value to write.
        value: i64,
    },
    /// `fenced_read(row, token)`.
    Read {
        /// The fencing token the read carries.
        token: u64,
    },
    /// `extend(lock, token, ttl)`.
    Extend {
        /// The token the lock was taken with.
        token: String,
        /// The new time to live, in milliseconds.
        ttl_ms: u64,
    },
    /// One tick of `keep_alive(lock, token, ttl, now, renewed_at, lost)`,
    /// handed `now`, with the state's keeper.
    Keep {
        /// The token the lock was taken with.
        token: String,
        /// The time to live each renewal asks for, in milliseconds.
        ttl_ms: u64,
        /// The keeper's clock, in milliseconds.
        now_ms: u64,
    },
    /// A call whose command met one of the grader's faults ([`faulted`]).
    Failed {
        /// The call.
        op: Box<Op>,
        /// The fault, and the command it hit.
        hit: crate::wire::Hit,
    },
    /// The grader does something to the lock key itself.
    Touch(Touch),
    /// Virtual time moves to this instant.
    AdvanceTo(u64),
}

impl Op {
    /// Whether the call may set the lock key's TTL (the clock reads such a TTL
    /// give or take its slack, [`crate::clock::as_asked`]).
    pub fn sets_a_ttl(&self) -> bool {
        match self {
            Op::Acquire { .. } | Op::AcquireFenced { .. } | Op::Extend { .. } | Op::Keep { .. } => {
                true
            }
            Op::Failed { op, .. } => op.sets_a_ttl(),
            Op::Release { .. }
            | Op::Write { .. }
            | Op::Read { .. }
            | Op::Touch(_)
            | Op::AdvanceTo(_) => false,
        }
    }
}

/// What a function returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// `acquire`, `release`, `extend`, `fenced_write`.
    Bool(bool),
    /// `acquire_fenced`.
    Token(Option<u64>),
    /// `fenced_read`.
    Read(Option<i64>),
    /// `keep_alive`: what it left in `renewed_at` and `lost`, and whether it
    /// returned an error.
    Kept {
        /// `renewed_at`, in ms.
        renewed_at_ms: u64,
        /// `lost`.
        lost: bool,
        /// Whether it returned `Err`.
        error: bool,
    },
    /// `Err`, from any function but the keeper's tick (which notes it in
    /// [`Answer::Kept`]).
    Error,
}

impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Answer::Bool(b) => write!(f, "{b}"),
            Answer::Token(Some(t)) => write!(f, "Some({t})"),
            Answer::Read(Some(v)) => write!(f, "Some({v})"),
            Answer::Token(None) | Answer::Read(None) => write!(f, "None"),
            Answer::Error => write!(f, "Err(…)"),
            Answer::Kept {
                renewed_at_ms,
                lost,
                error,
            } => {
                let result = if *error { "Err(…)" } else { "Ok(())" };
                write!(
                    f,
                    "{result}, renewed_at = {}, lost = {lost}",
                    crate::verdict::seconds(*renewed_at_ms)
                )
            }
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
    /// `Err`: a command of the call failed ([`faulted`]).
    Error,
    /// A keeper's tick that leaves `lost` so, and `renewed_at` so (any time
    /// when `None`), returning `Ok(())` (or an error, when `may_fail`).
    Kept {
        /// `renewed_at`, in ms, when it matters.
        renewed_at_ms: Option<u64>,
        /// `lost`.
        lost: bool,
        /// Whether `Err` is allowed too: Redis answered the renewal with
        /// an error.
        may_fail: bool,
    },
}

impl Expected {
    /// Whether `answer` is allowed.
    pub fn admits(&self, answer: &Answer) -> bool {
        match self {
            Expected::Exactly(a) => a == answer,
            Expected::TokenAbove(n) => matches!(answer, Answer::Token(Some(t)) if t > n),
            Expected::Error => *answer == Answer::Error,
            Expected::Kept {
                renewed_at_ms,
                lost,
                may_fail,
            } => matches!(answer, Answer::Kept { renewed_at_ms: r, lost: l, error }
                if renewed_at_ms.is_none_or(|at| at == *r) && l == lost && (!error || *may_fail)),
        }
    }
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::Exactly(a) => write!(f, "{a}"),
            Expected::TokenAbove(n) => write!(f, "Some(a token above {n})"),
            Expected::Error => write!(f, "Err(…)"),
            Expected::Kept {
                renewed_at_ms,
                lost,
                may_fail,
            } => {
                let result = if *may_fail { "Ok(()) or Err" } else { "Ok(())" };
                let at = renewed_at_ms.map_or("any".to_string(), crate::verdict::seconds);
                write!(f, "{result}, renewed_at = {at}, lost = {lost}")
            }
        }
    }
}

/// One way a step may go: what it returns, and the state after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Branch {
    /// Which branch of its model it is, as the model's `BRANCHES` and the
    /// explorer's coverage table name it.
    pub name: &'static str,
    /// What the call must return (`None` for a move of time).
    pub expected: Option<Expected>,
    /// The state after it.
    pub state: State,
}

impl Branch {
    fn returns(name: &'static str, answer: Answer, state: State) -> Branch {
        Branch {
            name,
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
        Op::Extend { token, ttl_ms } => extend::extend(state, token, *ttl_ms),
        Op::Keep {
            token,
            ttl_ms,
            now_ms,
        } => keeper::keep(state, token, *ttl_ms, *now_ms),
        Op::Failed { op, hit } => faulted::faulted(state, op, hit),
        Op::Touch(touch) => vec![Branch {
            name: "the grader touches the lock key",
            expected: None,
            state: touch.apply(state),
        }],
        Op::AdvanceTo(t) => {
            let mut next = state.clone();
            next.advance_to(*t);
            vec![Branch {
                name: "time moves on",
                expected: None,
                state: next,
            }]
        }
    }
}
