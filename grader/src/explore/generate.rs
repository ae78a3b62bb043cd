//! Histories made from a seed.
//!
//! The draws aim where simple tests never go: key names that cannot be
//! guessed from one another; fence counters and row tokens just below a
//! power of ten (9 → 10, 99 → 100) or near 2^53, the largest integer a Lua
//! number holds exactly; rows missing, or missing a field; TTLs below a
//! second, between whole seconds and off every grid (1,001, 1,337 and
//! 2,999 ms: the clock reads a TTL to the millisecond, a client's and the
//! grader's own alike, so that a lock that rounds or cuts the TTL it was
//! handed shows); the same value written twice, the same fencing token sent
//! twice; waits that stop a millisecond before, at, or a millisecond after
//! the lock's expiry, a quarter of a second either side, or pass every TTL a
//! call could have set; in most calls of the function under test, another
//! client (any of them) or a crash between two of its commands; and after a
//! call that met a fault, often the same client trying again.
//!
//! The histories stay inside the exercises' text: each acquisition takes a
//! fresh lock token ([`super::history::fresh_token`]), so no token serves two
//! acquisitions, and a client's other calls carry the token it acquired with
//! last.
//!
//! While drawing, the generator follows the model (taking the first way each
//! step may go) only to choose sensible next steps: who holds the lock, what
//! the highest token is. The history itself is plain data.

use super::history::{Actor, Call, History, Move, Start, Step, StepIn, Subject};
use super::rng::Rng;
use crate::clock::SLACK_MS;
use crate::model::{self, Op, Row, State};
use crate::wire::Fault;

/// 2^53: above it, a Lua number no longer holds every integer.
pub const EXACT_LIMIT: u64 = 1 << 53;

const LOCK_NAMES: &[&str] = &[
    "lock",
    "job:7",
    "mutex",
    "orders:lock",
    "leader",
    "cron:nightly",
    "invoice-42",
    "res",
];
const FENCE_NAMES: &[&str] = &[
    "seq",
    "counter:9",
    "tokens",
    "epoch",
    "gen",
    "fencing",
    "ticket",
    "n",
];
const ROW_NAMES: &[&str] = &[
    "row", "acct:3", "balance", "state", "doc:17", "ledger", "cell", "record",
];
/// TTLs in ms: below a second, between whole seconds, whole seconds, and a
/// few on no grid at all.
pub(super) const TTLS: &[u64] = &[
    500, 750, 1000, 1001, 1250, 1337, 1500, 2000, 2500, 2999, 5000, 10_000, 30_000,
];
/// Longer than any TTL above: a wait this long lets everything expire.
const PAST_EVERY_TTL: u64 = 61_000;
/// How many ticks a keeper's history goes on for once the lock is lost.
const LOST_TICKS: u32 = 3;

/// How many leases one seed of the keeper's explorer plays: a lease ends
/// once it is lost, one way only (the key gone, taken or of the wrong type),
/// and a seed should see every way (a failed renewal, drawn now and then,
/// ends one early).
pub const LEASES: usize = 5;

/// The histories seed `seed` plays: one, or for the keeper [`LEASES`]
/// leases, each from the start. The first is `seed`'s own and each next one
/// the history of a seed drawn from the one before, so that the seed a
/// report names replays its history first.
pub fn histories(exercise: Subject, seed: u64) -> Vec<History> {
    let count = if exercise == Subject::Keeper {
        LEASES
    } else {
        1
    };
    let mut seeds = Rng::new(seed);
    let mut next = seed;
    (0..count)
        .map(|_| {
            let h = history(exercise, next);
            next = seeds.next_u64();
            h
        })
        .collect()
}

/// The history for `seed`.
pub fn history(exercise: Subject, seed: u64) -> History {
    let mut rng = Rng::new(seed);
    let clients = 2 + rng.below(3) as usize;
    let tokens: Vec<String> = (0..clients)
        .map(|i| {
            format!(
                "tok-{}-{:04x}",
                super::history::client_name(i),
                rng.below(0x1_0000)
            )
        })
        .collect();
    let mut h = History {
        seed,
        exercise,
        lock: rng.pick(LOCK_NAMES).to_string(),
        fence: rng.pick(FENCE_NAMES).to_string(),
        row: rng.pick(ROW_NAMES).to_string(),
        tokens,
        start: Start::default(),
        steps: Vec::new(),
    };
    h.start = start(&mut rng, exercise, clients);
    let mut state = initial(&h);
    // Longer than a few calls: a third of the calls under test meet a
    // fault, and the other branches still need their share.
    // A release or a renewal, most often faulted, needs two more.
    let often_faulted = matches!(exercise, Subject::Release | Subject::Extend);
    let steps = 6 + rng.below(6) + 2 * u64::from(often_faulted);
    if exercise == Subject::Keeper {
        // A lease lives longer than a few calls: more steps, each a tick or
        // what happens to the key between two. Once the keeper has lost the
        // lock it does nothing more: a few ticks show that (and that a token
        // come back does not undo it); more would show nothing new.
        let mut ticks_lost = 0;
        for _ in 0..steps + 9 {
            for step in super::keeper::next_steps(&mut rng, &h, &state) {
                let tick = matches!(
                    step,
                    Step::Call {
                        call: Call::Keep { .. },
                        ..
                    }
                );
                ticks_lost += u32::from(tick && state.keeper.lost);
                follow(&mut state, &step);
                h.steps.push(step);
            }
            if ticks_lost >= LOST_TICKS {
                break;
            }
        }
        return h;
    }
    for _ in 0..steps {
        let step = next_step(&mut rng, &h, &state);
        follow(&mut state, &step);
        h.steps.push(step);
        for step in try_again(&mut rng, &h, &state) {
            follow(&mut state, &step);
            h.steps.push(step);
        }
    }
    h
}

/// What a client whose call under test met a fault often does next, as an
/// application does after an error: it backs off a while, then calls again,
/// taking the lock first (with a fresh token) when the call needs it held (a
/// release, a renewal) and it no longer holds it. The retry meets what the
/// failed call left on the connection (a `WATCH`, a half-read reply) with the
/// key changed in between, where such leftovers show. The faulted call is
/// `h`'s last step, and `state` the model's after it.
fn try_again(rng: &mut Rng, h: &History, state: &State) -> Vec<Step> {
    let Some(Step::Call {
        client,
        call,
        step_in: Some(StepIn {
            actor: Actor::Fault(_),
            ..
        }),
        ..
    }) = h.steps.last()
    else {
        return Vec::new();
    };
    if !h.exercise.tests(call) || !rng.chance(1, 2) {
        return Vec::new();
    }
    let (client, call) = (*client, *call);
    let mut h = h.clone();
    let mut state = state.clone();
    let first = h.steps.len();
    let push = |h: &mut History, state: &mut State, step: Step| {
        follow(state, &step);
        h.steps.push(step);
    };
    if rng.chance(1, 2) {
        let backoff = Step::Wait(wait(rng, &state));
        push(&mut h, &mut state, backoff);
    }
    let holds = state
        .lock
        .as_ref()
        .is_some_and(|held| h.carried(client) == held.token);
    if matches!(call, Call::Release | Call::Extend { .. }) && !holds {
        if state.lock.is_some() {
            return h.steps.split_off(first);
        }
        let step = Step::Call {
            client,
            token: h.next_fresh(client),
            call: Call::Acquire {
                ttl_ms: rng.pick(TTLS),
            },
            step_in: None,
        };
        push(&mut h, &mut state, step);
    }
    let token = if acquires(&call) {
        h.next_fresh(client)
    } else {
        h.carried(client).to_owned()
    };
    let step = Step::Call {
        client,
        token,
        call,
        step_in: None,
    };
    push(&mut h, &mut state, step);
    h.steps.split_off(first)
}

/// Whether `call` takes the lock, and so a fresh token.
fn acquires(call: &Call) -> bool {
    matches!(call, Call::Acquire { .. } | Call::AcquireFenced { .. })
}

/// A number near where decimal strings and Lua numbers go wrong.
fn boundary(rng: &mut Rng) -> u64 {
    match rng.below(8) {
        0 => 9,
        1 => 99,
        2 => 999,
        3 => 9_999_999,
        // A history hands out a few dozen tokens at most: they all stay
        // within what a Lua number holds exactly.
        4 => EXACT_LIMIT - 64,
        5 => 1 + rng.below(1000),
        6 => 1 + rng.below(EXACT_LIMIT / 2),
        _ => 1,
    }
}

fn start(rng: &mut Rng, exercise: Subject, clients: usize) -> Start {
    let mut start = Start::default();
    match exercise {
        // A took the lock at t = 0, with the lease's TTL, and keeps it.
        Subject::Keeper => start.lock = Some((0, super::keeper::lease(rng))),
        Subject::Acquire | Subject::Release | Subject::Fencing | Subject::Extend => {
            if rng.chance(1, 2) {
                start.lock = Some((rng.below(clients as u64) as usize, rng.pick(TTLS)));
            }
            if exercise == Subject::Fencing && rng.chance(5, 6) {
                start.counter = Some(boundary(rng));
            }
        }
        Subject::Storage => {
            let fence = boundary(rng);
            let value = rng.pick(&[0, 1, 7, 42, -5, 1_000_000]);
            match rng.below(4) {
                0 => {}
                1 => start.row_value = Some(value),
                2 => start.row_fence = Some(fence),
                _ => (start.row_value, start.row_fence) = (Some(value), Some(fence)),
            }
            // Tokens stay near the row's fence, or near a boundary when none.
            if start.row_fence.is_none() {
                start.counter = Some(fence);
            }
        }
    }
    start
}

/// The model's state at the start of `h`.
pub fn initial(h: &History) -> State {
    let mut state = State {
        now_ms: 0,
        lock: None,
        counter: h.start.counter.unwrap_or(0),
        row: Row {
            value: h.start.row_value.unwrap_or(0),
            fence: h.start.row_fence.unwrap_or(0),
        },
        keeper: Default::default(),
    };
    if let Some((client, ttl_ms)) = h.start.lock {
        state = model::apply(
            &state,
            &Op::Acquire {
                token: h.tokens[client].clone(),
                ttl_ms,
            },
            None,
        )
        .remove(0)
        .state;
    }
    state
}

/// The storage's tokens are drawn around this number.
fn token_base(h: &History, state: &State) -> u64 {
    if state.row.fence > 0 {
        state.row.fence
    } else {
        h.start.counter.unwrap_or(1)
    }
}

/// A fencing token: often the highest seen, the next one, or an older one.
fn fencing_token(rng: &mut Rng, base: u64) -> u64 {
    let t = match rng.below(8) {
        0 | 1 => base + 1,
        2..=4 => base,
        5 => base.saturating_sub(1),
        6 => base + 1 + rng.below(3),
        _ => base.saturating_sub(1 + rng.below(3)),
    };
    t.clamp(1, EXACT_LIMIT)
}

/// The client whose token holds the lock in `state`, if one does.
pub(super) fn holder(h: &History, state: &State) -> Option<usize> {
    let held = state.lock.as_ref()?;
    (0..h.tokens.len()).find(|&c| h.carried(c) == held.token)
}

fn next_step(rng: &mut Rng, h: &History, state: &State) -> Step {
    let clients = h.tokens.len() as u64;
    let holder = holder(h, state);
    // A release or a renewal must also meet a lock that is gone: waits
    // come more often there.
    let waits = match h.exercise {
        Subject::Release | Subject::Extend => 4,
        _ => 7,
    };
    if rng.chance(1, waits) {
        return Step::Wait(wait(rng, state));
    }
    // The holder often, so that its own lock is released or renewed; for a renewal less
    // often, since another's lock left alone is a branch of its own.
    let client = match (h.exercise, holder) {
        (Subject::Release, Some(holder)) if rng.chance(1, 2) => holder,
        (Subject::Extend, Some(holder)) if rng.chance(1, 3) => holder,
        _ => rng.below(clients) as usize,
    };
    // A held lock is often released by its holder, so that the next
    // acquire finds it free: most mistakes show on a free lock.
    let (client, call) = match (h.exercise, holder) {
        (Subject::Acquire | Subject::Fencing, Some(holder)) if rng.chance(1, 3) => {
            (holder, Call::Release)
        }
        _ => (client, next_call(rng, h, state)),
    };
    let tested = h.exercise.tests(&call);
    // A command of the call fails: mostly the first, which is often the only one.
    // Release and renewal are called less often than they are set up for. A
    // release, faulted most often, meets the fault at a later command two times
    // in five: a release written as a check, then a delete (`WATCH`, `GET`, a
    // transaction) leaves the most behind when one of those fails.
    let (n, d) = match h.exercise {
        Subject::Release => (1, 2),
        Subject::Extend => (9, 20),
        _ => (1, 3),
    };
    let at: &[usize] = match h.exercise {
        Subject::Release => &[0, 0, 0, 1, 2],
        _ => &[0, 0, 0, 1],
    };
    let fault = (tested && rng.chance(n, d)).then(|| StepIn {
        before: rng.pick(at),
        actor: Actor::Fault(rng.pick(&Fault::ALL)),
    });
    let step_in = fault.or_else(|| {
        (tested && rng.chance(4, 5)).then(|| StepIn {
            // Mostly right after the first command: the gap of a check in one
            // command and an act in the next.
            before: rng.pick(&[0, 1, 1, 1, 2, 2, 3, 4]),
            actor: actor(rng, h, state, client),
        })
    });
    // Each acquisition with a fresh token (the exercises' text).
    let token = if acquires(&call) {
        h.next_fresh(client)
    } else {
        h.carried(client).to_owned()
    };
    Step::Call {
        client,
        token,
        call,
        step_in,
    }
}

fn next_call(rng: &mut Rng, h: &History, state: &State) -> Call {
    match h.exercise {
        Subject::Acquire | Subject::Fencing if rng.chance(1, 8) => Call::Release,
        Subject::Acquire => Call::Acquire {
            ttl_ms: rng.pick(TTLS),
        },
        Subject::Fencing => Call::AcquireFenced {
            ttl_ms: rng.pick(TTLS),
        },
        Subject::Release if rng.chance(2, 5) => Call::Acquire {
            ttl_ms: rng.pick(TTLS),
        },
        Subject::Release => Call::Release,
        // Renewals by holders and others, with other TTLs, before and after expiry.
        Subject::Extend if rng.chance(1, 3) => Call::Acquire {
            ttl_ms: rng.pick(TTLS),
        },
        Subject::Extend if rng.chance(1, 6) => Call::Release,
        Subject::Extend => Call::Extend {
            ttl_ms: rng.pick(TTLS),
        },
        Subject::Keeper => Call::Acquire {
            ttl_ms: rng.pick(TTLS),
        },
        Subject::Storage => storage_call(rng, token_base(h, state), state.row.value),
    }
}

fn storage_call(rng: &mut Rng, base: u64, last_value: i64) -> Call {
    let token = fencing_token(rng, base);
    if rng.chance(1, 2) {
        Call::Read { token }
    } else {
        // The same value again, now and then.
        let value = if rng.chance(1, 4) {
            last_value
        } else {
            rng.pick(&[1, 2, 3, 7, 42, -1])
        };
        Call::Write { token, value }
    }
}

/// How long a wait lasts: to the lock's expiry to the millisecond (the last
/// millisecond it holds, the first it is gone, its expiry, a millisecond
/// after), to a quarter of a second either side, or past every TTL. The
/// clock lets a key go once virtual time is within [`SLACK_MS`] of its
/// expiry, and so does the model: the last millisecond a lock holds is that
/// much before its expiry.
pub(super) fn wait(rng: &mut Rng, state: &State) -> u64 {
    let left = state
        .lock
        .as_ref()
        .map(|held| held.expires_at.saturating_sub(state.now_ms));
    match (rng.below(8), left) {
        (0, Some(left)) if left > SLACK_MS => left - SLACK_MS - 1,
        (1, Some(left)) if left >= SLACK_MS => left - SLACK_MS,
        (2, Some(left)) => left,
        (3, Some(left)) => left + 1,
        (4, Some(left)) if left > 250 => left - 250,
        (5, Some(left)) => left + 250,
        (6, _) => PAST_EVERY_TTL,
        _ => rng.pick(&[250, 1000, 1500]),
    }
}

fn actor(rng: &mut Rng, h: &History, state: &State, caller: usize) -> Actor {
    if rng.chance(1, 6) {
        return Actor::Crash;
    }
    // Another client than the caller; not the holder, when another client
    // will do: a holder taking the lock again tells a confusing story.
    let holder = holder(h, state);
    let others = |and_not_holder: bool| -> Vec<usize> {
        (0..h.tokens.len())
            .filter(|&c| c != caller)
            .filter(|&c| !and_not_holder || Some(c) != holder)
            .collect()
    };
    let mut candidates = others(true);
    if candidates.is_empty() {
        candidates = others(false);
    }
    if candidates.is_empty() {
        return Actor::Crash;
    }
    let client = rng.pick(&candidates);
    let holds = Some(client) == holder;
    let ttl_ms = rng.pick(TTLS);
    let mut moves = match h.exercise {
        Subject::Acquire | Subject::Release | Subject::Extend | Subject::Keeper => {
            match rng.below(4) {
                0 | 1 => vec![Move::ExpireLock, Move::Call(Call::Acquire { ttl_ms })],
                2 => vec![Move::Call(Call::Acquire { ttl_ms })],
                _ => vec![Move::Call(Call::Release)],
            }
        }
        // Another grant, which may also end before the call goes on: then the
        // call may find the lock free again, with an older number in hand.
        Subject::Fencing => match rng.below(5) {
            0 | 1 => vec![Move::ExpireLock, Move::Call(Call::AcquireFenced { ttl_ms })],
            2 => vec![
                Move::ExpireLock,
                Move::Call(Call::AcquireFenced { ttl_ms }),
                Move::ExpireLock,
            ],
            3 => vec![Move::Call(Call::AcquireFenced { ttl_ms })],
            _ => vec![Move::Call(Call::Release)],
        },
        Subject::Storage => {
            let base = token_base(h, state);
            // The client stepping in is mostly the newer holder.
            let token = (base + rng.below(3)).clamp(1, EXACT_LIMIT);
            vec![Move::Call(if rng.chance(1, 3) {
                Call::Read { token }
            } else {
                Call::Write {
                    token,
                    value: rng.pick(&[5, 9, 11]),
                }
            })]
        }
    };
    // The holder acquires again only once its lock is gone: the story reads
    // plainly so.
    if holds
        && matches!(
            moves.first(),
            Some(Move::Call(
                Call::Acquire { .. } | Call::AcquireFenced { .. }
            ))
        )
    {
        moves.insert(0, Move::ExpireLock);
    }
    let token = if moves
        .iter()
        .any(|m| matches!(m, Move::Call(c) if acquires(c)))
    {
        h.next_fresh(client)
    } else {
        h.carried(client).to_owned()
    };
    Actor::Client {
        client,
        token,
        moves,
    }
}

/// Follows `step` in the model, the first way it may go, to choose the next
/// steps.
pub(super) fn follow(state: &mut State, step: &Step) {
    match step {
        Step::Wait(ms) => state.advance_to(state.now_ms + ms),
        Step::Touch(touch) => *state = touch.apply(state),
        Step::Call {
            token,
            call,
            step_in,
            ..
        } => {
            // A call begins before anyone steps in: a tick is handed that now.
            let now_ms = state.now_ms;
            if let Some(StepIn {
                actor:
                    Actor::Client {
                        token: other,
                        moves,
                        ..
                    },
                ..
            }) = step_in
            {
                for m in moves {
                    match m {
                        Move::ExpireLock => {
                            if let Some(at) = state.lock.as_ref().map(|held| held.expires_at) {
                                state.advance_to(at);
                            }
                        }
                        Move::Call(c) => {
                            let op = c.op(other, state.now_ms);
                            apply_first(state, &op)
                        }
                    }
                }
            }
            apply_first(state, &call.op(token, now_ms));
        }
    }
}

fn apply_first(state: &mut State, op: &Op) {
    let before = state.lock.clone();
    if let Some(branch) = model::apply(state, op, None).into_iter().next() {
        *state = branch.state;
    }
    // A grant's token is not known here; the counter moves on by one.
    if matches!(op, Op::AcquireFenced { .. }) && state.lock != before {
        state.counter += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_makes_one_history() {
        for exercise in [
            Subject::Acquire,
            Subject::Release,
            Subject::Fencing,
            Subject::Storage,
            Subject::Extend,
            Subject::Keeper,
        ] {
            for seed in 0..50 {
                let h = history(exercise, seed);
                assert_eq!(h, history(exercise, seed));
                assert!((2..=4).contains(&h.tokens.len()));
                assert!(h.lock != h.fence && h.fence != h.row && h.lock != h.row);
            }
        }
    }

    /// The exercises' text: a token is fresh for each acquisition. No
    /// acquisition of any history, a start's lock included, uses a token
    /// another acquisition used, and a call that is no acquisition carries
    /// the token its client acquired with last, or its first.
    #[test]
    fn no_token_serves_two_acquisitions() {
        for exercise in [
            Subject::Acquire,
            Subject::Release,
            Subject::Fencing,
            Subject::Extend,
            Subject::Keeper,
        ] {
            for seed in 0..200 {
                let h = history(exercise, seed);
                let mut used: Vec<String> = h
                    .start
                    .lock
                    .iter()
                    .map(|&(c, _)| h.tokens[c].clone())
                    .collect();
                let mut carried = h.tokens.clone();
                let mut check = |client: usize, token: &str, acquired: bool| {
                    if acquired {
                        assert!(
                            !used.iter().any(|u| u == token),
                            "{exercise:?} seed {seed}: {token} twice"
                        );
                        used.push(token.to_owned());
                        carried[client] = token.to_owned();
                    } else {
                        assert_eq!(carried[client], token, "{exercise:?} seed {seed}");
                    }
                };
                for step in &h.steps {
                    let Step::Call {
                        client,
                        token,
                        call,
                        step_in,
                    } = step
                    else {
                        continue;
                    };
                    check(*client, token, acquires(call));
                    if let Some(StepIn {
                        actor:
                            Actor::Client {
                                client,
                                token,
                                moves,
                            },
                        ..
                    }) = step_in
                    {
                        let acquired = moves
                            .iter()
                            .any(|m| matches!(m, Move::Call(c) if acquires(c)));
                        check(*client, token, acquired);
                    }
                }
            }
        }
    }

    #[test]
    fn fencing_tokens_stay_within_what_lua_holds_exactly() {
        for seed in 0..200 {
            let h = history(Subject::Storage, seed);
            for step in &h.steps {
                if let Step::Call { call, .. } = step {
                    assert!(
                        call.fencing_token()
                            .is_none_or(|t| (1..=EXACT_LIMIT).contains(&t))
                    );
                }
            }
        }
    }
}
