//! The `keeper` exercise's checks: the lease keeper renews in time, and stops the job
//! before it writes again once a renewal fails.
//!
//! The keeper is called at every tick of the grader's virtual clock, the
//! way a timer would call it, with the time since A took the lock; right
//! after each tick, A's job writes unless the keeper has set `lost`. One
//! check lets the job run for four TTLs untouched: the lock must never fall
//! below two thirds of its TTL. The other freezes A (a pause, as a GC or a
//! stopped VM would) at every tick of the first two renewal periods in
//! turn, for longer than the TTL: A's lock expires, B takes it and writes,
//! and when A wakes up its keeper must stop the job before its next write,
//! and for good, even once B has released the lock. A third makes every
//! command of a due renewal fail in turn: the keeper must set `lost`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::Ctx;
use super::bench::{Bench, TOKEN_A, TOKEN_B};
use super::scenarios::scenario_check;
use crate::clock::Expiry;
use crate::error::GradeError;
use crate::judge::keeper::{self as judge, HealthyTick};
use crate::judge::{Call, Held};
use crate::lock::Lock;
use crate::probe::{Attempt, Probe, StepIn};
use crate::reference;
use crate::reference::LOCK as REFERENCE;
use crate::report::{Report, Verdict};
use crate::verdict::{Violation, seconds};
use crate::wire::{Step, Wire};
use crate::world::World;

/// The lease of these checks: 6 s, so a renewal is due every 2 s.
const LEASE: Duration = Duration::from_secs(6);
/// The keeper's tick.
const TICK_MS: u64 = 500;
/// How long the healthy job runs: four leases.
const HEALTHY_RUN_MS: u64 = 4 * 6000;
/// How long A stays frozen after its lock expired.
const AFTER_EXPIRY_MS: u64 = 1000;
/// How long B holds the lock before releasing it.
const B_HOLDS_MS: u64 = 2000;
/// How long A's job goes on after it wakes up.
const AFTER_WAKING_MS: u64 = 2 * 6000;

/// A's lease, its keeper and its job, tick by tick.
struct Lease {
    bench: Bench,
    renewed_at: Duration,
    lost: Arc<AtomicBool>,
    /// When `lost` was first seen set, in virtual ms.
    lost_since: Option<u64>,
    log: Vec<String>,
}

impl Lease {
    /// A world in which A has just taken the lock for [`LEASE`].
    fn open() -> Result<Lease, GradeError> {
        let bench = Bench::open()?;
        {
            let mut world = bench.world();
            let key = world.keys.lock.clone();
            reference::acquire::acquire(world.con(), &key, TOKEN_A, LEASE)?;
            world.settle()?;
        }
        Ok(Lease {
            bench,
            renewed_at: Duration::ZERO,
            lost: Arc::new(AtomicBool::new(false)),
            lost_since: None,
            log: vec![format!(
                "t = 0 s: A took the lock for {}",
                seconds(ms(LEASE))
            )],
        })
    }

    fn now(&self) -> u64 {
        self.bench.world().now_ms()
    }

    fn note(&mut self, line: String) {
        let now = self.now();
        self.log.push(format!("t = {}: {line}", seconds(now)));
    }

    /// Moves to `t_ms` and calls the keeper once.
    fn tick(&mut self, ctx: &Ctx<'_>, t_ms: u64) -> Result<Result<(), Verdict>, GradeError> {
        self.bench.world().advance_to(t_ms)?;
        // The keeper's own, with the reference standing in for the rest (its extend among them).
        let lock = crate::explore::Subject::Keeper.lock_under_test(ctx.lock);
        let (key, keep, renew, lost) = (
            self.bench.world().keys.lock.clone(),
            lock.keep_alive,
            lock.extend,
            Arc::clone(&self.lost),
        );
        let (now, mut renewed_at) = (Duration::from_millis(t_ms), self.renewed_at);
        let called = self.bench.call(ctx, "keep_alive", move |w| {
            keep(w, renew, &key, TOKEN_A, LEASE, now, &mut renewed_at, &lost)?;
            Ok(renewed_at)
        });
        let (renewed_at, steps) = match called {
            Ok(done) => done,
            Err(verdict) => return Ok(Err(verdict)),
        };
        self.renewed_at = renewed_at;
        let sent: Vec<String> = steps
            .iter()
            .filter_map(|s| match s {
                Step::Sent { command, reply } => Some(format!("{command} → {reply}")),
                Step::Intervened(_) => None,
            })
            .collect();
        let lost = self.lost.load(Ordering::SeqCst);
        let newly_lost = lost && self.lost_since.is_none();
        if !sent.is_empty() || newly_lost {
            let mut line = if sent.is_empty() {
                "A's keeper sent nothing".to_string()
            } else {
                format!("A's keeper sent {}", sent.join(", "))
            };
            if newly_lost {
                line.push_str("; it set `lost`");
            }
            self.note(line);
        }
        if newly_lost {
            self.lost_since = Some(t_ms);
        }
        Ok(Ok(()))
    }

    /// Whether A's keeper has set `lost`: right after a tick, A's job writes unless it has.
    fn lost(&self) -> bool {
        self.lost.load(Ordering::SeqCst)
    }

    /// The call the judges look at: A's keeper, now.
    fn call(&self) -> Call<'static> {
        Call::at("A", "keep_alive", self.now())
    }

    /// Who holds the lock now, for the judges.
    fn held(&self) -> Result<Held<'static>, GradeError> {
        Ok(match self.bench.world().lock_value()?.as_deref() {
            Some(TOKEN_A) => Held::ByCaller,
            Some(TOKEN_B) => Held::By("B"),
            Some(_) => Held::By("someone else"),
            None => Held::Nobody,
        })
    }

    /// The verdict for a broken rule, with the log.
    fn broken(&mut self, ctx: &Ctx<'_>, violation: Violation) -> Verdict {
        let now = violation.at_ms.unwrap_or_else(|| self.now());
        self.log
            .push(format!("t = {}: ✗ {}", seconds(now), violation.what));
        let evidence = format!(
            "What happened (a tick every {}; after each, A's job writes unless `lost` is set; quiet ticks left out):\n  {}",
            seconds(TICK_MS),
            self.log.join("\n  ")
        );
        Verdict::Fail(Box::new(Report::broken(
            ctx.check,
            ctx.lock.name,
            violation,
            vec![evidence],
        )))
    }
}

fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

/// Turns a tick's `Err(verdict)` into an early return of that verdict.
macro_rules! ticked {
    ($e:expr) => {
        if let Err(verdict) = $e? {
            return Ok(verdict);
        }
    };
}

/// Four leases of a healthy job: after every tick the lock is A's, with at
/// least two thirds of its TTL left, and the job goes on.
pub(crate) fn renews_in_time(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let mut lease = Lease::open()?;
    let mut expiry = lease.bench.world().lock_expiry()?;
    for t in (TICK_MS..=HEALTHY_RUN_MS).step_by(TICK_MS as usize) {
        ticked!(lease.tick(ctx, t));
        let now_expiry = lease.bench.world().lock_expiry()?;
        if now_expiry != expiry {
            if let Expiry::At(at) = now_expiry {
                lease.note(format!("the lock now expires at t = {}", seconds(at)));
            }
            expiry = now_expiry;
        }
        let tick = HealthyTick {
            at_ms: t,
            held: lease.held()?,
            expiry: now_expiry,
            renewed_at_ms: ms(lease.renewed_at),
            lost: lease.lost(),
        };
        if let Some(v) = judge::renews_in_time(&lease.call(), LEASE, tick) {
            return Ok(lease.broken(ctx, v));
        }
    }
    Ok(Verdict::Pass)
}

/// A freezes at each tick of the first two renewal periods in turn; see the
/// module's story.
pub(crate) fn stops_the_job_when_a_renewal_fails(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    for freeze in (0..=2 * ms(LEASE) / 3).step_by(TICK_MS as usize) {
        if let Some(verdict) = frozen_at(ctx, freeze)? {
            return Ok(verdict);
        }
    }
    Ok(Verdict::Pass)
}

/// One run: A's ticks go on up to `freeze`, then stop until A's lock has
/// expired, B has taken it and written, and [`AFTER_EXPIRY_MS`] more.
fn frozen_at(ctx: &Ctx<'_>, freeze: u64) -> Result<Option<Verdict>, GradeError> {
    let mut lease = Lease::open()?;
    for t in (TICK_MS..=freeze).step_by(TICK_MS as usize) {
        if let Err(verdict) = lease.tick(ctx, t)? {
            return Ok(Some(verdict));
        }
    }
    lease.note("A froze: no tick, no write".into());
    let b_since = {
        let mut world = lease.bench.world();
        if let Expiry::At(at) = world.lock_expiry()? {
            world.advance_to(at)?;
        }
        let key = world.keys.lock.clone();
        reference::acquire::acquire(world.con(), &key, TOKEN_B, LEASE)?;
        world.settle()?;
        world.now_ms()
    };
    lease.note(format!(
        "A's lock expired; B took it for {} and wrote",
        seconds(ms(LEASE))
    ));
    let wake = b_since + AFTER_EXPIRY_MS;
    let mut b_released = false;
    for t in (wake..=wake + AFTER_WAKING_MS).step_by(TICK_MS as usize) {
        if !b_released && t >= b_since + B_HOLDS_MS {
            let mut world = lease.bench.world();
            world.advance_to(t)?;
            let key = world.keys.lock.clone();
            reference::release::release(world.con(), &key, TOKEN_B)?;
            world.settle()?;
            drop(world);
            b_released = true;
            lease.note("B's job is done: B released the lock".into());
        }
        if t == wake {
            lease.bench.world().advance_to(t)?;
            lease.note("A woke up".into());
        }
        if let Err(verdict) = lease.tick(ctx, t)? {
            return Ok(Some(verdict));
        }
        let (call, lost) = (lease.call(), lease.lost());
        // The job writes unless `lost` is set: under whoever holds the lock then.
        let wrote_under = if lost { None } else { Some(lease.held()?) };
        let violation = judge::stops_for_good(&call, "B", lease.lost_since, lost)
            .or_else(|| judge::stops_job_after_pause(&call, wrote_under));
        if let Some(v) = violation {
            return Ok(Some(lease.broken(ctx, v)));
        }
    }
    Ok(None)
}

/// The book's renewal-pause run with the learner's keeper. Keepers may
/// renew at other moments than the reference's, so the run is not compared
/// second by second: no action of A's may come after its lock was gone, and
/// the run must end as the reference's does (A stopped, counter 2).
pub(crate) fn renewal_pause(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let lock = Lock {
        name: ctx.lock.name,
        keep_alive: ctx.lock.keep_alive,
        ..REFERENCE
    };
    let scenario = super::scenarios::named(ctx, "renewal-pause")?;
    let mine = crate::run::run(&scenario, &lock)?;
    if mine.halt.is_some() || !mine.violations.is_empty() {
        // Failures and broken rules are told the way every scenario tells them.
        return scenario_check(ctx, "renewal-pause", lock);
    }
    let expected = crate::run::run(&scenario, &REFERENCE)?;
    let violation = judge::stops_job_in_story("A", &mine.timeline)
        .or_else(|| crate::judge::story::ends_as_reference(&mine.timeline, &expected.timeline));
    Ok(violation.map_or(Verdict::Pass, |v| {
        let t = v.at_ms.unwrap_or_default() / 1000;
        let evidence = vec![mine.timeline.render(Some(t))];
        Verdict::Fail(Box::new(Report::broken(
            ctx.check,
            ctx.lock.name,
            v,
            evidence,
        )))
    }))
}

/// What one tick of a keeper left: whether `lost` is set, and what it returned.
pub(crate) struct Tick {
    lost: bool,
    returned: String,
}

/// A's lock, taken for [`LEASE`] a third of it ago: a renewal is due. Each
/// command of the tick meets each fault in turn; the tick must set `lost`.
pub(crate) fn reports_a_failed_command(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    // The reference's `extend` stands in for the learner's, as in every keeper check.
    let lock = crate::explore::Subject::Keeper.lock_under_test(ctx.lock);
    let (keep_alive, extend) = (lock.keep_alive, lock.extend);
    Probe {
        check: ctx.check,
        lock: ctx.lock.name,
        function: "keep_alive",
        setup: |world: &mut World| {
            let key = world.keys.lock.clone();
            reference::acquire::acquire(world.con(), &key, TOKEN_A, LEASE)?;
            world.settle()?;
            world.advance_to(ms(LEASE / 3))?;
            Ok(())
        },
        call: Box::new(move |world: &World| {
            let (key, now) = (
                world.keys.lock.clone(),
                Duration::from_millis(world.now_ms()),
            );
            Box::new(move |w: &mut Wire| {
                let (lost, mut renewed_at) = (AtomicBool::new(false), Duration::ZERO);
                let returned =
                    keep_alive(w, extend, &key, TOKEN_A, LEASE, now, &mut renewed_at, &lost);
                Ok(Tick {
                    lost: lost.load(Ordering::SeqCst),
                    returned: returned
                        .map_or_else(|e| format!("the error ({e})"), |()| "Ok(())".into()),
                })
            })
        }),
        step_in: StepIn::Faults,
        judge: |a: Attempt<'_, Tick>| {
            let (Some(hit), Some(tick)) = (a.fault, a.value) else {
                return Ok(None);
            };
            let call = Call::at("A", "keep_alive", a.world.now_ms());
            Ok(judge::stops_job(&call, hit, tick.lost, &tick.returned))
        },
    }
    .run()
}
