//! Calls in a history: the caller's, through its wire and the sandbox, and
//! those of a client stepping in, with the reference on the grader's own
//! connection.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use redis::RedisResult;

use super::history::{Actor, Call, History, Move, client_name};
use super::play::Done;
use crate::clock::Expiry;
use crate::error::GradeError;
use crate::lock::Lock;
use crate::model::{Answer, Keeper, Op, Touch};
use crate::reference;
use crate::sandbox::{self, Failure};
use crate::wire::{Action, Fired, Wire};
use crate::world::{Keys, World};

/// Runs `call` by `client` on its wire, through the sandbox. A keeper's
/// tick runs at `now_ms`, handed `keeper`; an error it returns is part of
/// its answer, which the model judges.
pub fn run_call(
    lock: &Lock,
    keys: &Keys,
    token: &str,
    call: Call,
    (now_ms, keeper): (u64, Keeper),
    wire: Wire,
) -> (Option<Wire>, Result<Answer, Failure>) {
    let l = *lock;
    let (lk, fk, rk, token) = (
        keys.lock.clone(),
        keys.fence.clone(),
        keys.row.clone(),
        token.to_string(),
    );
    sandbox::call(wire, move |w: &mut Wire| -> RedisResult<Answer> {
        Ok(match call {
            Call::Acquire { ttl_ms } => {
                Answer::Bool((l.acquire)(w, &lk, &token, Duration::from_millis(ttl_ms))?)
            }
            Call::Release => Answer::Bool((l.release)(w, &lk, &token)?),
            Call::AcquireFenced { ttl_ms } => Answer::Token((l.acquire_fenced)(
                w,
                &lk,
                &fk,
                &token,
                Duration::from_millis(ttl_ms),
            )?),
            Call::Write { token, value } => Answer::Bool((l.fenced_write)(w, &rk, token, value)?),
            Call::Read { token } => Answer::Read((l.fenced_read)(w, &rk, token)?),
            Call::Extend { ttl_ms } => {
                Answer::Bool((l.extend)(w, &lk, &token, Duration::from_millis(ttl_ms))?)
            }
            Call::Keep { ttl_ms } => tick(
                (l.keep_alive, l.extend),
                w,
                &lk,
                &token,
                ttl_ms,
                now_ms,
                keeper,
            ),
        })
    })
}

/// `extend(con, key, token, ttl)` at some connection type.
type Renew<C> = fn(&mut C, &str, &str, Duration) -> RedisResult<bool>;
/// `keep_alive(con, extend, key, token, ttl, now, renewed_at, lost)` at some connection type.
type Keep<C> = fn(
    &mut C,
    Renew<C>,
    &str,
    &str,
    Duration,
    Duration,
    &mut Duration,
    &AtomicBool,
) -> RedisResult<()>;

/// One tick of `keep`, renewing with `renew`, with what it left in
/// `renewed_at` and `lost`.
fn tick<C>(
    (keep, renew): (Keep<C>, Renew<C>),
    con: &mut C,
    key: &str,
    token: &str,
    ttl_ms: u64,
    now_ms: u64,
    keeper: Keeper,
) -> Answer {
    let mut renewed_at = Duration::from_millis(keeper.renewed_at_ms);
    let lost = AtomicBool::new(keeper.lost);
    let result = keep(
        con,
        renew,
        key,
        token,
        Duration::from_millis(ttl_ms),
        Duration::from_millis(now_ms),
        &mut renewed_at,
        &lost,
    );
    Answer::Kept {
        // A keeper may store any Duration; one past u64 ms reads as the largest.
        renewed_at_ms: u64::try_from(renewed_at.as_millis()).unwrap_or(u64::MAX),
        lost: lost.load(Ordering::SeqCst),
        error: result.is_err(),
    }
}

/// Does `touch` to the lock key, on the grader's connection.
pub fn run_touch(world: &mut World, touch: Touch) -> Result<(), GradeError> {
    let key = world.keys.lock.clone();
    let mut pipe = redis::pipe();
    pipe.atomic();
    match touch {
        Touch::Delete => {
            pipe.cmd("DEL").arg(&key);
        }
        Touch::Pexpire { ttl_ms } => {
            pipe.cmd("PEXPIRE").arg(&key).arg(ttl_ms);
        }
        Touch::Hash { ttl_ms } => {
            pipe.cmd("DEL").arg(&key);
            pipe.cmd("HSET").arg(&key).arg("owner").arg("someone");
            pipe.cmd("PEXPIRE").arg(&key).arg(ttl_ms);
        }
    }
    let asked = match touch {
        Touch::Delete => vec![],
        Touch::Pexpire { ttl_ms } | Touch::Hash { ttl_ms } => vec![ttl_ms],
    };
    world.timed(&asked, |con| Ok(pipe.exec(con)?))
}

/// Runs `call` with the reference, on the grader's connection.
pub fn reference_call(world: &mut World, token: &str, call: Call) -> Result<Answer, GradeError> {
    let keys = world.keys.clone();
    let now_ms = world.now_ms();
    let asked = match call {
        Call::Acquire { ttl_ms }
        | Call::AcquireFenced { ttl_ms }
        | Call::Extend { ttl_ms }
        | Call::Keep { ttl_ms } => vec![ttl_ms],
        Call::Release | Call::Write { .. } | Call::Read { .. } => vec![],
    };
    // Read to the millisecond, as a client's call on a wire is.
    world.timed(&asked, |con| {
        Ok(match call {
            Call::Acquire { ttl_ms } => Answer::Bool(reference::acquire::acquire(
                con,
                &keys.lock,
                token,
                Duration::from_millis(ttl_ms),
            )?),
            Call::Release => Answer::Bool(reference::release::release(con, &keys.lock, token)?),
            Call::AcquireFenced { ttl_ms } => Answer::Token(reference::fencing::acquire_fenced(
                con,
                &keys.lock,
                &keys.fence,
                token,
                Duration::from_millis(ttl_ms),
            )?),
            Call::Write { token, value } => Answer::Bool(reference::storage::fenced_write(
                con, &keys.row, token, value,
            )?),
            Call::Read { token } => {
                Answer::Read(reference::storage::fenced_read(con, &keys.row, token)?)
            }
            Call::Extend { ttl_ms } => Answer::Bool(reference::extend::extend(
                con,
                &keys.lock,
                token,
                Duration::from_millis(ttl_ms),
            )?),
            // No history has another client keep a lease: a first tick.
            Call::Keep { ttl_ms } => tick(
                (reference::keeper::keep_alive, reference::extend::extend),
                con,
                &keys.lock,
                token,
                ttl_ms,
                now_ms,
                Keeper::default(),
            ),
        })
    })
}

/// The grader's move between two commands of the call.
pub fn step_in_action(
    h: &History,
    caller: usize,
    actor: &Actor,
    log: Arc<Mutex<Vec<Done>>>,
) -> Action {
    let caller = client_name(caller);
    match actor.clone() {
        Actor::Crash => Box::new(move |_| {
            Ok(Fired::Crash(format!(
                "here {caller} crashed: it sends nothing more"
            )))
        }),
        Actor::Fault(fault) => Box::new(move |_| Ok(Fired::Fault(fault))),
        Actor::Client {
            client,
            token,
            moves,
        } => {
            let shown: Vec<Option<String>> = moves
                .iter()
                .map(|m| match m {
                    Move::ExpireLock => None,
                    Move::Call(c) => Some(c.show(h, client, &token)),
                })
                .collect();
            Box::new(move |world: &mut World| {
                let mut said = Vec::new();
                for (m, text) in moves.iter().zip(&shown) {
                    let done = match (m, text) {
                        (Move::Call(call), Some(text)) => {
                            let now_ms = world.now_ms();
                            let answer = reference_call(world, &token, *call)?;
                            said.push(format!("{text} → {answer}"));
                            Done {
                                text: text.clone(),
                                op: call.op(&token, now_ms),
                                answer: Some(answer),
                            }
                        }
                        _ => {
                            let Expiry::At(at) = world.lock_expiry()? else {
                                continue;
                            };
                            world.advance_to(at)?;
                            let text =
                                format!("the lock expired (t = {})", crate::verdict::seconds(at));
                            said.push(text.clone());
                            Done {
                                text,
                                op: Op::AdvanceTo(at),
                                answer: None,
                            }
                        }
                    };
                    log.lock().unwrap_or_else(|p| p.into_inner()).push(done);
                }
                Ok(Fired::Continue(format!("here {}", said.join(", then "))))
            })
        }
    }
}
