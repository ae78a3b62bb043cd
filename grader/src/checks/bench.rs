//! The workbench of the direct checks: a world with one client, A, whose
//! calls run in the sandbox, and the moves the grader makes around them.
//!
//! A direct check prepares the world (B holds the lock, say), calls one
//! learner function for A, looks at what it returned and what Redis holds,
//! and hands both to a judge of [`crate::judge`]. The verdict carries the
//! commands A's call sent.

use std::time::Duration;

use crate::clock::Expiry;
use crate::error::GradeError;
use crate::reference;
use crate::report::{Report, Verdict, trace};
use crate::sandbox::{self, Failure};
use crate::verdict::Violation;
use crate::wire::{Step, Wire};
use crate::world::{SharedWorld, World, enter};

use super::Ctx;

/// A's token in checks that do not test token generation.
pub const TOKEN_A: &str = "token-of-A";
/// B's token in the same checks.
pub const TOKEN_B: &str = "token-of-B";
/// The TTL of the direct checks.
pub const TTL: Duration = Duration::from_secs(10);
/// A TTL that a wrong unit gets wrong: 1500 s with EX, 1 s with `as_secs()`.
pub const ODD_TTL: Duration = Duration::from_millis(1500);

/// A world with one client wire, for direct calls.
pub struct Bench {
    world: SharedWorld,
    wire: Option<Wire>,
}

impl Bench {
    /// A fresh world on the shared Redis, and A's connection to it.
    pub fn open() -> Result<Bench, GradeError> {
        let world = World::open()?.shared();
        let wire = Some(Wire::open(&world)?);
        Ok(Bench { world, wire })
    }

    /// The world, to prepare it or look at it.
    pub fn world(&self) -> std::sync::MutexGuard<'_, World> {
        enter(&self.world)
    }

    /// Calls the lock for A; `Err` is the verdict when its code failed.
    pub fn call<T: Send + 'static>(
        &mut self,
        ctx: &Ctx<'_>,
        function: &'static str,
        f: impl FnOnce(&mut Wire) -> redis::RedisResult<T> + Send + 'static,
    ) -> Result<(T, Vec<Step>), Verdict> {
        let Some(wire) = self.wire.take() else {
            let failure = Failure::Error {
                message: "the connection was lost".into(),
            };
            return Err(Verdict::Fail(Box::new(Report::failed(
                ctx.check,
                ctx.lock.name,
                function,
                failure,
                vec![],
            ))));
        };
        let (wire, outcome) = sandbox::call(wire, f);
        let steps = wire
            .as_ref()
            .map(|w| w.steps().to_vec())
            .unwrap_or_default();
        self.wire = wire;
        match outcome {
            Ok(v) => Ok((v, steps)),
            Err(failure) => Err(failed(ctx, function, failure, &steps)),
        }
    }
}

/// The verdict for a function that failed.
fn failed(ctx: &Ctx<'_>, function: &'static str, failure: Failure, steps: &[Step]) -> Verdict {
    match failure {
        Failure::NotStarted { message } => Verdict::NotStarted { function, message },
        failure => {
            let evidence = if steps.is_empty() {
                vec![]
            } else {
                vec![trace("A", function, steps)]
            };
            Verdict::Fail(Box::new(Report::failed(
                ctx.check,
                ctx.lock.name,
                function,
                failure,
                evidence,
            )))
        }
    }
}

/// The verdict for a broken rule, with A's call's trace.
pub fn broken(ctx: &Ctx<'_>, function: &str, violation: Violation, steps: &[Step]) -> Verdict {
    Verdict::Fail(Box::new(Report::broken(
        ctx.check,
        ctx.lock.name,
        violation,
        vec![trace("A", function, steps)],
    )))
}

/// The verdict for the first violation found, if any: a fail with A's
/// call's trace, or a pass.
pub fn judged(
    ctx: &Ctx<'_>,
    function: &str,
    violation: Option<Violation>,
    steps: &[Step],
) -> Verdict {
    violation.map_or(Verdict::Pass, |v| broken(ctx, function, v, steps))
}

/// B takes the lock with the reference acquire, as a well-behaved client.
pub fn b_holds(world: &mut World) -> Result<(), GradeError> {
    let lock = world.keys.lock.clone();
    reference::acquire::acquire(world.con(), &lock, TOKEN_B, TTL)?;
    world.settle()
}

/// A takes the lock with the reference acquire.
pub fn a_holds(world: &mut World) -> Result<(), GradeError> {
    let lock = world.keys.lock.clone();
    reference::acquire::acquire(world.con(), &lock, TOKEN_A, TTL)?;
    world.settle()
}

/// A takes the lock with the reference fenced acquire (token 33).
pub fn a_holds_fenced(world: &mut World) -> Result<(), GradeError> {
    let keys = world.keys.clone();
    reference::fencing::acquire_fenced(world.con(), &keys.lock, &keys.fence, TOKEN_A, TTL)?;
    world.settle()
}

/// No preparation: the lock is free.
pub fn nothing(_: &mut World) -> Result<(), GradeError> {
    Ok(())
}

/// The lock's expiry comes and B takes the lock, right now.
pub fn expire_and_let_b_in(world: &mut World) -> Result<String, GradeError> {
    let held_by_a = world.lock_value()?.as_deref() == Some(TOKEN_A);
    if let Expiry::At(at) = world.lock_expiry()? {
        world.advance_to(at)?;
    }
    b_holds(world)?;
    Ok(if held_by_a {
        "here A's lock expired, and B took the lock"
    } else {
        "here B took the lock"
    }
    .to_string())
}
