//! The `extend` exercise's checks: `extend` renews the caller's own lock, to the TTL
//! asked for, and nothing else.
//!
//! Three direct calls on prepared worlds (A's lock, B's lock, a lock that
//! expired), one probe that hands the lock to B at every command boundary of
//! A's renewal, one that makes each of its commands fail, and the explorer ([`crate::explore`]) over histories of
//! acquires, renewals and releases by holders and others.

use std::time::Duration;

use super::bench::{Bench, TOKEN_A, TOKEN_B, TTL, a_holds, b_holds, expire_and_let_b_in, judged};
use super::{Ctx, called};
use crate::clock::Expiry;
use crate::error::GradeError;
use crate::judge::extend::{After, Met, keeps_new_holders_ttl, renewing, reports_failure};
use crate::judge::{Call, Held};
use crate::probe::{Attempt, Probe, StepIn};
use crate::report::Verdict;
use crate::wire::{Fired, Wire};
use crate::world::World;

/// The renewal's TTL: 1.5 s, which EXPIRE in seconds or `as_secs()` gets wrong.
const RENEWAL: Duration = Duration::from_millis(1500);
/// A renewal far longer than B's TTL, so that renewing B's lock shows.
const LONG_RENEWAL: Duration = Duration::from_secs(30);

/// A's extend with `ttl`, on the bench's wire.
fn a_extends(
    bench: &mut Bench,
    ctx: &Ctx<'_>,
    ttl: Duration,
) -> Result<(bool, Vec<crate::wire::Step>), Verdict> {
    let (key, extend) = (bench.world().keys.lock.clone(), ctx.lock.extend);
    bench.call(ctx, "extend", move |w| extend(w, &key, TOKEN_A, ttl))
}

/// A holds the lock with 6 s left; its extend for 1.5 s must make it expire
/// 1.5 s from now, and say so.
pub(crate) fn renews_its_own_lock(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let mut bench = Bench::open()?;
    a_holds(&mut bench.world())?;
    bench.world().advance_by(4000)?;
    let left_ms = left(&mut bench)?.1;
    let met = Met::Own {
        token: TOKEN_A,
        left_ms,
    };
    judge_renewal(ctx, bench, met, RENEWAL)
}

/// B holds the lock; A's extend must change nothing and return false.
pub(crate) fn leaves_another_holders_lock(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let mut bench = Bench::open()?;
    b_holds(&mut bench.world())?;
    bench.world().advance_by(3000)?;
    let (expiry, left_ms) = left(&mut bench)?;
    let met = Met::Other {
        holder: "B",
        token: TOKEN_B,
        left_ms,
        expiry,
    };
    judge_renewal(ctx, bench, met, LONG_RENEWAL)
}

/// A's lock expired and nobody took it; A's extend must not bring it back.
pub(crate) fn never_brings_back_a_lost_lock(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let mut bench = Bench::open()?;
    a_holds(&mut bench.world())?;
    let (expired_at, _) = left(&mut bench)?;
    bench.world().advance_by(TTL.as_millis() as u64 + 2000)?;
    let ago_ms = match expired_at {
        Expiry::At(at) => bench.world().now_ms().saturating_sub(at),
        _ => 0,
    };
    judge_renewal(ctx, bench, Met::Lost { ago_ms }, TTL)
}

/// The lock key's expiry now, and how long it has left.
fn left(bench: &mut Bench) -> Result<(Expiry, u64), GradeError> {
    let mut world = bench.world();
    let (now, expiry) = (world.now_ms(), world.lock_expiry()?);
    let left_ms = match expiry {
        Expiry::At(at) => at.saturating_sub(now),
        _ => 0,
    };
    Ok((expiry, left_ms))
}

/// A's extend for `asked` on the lock `met`, and the key after it, judged.
fn judge_renewal(
    ctx: &Ctx<'_>,
    mut bench: Bench,
    met: Met<'_>,
    asked: Duration,
) -> Result<Verdict, GradeError> {
    let (renewed, steps) = called!(a_extends(&mut bench, ctx, asked));
    let mut world = bench.world();
    let (now, value, expiry) = (world.now_ms(), world.lock_value()?, world.lock_expiry()?);
    let after = After {
        value: value.as_deref(),
        expiry,
    };
    let call = Call::at("A", "extend", now);
    let violation = renewing(&call, met, asked, renewed, now, after);
    Ok(judged(ctx, "extend", violation, &steps))
}

/// A renews for 30 s while, at any command boundary, its lock expires and B
/// takes it for 10 s: B's lock must keep B's TTL.
pub(crate) fn never_renews_a_lock_that_changed_hands(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let extend = ctx.lock.extend;
    Probe {
        check: ctx.check,
        lock: ctx.lock.name,
        function: "extend",
        setup: a_holds,
        call: Box::new(move |world: &World| {
            let key = world.keys.lock.clone();
            Box::new(move |w: &mut Wire| extend(w, &key, TOKEN_A, LONG_RENEWAL))
        }),
        step_in: StepIn::Act(|| Box::new(|world| Ok(Fired::Continue(expire_and_let_b_in(world)?)))),
        judge: |a: Attempt<'_, bool>| {
            let now = a.world.now_ms();
            let held = match a.world.lock_value()?.as_deref() {
                Some(TOKEN_B) => Held::By("B"),
                Some(TOKEN_A) => Held::ByCaller,
                Some(_) => Held::By("another client"),
                None => Held::Nobody,
            };
            let call = Call::at("A", "extend", now);
            let expiry = a.world.lock_expiry()?;
            Ok(keeps_new_holders_ttl(&call, "B", TTL, held, now, expiry))
        },
    }
    .run()
}

/// Every command of A's renewal meets each fault in turn (an error reply, a
/// dropped connection, a lost or late reply): the renewal returns the error.
pub(crate) fn reports_a_failed_command(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let extend = ctx.lock.extend;
    Probe {
        check: ctx.check,
        lock: ctx.lock.name,
        function: "extend",
        setup: a_holds,
        call: Box::new(move |world: &World| {
            let key = world.keys.lock.clone();
            Box::new(move |w: &mut Wire| extend(w, &key, TOKEN_A, RENEWAL))
        }),
        step_in: StepIn::Faults,
        judge: |a: Attempt<'_, bool>| {
            let Some(hit) = a.fault else {
                return Ok(None);
            };
            let call = Call::at("A", "extend", a.world.now_ms());
            Ok(reports_failure(&call, hit, a.value.copied()))
        },
    }
    .run()
}
