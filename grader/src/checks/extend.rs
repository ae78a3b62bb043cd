//! The `extend` exercise's checks: `extend` renews the caller's own lock, to the TTL
//! asked for, and nothing else.
//!
//! Three direct calls on prepared worlds (A's lock, B's lock, a lock that
//! expired), one probe that hands the lock to B at every command boundary of
//! A's renewal, one that makes each of its commands fail, and the explorer ([`crate::explore`]) over histories of
//! acquires, renewals and releases by holders and others.

use std::time::Duration;

use super::bench::{Bench, TOKEN_A, TOKEN_B, TTL, a_holds, b_holds, broken, expire_and_let_b_in};
use super::{Ctx, called};
use crate::clock::Expiry;
use crate::error::GradeError;
use crate::judge::Call;
use crate::judge::extend::reports_failure;
use crate::model::show_value;
use crate::probe::{Attempt, Probe, StepIn};
use crate::report::Verdict;
use crate::verdict::{Property, Violation, seconds};
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
    let (renewed, steps) = called!(a_extends(&mut bench, ctx, RENEWAL));
    let mut world = bench.world();
    let (now, value, expiry) = (world.now_ms(), world.lock_value()?, world.lock_expiry()?);
    let wanted = |e: Expiry| matches!(e, Expiry::At(at) if at >= now && crate::clock::as_asked(RENEWAL.as_millis() as u64, at - now));
    let what = if value.as_deref() != Some(TOKEN_A) {
        Some((
            Property::ExtendSparesOthers,
            format!(
                "A renewed its own lock, and the lock key now holds {}",
                show_value(&value)
            ),
        ))
    } else if !wanted(expiry) {
        let left = match expiry {
            Expiry::At(at) => format!("expires after {}", seconds(at - now)),
            Expiry::Never => "never expires".into(),
            Expiry::Missing => "is gone".into(),
        };
        Some((
            Property::ExtendRenewsOwnLock,
            format!(
                "A's lock had 6 s left; extend was asked for {} and returned {renewed}, and the lock key {left}",
                seconds(RENEWAL.as_millis() as u64)
            ),
        ))
    } else if !renewed {
        Some((
            Property::ExtendTellsTruth,
            "A's extend renewed its own lock but returned false".to_string(),
        ))
    } else {
        None
    };
    Ok(what.map_or(Verdict::Pass, |(p, what)| {
        broken(ctx, "extend", Violation::at(p, now, what), &steps)
    }))
}

/// B holds the lock; A's extend must change nothing and return false.
pub(crate) fn leaves_another_holders_lock(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let mut bench = Bench::open()?;
    b_holds(&mut bench.world())?;
    bench.world().advance_by(3000)?;
    let before = bench.world().lock_expiry()?;
    let (renewed, steps) = called!(a_extends(&mut bench, ctx, LONG_RENEWAL));
    let mut world = bench.world();
    let (now, value, after) = (world.now_ms(), world.lock_value()?, world.lock_expiry()?);
    let what = if value.as_deref() != Some(TOKEN_B) {
        Some((
            Property::ExtendSparesOthers,
            format!(
                "B holds the lock, and after A's extend the lock key holds {}",
                show_value(&value)
            ),
        ))
    } else if after != before {
        let believes = if renewed {
            ", and A, told true, believes it holds a lock it does not"
        } else {
            ""
        };
        Some((
            Property::ExtendSparesOthers,
            format!(
                "B holds the lock with 7 s left, and A's extend gave it 30 s: B's lock outlives B if B \
                 crashes{believes}"
            ),
        ))
    } else if renewed {
        Some((
            Property::ExtendTellsTruth,
            "B holds the lock, and A's extend returned true: A's job would go on writing under B's lock"
                .to_string(),
        ))
    } else {
        None
    };
    Ok(what.map_or(Verdict::Pass, |(p, what)| {
        broken(ctx, "extend", Violation::at(p, now, what), &steps)
    }))
}

/// A's lock expired and nobody took it; A's extend must not bring it back.
pub(crate) fn never_brings_back_a_lost_lock(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let mut bench = Bench::open()?;
    a_holds(&mut bench.world())?;
    bench.world().advance_by(TTL.as_millis() as u64 + 2000)?;
    let (renewed, steps) = called!(a_extends(&mut bench, ctx, TTL));
    let mut world = bench.world();
    let (now, value) = (world.now_ms(), world.lock_value()?);
    let what = if value.is_some() {
        Some((
            Property::ExtendSparesOthers,
            format!(
                "A's lock expired 2 s ago, and A's extend brought it back (the key holds {}): \
                 whatever happened in those 2 s, A now holds a lock it lost",
                show_value(&value)
            ),
        ))
    } else if renewed {
        Some((
            Property::ExtendTellsTruth,
            "A's lock expired 2 s ago, and A's extend returned true".to_string(),
        ))
    } else {
        None
    };
    Ok(what.map_or(Verdict::Pass, |(p, what)| {
        broken(ctx, "extend", Violation::at(p, now, what), &steps)
    }))
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
            if a.world.lock_value()?.as_deref() != Some(TOKEN_B) {
                return Ok(None);
            }
            let b_ttl = TTL.as_millis() as u64;
            // A true from a renewal that came before B's grant is the truth:
            // only B's TTL is judged here.
            Ok(match a.world.lock_expiry()? {
                Expiry::At(at) if at <= now + b_ttl => None,
                other => Some(Violation::at(
                    Property::ExtendSparesOthers,
                    now,
                    format!(
                        "A's extend renewed B's lock: B took it for {}, and the key {}",
                        seconds(b_ttl),
                        crate::model::show_expiry(other)
                    ),
                )),
            })
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
