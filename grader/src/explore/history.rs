//! What the explorer plays: a history of calls by a few clients.
//!
//! A [`History`] is plain data, made from a seed by [`super::generate`] and
//! made shorter by [`super::shrink`]: the names of the three keys, each
//! client's lock token, what Redis holds at the start, and the steps. A step
//! is a call by one client (possibly with another client stepping in between
//! two of its commands, or the caller crashing there) or a wait.

use crate::exercise::{self, Exercise};
use crate::lock::Lock;
use crate::model::{Keeper, Op, Touch};
use crate::verdict::seconds;
use crate::wire::Fault;

/// The exercise whose functions a history tests: one of the exercises of
/// [`crate::exercise::EXERCISES`] that the explorer can draw calls for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject {
    /// `acquire`.
    Acquire,
    /// `release`.
    Release,
    /// `acquire_fenced`.
    Fencing,
    /// `fenced_write` and `fenced_read`.
    Storage,
    /// `extend`.
    Extend,
    /// `keep_alive`.
    Keeper,
}

impl Subject {
    /// Its descriptor in the course's table of exercises.
    pub fn row(self) -> &'static Exercise {
        match self {
            Subject::Acquire => &exercise::acquire::EXERCISE,
            Subject::Release => &exercise::release::EXERCISE,
            Subject::Fencing => &exercise::fencing::EXERCISE,
            Subject::Storage => &exercise::storage::EXERCISE,
            Subject::Extend => &exercise::extend::EXERCISE,
            Subject::Keeper => &exercise::keeper::EXERCISE,
        }
    }

    /// Whether `call` runs a function of this exercise (the others run the
    /// reference's).
    pub fn tests(self, call: &Call) -> bool {
        matches!(
            (self, call),
            (Subject::Acquire, Call::Acquire { .. })
                | (Subject::Release, Call::Release)
                | (Subject::Fencing, Call::AcquireFenced { .. })
                | (Subject::Storage, Call::Write { .. } | Call::Read { .. })
                | (Subject::Extend, Call::Extend { .. })
                | (Subject::Keeper, Call::Keep { .. })
        )
    }

    /// `lock`'s functions for this exercise, the reference's for the others.
    pub fn lock_under_test(self, lock: &Lock) -> Lock {
        self.row().lock_under_test(lock)
    }
}

/// One history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct History {
    /// The seed it was made from.
    pub seed: u64,
    /// The exercise it tests.
    pub exercise: Subject,
    /// The lock key's name (without the world's prefix).
    pub lock: String,
    /// The fence counter's name.
    pub fence: String,
    /// The row's name.
    pub row: String,
    /// Each client's first lock token, which it holds the start's lock with
    /// and carries until its first acquisition; client `i` is called
    /// [`client_name`]`(i)`. Each acquisition takes a fresh token
    /// ([`fresh_token`]), as the exercises' text has it: no token serves two
    /// acquisitions. Every call names the token it carries.
    pub tokens: Vec<String>,
    /// What Redis holds before the first step.
    pub start: Start,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

/// What Redis holds before the first step.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Start {
    /// The lock, held by this client for this many ms.
    pub lock: Option<(usize, u64)>,
    /// The fence counter's value, if it exists.
    pub counter: Option<u64>,
    /// The row's `value` field, if there is one.
    pub row_value: Option<i64>,
    /// The row's `fence` field, if there is one.
    pub row_fence: Option<u64>,
}

/// One step of a history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A client calls a function.
    Call {
        /// Who.
        client: usize,
        /// The lock token it carries: fresh for an acquisition, else the one
        /// its client acquired with last (or its first).
        token: String,
        /// What.
        call: Call,
        /// What happens between two of its commands, if anything.
        step_in: Option<StepIn>,
    },
    /// Virtual time moves on by this many ms (a pause, a slow job).
    Wait(u64),
    /// The grader does something to the lock key itself.
    Touch(Touch),
}

impl History {
    /// The token `client` carries after the steps so far: the one its last
    /// call (or move, stepping in) carried, else its first.
    pub fn carried(&self, client: usize) -> &str {
        self.steps
            .iter()
            .rev()
            .find_map(|step| match step {
                Step::Call {
                    step_in:
                        Some(StepIn {
                            actor:
                                Actor::Client {
                                    client: c, token, ..
                                },
                            ..
                        }),
                    ..
                } if *c == client => Some(token.as_str()),
                Step::Call {
                    client: c, token, ..
                } if *c == client => Some(token.as_str()),
                _ => None,
            })
            .unwrap_or(&self.tokens[client])
    }

    /// A fresh token for `client`'s next acquisition after the steps so far
    /// ([`fresh_token`]).
    pub fn next_fresh(&self, client: usize) -> String {
        let acquires =
            |call: &Call| matches!(call, Call::Acquire { .. } | Call::AcquireFenced { .. });
        let mut n = 0;
        for step in &self.steps {
            if let Step::Call {
                client: c,
                call,
                step_in,
                ..
            } = step
            {
                n += u32::from(*c == client && acquires(call));
                if let Some(StepIn {
                    actor:
                        Actor::Client {
                            client: c, moves, ..
                        },
                    ..
                }) = step_in
                {
                    let acquired = moves
                        .iter()
                        .any(|m| matches!(m, Move::Call(call) if acquires(call)));
                    n += u32::from(*c == client && acquired);
                }
            }
        }
        fresh_token(self.seed, client, n + 1)
    }
}

/// Something that happens just before command number `before` of a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepIn {
    /// The 0-based command it comes before (past the last: after the call's
    /// last command, before it returns).
    pub before: usize,
    /// What happens.
    pub actor: Actor,
}

/// Who steps in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Actor {
    /// The caller crashes: it sends nothing more.
    Crash,
    /// The command meets this fault: an error reply, a dropped connection,
    /// a reply lost or late ([`crate::wire::fault`]).
    Fault(Fault),
    /// Another client makes these moves (with the reference's functions).
    Client {
        /// Which.
        client: usize,
        /// The lock token its calls carry (fresh when they acquire).
        token: String,
        /// What, in order.
        moves: Vec<Move>,
    },
}

/// A move of a client stepping in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Move {
    /// Virtual time moves to the lock's expiry, which frees it.
    ExpireLock,
    /// A call of one of the lock's functions.
    Call(Call),
}

/// A call of one of the lock's functions, with the caller's own lock token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// `acquire(lock, token, ttl)`.
    Acquire {
        /// The TTL, in ms.
        ttl_ms: u64,
    },
    /// `release(lock, token)`.
    Release,
    /// `acquire_fenced(lock, fence, token, ttl)`.
    AcquireFenced {
        /// The TTL, in ms.
        ttl_ms: u64,
    },
    /// `fenced_write(row, fencing_token, value)`.
    Write {
        /// The fencing token.
        token: u64,
        /// The value.
        value: i64,
    },
    /// `fenced_read(row, fencing_token)`.
    Read {
        /// The fencing token.
        token: u64,
    },
    /// `extend(lock, token, ttl)`.
    Extend {
        /// The new TTL, in ms.
        ttl_ms: u64,
    },
    /// One tick of `keep_alive(lock, token, ttl, now, renewed_at, lost)`:
    /// now is the clock's, `renewed_at` and `lost` what the caller's last
    /// tick left (the model's [`Keeper`]).
    Keep {
        /// The lease's TTL, in ms.
        ttl_ms: u64,
    },
}

impl Call {
    /// The function it calls.
    pub fn function(&self) -> &'static str {
        match self {
            Call::Acquire { .. } => "acquire",
            Call::Release => "release",
            Call::AcquireFenced { .. } => "acquire_fenced",
            Call::Write { .. } => "fenced_write",
            Call::Read { .. } => "fenced_read",
            Call::Extend { .. } => "extend",
            Call::Keep { .. } => "keep_alive",
        }
    }

    /// The model's operation for it, with the caller's lock `token`, made
    /// at `now_ms` (which a keeper's tick is handed).
    pub fn op(&self, token: &str, now_ms: u64) -> Op {
        let token = token.to_string();
        match *self {
            Call::Acquire { ttl_ms } => Op::Acquire { token, ttl_ms },
            Call::Release => Op::Release { token },
            Call::AcquireFenced { ttl_ms } => Op::AcquireFenced { token, ttl_ms },
            Call::Write { token, value } => Op::Write { token, value },
            Call::Read { token } => Op::Read { token },
            Call::Extend { ttl_ms } => Op::Extend { token, ttl_ms },
            Call::Keep { ttl_ms } => Op::Keep {
                token,
                ttl_ms,
                now_ms,
            },
        }
    }

    /// The fencing token it sends, for the storage's functions.
    pub fn fencing_token(&self) -> Option<u64> {
        match *self {
            Call::Write { token, .. } | Call::Read { token } => Some(token),
            _ => None,
        }
    }

    /// The call as a report shows it, made by `client` with `token`:
    /// `A's release(job:7, "tok-A-1f2e")`.
    pub fn show(&self, h: &History, client: usize, token: &str) -> String {
        let who = client_name(client);
        let (lock, fence, row) = (&h.lock, &h.fence, &h.row);
        match *self {
            Call::Acquire { ttl_ms } => {
                format!("{who}'s acquire({lock}, {token:?}, {})", seconds(ttl_ms))
            }
            Call::Release => format!("{who}'s release({lock}, {token:?})"),
            Call::AcquireFenced { ttl_ms } => format!(
                "{who}'s acquire_fenced({lock}, {fence}, {token:?}, {})",
                seconds(ttl_ms)
            ),
            Call::Write { token, value } => {
                format!("{who}'s fenced_write({row}, {token}, {value})")
            }
            Call::Read { token } => format!("{who}'s fenced_read({row}, {token})"),
            Call::Extend { ttl_ms } => {
                format!("{who}'s extend({lock}, {token:?}, {})", seconds(ttl_ms))
            }
            Call::Keep { ttl_ms } => {
                format!("{who}'s keep_alive({lock}, {token:?}, {})", seconds(ttl_ms))
            }
        }
    }
}

impl Call {
    /// A keeper's tick as a report shows it, with what it was handed:
    /// `A's keep_alive(lock, "tok-A-1f2e", 1 s, now 0.5 s, renewed_at 0 s, lost false)`.
    pub fn show_tick(
        &self,
        h: &History,
        (client, token): (usize, &str),
        now_ms: u64,
        keeper: Keeper,
    ) -> String {
        match *self {
            Call::Keep { ttl_ms } => format!(
                "{}'s keep_alive({}, {:?}, {}, now {}, renewed_at {}, lost {})",
                client_name(client),
                h.lock,
                token,
                seconds(ttl_ms),
                seconds(now_ms),
                seconds(keeper.renewed_at_ms),
                keeper.lost
            ),
            _ => self.show(h, client, token),
        }
    }
}

/// What the grader does to the lock key, as a report shows it (no `'s`:
/// the transcript tells a call by it).
pub fn show_touch(touch: &Touch) -> String {
    match *touch {
        Touch::Delete => "the lock key is deleted (DEL)".into(),
        Touch::Pexpire { ttl_ms } => {
            format!("the lock key gets a TTL of {} (PEXPIRE)", seconds(ttl_ms))
        }
        Touch::Hash { ttl_ms } => format!(
            "the lock key is replaced by a hash for {}: a value of the wrong type",
            seconds(ttl_ms)
        ),
    }
}

/// The token of client `client`'s acquisition number `n` (from 1) in the
/// history of `seed`: its name and number, and four hex digits drawn from
/// the three. No token is another's prefix, so that a lock comparing a prefix
/// of the key with its token reads them apart as a real token's would.
pub fn fresh_token(seed: u64, client: usize, n: u32) -> String {
    // SplitMix64 of the three: deterministic, and unlike for each.
    let mut z = seed
        ^ (client as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ u64::from(n).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    format!("tok-{}{}-{:04x}", client_name(client), n + 1, z & 0xffff)
}

/// Client `i`'s name in reports.
pub fn client_name(i: usize) -> &'static str {
    ["A", "B", "C", "D"].get(i).copied().unwrap_or("E")
}
