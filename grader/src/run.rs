//! Playing a scenario against Redis with a given lock.
//!
//! The runner walks virtual time one second at a time. At each second it
//! moves the clock (so Redis expires what has run out), lets each client take
//! its next step through the lock under test, and then looks at Redis to
//! record who really holds the key, the counter and the highest token. Around
//! every call of the lock it checks the rules of [`crate::verdict`]: a release
//! that deleted someone else's key, a grant without the right TTL, a fencing
//! token that did not grow, a stale write the storage let through.
//!
//! Everything happens on one thread, in a fixed order, so a scenario unfolds
//! the same way on every run; only the race at t = 0 runs the clients' calls
//! side by side, and even then their commands take turns.

mod keeper;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::clock::Expiry;
use crate::error::GradeError;
use crate::lock::Lock;
use crate::sandbox::{self, Failure};
use crate::scenario::{Fencing, MAX_SECONDS, Plan, Scenario};
use crate::timeline::{
    Action, ActionKind, ClientSecond, Lane, Message, Outcome, Second, State, Timeline,
};
use crate::verdict::{Property, Violation};
use crate::wire::{Step as WireStep, Turns, Wire};
use crate::world::{SharedWorld, World, enter};

/// A learner function that failed during a scenario, which then stops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Halt {
    /// The second it happened.
    pub t: u64,
    /// The client whose call failed.
    pub client: String,
    /// The function, e.g. `release`.
    pub function: &'static str,
    /// How it failed.
    pub failure: Failure,
}

/// The result of playing a scenario.
#[derive(Clone, Debug)]
pub struct Run {
    /// What happened.
    pub timeline: Timeline,
    /// The rules that were broken, in order.
    pub violations: Vec<Violation>,
    /// The call that failed, if one did (the timeline stops there).
    pub halt: Option<Halt>,
}

/// Where a client is in its job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Acquire,
    Read,
    Write { at: u64 },
    Release,
    Done,
}

struct Client {
    plan: Plan,
    wire: Option<Wire>,
    step: Step,
    crashed: bool,
    believes: bool,
    token: Option<String>,
    fence: Option<u64>,
    read: i64,
    actions: Vec<Action>,
    /// The lease keeper's books: the second of the grant, the last renewal
    /// (since the grant), the flag it sets, and whether the job stopped.
    granted_at: u64,
    renewed_at: Duration,
    lost: Arc<AtomicBool>,
    stopped: bool,
}

impl Client {
    fn name(&self) -> &'static str {
        self.plan.name
    }

    fn act(&mut self, kind: ActionKind, text: impl Into<String>) {
        self.actions.push(Action {
            kind,
            text: text.into(),
            unsafe_: false,
            rejected: false,
        });
    }

    fn act_unsafe(
        &mut self,
        kind: ActionKind,
        text: impl Into<String>,
        is_unsafe: bool,
        rejected: bool,
    ) {
        self.actions.push(Action {
            kind,
            text: text.into(),
            unsafe_: is_unsafe,
            rejected,
        });
    }

    fn finished(&self) -> bool {
        self.crashed || self.step == Step::Done
    }

    fn paused_at(&self, t: u64) -> bool {
        self.plan
            .pause
            .is_some_and(|(from, until)| t > from && t < until)
    }

    fn state(&self, t: u64) -> State {
        if self.crashed {
            State::Crashed
        } else if self.paused_at(t) || self.plan.pause.is_some_and(|(from, _)| t == from) {
            State::Paused
        } else {
            match self.step {
                Step::Done => State::Done,
                Step::Acquire => State::Waiting,
                _ => State::Working,
            }
        }
    }
}

/// Why a scenario stopped early.
enum Stop {
    Halted(Halt),
    Grader(GradeError),
}

impl From<GradeError> for Stop {
    fn from(e: GradeError) -> Stop {
        Stop::Grader(e)
    }
}

struct Runner<'a> {
    scenario: &'a Scenario,
    lock: &'a Lock,
    world: SharedWorld,
    clients: Vec<Client>,
    /// Grants in the order they happened: (client index, fencing token).
    grants: Vec<(usize, Option<u64>)>,
    violations: Vec<Violation>,
    t: u64,
    /// Every command the clients sent, for the book's message diagram.
    messages: Vec<Message>,
}

/// Plays `scenario` with `lock` against a fresh world on the shared Redis.
pub fn run(scenario: &Scenario, lock: &Lock) -> Result<Run, GradeError> {
    let world = World::open()?.shared();
    let mut clients = Vec::new();
    for plan in &scenario.clients {
        clients.push(Client {
            plan: *plan,
            wire: Some(Wire::open(&world)?),
            step: Step::Acquire,
            crashed: false,
            believes: false,
            token: None,
            fence: None,
            read: 0,
            actions: Vec::new(),
            granted_at: 0,
            renewed_at: Duration::ZERO,
            lost: Arc::new(AtomicBool::new(false)),
            stopped: false,
        });
    }
    let mut runner = Runner {
        scenario,
        lock,
        world,
        clients,
        grants: Vec::new(),
        violations: Vec::new(),
        t: 0,
        messages: Vec::new(),
    };
    let mut seconds = Vec::new();
    let mut halt = None;
    loop {
        let t = runner.t;
        let notes = runner.advance()?;
        let stepped = if t == 0 && scenario.race {
            runner.race()
        } else {
            runner.steps()
        };
        match stepped {
            Ok(()) => {}
            Err(Stop::Grader(e)) => return Err(e),
            Err(Stop::Halted(h)) => halt = Some(h),
        }
        seconds.push(runner.observe(notes)?);
        let all_done = runner.clients.iter().all(Client::finished);
        if halt.is_some() || all_done {
            break;
        }
        if t + 1 >= MAX_SECONDS {
            let waiting: Vec<&str> = runner
                .clients
                .iter()
                .filter(|c| !c.finished())
                .map(Client::name)
                .collect();
            runner.violations.push(Violation::at(
                Property::CounterEndsRight,
                t * 1000,
                format!(
                    "after {MAX_SECONDS} s, {} still had not finished",
                    waiting.join(" and ")
                ),
            ));
            break;
        }
        runner.t += 1;
    }
    let timeline = runner.timeline(seconds)?;
    let counter = timeline.outcome.counter;
    if halt.is_none() && counter != scenario.expected_counter {
        runner.violations.push(Violation::anytime(
            Property::CounterEndsRight,
            format!(
                "the counter ended at {counter}; with a correct lock it ends at {}",
                scenario.expected_counter
            ),
        ));
    }
    Ok(Run {
        timeline,
        violations: runner.violations,
        halt,
    })
}

impl Runner<'_> {
    fn ms(&self) -> u64 {
        self.t * 1000
    }

    fn ttl(&self) -> Duration {
        Duration::from_secs(self.scenario.ttl_s)
    }

    /// Moves the clock to this second; returns what Redis did on its own.
    fn advance(&mut self) -> Result<Vec<String>, GradeError> {
        let holder = self.holder()?;
        let expired = enter(&self.world).advance_to(self.ms())?;
        Ok(match (expired, holder) {
            (true, Some(h)) => vec![format!("{}'s lock expired", self.clients[h].name())],
            (true, None) => vec!["the lock expired".into()],
            _ => Vec::new(),
        })
    }

    /// The client whose token is in the lock key: the latest one granted the
    /// lock with that token (two clients share a token only with a broken
    /// token generator).
    fn holder(&self) -> Result<Option<usize>, GradeError> {
        let value = enter(&self.world).lock_value()?;
        Ok(self.holder_of(value.as_deref()))
    }

    fn holder_of(&self, value: Option<&str>) -> Option<usize> {
        let value = value?;
        self.grants
            .iter()
            .rev()
            .map(|(c, _)| *c)
            .find(|&c| self.clients[c].token.as_deref() == Some(value))
            .or_else(|| {
                self.clients
                    .iter()
                    .position(|c| c.token.as_deref() == Some(value))
            })
    }

    fn steps(&mut self) -> Result<(), Stop> {
        for i in 0..self.clients.len() {
            self.step(i)?;
        }
        Ok(())
    }

    /// One client's step at this second, with its pause and crash.
    fn step(&mut self, i: usize) -> Result<(), Stop> {
        let t = self.t;
        let c = &mut self.clients[i];
        if c.finished() || c.paused_at(t) {
            return Ok(());
        }
        if c.plan.crash_at == Some(t) {
            c.crashed = true;
            c.believes = false;
            c.wire = None;
            c.act(ActionKind::Crashed, "crashed");
            return Ok(());
        }
        if c.plan.pause.is_some_and(|(_, until)| until == t) {
            c.act(ActionKind::Resumed, "woke up");
        }
        self.keep(i)?;
        let c = &mut self.clients[i];
        match c.step {
            Step::Acquire => {
                self.ensure_token(i)?;
                let before = self.holder()?;
                let outcome = self.call_acquire(i)?;
                self.judge_acquire(i, before, outcome)?;
            }
            Step::Read => self.read(i)?,
            Step::Write { at } if t >= at => self.write(i)?,
            Step::Write { .. } => {}
            Step::Release => self.release(i)?,
            Step::Done => {}
        }
        let c = &mut self.clients[i];
        if c.plan.pause.is_some_and(|(from, _)| from == t) {
            c.act(ActionKind::Paused, "froze");
        }
        Ok(())
    }

    /// Calls learner code for client `i`; a failure stops the scenario.
    fn call<T, F>(&mut self, i: usize, function: &'static str, f: F) -> Result<T, Stop>
    where
        T: Send + 'static,
        F: FnOnce(&mut Wire) -> redis::RedisResult<T> + Send + 'static,
    {
        let c = &mut self.clients[i];
        let Some(wire) = c.wire.take() else {
            return Err(self.halt(
                i,
                function,
                Failure::Error {
                    message: "the connection was lost".into(),
                },
            ));
        };
        let (wire, outcome) = sandbox::call(wire, f);
        self.record(i, function, wire.as_ref());
        self.clients[i].wire = wire;
        outcome.map_err(|failure| self.halt(i, function, failure))
    }

    fn halt(&mut self, i: usize, function: &'static str, failure: Failure) -> Stop {
        let c = &mut self.clients[i];
        c.act(ActionKind::Failed, format!("{function} failed"));
        Stop::Halted(Halt {
            t: self.t,
            client: c.name().to_string(),
            function,
            failure,
        })
    }

    fn ensure_token(&mut self, i: usize) -> Result<(), Stop> {
        if self.clients[i].token.is_none() {
            let token =
                sandbox::isolated(self.lock.new_token).map_err(|f| self.halt(i, "new_token", f))?;
            self.clients[i].token = Some(token);
        }
        Ok(())
    }

    /// Calls `acquire` (or `acquire_fenced`); returns the grant, if any.
    fn call_acquire(&mut self, i: usize) -> Result<Option<Option<u64>>, Stop> {
        let (keys, token, ttl, lock) = self.acquire_args(i);
        if self.scenario.fencing == Fencing::Off {
            let granted = self.call(i, "acquire", move |w| {
                (lock.acquire)(w, &keys.lock, &token, ttl)
            })?;
            Ok(granted.then_some(None))
        } else {
            let fence = self.call(i, "acquire_fenced", move |w| {
                (lock.acquire_fenced)(w, &keys.lock, &keys.fence, &token, ttl)
            })?;
            Ok(fence.map(Some))
        }
    }

    fn acquire_args(&self, i: usize) -> (crate::world::Keys, String, Duration, Lock) {
        let keys = enter(&self.world).keys.clone();
        (
            keys,
            self.clients[i].token.clone().unwrap_or_default(),
            self.ttl(),
            *self.lock,
        )
    }

    /// Records an acquisition and checks it against what Redis holds.
    /// `before` is who held the lock before the call (`None`: free).
    fn judge_acquire(
        &mut self,
        i: usize,
        before: Option<usize>,
        grant: Option<Option<u64>>,
    ) -> Result<(), GradeError> {
        let ms = self.ms();
        let value = enter(&self.world).lock_value()?;
        let name = self.clients[i].name();
        let mine = value.is_some() && value == self.clients[i].token;
        match grant {
            Some(fence) => {
                if let Some(other) = before.filter(|&h| h != i) {
                    let what = format!(
                        "{name}'s acquire took the lock while {} held it",
                        self.clients[other].name()
                    );
                    self.violations
                        .push(Violation::at(Property::AcquireRespectsHolder, ms, what));
                } else if !mine {
                    let what = format!(
                        "{name}'s acquire returned true, but the lock key does not hold its token"
                    );
                    self.violations
                        .push(Violation::at(Property::AcquireTakesFreeLock, ms, what));
                }
                self.check_ttl(name)?;
                if let Some(f) = fence {
                    let newest = self.grants.iter().filter_map(|(_, f)| *f).max();
                    if let Some(newest) = newest.filter(|&n| f <= n) {
                        let what = format!(
                            "{name} was granted the lock after a grant with token {newest}, but got token {f}"
                        );
                        self.violations
                            .push(Violation::at(Property::TokensGrow, ms, what));
                    }
                }
                self.grants.push((i, fence));
                let c = &mut self.clients[i];
                c.believes = true;
                c.fence = fence;
                c.step = Step::Read;
                c.granted_at = self.t;
                let text = match fence {
                    Some(f) => format!("acquired, token {f}"),
                    None => "acquired".into(),
                };
                c.act(ActionKind::Acquired, text);
            }
            None => {
                if mine {
                    let what = format!(
                        "{name}'s acquire returned false, but the lock key holds its token"
                    );
                    self.violations
                        .push(Violation::at(Property::AcquireTakesFreeLock, ms, what));
                } else if value.is_none() && before.is_none() {
                    let what =
                        format!("{name}'s acquire returned false although the lock was free");
                    self.violations
                        .push(Violation::at(Property::AcquireTakesFreeLock, ms, what));
                }
                self.clients[i].act(ActionKind::Denied, "denied");
            }
        }
        Ok(())
    }

    fn check_ttl(&mut self, name: &str) -> Result<(), GradeError> {
        let ms = self.ms();
        let expected = ms + self.scenario.ttl_s * 1000;
        let expiry = enter(&self.world).lock_expiry()?;
        let what = match expiry {
            Expiry::At(at) if at == expected => return Ok(()),
            Expiry::At(at) => format!(
                "{name}'s lock key expires after {}, but the TTL asked for was {} s",
                crate::verdict::seconds(at - ms),
                self.scenario.ttl_s
            ),
            Expiry::Never => format!(
                "{name}'s lock key has no TTL: if {name} crashes, nobody gets the lock again"
            ),
            Expiry::Missing => return Ok(()),
        };
        self.violations
            .push(Violation::at(Property::LockHasTtl, ms, what));
        Ok(())
    }

    /// At t = 0 of a race: every client's first acquire at once, their
    /// commands taking turns.
    fn race(&mut self) -> Result<(), Stop> {
        let racers: Vec<usize> = (0..self.clients.len())
            .filter(|&i| self.clients[i].step == Step::Acquire)
            .collect();
        for &i in &racers {
            self.ensure_token(i)?;
        }
        let turns = Turns::new(racers.len());
        let mut calls = Vec::new();
        for (turn, &i) in racers.iter().enumerate() {
            let (keys, token, ttl, lock) = self.acquire_args(i);
            let Some(mut wire) = self.clients[i].wire.take() else {
                continue;
            };
            wire.take_turns(turns.clone(), turn);
            calls.push((i, wire, keys, token, ttl, lock));
        }
        let results: Vec<(usize, Option<Wire>, Result<bool, Failure>)> = std::thread::scope(|s| {
            let handles: Vec<_> = calls
                .into_iter()
                .map(|(i, wire, keys, token, ttl, lock)| {
                    s.spawn(move || {
                        let (wire, outcome) = sandbox::call(wire, move |w| {
                            (lock.acquire)(w, &keys.lock, &token, ttl)
                        });
                        (i, wire, outcome)
                    })
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        });
        let mut failed = None;
        let mut winners = Vec::new();
        for (i, wire, outcome) in results {
            self.record(i, "acquire", wire.as_ref());
            self.clients[i].wire = wire;
            match outcome {
                Ok(true) => winners.push(i),
                Ok(false) => {}
                Err(f) => failed = failed.or(Some((i, f))),
            }
        }
        if let Some((i, failure)) = failed {
            return Err(self.halt(i, "acquire", failure));
        }
        if winners.len() > 1 {
            let names: Vec<&str> = winners.iter().map(|&w| self.clients[w].name()).collect();
            let what = format!(
                "{} all returned true: {} clients believe they hold the lock",
                names.join(", "),
                names.len()
            );
            self.violations
                .push(Violation::at(Property::OneWinner, 0, what));
        }
        let holder = self.holder_of(enter(&self.world).lock_value()?.as_deref());
        for &i in &racers {
            let won = winners.contains(&i);
            // Judge each as if it had come alone: the winner took a free lock.
            let before = if won {
                None
            } else {
                holder.filter(|&h| h != i)
            };
            let grant = won.then_some(None);
            self.judge_acquire(i, before, grant)?;
        }
        Ok(())
    }

    fn holds(&self, i: usize) -> Result<bool, GradeError> {
        Ok(self.holder()? == Some(i))
    }

    fn read(&mut self, i: usize) -> Result<(), Stop> {
        let holds = self.holds(i)?;
        let value = match (self.scenario.fencing, self.clients[i].fence) {
            (Fencing::ReadsAndWrites, Some(fence)) => {
                let (row, lock) = (enter(&self.world).keys.row.clone(), *self.lock);
                let read = self.call(i, "fenced_read", move |w| {
                    (lock.fenced_read)(w, &row, fence)
                })?;
                match read {
                    Some(v) => {
                        self.check_fenced_accept(i, holds, "read")?;
                        Some(v)
                    }
                    None => {
                        self.storage_refused(i, holds, ActionKind::ReadRejected, "read")?;
                        None
                    }
                }
            }
            _ => {
                let v = enter(&self.world).read_counter()?;
                self.note(i, "HGET row value", format!("\"{v}\""));
                Some(v)
            }
        };
        let c = &mut self.clients[i];
        if let Some(v) = value {
            c.read = v;
            c.act_unsafe(ActionKind::Read, format!("read {v}"), !holds, false);
            c.step = Step::Write {
                at: self.t + c.plan.work_s,
            };
        }
        Ok(())
    }

    fn write(&mut self, i: usize) -> Result<(), Stop> {
        let holds = self.holds(i)?;
        let value = self.clients[i].read + 1;
        let accepted = match (self.scenario.fencing, self.clients[i].fence) {
            (Fencing::Off, _) | (_, None) => {
                enter(&self.world).write_counter(value)?;
                self.note(i, &format!("HSET row value {value}"), "(integer) 0".into());
                true
            }
            (_, Some(fence)) => {
                let (row, lock) = (enter(&self.world).keys.row.clone(), *self.lock);
                let ok = self.call(i, "fenced_write", move |w| {
                    (lock.fenced_write)(w, &row, fence, value)
                })?;
                if ok {
                    self.check_fenced_accept(i, holds, "write")?;
                } else {
                    self.storage_refused(i, holds, ActionKind::WriteRejected, "write")?;
                }
                ok
            }
        };
        let c = &mut self.clients[i];
        if accepted {
            c.act_unsafe(ActionKind::Wrote, format!("wrote {value}"), !holds, false);
        }
        c.step = Step::Release;
        Ok(())
    }

    /// The storage accepted a fenced request: fine for the holder, a broken
    /// fence for anyone else.
    fn check_fenced_accept(&mut self, i: usize, holds: bool, what: &str) -> Result<(), GradeError> {
        let row = enter(&self.world).row()?;
        let c = &self.clients[i];
        let fence = c.fence.unwrap_or(0);
        if !holds {
            let newer = self
                .grants
                .iter()
                .filter_map(|(_, f)| *f)
                .max()
                .unwrap_or(0);
            if newer > fence {
                let text = format!(
                    "the storage accepted {}'s {what} with token {fence} after the lock had been granted with token {newer}",
                    c.name()
                );
                self.violations.push(Violation::at(
                    Property::StaleRequestsRejected,
                    self.ms(),
                    text,
                ));
            }
        }
        if row.fence < fence {
            let text = format!(
                "after accepting {}'s {what} with token {fence}, the row's `fence` field holds {}",
                c.name(),
                row.fence
            );
            self.violations.push(Violation::at(
                Property::StorageRemembersHighest,
                self.ms(),
                text,
            ));
        }
        Ok(())
    }

    /// The storage refused a fenced request: right for a stale client, wrong
    /// for the holder.
    fn storage_refused(
        &mut self,
        i: usize,
        holds: bool,
        kind: ActionKind,
        what: &str,
    ) -> Result<(), GradeError> {
        let highest = enter(&self.world).row()?.fence;
        let c = &mut self.clients[i];
        let fence = c.fence.unwrap_or(0);
        let text = format!("{what} rejected: {fence} < {highest}");
        c.act_unsafe(kind, text, !holds, true);
        c.believes = false;
        c.step = Step::Release;
        if holds {
            let what = format!(
                "the storage refused {}'s {what} with token {fence} although {} holds the lock",
                c.name(),
                c.name()
            );
            self.violations.push(Violation::at(
                Property::EqualTokensAccepted,
                self.ms(),
                what,
            ));
        }
        Ok(())
    }

    fn release(&mut self, i: usize) -> Result<(), Stop> {
        let before_value = enter(&self.world).lock_value()?;
        let before = self.holder_of(before_value.as_deref());
        let (keys, token, _, lock) = self.acquire_args(i);
        let deleted = self.call(i, "release", move |w| (lock.release)(w, &keys.lock, &token))?;
        let after = enter(&self.world).lock_value()?;
        let ms = self.ms();
        let name = self.clients[i].name();
        let (kind, text, is_unsafe) = match before {
            Some(h) if h == i => {
                if after.is_some() {
                    let what = format!("{name} released its own lock, but the key is still there");
                    self.violations
                        .push(Violation::at(Property::ReleaseFreesOwnLock, ms, what));
                    (
                        ActionKind::ReleaseRefused,
                        "release left its lock in place".to_string(),
                        false,
                    )
                } else {
                    if !deleted {
                        let what = format!("{name}'s release deleted its lock but returned false");
                        self.violations
                            .push(Violation::at(Property::ReleaseTellsTruth, ms, what));
                    }
                    (ActionKind::Released, "released".to_string(), false)
                }
            }
            _ if before_value.is_some() && after != before_value => {
                let other = before.map_or("another client", |h| self.clients[h].name());
                let what = format!("{name}'s release deleted {other}'s lock");
                self.violations
                    .push(Violation::at(Property::ReleaseSparesOthers, ms, what));
                (
                    ActionKind::DeletedOther,
                    format!("deleted {other}'s lock"),
                    true,
                )
            }
            _ => {
                if deleted {
                    let what =
                        format!("{name}'s release returned true, but it had no lock to delete");
                    self.violations
                        .push(Violation::at(Property::ReleaseTellsTruth, ms, what));
                }
                let text = if before_value.is_some() {
                    "release refused: not its lock"
                } else {
                    "release: its lock was already gone"
                };
                (ActionKind::ReleaseRefused, text.to_string(), false)
            }
        };
        let c = &mut self.clients[i];
        c.act_unsafe(kind, text, is_unsafe, false);
        c.believes = false;
        c.step = Step::Done;
        Ok(())
    }

    /// Keeps the commands of client `i`'s last call of `function` for the
    /// message diagram, with every client's random token replaced by its
    /// owner (`<A's token>`), so that the record is the same on every run.
    fn record(&mut self, i: usize, function: &str, wire: Option<&Wire>) {
        let to = if function.starts_with("fenced_") {
            Lane::Storage
        } else {
            Lane::Redis
        };
        for step in wire.map_or(&[][..], Wire::steps) {
            if let WireStep::Sent { command, reply } = step {
                let (command, reply) = (self.hide_tokens(command), self.hide_tokens(reply));
                let client = self.clients[i].name().to_string();
                let t = self.t;
                self.messages.push(Message {
                    t,
                    client,
                    to,
                    command,
                    reply,
                });
            }
        }
    }

    /// The job's own plain read or write of the storage, which the grader
    /// makes for the client when fencing is off.
    fn note(&mut self, i: usize, command: &str, reply: String) {
        let (t, client) = (self.t, self.clients[i].name().to_string());
        let (to, command) = (Lane::Storage, command.to_string());
        self.messages.push(Message {
            t,
            client,
            to,
            command,
            reply,
        });
    }

    fn hide_tokens(&self, text: &str) -> String {
        self.clients
            .iter()
            .fold(text.to_string(), |text, c| match &c.token {
                Some(token) if !token.is_empty() => {
                    text.replace(token, &format!("<{}'s token>", c.name()))
                }
                _ => text,
            })
    }

    /// Looks at Redis and the clients at the end of the second.
    fn observe(&mut self, notes: Vec<String>) -> Result<Second, GradeError> {
        let holder = self.holder()?;
        let (expiry, row) = {
            let mut world = enter(&self.world);
            (world.lock_expiry()?, world.row()?)
        };
        let ms = self.ms();
        let ttl_left_s = match expiry {
            Expiry::At(at) if holder.is_some() || at > ms => {
                Some((at.saturating_sub(ms)).div_ceil(1000))
            }
            _ => None,
        };
        let has_key = !matches!(expiry, Expiry::Missing);
        let t = self.t;
        let mut clients = BTreeMap::new();
        for c in &mut self.clients {
            let state = c.state(t);
            clients.insert(
                c.name().to_string(),
                ClientSecond {
                    state,
                    believes: c.believes,
                    token: if c.believes { c.fence } else { None },
                    actions: std::mem::take(&mut c.actions),
                },
            );
        }
        let holder_name = match holder {
            Some(h) => Some(self.clients[h].name().to_string()),
            None if has_key => Some("?".to_string()),
            None => None,
        };
        Ok(Second {
            t,
            clients,
            holder: holder_name,
            ttl_left_s,
            counter: row.value,
            highest_token: (self.scenario.fencing != Fencing::Off)
                .then_some(row.fence)
                .filter(|&f| f > 0),
            notes,
        })
    }

    fn timeline(&mut self, seconds: Vec<Second>) -> Result<Timeline, GradeError> {
        let counter = enter(&self.world).row()?.value;
        let jobs = self.clients.len() as u32;
        let rejected: Vec<&str> = self
            .clients
            .iter()
            .filter(|c| {
                seconds.iter().any(|s| {
                    s.clients
                        .get(c.name())
                        .is_some_and(|cs| cs.actions.iter().any(|a| a.rejected))
                })
            })
            .map(Client::name)
            .collect();
        let crashed: Vec<&str> = self
            .clients
            .iter()
            .filter(|c| c.crashed)
            .map(Client::name)
            .collect();
        let mut summary = format!("{} jobs, counter = {counter}", number(jobs));
        let mut reasons = Vec::new();
        for name in &crashed {
            reasons.push(format!("{name} crashed before writing"));
        }
        for c in self.clients.iter().filter(|c| c.stopped) {
            let name = c.name();
            reasons.push(format!(
                "{name}'s keeper found its lease lost, and {name} stopped before writing"
            ));
        }
        for name in &rejected {
            reasons.push(format!(
                "the storage refused {name}'s stale request, and {name} knows its job failed"
            ));
        }
        let stopped = self.clients.iter().filter(|c| c.stopped).count();
        let explained = (crashed.len() + rejected.len() + stopped) as i64;
        let lost = jobs as i64 - explained - counter;
        if lost > 0 {
            reasons.push(format!(
                "{} lost",
                if lost == 1 {
                    "one update was".to_string()
                } else {
                    format!("{} updates were", number(lost as u32).to_lowercase())
                }
            ));
        }
        let unsafe_count = seconds
            .iter()
            .flat_map(|s| s.clients.values())
            .flat_map(|c| &c.actions)
            .filter(|a| a.unsafe_ && !a.rejected)
            .count();
        if reasons.is_empty() && unsafe_count > 0 {
            let what = if unsafe_count == 1 {
                "1 action ran on a lock its client no longer held".to_string()
            } else {
                format!("{unsafe_count} actions ran on locks their clients no longer held")
            };
            summary.push_str(&format!(
                ": every update counted, but only by luck: {what}."
            ));
        } else if reasons.is_empty() {
            summary.push_str(": every update counted.");
        } else {
            summary = format!("{summary}: {}.", reasons.join("; "));
        }
        Ok(Timeline {
            name: self.scenario.name.to_string(),
            title: self.scenario.title.to_string(),
            story: self.scenario.story.to_string(),
            implementation: self.lock.name.to_string(),
            ttl_s: self.scenario.ttl_s,
            fencing: self.scenario.fencing != Fencing::Off,
            clients: self.clients.iter().map(|c| c.name().to_string()).collect(),
            seconds,
            outcome: Outcome {
                counter,
                jobs,
                summary,
            },
            messages: std::mem::take(&mut self.messages),
        })
    }
}

/// `Three` for 3: timelines are read as sentences.
fn number(n: u32) -> String {
    const WORDS: [&str; 11] = [
        "No", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten",
    ];
    WORDS
        .get(n as usize)
        .map_or(n.to_string(), |w| w.to_string())
}
