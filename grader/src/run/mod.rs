//! Playing a story on one server, or on a primary and its replica, against Redis with a given
//! lock.
//!
//! The runner is this topology's [`Engine`]: the one stepping loop of
//! [`crate::story::engine`] walks virtual time one second at a time, and the runner
//! says what each piece means here. It moves the clock (so Redis expires what has
//! run out), plays the faults of a pair, makes each client's next call through the
//! lock under test, and then looks at Redis to record who really holds the key, the
//! counter and the highest token. Around
//! every call of the lock it asks the judges of [`crate::judge`], the same
//! the direct checks ask, whether a rule of [`crate::verdict`] broke: a
//! release that deleted someone else's key, a grant without the right TTL, a
//! fencing token that did not grow, a stale write the storage let through.
//!
//! This file is the engine; `acquire.rs`, `release.rs` and `storage.rs` make the
//! calls of each exercise and have them judged; `record.rs` keeps what the
//! timeline shows of the server, with the clients' seconds and the run written by
//! [`crate::story::record`]; `failover.rs` plays a story on a primary and its replica
//! ([`crate::replication`]): its faults (their effect is [`crate::story::Fault::on_pair`]'s), the
//! `WAIT` after a grant, its nodes. The clients are [`crate::story::client`]'s, the stories
//! [`crate::story::Story`]s with [`Topology::Single`] or [`Topology::Replicated`].
//!
//! Everything happens on one thread, in a fixed order, so a scenario unfolds
//! the same way on every run; only the race at t = 0 runs the clients' calls
//! side by side, and even then their commands take turns.

mod acquire;
mod failover;
mod keeper;
mod record;
mod release;
mod storage;

use std::time::Duration;

use crate::error::GradeError;
use crate::lock::Lock;
use crate::sandbox::{self, Failure};
pub use crate::story::Halt;
use crate::story::client::{Client, Step};
use crate::story::engine::{self, Engine, Stop};
use crate::story::{Fault, MAX_SECONDS, Story, Topology};
use crate::timeline::{ActionKind, Message, Note, Second, Timeline};
use crate::verdict::{Property, Violation};
use crate::wire::Wire;
use crate::world::{SharedWorld, World, enter};

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

struct Runner<'a> {
    story: &'a Story,
    lock: &'a Lock,
    world: SharedWorld,
    clients: Vec<Client>,
    /// Grants in the order they happened: (client index, fencing token).
    grants: Vec<(usize, Option<u64>)>,
    violations: Vec<Violation>,
    t: u64,
    /// Every command the clients sent, for the book's message diagram.
    messages: Vec<Message>,
    /// The primary and replica the lock runs on, in a story of failover.
    pair: Option<std::sync::MutexGuard<'static, crate::replication::Pair>>,
    /// Whose token each node of the pair held when last seen, for a node now stopped.
    node_holders: [Option<String>; 2],
}

/// Plays `story` with `lock` against a fresh world on the shared Redis (the lock on the
/// grader's primary and replica, for a story of failover).
pub fn run(story: &Story, lock: &Lock) -> Result<Run, GradeError> {
    story.fits()?;
    let pair = match story.topology {
        Topology::Replicated { .. } => Some(crate::replication::lease()?),
        Topology::Single => None,
        Topology::Nodes(_) => {
            return Err(GradeError::StoryDoesNotFit {
                story: story.name,
                what: "nodes, which only Redlock's engine plays".into(),
            });
        }
    };
    let world = match &pair {
        Some(pair) => World::open_replicated(pair)?,
        None => World::open()?,
    }
    .shared();
    let mut clients = Vec::new();
    for plan in &story.clients {
        let mut client = Client::new(*plan, &story.faults);
        client.wire = Some(Wire::open(&world)?);
        clients.push(client);
    }
    let mut runner = Runner {
        story,
        lock,
        world,
        clients,
        grants: Vec::new(),
        violations: Vec::new(),
        t: 0,
        messages: Vec::new(),
        pair,
        node_holders: Default::default(),
    };
    let engine::Ended {
        seconds,
        halt,
        stuck,
    } = engine::play(&mut runner)?;
    if stuck {
        let waiting: Vec<&str> = runner
            .clients
            .iter()
            .filter(|c| !c.finished())
            .map(Client::name)
            .collect();
        runner.violations.push(Violation::at(
            Property::CounterEndsRight,
            runner.ms(),
            format!(
                "after {MAX_SECONDS} s, {} still had not finished",
                waiting.join(" and ")
            ),
        ));
    }
    let timeline = runner.timeline(seconds)?;
    let counter = timeline.outcome.counter;
    if halt.is_none() && counter != story.expected_counter {
        runner.violations.push(Violation::anytime(
            Property::CounterEndsRight,
            format!(
                "the counter ended at {counter}; with a correct lock it ends at {}",
                story.expected_counter
            ),
        ));
    }
    Ok(Run {
        timeline,
        violations: runner.violations,
        halt,
    })
}

impl Engine for Runner<'_> {
    fn story(&self) -> &Story {
        self.story
    }

    fn second(&self) -> u64 {
        self.t
    }

    fn next_second(&mut self) {
        self.t += 1;
    }

    fn clients(&self) -> &[Client] {
        &self.clients
    }

    fn client(&mut self, i: usize) -> &mut Client {
        &mut self.clients[i]
    }

    fn tick(&mut self) -> Result<Vec<Note>, GradeError> {
        self.advance()
    }

    fn fault(&mut self, fault: Fault) -> Result<Vec<Note>, GradeError> {
        self.pair_fault(fault)
    }

    fn observe(&mut self, notes: Vec<Note>) -> Result<Second, GradeError> {
        self.look(notes)
    }

    fn event(&mut self, i: usize, kind: ActionKind, text: String) -> Result<(), GradeError> {
        self.clients[i].act(kind, text);
        Ok(())
    }

    fn keep(&mut self, i: usize) -> Result<(), Stop> {
        Runner::keep(self, i)
    }

    fn acquire(&mut self, i: usize) -> Result<(), Stop> {
        Runner::take(self, i)
    }

    fn read(&mut self, i: usize) -> Result<(), Stop> {
        Runner::read(self, i)
    }

    fn write(&mut self, i: usize) -> Result<(), Stop> {
        Runner::write(self, i)
    }

    fn release(&mut self, i: usize) -> Result<(), Stop> {
        Runner::release(self, i)
    }

    /// The clients' steps, or at t = 0 of a race their first acquires at once.
    fn steps(&mut self) -> Result<(), Stop> {
        if self.t == 0 && self.story.race {
            self.race()
        } else {
            (0..self.clients.len()).try_for_each(|i| engine::step(self, i))
        }
    }
}

impl Runner<'_> {
    fn ms(&self) -> u64 {
        self.t * 1000
    }

    fn ttl(&self) -> Duration {
        Duration::from_secs(self.story.ttl_s)
    }

    /// Moves the clock to this second; returns what Redis did on its own.
    fn advance(&mut self) -> Result<Vec<Note>, GradeError> {
        let holder = self.holder()?;
        let expired = enter(&self.world).advance_to(self.ms())?;
        Ok(match (expired, holder) {
            (true, Some(h)) => vec![Note::expiry(format!(
                "{}'s lock expired",
                self.clients[h].name()
            ))],
            (true, None) => vec![Note::expiry("the lock expired")],
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

    fn ensure_token(&mut self, i: usize) -> Result<(), Stop> {
        if self.clients[i].token.is_none() {
            let token =
                sandbox::isolated(self.lock.new_token).map_err(|f| self.halt(i, "new_token", f))?;
            self.clients[i].token = Some(token);
        }
        Ok(())
    }
}
