//! The checks of the `release` exercise.

use super::bench::{Bench, TOKEN_A, TOKEN_B, a_holds, b_holds, expire_and_let_b_in, judged};
use super::scenarios::scenario_check;
use super::{Ctx, called};
use crate::error::GradeError;
use crate::explore::Subject;
use crate::judge::Call;
use crate::judge::release::{Held, releasing, reports_failure, spares_others};
use crate::probe::{Attempt, MakeCall, Probe, StepIn};
use crate::report::Verdict;
use crate::wire::{Fired, Wire};
use crate::world::World;

/// A holds the lock, B holds it: A's release, and what the key holds before
/// and after, judged.
fn released(ctx: &Ctx<'_>, held: Held<'_>) -> Result<Verdict, GradeError> {
    let mut bench = Bench::open()?;
    match held {
        Held::ByCaller => a_holds(&mut bench.world())?,
        Held::By(_) => b_holds(&mut bench.world())?,
        Held::Nobody => {}
    }
    let before = bench.world().lock_value()?;
    let (key, release) = (bench.world().keys.lock.clone(), ctx.lock.release);
    let (deleted, steps) = called!(bench.call(ctx, "release", move |w| release(w, &key, TOKEN_A)));
    let after = bench.world().lock_value()?;
    let call = Call::at("A", "release", bench.world().now_ms());
    let violation = releasing(&call, held, before.as_deref(), after.as_deref(), deleted);
    Ok(judged(ctx, "release", violation, &steps))
}

/// A releases its own lock.
pub fn own(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    released(ctx, Held::ByCaller)
}

/// A releases while B holds the lock.
pub fn other(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    released(ctx, Held::By("B"))
}

/// A's lock expires and B takes it at every command boundary of A's release
/// in turn: B's lock is still there afterwards.
pub fn probe(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    Probe {
        check: ctx.check,
        lock: ctx.lock.name,
        function: "release",
        setup: a_holds,
        call: a_releases(ctx),
        step_in: StepIn::Act(|| Box::new(|world| Ok(Fired::Continue(expire_and_let_b_in(world)?)))),
        judge: |a: Attempt<'_, bool>| {
            let call = Call::at("A", "release", a.world.now_ms());
            let after = a.world.lock_value()?;
            Ok(spares_others(
                &call,
                Held::By("B"),
                Some(TOKEN_B),
                after.as_deref(),
            ))
        },
    }
    .run()
}

/// Every command of A's release meets each fault in turn (an error reply, a
/// dropped connection, a lost or late reply): the release returns the error.
pub fn reports_a_failed_command(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    Probe {
        check: ctx.check,
        lock: ctx.lock.name,
        function: "release",
        setup: a_holds,
        call: a_releases(ctx),
        step_in: StepIn::Faults,
        judge: |a: Attempt<'_, bool>| {
            let Some(hit) = a.fault else {
                return Ok(None);
            };
            let call = Call::at("A", "release", a.world.now_ms());
            Ok(reports_failure(&call, hit, a.value.copied()))
        },
    }
    .run()
}

/// A's release of its lock, for a probe.
fn a_releases(ctx: &Ctx<'_>) -> MakeCall<bool> {
    let release = ctx.lock.release;
    Box::new(move |world: &World| {
        let key = world.keys.lock.clone();
        Box::new(move |w: &mut Wire| release(w, &key, TOKEN_A))
    })
}

/// The slow-job scenario, with the learner's release.
pub fn slow_job(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    scenario_check(ctx, "slow-job", Subject::Release.lock_under_test(ctx.lock))
}
