//! The checks of the `acquire` exercise; the first three also check the
//! `fencing` exercise's `acquire_fenced`, which must take the lock the same way.

use std::time::Duration;

use super::bench::{Bench, ODD_TTL, TOKEN_A, TOKEN_B, TTL, b_holds, judged, nothing};
use super::scenarios::scenario_check;
use super::{Ctx, called};
use crate::error::GradeError;
use crate::explore::Subject;
use crate::judge::Call;
use crate::judge::acquire::{self as judge, Before, Grant, Key};
use crate::judge::fencing::{Against, tokens_grow};
use crate::probe::{Attempt, MakeCall, Probe, StepIn};
use crate::report::Verdict;
use crate::wire::{Fired, Step, Wire};
use crate::world::{FIRST_FENCE_COUNTER, World};

/// The function under test in the checks that take a lock: `acquire` or
/// `acquire_fenced`. Both must take a free lock, leave a held one alone and
/// set the TTL asked for; only the fenced one also hands out a token.
#[derive(Clone, Copy)]
pub enum Taker {
    /// `acquire`.
    Plain(crate::lock::AcquireFn),
    /// `acquire_fenced`.
    Fenced(crate::lock::AcquireFencedFn),
}

impl Taker {
    fn name(self) -> &'static str {
        match self {
            Taker::Plain(_) => "acquire",
            Taker::Fenced(_) => "acquire_fenced",
        }
    }

    /// Calls it for A with `ttl`.
    fn take(
        self,
        bench: &mut Bench,
        ctx: &Ctx<'_>,
        ttl: Duration,
    ) -> Result<(Grant, Vec<Step>), Verdict> {
        let keys = bench.world().keys.clone();
        match self {
            Taker::Plain(acquire) => bench
                .call(ctx, "acquire", move |w| {
                    acquire(w, &keys.lock, TOKEN_A, ttl)
                })
                .map(|(granted, steps)| (granted.then_some(None), steps)),
            Taker::Fenced(acquire) => bench
                .call(ctx, "acquire_fenced", move |w| {
                    acquire(w, &keys.lock, &keys.fence, TOKEN_A, ttl)
                })
                .map(|(token, steps)| (token.map(Some), steps)),
        }
    }
}

/// What the lock key holds, for the judges: A's token, B's, or something
/// else.
fn key(value: Option<&str>) -> Key {
    match value {
        None => Key::Missing,
        Some(TOKEN_A) => Key::Own,
        Some(TOKEN_B) => Key::Holders,
        Some(other) => Key::Other(format!("{other:?}")),
    }
}

/// A free lock: the call grants it, with the TTL asked for, and a fenced
/// grant comes with a token above the counter.
pub fn takes_a_free_lock(ctx: &Ctx<'_>, taker: Taker) -> Result<Verdict, GradeError> {
    let mut bench = Bench::open()?;
    let (grant, steps) = called!(taker.take(&mut bench, ctx, TTL));
    let value = bench.world().lock_value()?;
    let now = bench.world().now_ms();
    let call = Call::at("A", taker.name(), now);
    let mut violation = judge::taking(&call, Before::Free, grant, &key(value.as_deref()));
    if let (None, Some(Some(t))) = (&violation, grant) {
        violation = tokens_grow(&call, t, Against::Counter(FIRST_FENCE_COUNTER));
    }
    if violation.is_none() {
        let expiry = bench.world().lock_expiry()?;
        violation = judge::lock_has_ttl(&call, TTL, now, expiry);
    }
    Ok(judged(ctx, taker.name(), violation, &steps))
}

/// B holds the lock: A's call is refused and leaves B's key and TTL alone.
pub fn refuses_a_held_lock(ctx: &Ctx<'_>, taker: Taker) -> Result<Verdict, GradeError> {
    let mut bench = Bench::open()?;
    b_holds(&mut bench.world())?;
    bench.world().advance_by(3000)?;
    let before = bench.world().lock_expiry()?;
    let (grant, steps) = called!(taker.take(&mut bench, ctx, TTL));
    let value = bench.world().lock_value()?;
    let after = bench.world().lock_expiry()?;
    let call = Call::at("A", taker.name(), bench.world().now_ms());
    let violation = judge::taking(&call, Before::HeldBy("B"), grant, &key(value.as_deref()))
        .or_else(|| judge::leaves_holder_ttl(&call, "B", grant, before, after));
    Ok(judged(ctx, taker.name(), violation, &steps))
}

/// A 1.5 s TTL: the lock key expires after exactly 1.5 s.
pub fn sets_the_ttl_in_milliseconds(ctx: &Ctx<'_>, taker: Taker) -> Result<Verdict, GradeError> {
    let mut bench = Bench::open()?;
    let (grant, steps) = called!(taker.take(&mut bench, ctx, ODD_TTL));
    let now = bench.world().now_ms();
    let call = Call::at("A", taker.name(), now);
    let mut violation = None;
    if grant.is_none() {
        let value = bench.world().lock_value()?;
        violation = judge::takes_free_lock(&call, Before::Free, grant, &key(value.as_deref()));
    }
    if violation.is_none() {
        let expiry = bench.world().lock_expiry()?;
        violation = judge::lock_has_ttl(&call, ODD_TTL, now, expiry);
    }
    Ok(judged(ctx, taker.name(), violation, &steps))
}

/// The race scenario, with the learner's acquire.
pub fn race(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    scenario_check(ctx, "race", Subject::Acquire.lock_under_test(ctx.lock))
}

/// The crashed-holder scenario, with the learner's acquire.
pub fn crashed_holder(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    scenario_check(
        ctx,
        "crashed-holder",
        Subject::Acquire.lock_under_test(ctx.lock),
    )
}

/// A crashes at every command boundary of its acquire in turn: no lock key
/// is left without a TTL.
pub fn crash(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    Probe {
        check: ctx.check,
        lock: ctx.lock.name,
        function: "acquire",
        setup: nothing,
        call: a_acquires(ctx),
        step_in: StepIn::Act(|| {
            Box::new(|_| Ok(Fired::Crash("here A crashed: it sends nothing more".into())))
        }),
        judge: |a: Attempt<'_, bool>| {
            let call = Call::at("A", "acquire", a.world.now_ms());
            Ok(judge::no_immortal_lock(&call, a.world.lock_expiry()?))
        },
    }
    .run()
}

/// Every command of A's acquire of a free lock meets each fault in turn (an
/// error reply, a dropped connection, a lost or late reply): the acquire
/// returns the error.
pub fn reports_a_failed_command(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    Probe {
        check: ctx.check,
        lock: ctx.lock.name,
        function: "acquire",
        setup: nothing,
        call: a_acquires(ctx),
        step_in: StepIn::Faults,
        judge: |a: Attempt<'_, bool>| {
            let Some(hit) = a.fault else {
                return Ok(None);
            };
            let call = Call::at("A", "acquire", a.world.now_ms());
            let returned = a.value.map(|&taken| taken.then_some(None));
            Ok(judge::reports_failure(&call, hit, returned))
        },
    }
    .run()
}

/// A's acquire of the lock for [`TTL`], for a probe.
fn a_acquires(ctx: &Ctx<'_>) -> MakeCall<bool> {
    let acquire = ctx.lock.acquire;
    Box::new(move |world: &World| {
        let key = world.keys.lock.clone();
        Box::new(move |w: &mut Wire| acquire(w, &key, TOKEN_A, TTL))
    })
}
