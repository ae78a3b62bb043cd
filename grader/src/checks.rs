//! The catalogue of checks: what `cargo test -p exercises` runs.
//!
//! A check is named `exercise::what_it_shows` and tests one exercise's
//! function, with the reference solution standing in for the other
//! exercises, so a learner sees progress exercise by exercise. The
//! `scenarios::…` checks at the end play the course's stories with the
//! learner's whole lock.
//!
//! Checks come in three shapes: a direct call on a prepared world ("B holds
//! the lock; your acquire for A must say no"), a [`Probe`] that steps in at
//! every command boundary, and a scenario played with the lock and compared,
//! rule by rule and then second by second, with the reference lock's run.

use std::time::Duration;

use crate::clock::{Expiry, RESOLUTION_MS};
use crate::error::GradeError;
use crate::explore::{self, Exercise};
use crate::lock::Lock;
use crate::probe::{Attempt, Probe};
use crate::reference::{self, LOCK as REFERENCE};
use crate::report::{Report, Verdict, trace};
use crate::run;
use crate::sandbox::{self, Failure};
use crate::scenario;
use crate::verdict::{Property, Violation};
use crate::wire::{Fired, Step, Wire};
use crate::world::{FIRST_FENCE_COUNTER, SharedWorld, World, enter};

/// A's token in checks that do not test token generation.
const TOKEN_A: &str = "token-of-A";
/// B's token in the same checks.
const TOKEN_B: &str = "token-of-B";
/// The TTL of the direct checks.
const TTL: Duration = Duration::from_secs(10);
/// A TTL that a wrong unit gets wrong: 1500 s with EX, 1 s with `as_secs()`.
const ODD_TTL: Duration = Duration::from_millis(1500);

/// What a check runs with.
pub struct Ctx<'a> {
    /// The check's name.
    pub check: &'static str,
    /// The lock under test.
    pub lock: &'a Lock,
}

/// One check.
pub struct Check {
    /// `exercise::what_it_shows`.
    pub name: &'static str,
    /// What it shows, in one line.
    pub shows: &'static str,
    run: fn(&Ctx<'_>) -> Result<Verdict, GradeError>,
}

impl Check {
    /// Runs the check on `lock`. A check during which the machine stalled is run again
    /// ([`crate::stall`]); one whose lock sent a refused command fails
    /// ([`crate::confine`]).
    pub fn run(&self, lock: &Lock) -> Result<Verdict, GradeError> {
        let ctx = Ctx {
            check: self.name,
            lock,
        };
        crate::stall::rerun(|| crate::confine::watched(self.name, lock, || (self.run)(&ctx)))
    }
}

/// Every check, exercise by exercise.
pub const CHECKS: &[Check] = &[
    Check {
        name: "token::unique",
        shows: "a thousand tokens are a thousand different tokens",
        run: crate::token::unique,
    },
    Check {
        name: "token::unguessable",
        shows: "tokens carry about 128 random bits or more",
        run: crate::token::unguessable,
    },
    Check {
        name: "acquire::takes_a_free_lock",
        shows: "acquire takes a free lock with its token",
        run: |c| takes_a_free_lock(c, Taker::Plain(c.lock.acquire)),
    },
    Check {
        name: "acquire::refuses_a_held_lock",
        shows: "acquire leaves another holder's lock and TTL alone",
        run: |c| refuses_a_held_lock(c, Taker::Plain(c.lock.acquire)),
    },
    Check {
        name: "acquire::sets_the_ttl_in_milliseconds",
        shows: "a 1.5 s TTL becomes a 1.5 s expiry",
        run: |c| sets_the_ttl_in_milliseconds(c, Taker::Plain(c.lock.acquire)),
    },
    Check {
        name: "acquire::one_winner_among_three",
        shows: "three clients racing command by command: one wins",
        run: acquire_race,
    },
    Check {
        name: "acquire::no_lock_without_ttl_after_a_crash",
        shows: "a crash at any point leaves no immortal lock",
        run: acquire_crash,
    },
    Check {
        name: "acquire::a_crashed_holder_frees_the_lock",
        shows: "the crashed-holder scenario",
        run: acquire_crashed_holder,
    },
    Check {
        name: "acquire::explored",
        shows: "histories drawn from seeds, with clients stepping in: acquire does what its model says",
        run: |c| explore::check(c.check, c.lock, Exercise::Acquire),
    },
    Check {
        name: "release::releases_its_own_lock",
        shows: "release deletes the caller's own lock",
        run: release_own,
    },
    Check {
        name: "release::leaves_another_holders_lock",
        shows: "release leaves another client's lock alone",
        run: release_other,
    },
    Check {
        name: "release::never_deletes_a_lock_that_changed_hands",
        shows: "the lock changes hands at any point: release spares it",
        run: release_probe,
    },
    Check {
        name: "release::slow_job",
        shows: "the slow-job scenario: A releases after its lock expired",
        run: release_slow_job,
    },
    Check {
        name: "release::explored",
        shows: "histories drawn from seeds, with clients stepping in: release does what its model says",
        run: |c| explore::check(c.check, c.lock, Exercise::Release),
    },
    Check {
        name: "fencing::grants_a_token",
        shows: "a free lock comes with the next fencing token",
        run: |c| takes_a_free_lock(c, Taker::Fenced(c.lock.acquire_fenced)),
    },
    Check {
        name: "fencing::denied_while_held",
        shows: "a held lock gives no token and stays as it is",
        run: |c| refuses_a_held_lock(c, Taker::Fenced(c.lock.acquire_fenced)),
    },
    Check {
        name: "fencing::sets_the_ttl_in_milliseconds",
        shows: "a 1.5 s TTL becomes a 1.5 s expiry",
        run: |c| sets_the_ttl_in_milliseconds(c, Taker::Fenced(c.lock.acquire_fenced)),
    },
    Check {
        name: "fencing::tokens_grow_with_every_grant",
        shows: "grant after grant, the token grows",
        run: fencing_grow,
    },
    Check {
        name: "fencing::lock_and_token_in_one_step",
        shows: "the lock changes hands at any point: the newest grant has the largest token",
        run: fencing_probe,
    },
    Check {
        name: "fencing::gc_pause_fenced",
        shows: "the GC-pause scenario with your fenced acquire",
        run: |c| scenario_check(c, "gc-pause-fenced", only_fencing(c.lock)),
    },
    Check {
        name: "fencing::explored",
        shows: "histories drawn from seeds, counters near 9, 99 and 2^53: acquire_fenced does what its model says",
        run: |c| explore::check(c.check, c.lock, Exercise::Fencing),
    },
    Check {
        name: "storage::accepts_newer_and_equal_tokens",
        shows: "33, 33 again, then 34: all accepted",
        run: storage_accepts,
    },
    Check {
        name: "storage::rejects_an_older_token",
        shows: "34, then 33: refused",
        run: storage_rejects,
    },
    Check {
        name: "storage::remembers_the_highest_token",
        shows: "the row's fence field follows the highest token",
        run: storage_remembers,
    },
    Check {
        name: "storage::fences_reads",
        shows: "a read with 34 fences off 33",
        run: storage_reads,
    },
    Check {
        name: "storage::checks_and_writes_in_one_step",
        shows: "a newer write lands at any point: the stale one never overwrites it",
        run: storage_probe,
    },
    Check {
        name: "storage::fenced_reads",
        shows: "the fenced-reads scenario with your storage",
        run: |c| scenario_check(c, "fenced-reads", only_storage(c.lock)),
    },
    Check {
        name: "storage::long_pause_fenced",
        shows: "the 40 s pause with your storage",
        run: |c| scenario_check(c, "long-pause-fenced", only_storage(c.lock)),
    },
    Check {
        name: "storage::explored",
        shows: "histories drawn from seeds, rows missing or partial, tokens across 9 → 10: the storage does what its model says",
        run: |c| explore::check(c.check, c.lock, Exercise::Storage),
    },
    Check {
        name: "scenarios::normal_run",
        shows: "three jobs, counter 3",
        run: |c| scenario_check(c, "normal-run", *c.lock),
    },
    Check {
        name: "scenarios::race",
        shows: "three clients at the same instant",
        run: |c| scenario_check(c, "race", *c.lock),
    },
    Check {
        name: "scenarios::gc_pause",
        shows: "A freezes past its TTL; no fencing",
        run: |c| scenario_check(c, "gc-pause", *c.lock),
    },
    Check {
        name: "scenarios::gc_pause_fenced",
        shows: "the same pause with fencing: A's write rejected",
        run: |c| scenario_check(c, "gc-pause-fenced", *c.lock),
    },
    Check {
        name: "scenarios::fenced_reads",
        shows: "B's fenced read fences A off",
        run: |c| scenario_check(c, "fenced-reads", *c.lock),
    },
    Check {
        name: "scenarios::slow_job",
        shows: "a 12 s job over a 10 s TTL",
        run: |c| scenario_check(c, "slow-job", *c.lock),
    },
    Check {
        name: "scenarios::long_pause",
        shows: "a 40 s pause over a 30 s TTL",
        run: |c| scenario_check(c, "long-pause", *c.lock),
    },
    Check {
        name: "scenarios::long_pause_fenced",
        shows: "the 40 s pause with fencing",
        run: |c| scenario_check(c, "long-pause-fenced", *c.lock),
    },
    Check {
        name: "scenarios::crashed_holder",
        shows: "the holder crashes; its lock frees itself",
        run: |c| scenario_check(c, "crashed-holder", *c.lock),
    },
];

/// The check called `name`.
pub fn named(name: &str) -> Option<&'static Check> {
    CHECKS.iter().find(|c| c.name == name)
}

// ---------------------------------------------------------------- helpers

/// The lock under test for one exercise: its functions for that exercise,
/// the reference for the rest.
fn only_acquire(lock: &Lock) -> Lock {
    Lock {
        name: lock.name,
        acquire: lock.acquire,
        ..REFERENCE
    }
}
fn only_release(lock: &Lock) -> Lock {
    Lock {
        name: lock.name,
        release: lock.release,
        ..REFERENCE
    }
}
fn only_fencing(lock: &Lock) -> Lock {
    Lock {
        name: lock.name,
        acquire_fenced: lock.acquire_fenced,
        ..REFERENCE
    }
}
fn only_storage(lock: &Lock) -> Lock {
    Lock {
        name: lock.name,
        fenced_write: lock.fenced_write,
        fenced_read: lock.fenced_read,
        ..REFERENCE
    }
}

/// A world with one client wire, for direct calls.
struct Bench {
    world: SharedWorld,
    wire: Option<Wire>,
}

impl Bench {
    fn open() -> Result<Bench, GradeError> {
        let world = World::open()?.shared();
        let wire = Some(Wire::open(&world)?);
        Ok(Bench { world, wire })
    }

    fn world(&self) -> std::sync::MutexGuard<'_, World> {
        enter(&self.world)
    }

    /// Calls the lock; `Err` is the verdict when its code failed.
    fn call<T: Send + 'static>(
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

/// The verdict for a broken rule, with the call's trace.
fn broken(ctx: &Ctx<'_>, function: &str, violation: Violation, steps: &[Step]) -> Verdict {
    Verdict::Fail(Box::new(Report::broken(
        ctx.check,
        ctx.lock.name,
        violation,
        vec![trace("A", function, steps)],
    )))
}

/// Turns `Err(verdict)` into an early return of that verdict.
macro_rules! called {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(verdict) => return Ok(verdict),
        }
    };
}

/// B takes the lock with the reference acquire, as a well-behaved client.
fn b_holds(world: &mut World) -> Result<(), GradeError> {
    let lock = world.keys.lock.clone();
    reference::acquire::acquire(world.con(), &lock, TOKEN_B, TTL)?;
    world.settle()
}

/// A takes the lock with the reference acquire.
fn a_holds(world: &mut World) -> Result<(), GradeError> {
    let lock = world.keys.lock.clone();
    reference::acquire::acquire(world.con(), &lock, TOKEN_A, TTL)?;
    world.settle()
}

/// A takes the lock with the reference fenced acquire (token 33).
fn a_holds_fenced(world: &mut World) -> Result<(), GradeError> {
    let keys = world.keys.clone();
    reference::fencing::acquire_fenced(world.con(), &keys.lock, &keys.fence, TOKEN_A, TTL)?;
    world.settle()
}

fn nothing(_: &mut World) -> Result<(), GradeError> {
    Ok(())
}

/// The TTL the lock key got, compared with the one asked for.
fn ttl_violation(
    world: &mut World,
    asked: Duration,
    function: &str,
) -> Result<Option<Violation>, GradeError> {
    let now = world.now_ms();
    let asked_ms = asked.as_millis() as u64;
    let left_ms = match world.lock_expiry()? {
        // A TTL that had run out by the look reads as 0; the clock rounds
        // every other one up to its resolution.
        Expiry::At(at) => (at - now).max(RESOLUTION_MS),
        // Both callers look right after a grant: a key already gone was set
        // with a TTL shorter than the clock's resolution (milliseconds asked
        // as seconds, say), and reads as one that expires within it, the
        // same words whichever way the race with the look went.
        Expiry::Missing => RESOLUTION_MS,
        Expiry::Never => {
            return Ok(Some(Violation::at(
                Property::LockHasTtl,
                now,
                format!("after {function}, the lock key has no TTL"),
            )));
        }
    };
    Ok((left_ms != asked_ms).then(|| {
        Violation::at(
            Property::LockHasTtl,
            now,
            format!(
                "{function} was asked for a TTL of {asked_ms} ms, and the lock key expires after \
                 {left_ms} ms"
            ),
        )
    }))
}

// ---------------------------------------------------------------- acquire

/// The function under test in the checks that take a lock: `acquire` or
/// `acquire_fenced`. Both must take a free lock, leave a held one alone and
/// set the TTL asked for; only the fenced one also hands out a token.
#[derive(Clone, Copy)]
enum Taker {
    Plain(crate::lock::AcquireFn),
    Fenced(crate::lock::AcquireFencedFn),
}

/// A grant: `Some(None)` from `acquire`, `Some(Some(token))` from
/// `acquire_fenced`, `None` when refused.
type Grant = Option<Option<u64>>;

impl Taker {
    fn name(self) -> &'static str {
        match self {
            Taker::Plain(_) => "acquire",
            Taker::Fenced(_) => "acquire_fenced",
        }
    }

    /// What the function returns when it refuses, as a learner writes it.
    fn refusal(self) -> &'static str {
        match self {
            Taker::Plain(_) => "false",
            Taker::Fenced(_) => "None",
        }
    }

    /// What it returned when it granted, as a learner reads it.
    fn granted(self, grant: Grant) -> String {
        match grant.flatten() {
            Some(t) => format!("token {t}"),
            None => "true".into(),
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

fn takes_a_free_lock(ctx: &Ctx<'_>, taker: Taker) -> Result<Verdict, GradeError> {
    let mut bench = Bench::open()?;
    let (grant, steps) = called!(taker.take(&mut bench, ctx, TTL));
    let value = bench.world().lock_value()?;
    let function = taker.name();
    let what = match (grant, value.as_deref()) {
        (None, _) => Some((
            Property::AcquireTakesFreeLock,
            format!("{function} returned {} on a free lock", taker.refusal()),
        )),
        (Some(_), None) => Some((
            Property::AcquireTakesFreeLock,
            format!(
                "{function} returned {}, but the lock key does not exist",
                taker.granted(grant)
            ),
        )),
        (Some(_), Some(other)) if other != TOKEN_A => Some((
            Property::AcquireTakesFreeLock,
            format!(
                "{function} returned {}, but the lock key holds {other:?} instead of the token {TOKEN_A:?}",
                taker.granted(grant)
            ),
        )),
        (Some(Some(t)), _) if t <= FIRST_FENCE_COUNTER => Some((
            Property::TokensGrow,
            format!(
                "the fence counter stood at {FIRST_FENCE_COUNTER}, and the grant came with token {t}"
            ),
        )),
        _ => None,
    };
    if let Some((property, what)) = what {
        return Ok(broken(
            ctx,
            function,
            Violation::at(property, 0, what),
            &steps,
        ));
    }
    Ok(ttl_violation(&mut bench.world(), TTL, function)?
        .map_or(Verdict::Pass, |v| broken(ctx, function, v, &steps)))
}

fn refuses_a_held_lock(ctx: &Ctx<'_>, taker: Taker) -> Result<Verdict, GradeError> {
    let mut bench = Bench::open()?;
    b_holds(&mut bench.world())?;
    bench.world().advance_by(3000)?;
    let before = bench.world().lock_expiry()?;
    let (grant, steps) = called!(taker.take(&mut bench, ctx, TTL));
    let value = bench.world().lock_value()?;
    let after = bench.world().lock_expiry()?;
    let now = bench.world().now_ms();
    let function = taker.name();
    let what = if grant.is_some() {
        Some((
            Property::AcquireRespectsHolder,
            format!(
                "B holds the lock, and A's {function} returned {}",
                taker.granted(grant)
            ),
        ))
    } else if value.as_deref() != Some(TOKEN_B) {
        Some((
            Property::AcquireRespectsHolder,
            format!("B holds the lock, and after A's {function} the key holds {value:?}"),
        ))
    } else if after != before {
        Some((
            Property::AcquireLeavesHolderTtl,
            format!(
                "B holds the lock, and A's refused {function} reset its TTL: a crashed holder's lock would \
                 never expire while others keep trying"
            ),
        ))
    } else {
        None
    };
    Ok(what.map_or(Verdict::Pass, |(property, what)| {
        broken(ctx, function, Violation::at(property, now, what), &steps)
    }))
}

fn sets_the_ttl_in_milliseconds(ctx: &Ctx<'_>, taker: Taker) -> Result<Verdict, GradeError> {
    let mut bench = Bench::open()?;
    let (grant, steps) = called!(taker.take(&mut bench, ctx, ODD_TTL));
    let function = taker.name();
    if grant.is_none() {
        let what = format!("{function} returned {} on a free lock", taker.refusal());
        return Ok(broken(
            ctx,
            function,
            Violation::at(Property::AcquireTakesFreeLock, 0, what),
            &steps,
        ));
    }
    Ok(ttl_violation(&mut bench.world(), ODD_TTL, function)?
        .map_or(Verdict::Pass, |v| broken(ctx, function, v, &steps)))
}

fn acquire_race(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    scenario_check(ctx, "race", only_acquire(ctx.lock))
}

fn acquire_crashed_holder(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    scenario_check(ctx, "crashed-holder", only_acquire(ctx.lock))
}

fn acquire_crash(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let acquire = ctx.lock.acquire;
    Probe {
        check: ctx.check,
        lock: ctx.lock.name,
        function: "acquire",
        setup: nothing,
        call: Box::new(move |world: &World| {
            let key = world.keys.lock.clone();
            Box::new(move |w: &mut Wire| acquire(w, &key, TOKEN_A, TTL))
        }),
        intervention: || Box::new(|_| Ok(Fired::Crash("here A crashed: it sends nothing more".into()))),
        judge: |a: Attempt<'_, bool>| {
            let now = a.world.now_ms();
            Ok(match a.world.lock_expiry()? {
                Expiry::Never => Some(Violation::at(
                    Property::NoImmortalLock,
                    now,
                    "A crashed, and the lock key it left behind has no TTL: nobody will ever get the lock again",
                )),
                _ => None,
            })
        },
    }
    .run()
}

// ---------------------------------------------------------------- release

fn release_own(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let mut bench = Bench::open()?;
    a_holds(&mut bench.world())?;
    let (key, release) = (bench.world().keys.lock.clone(), ctx.lock.release);
    let (deleted, steps) = called!(bench.call(ctx, "release", move |w| release(w, &key, TOKEN_A)));
    let value = bench.world().lock_value()?;
    let violation = if value.is_some() {
        Some(Violation::at(
            Property::ReleaseFreesOwnLock,
            0,
            "A released its own lock, and the key is still there",
        ))
    } else if !deleted {
        Some(Violation::at(
            Property::ReleaseTellsTruth,
            0,
            "A's release deleted its lock but returned false",
        ))
    } else {
        None
    };
    Ok(violation.map_or(Verdict::Pass, |v| broken(ctx, "release", v, &steps)))
}

fn release_other(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let mut bench = Bench::open()?;
    b_holds(&mut bench.world())?;
    let (key, release) = (bench.world().keys.lock.clone(), ctx.lock.release);
    let (deleted, steps) = called!(bench.call(ctx, "release", move |w| release(w, &key, TOKEN_A)));
    let value = bench.world().lock_value()?;
    let violation = if value.as_deref() != Some(TOKEN_B) {
        Some(Violation::at(
            Property::ReleaseSparesOthers,
            0,
            "B holds the lock, and A's release deleted it",
        ))
    } else if deleted {
        Some(Violation::at(
            Property::ReleaseTellsTruth,
            0,
            "A's release returned true, but the lock was B's and is still there",
        ))
    } else {
        None
    };
    Ok(violation.map_or(Verdict::Pass, |v| broken(ctx, "release", v, &steps)))
}

/// The lock's expiry comes and B takes the lock, right now.
fn expire_and_let_b_in(world: &mut World) -> Result<String, GradeError> {
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

fn release_probe(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
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
            let now = a.world.now_ms();
            Ok(
                (a.world.lock_value()?.as_deref() != Some(TOKEN_B)).then(|| {
                    Violation::at(
                        Property::ReleaseSparesOthers,
                        now,
                        "A's release deleted B's lock",
                    )
                }),
            )
        },
    }
    .run()
}

fn release_slow_job(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    scenario_check(ctx, "slow-job", only_release(ctx.lock))
}

// ---------------------------------------------------------------- fencing

fn fencing_grow(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let mut bench = Bench::open()?;
    let acquire = ctx.lock.acquire_fenced;
    let mut last: Option<u64> = None;
    // Four grants: the first on a free lock, the others each after the
    // previous holder's lock expired.
    for (round, token) in ["token-1", "token-2", "token-3", "token-4"]
        .into_iter()
        .enumerate()
    {
        let keys = bench.world().keys.clone();
        let (granted, steps) = called!(bench.call(ctx, "acquire_fenced", move |w| acquire(
            w,
            &keys.lock,
            &keys.fence,
            token,
            TTL
        )));
        let now = bench.world().now_ms();
        match (granted, last) {
            (None, _) => {
                let v = Violation::at(
                    Property::AcquireTakesFreeLock,
                    now,
                    format!("grant {} of a free lock returned None", round + 1),
                );
                return Ok(broken(ctx, "acquire_fenced", v, &steps));
            }
            (Some(t), Some(before)) if t <= before => {
                let what = format!(
                    "grant {} came with token {t}, after a grant with token {before}",
                    round + 1
                );
                return Ok(broken(
                    ctx,
                    "acquire_fenced",
                    Violation::at(Property::TokensGrow, now, what),
                    &steps,
                ));
            }
            (Some(t), _) => last = Some(t),
        }
        bench.world().advance_by(TTL.as_millis() as u64)?;
    }
    Ok(Verdict::Pass)
}

fn fencing_probe(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let acquire = ctx.lock.acquire_fenced;
    let probe = |intervention: fn() -> crate::wire::Action| Probe {
        check: ctx.check,
        lock: ctx.lock.name,
        function: "acquire_fenced",
        setup: nothing,
        call: Box::new(move |world: &World| {
            let keys = world.keys.clone();
            Box::new(move |w: &mut Wire| acquire(w, &keys.lock, &keys.fence, TOKEN_A, TTL))
        }),
        intervention,
        judge: judge_fence_order,
    };
    // B gets in and keeps the lock; or B gets in and its lock expires too, so
    // that A may still find the lock free afterwards.
    let b_keeps = || -> crate::wire::Action {
        Box::new(|world| Ok(Fired::Continue(expire_and_let_b_in_fenced(world, false)?)))
    };
    let b_expires = || -> crate::wire::Action {
        Box::new(|world| Ok(Fired::Continue(expire_and_let_b_in_fenced(world, true)?)))
    };
    match probe(b_keeps).run()? {
        Verdict::Pass => probe(b_expires).run(),
        other => Ok(other),
    }
}

/// A's lock (if any) expires, B takes the lock with the reference fenced
/// acquire; and, if `then_expires`, B's lock expires too.
fn expire_and_let_b_in_fenced(world: &mut World, then_expires: bool) -> Result<String, GradeError> {
    let held_by_a = world.lock_value()?.as_deref() == Some(TOKEN_A);
    if let Expiry::At(at) = world.lock_expiry()? {
        world.advance_to(at)?;
    }
    let keys = world.keys.clone();
    let token =
        reference::fencing::acquire_fenced(world.con(), &keys.lock, &keys.fence, TOKEN_B, TTL)?;
    world.settle()?;
    if let Some(t) = token {
        world.memo.insert(B_TOKEN, t);
    }
    let mut what = if held_by_a {
        "here A's lock expired, and B".to_string()
    } else {
        "here B".to_string()
    };
    what.push_str(&format!(
        " took the lock with token {}",
        token.map_or("?".into(), |t| t.to_string())
    ));
    if then_expires {
        world.advance_by(TTL.as_millis() as u64)?;
        what.push_str(", and B's lock expired in turn");
    }
    Ok(what)
}

/// Where the fencing probe notes B's token.
const B_TOKEN: &str = "B's fencing token";

/// Whoever holds the lock last must hold the largest token: if A's key is
/// there at the end, A was granted after B; if not, A's grant (if it got one)
/// came first and must be smaller than B's.
fn judge_fence_order(a: Attempt<'_, Option<u64>>) -> Result<Option<Violation>, GradeError> {
    let (Some(Some(a_token)), Some(&b_token)) = (a.value.copied(), a.world.memo.get(B_TOKEN))
    else {
        return Ok(None);
    };
    let now = a.world.now_ms();
    let a_holds = a.world.lock_value()?.as_deref() == Some(TOKEN_A);
    if a_holds && a_token < b_token {
        let what = format!(
            "A holds the lock now with token {a_token}, but B was granted it before, with the larger token \
             {b_token}: the storage will refuse the holder and accept B's stale requests"
        );
        return Ok(Some(Violation::at(Property::TokensGrow, now, what)));
    }
    if !a_holds && a_token > b_token {
        let what = format!(
            "A's grant came before B's, yet A got token {a_token} and B {b_token}: A's stale requests \
             will be accepted and B's refused"
        );
        return Ok(Some(Violation::at(Property::TokensGrow, now, what)));
    }
    Ok(None)
}

// ---------------------------------------------------------------- storage

/// Writes through the learner's storage, one after the other, and checks
/// each answer: `(token, value, should_be_accepted)`.
fn storage_sequence(ctx: &Ctx<'_>, writes: &[(u64, i64, bool)]) -> Result<Verdict, GradeError> {
    let mut bench = Bench::open()?;
    let mut highest = 0;
    for &(token, value, expect) in writes {
        let (row, write) = (bench.world().keys.row.clone(), ctx.lock.fenced_write);
        let (accepted, steps) =
            called!(bench.call(ctx, "fenced_write", move |w| write(w, &row, token, value)));
        if accepted != expect {
            let (property, what) = if expect {
                (
                    Property::EqualTokensAccepted,
                    format!("after token {highest}, a write with token {token} was refused"),
                )
            } else {
                (
                    Property::StaleRequestsRejected,
                    format!(
                        "after token {highest}, a write with the older token {token} was accepted"
                    ),
                )
            };
            return Ok(broken(
                ctx,
                "fenced_write",
                Violation::anytime(property, what),
                &steps,
            ));
        }
        highest = highest.max(token);
        let row = bench.world().row()?;
        if accepted && row.value != value {
            let what = format!(
                "the write with token {token} was accepted, but the row's value is {} instead of {value}",
                row.value
            );
            return Ok(broken(
                ctx,
                "fenced_write",
                Violation::anytime(Property::EqualTokensAccepted, what),
                &steps,
            ));
        }
        if row.fence != highest {
            let what = format!(
                "after a write with token {token}, the row's `fence` field holds {} instead of {highest}",
                row.fence
            );
            return Ok(broken(
                ctx,
                "fenced_write",
                Violation::anytime(Property::StorageRemembersHighest, what),
                &steps,
            ));
        }
    }
    Ok(Verdict::Pass)
}

fn storage_accepts(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    storage_sequence(ctx, &[(33, 1, true), (33, 2, true), (34, 3, true)])
}

fn storage_rejects(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    storage_sequence(ctx, &[(34, 1, true), (33, 2, false)])
}

fn storage_remembers(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    storage_sequence(
        ctx,
        &[(34, 1, true), (35, 2, true), (33, 3, false), (34, 4, false)],
    )
}

fn storage_reads(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let mut bench = Bench::open()?;
    let (row, read, write) = (
        bench.world().keys.row.clone(),
        ctx.lock.fenced_read,
        ctx.lock.fenced_write,
    );
    let r = row.clone();
    let (first, steps) = called!(bench.call(ctx, "fenced_read", move |w| read(w, &r, 34)));
    if first != Some(0) {
        let what =
            format!("a read with token 34 of a fresh row returned {first:?} instead of Some(0)");
        return Ok(broken(
            ctx,
            "fenced_read",
            Violation::anytime(Property::EqualTokensAccepted, what),
            &steps,
        ));
    }
    let fence = bench.world().row()?.fence;
    if fence != 34 {
        let what = format!("after a read with token 34, the row's `fence` field holds {fence}");
        return Ok(broken(
            ctx,
            "fenced_read",
            Violation::anytime(Property::StorageRemembersHighest, what),
            &steps,
        ));
    }
    let r = row.clone();
    let (stale, steps) = called!(bench.call(ctx, "fenced_read", move |w| read(w, &r, 33)));
    if stale.is_some() {
        let what = "after a read with token 34, a read with token 33 was answered".to_string();
        return Ok(broken(
            ctx,
            "fenced_read",
            Violation::anytime(Property::StaleRequestsRejected, what),
            &steps,
        ));
    }
    let fence = bench.world().row()?.fence;
    if fence != 34 {
        let what = format!(
            "after a read with token 34, a refused read with token 33 left the row's `fence` field at {fence}"
        );
        return Ok(broken(
            ctx,
            "fenced_read",
            Violation::anytime(Property::StorageRemembersHighest, what),
            &steps,
        ));
    }
    let (accepted, steps) =
        called!(bench.call(ctx, "fenced_write", move |w| write(w, &row, 33, 1)));
    if accepted {
        let what = "after a read with token 34, a write with token 33 was accepted".to_string();
        return Ok(broken(
            ctx,
            "fenced_write",
            Violation::anytime(Property::StaleRequestsRejected, what),
            &steps,
        ));
    }
    Ok(Verdict::Pass)
}

/// B's value in the storage probe.
const B_VALUE: i64 = 7;

fn storage_probe(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let write = ctx.lock.fenced_write;
    Probe {
        check: ctx.check,
        lock: ctx.lock.name,
        function: "fenced_write",
        setup: a_holds_fenced,
        call: Box::new(move |world: &World| {
            let row = world.keys.row.clone();
            Box::new(move |w: &mut Wire| write(w, &row, 33, 1))
        }),
        intervention: || {
            Box::new(|world| {
                let row = world.keys.row.clone();
                reference::storage::fenced_write(world.con(), &row, 34, B_VALUE)?;
                Ok(Fired::Continue(format!("here B, the new holder, wrote {B_VALUE} with token 34")))
            })
        },
        judge: |a: Attempt<'_, bool>| {
            let row = a.world.row()?;
            let now = a.world.now_ms();
            Ok((row.value != B_VALUE || row.fence != 34).then(|| {
                Violation::at(
                    Property::StaleRequestsRejected,
                    now,
                    format!(
                        "A's write with token 33 landed after the storage had accepted token 34: the row now holds value {} and fence {}",
                        row.value, row.fence
                    ),
                )
            }))
        },
    }
    .run()
}

// ---------------------------------------------------------------- scenarios

/// Plays the scenario with `lock`, then holds the run to the rules and to the
/// reference lock's run.
fn scenario_check(ctx: &Ctx<'_>, name: &str, lock: Lock) -> Result<Verdict, GradeError> {
    let Some(scenario) = scenario::named(name) else {
        unreachable!(
            "check {} names the scenario {name}, which the catalogue lacks",
            ctx.check
        )
    };
    let mine = run::run(&scenario, &lock)?;
    let verdict = judge_scenario(ctx, &scenario, lock, &mine)?;
    // The player steps through a failed run second by second (`cargo course open`).
    let failed = matches!(verdict, Verdict::Fail(_));
    crate::recording::keep(ctx.check, failed.then_some(&mine.timeline));
    Ok(verdict)
}

/// Holds a played run to the rules, then to the reference lock's run.
fn judge_scenario(
    ctx: &Ctx<'_>,
    scenario: &scenario::Scenario,
    lock: Lock,
    mine: &run::Run,
) -> Result<Verdict, GradeError> {
    if let Some(halt) = &mine.halt {
        return Ok(match &halt.failure {
            Failure::NotStarted { message } => Verdict::NotStarted {
                function: halt.function,
                message: message.clone(),
            },
            failure => {
                let evidence = vec![mine.timeline.render(Some(halt.t))];
                Verdict::Fail(Box::new(Report::failed(
                    ctx.check,
                    lock.name,
                    halt.function,
                    failure.clone(),
                    evidence,
                )))
            }
        });
    }
    if let Some(v) = mine.violations.first() {
        let evidence = vec![mine.timeline.render(v.at_ms.map(|ms| ms / 1000))];
        return Ok(Verdict::Fail(Box::new(Report::broken(
            ctx.check,
            lock.name,
            v.clone(),
            evidence,
        ))));
    }
    let expected = run::run(scenario, &REFERENCE)?;
    let (ours, theirs) = (
        mine.timeline.with_tokens_renumbered(),
        expected.timeline.with_tokens_renumbered(),
    );
    let differs = ours
        .seconds
        .iter()
        .zip(&theirs.seconds)
        .find(|(a, b)| a != b)
        .map(|(a, _)| a.t)
        .or_else(|| {
            (ours.seconds.len() != theirs.seconds.len())
                .then(|| ours.seconds.len().min(theirs.seconds.len()) as u64)
        });
    if let Some(t) = differs {
        let what = format!("from t = {t} s on, your run differs from a correct lock's run");
        let evidence = vec![
            format!("Your run:\n{}", mine.timeline.render(Some(t))),
            format!(
                "A correct lock's run:\n{}",
                expected.timeline.render(Some(t))
            ),
        ];
        let v = Violation::at(Property::SameAsReference, t * 1000, what);
        return Ok(Verdict::Fail(Box::new(Report::broken(
            ctx.check, lock.name, v, evidence,
        ))));
    }
    Ok(Verdict::Pass)
}
