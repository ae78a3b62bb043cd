//! Histories of a lease keeper, made from a seed.
//!
//! A took the lock at t = 0 with the lease's TTL, and its keeper ticks: not
//! on a fixed grid, as a timer on a busy machine does not. A tick lands
//! exactly when a renewal falls due, a millisecond before or after, at the
//! third rounded down (TTLs such as 1 s or 2.5 s do not divide by three),
//! between a quarter and a third, at the same instant as the last tick, on
//! a 500 ms grid, a little or a lot late, or past the whole TTL. Between two
//! ticks, the key lives a life of its own: it expires, another client takes
//! it (with a fresh token: no token serves two acquisitions, and A's lease
//! keeps its own), its holder releases it, it is deleted, its TTL is changed,
//! or it is replaced by a hash, to which Redis answers a renewal with an
//! error. Now and then another client steps in during a tick, between two of
//! its commands: the lock expires and changes hands there. A tick whose
//! renewal ran but whose reply was lost leaves A's token in the key with
//! `lost` set: the ticks after it show that a token still there undoes
//! nothing.

use super::generate::{TTLS, wait};
use super::history::{Actor, Call, History, Move, Step, StepIn};
use super::rng::Rng;
use crate::clock::RESOLUTION_MS;
use crate::model::keeper::WRONG_TYPE;
use crate::model::{State, Touch};
use crate::wire::Fault;

/// The leases a keeper keeps, in ms: some divide by three, some do not, and
/// some lie on no grid.
const LEASES: &[u64] = &[
    750, 1000, 1250, 1337, 1500, 2000, 2500, 2999, 3000, 6000, 10_000,
];

/// The keeper's client: A.
const KEEPER: usize = 0;

/// A lease's TTL.
pub(super) fn lease(rng: &mut Rng) -> u64 {
    rng.pick(LEASES)
}

/// The next steps: a tick (after a wait, if it comes later), or one thing
/// that happens to the key.
pub(super) fn next_steps(rng: &mut Rng, h: &History, state: &State) -> Vec<Step> {
    let ttl_ms = h.start.lock.map_or(LEASES[0], |(_, ttl)| ttl);
    // Mostly ticks: what happens to the key soon ends the lease.
    match rng.below(16) {
        0..=9 => tick(rng, h, state, ttl_ms),
        10 => vec![Step::Wait(wait(rng, state))],
        11 | 12 => vec![client_step(rng, h, state, ttl_ms)],
        _ => vec![Step::Touch(touch(rng, state, ttl_ms))],
    }
}

/// A TTL for the key: at most the lease. Every expiry the key gets then
/// lies within a lease of when it was set, so a renewal (a lease from now)
/// never moves it a few milliseconds *earlier*. The clock notices a new TTL
/// by its real expiry changing, and a new expiry a millisecond or two before
/// the old one can land on the same real instant and go unseen (see
/// [`crate::clock`]).
fn renewable_ttl(rng: &mut Rng, lease_ms: u64) -> u64 {
    let shorter: Vec<u64> = TTLS.iter().copied().filter(|&t| t <= lease_ms).collect();
    if shorter.is_empty() || rng.chance(1, 2) {
        lease_ms
    } else {
        rng.pick(&shorter)
    }
}

/// A TTL for the key that moves its expiry no less than a resolution
/// earlier, if earlier at all, for the same reason as [`renewable_ttl`]:
/// otherwise the lease, which never moves it earlier.
fn clear_of_expiry(rng: &mut Rng, state: &State, lease_ms: u64) -> u64 {
    let ttl_ms = renewable_ttl(rng, lease_ms);
    let new = state.now_ms + ttl_ms.div_ceil(RESOLUTION_MS) * RESOLUTION_MS;
    match state.lock.as_ref().map(|held| held.expires_at) {
        Some(old) if old > new && old - new < RESOLUTION_MS => lease_ms,
        _ => ttl_ms,
    }
}

/// A tick at a time drawn around the renewal's due time.
fn tick(rng: &mut Rng, h: &History, state: &State, ttl_ms: u64) -> Vec<Step> {
    let (now, last) = (state.now_ms, state.keeper.renewed_at_ms);
    let due = last + ttl_ms.div_ceil(3);
    let at = match rng.below(11) {
        0 => due,
        1 => last + ttl_ms / 3,
        2 => due - 1,
        3 => due + 1,
        4 => now,
        5 => now + 500 - now % 500,
        6 => now + 1 + rng.below(ttl_ms / 4),
        7 => due + rng.below(ttl_ms / 2),
        8 => last + ttl_ms + rng.below(ttl_ms),
        9 => last + ttl_ms / 4 + rng.below(ttl_ms / 12 + 1),
        _ => last + ttl_ms / 4 - 1,
    };
    let at = at.max(now);
    let mut steps = Vec::new();
    if at > now {
        steps.push(Step::Wait(at - now));
    }
    // A tick that may renew meets a fault now and then: it must tell the job.
    // Only on leases of 2 s or more: a faulted keeper leaves the key with the
    // TTL it had, and the ticks that follow (a debug build on a busy machine
    // plays a few a second) would outlast a shorter one's real expiry before
    // the virtual clock reaches it.
    let long = ttl_ms >= 2000;
    let fault = (long && !state.keeper.lost && rng.chance(1, 3)).then(|| StepIn {
        before: 0,
        actor: Actor::Fault(rng.pick(&Fault::ALL)),
    });
    let step_in = fault.or_else(|| rng.chance(1, 4).then(|| step_in(rng, h, ttl_ms)));
    steps.push(Step::Call {
        client: KEEPER,
        token: h.tokens[KEEPER].clone(),
        call: Call::Keep { ttl_ms },
        step_in,
    });
    steps
}

/// Another client in the middle of a tick, right after its first or second
/// command: the lock expires and is taken, or is taken if free.
fn step_in(rng: &mut Rng, h: &History, lease_ms: u64) -> StepIn {
    let client = 1 + rng.below(h.tokens.len() as u64 - 1) as usize;
    let take = Move::Call(Call::Acquire {
        ttl_ms: renewable_ttl(rng, lease_ms),
    });
    let moves = match rng.below(3) {
        0 | 1 => vec![Move::ExpireLock, take],
        _ => vec![take],
    };
    StepIn {
        before: rng.pick(&[1, 1, 2]),
        actor: Actor::Client {
            client,
            token: h.next_fresh(client),
            moves,
        },
    }
}

/// A client's call between two ticks, with the reference's functions: a
/// free key is taken by another client (with a fresh token: A's lease keeps
/// its own, and A takes no other), a key held by another client is released
/// by it, and otherwise time moves on.
fn client_step(rng: &mut Rng, h: &History, state: &State, ttl_ms: u64) -> Step {
    let others = h.tokens.len() as u64 - 1;
    match state.lock.as_ref().map(|held| held.token.as_str()) {
        None => {
            let client = 1 + rng.below(others) as usize;
            Step::Call {
                client,
                token: h.next_fresh(client),
                call: Call::Acquire {
                    ttl_ms: renewable_ttl(rng, ttl_ms),
                },
                step_in: None,
            }
        }
        // A hash answers a release's GET with an error: only time frees it.
        Some(WRONG_TYPE) => Step::Wait(wait(rng, state)),
        Some(_) => match super::generate::holder(h, state) {
            Some(client) if client != KEEPER && rng.chance(1, 2) => Step::Call {
                client,
                token: h.carried(client).to_owned(),
                call: Call::Release,
                step_in: None,
            },
            _ => Step::Wait(wait(rng, state)),
        },
    }
}

/// Something the grader does to the key.
fn touch(rng: &mut Rng, state: &State, lease_ms: u64) -> Touch {
    match rng.below(5) {
        0 => Touch::Delete,
        1 => Touch::Pexpire {
            ttl_ms: clear_of_expiry(rng, state, lease_ms),
        },
        // Half the hashes last a whole lease, so that a tick finds one.
        _ => Touch::Hash {
            ttl_ms: if rng.chance(1, 2) {
                lease_ms
            } else {
                clear_of_expiry(rng, state, lease_ms)
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::super::generate::history;
    use super::super::history::Subject;
    use super::*;

    /// Over a few seeds, ticks land exactly on a due time, at a third
    /// rounded down, twice at one instant, past the TTL; and every other
    /// thing happens to the key.
    #[test]
    fn histories_reach_every_corner() {
        let (mut same_now, mut touches) = (0, [0; 3]);
        for seed in 0..200 {
            let h = history(Subject::Keeper, seed);
            let mut last_was_tick = false;
            for step in &h.steps {
                match step {
                    Step::Call {
                        call: Call::Keep { .. },
                        ..
                    } if last_was_tick => same_now += 1,
                    Step::Touch(Touch::Delete) => touches[0] += 1,
                    Step::Touch(Touch::Pexpire { .. }) => touches[1] += 1,
                    Step::Touch(Touch::Hash { .. }) => touches[2] += 1,
                    _ => {}
                }
                last_was_tick = matches!(
                    step,
                    Step::Call {
                        call: Call::Keep { .. },
                        ..
                    }
                );
            }
        }
        assert!(same_now > 10, "{same_now}");
        assert!(touches.iter().all(|&n| n > 10), "{touches:?}");
    }
}
