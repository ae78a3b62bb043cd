//! The checks of the `release` exercise.

use super::bench::{Bench, TOKEN_A, TOKEN_B, a_holds, b_holds, expire_and_let_b_in, judged};
use super::scenarios::scenario_check;
use super::{Ctx, called};
use crate::error::GradeError;
use crate::explore::Subject;
use crate::judge::Call;
use crate::judge::release::{Held, releasing, spares_others};
use crate::probe::{Attempt, Probe};
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
    let release = ctx.lock.release;
    Probe {
        check: ctx.check,
        lock: ctx.lock.name,
        function: "release",
        setup: a_holds,
        call: Box::new(move |world: &World| {
            let key = world.keys.lock.clone();
            Box::new(move |w: &mut Wire| release(w, &key, TOKEN_A))
        }),
        intervention: || Box::new(|world| Ok(Fired::Continue(expire_and_let_b_in(world)?))),
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

/// The slow-job scenario, with the learner's release.
pub fn slow_job(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    scenario_check(ctx, "slow-job", Subject::Release.lock_under_test(ctx.lock))
}
