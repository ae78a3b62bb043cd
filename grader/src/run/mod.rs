//! Playing a story against Redis with a given lock, whatever it runs on: one server, a primary and
//! its replica, or Redlock's nodes. This is the course's one engine.
//!
//! The runner is the [`Engine`] the one stepping loop of [`crate::story::engine`] plays: it owns
//! the [`Stage`] (the story, the second, the clients), and says what each piece of a second means
//! on the story's [`Ground`], what the lock runs on. It moves the clock (so keys run out), plays the
//! faults, makes each client's next call through the lock under test, and then looks at what the
//! lock runs on to record who really holds it, the counter and the highest token. Around every call
//! of a lock on one server or a pair it asks the judges of [`crate::judge`], the same the direct
//! checks ask, whether a rule of [`crate::verdict`] broke: a release that deleted someone else's
//! key, a grant without the right TTL, a fencing token that did not grow, a stale write the storage
//! let through. What a check holds the run to is the story's policy ([`Story::held_to`]), which
//! the check applies ([`crate::checks::scenarios`]).
//!
//! Where each piece is: this file is the engine, with what differs by ground in one `match` each;
//! `record.rs` is the one recording of every ground (each client's second, the holder, the counter,
//! the messages, a report's lines), which asks the ground only what it alone can say (who holds the
//! lock, its nodes' rows); `storage.rs` is the job's read and write, the same on every ground;
//! `acquire.rs`, `release.rs` and `keeper.rs` make and judge the calls of a lock whose key is on one
//! server (or a pair's primary); `failover.rs` is what a pair adds (its faults, the course's `WAIT`,
//! its nodes), and `nodes.rs` what Redlock's nodes do (their clock, their faults, the calls of
//! Redlock), with `snapshot.rs`, one look at the nodes.
//!
//! Everything happens on one thread, in a fixed order, so a story unfolds the same way on every
//! run; only the race at t = 0 runs the clients' calls side by side, and even then their commands
//! take turns.

mod acquire;
mod failover;
mod keeper;
mod nodes;
mod record;
pub mod redlock;
mod release;
mod snapshot;
mod storage;

use crate::error::GradeError;
use crate::judge::story::{counter_ends_right, everyone_finished};
use crate::lock::Lock;
use crate::sandbox::{self, Failure};
pub use crate::story::Halt;
use crate::story::client::Client;
use crate::story::engine::{self, Engine, Stage, Stop};
use crate::story::{Fault, MAX_SECONDS, Story, Topology};
use crate::timeline::{ActionKind, Message, Note, Second, Timeline};
use crate::verdict::Violation;
use crate::wire::Wire;
use crate::world::{SharedWorld, World, enter};
use failover::PairGround;
use nodes::NodesGround;

/// The result of playing a story.
#[derive(Clone, Debug)]
pub struct Run {
    /// What happened.
    pub timeline: Timeline,
    /// The rules that were broken, in order.
    pub violations: Vec<Violation>,
    /// The call that failed, if one did (the timeline stops there).
    pub halt: Option<Halt>,
    /// On Redlock's nodes, a line per event (`t = …  what happened  nodes: …`): what a report
    /// shows, since a timeline's table of text draws no nodes. Empty on other grounds.
    pub lines: Vec<String>,
}

/// What the lock runs on in a play, with what the engine keeps of it from one look to the next.
enum Ground {
    /// One server: the lock key is in the world.
    Server,
    /// A primary and its replica: the world's lock key is on the primary.
    Pair(PairGround),
    /// Redlock's nodes; the world holds only the storage.
    Nodes(NodesGround),
}

/// One play of a story.
struct Runner {
    stage: Stage,
    lock: Lock,
    /// The story's keys on the grader's server: the lock's (on one server or the pair) and the
    /// storage's.
    world: SharedWorld,
    ground: Ground,
    /// Grants in the order they happened: (client index, fencing token).
    grants: Vec<(usize, Option<u64>)>,
    violations: Vec<Violation>,
    /// Every command the clients sent, for the book's message diagram.
    messages: Vec<Message>,
    /// The report's lines, on nodes ([`Run::lines`]).
    lines: Vec<String>,
}

/// Plays `story` with `lock` on fresh keys: on the shared Redis, on the grader's primary and
/// replica for a story of failover, or on Redlock's nodes (the storage on the shared Redis).
pub fn run(story: &Story, lock: &Lock) -> Result<Run, GradeError> {
    story.fits()?;
    let mut stage = Stage::new(story);
    let (ground, world) = match story.topology {
        Topology::Single => (Ground::Server, World::open()?),
        Topology::Replicated { .. } => {
            let pair = crate::replication::lease()?;
            let world = World::open_replicated(&pair)?;
            (Ground::Pair(PairGround::new(pair)), world)
        }
        Topology::Nodes(_) => {
            let nodes = NodesGround::open(story, &mut stage.clients)?;
            (Ground::Nodes(nodes), World::open()?)
        }
    };
    let world = world.shared();
    for client in &mut stage.clients {
        client.wire = Some(Wire::open(&world)?);
    }
    let mut runner = Runner {
        stage,
        lock: *lock,
        world,
        ground,
        grants: Vec::new(),
        violations: Vec::new(),
        messages: Vec::new(),
        lines: Vec::new(),
    };
    let engine::Ended {
        seconds,
        halt,
        stuck,
    } = engine::play(&mut runner)?;
    if stuck {
        let waiting: Vec<&str> = runner
            .stage
            .clients
            .iter()
            .filter(|c| !c.finished())
            .map(Client::name)
            .collect();
        let at_ms = runner.stage.ms();
        runner
            .violations
            .extend(everyone_finished(&waiting, MAX_SECONDS, at_ms));
    }
    let timeline = runner.timeline(seconds)?;
    if halt.is_none() {
        let ended = counter_ends_right(timeline.outcome.counter, story.expected_counter);
        runner.violations.extend(ended);
    }
    Ok(Run {
        timeline,
        violations: runner.violations,
        halt,
        lines: runner.lines,
    })
}

impl Engine for Runner {
    fn stage(&mut self) -> &mut Stage {
        &mut self.stage
    }

    fn tick(&mut self) -> Result<Vec<Note>, GradeError> {
        let t = self.stage.t;
        let notes = match &mut self.ground {
            Ground::Server | Ground::Pair(_) => self.expire()?,
            Ground::Nodes(nodes) => nodes.tick(t)?,
        };
        self.note_lines(&notes);
        Ok(notes)
    }

    fn fault(&mut self, fault: Fault) -> Result<Vec<Note>, GradeError> {
        let story = self.stage.story.name;
        let notes = match &mut self.ground {
            Ground::Pair(_) => self.pair_fault(fault)?,
            Ground::Nodes(nodes) => nodes.fault(story, fault)?,
            Ground::Server => {
                return Err(GradeError::StoryDoesNotFit {
                    story,
                    what: format!("{fault:?} on one server"),
                });
            }
        };
        self.note_lines(&notes);
        Ok(notes)
    }

    fn observe(&mut self, notes: Vec<Note>) -> Result<Second, GradeError> {
        self.look(notes)
    }

    fn event(&mut self, i: usize, kind: ActionKind, text: String) -> Result<(), GradeError> {
        self.act(i, kind, text, false, false)
    }

    fn keep(&mut self, i: usize) -> Result<(), Stop> {
        Runner::keep(self, i)
    }

    fn acquire(&mut self, i: usize) -> Result<(), Stop> {
        match self.ground {
            Ground::Server | Ground::Pair(_) => self.take(i),
            Ground::Nodes(_) => self.take_majority(i),
        }
    }

    fn read(&mut self, i: usize) -> Result<(), Stop> {
        Runner::read(self, i)
    }

    fn write(&mut self, i: usize) -> Result<(), Stop> {
        Runner::write(self, i)
    }

    fn release(&mut self, i: usize) -> Result<(), Stop> {
        match self.ground {
            Ground::Server | Ground::Pair(_) => self.release_key(i),
            Ground::Nodes(_) => self.release_majority(i),
        }
    }

    /// The clients' steps, or at t = 0 of a race their first acquires at once.
    fn steps(&mut self) -> Result<(), Stop> {
        if self.stage.t == 0 && self.stage.story.race {
            self.race()
        } else {
            (0..self.stage.clients.len()).try_for_each(|i| engine::step(self, i))
        }
    }
}

impl Runner {
    fn ms(&self) -> u64 {
        self.stage.ms()
    }

    fn ttl(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.stage.story.ttl_s)
    }

    /// Whether client `i` holds the lock now: its token in the lock key, or on nodes in a
    /// majority of them.
    fn holds(&self, i: usize) -> Result<bool, GradeError> {
        match &self.ground {
            Ground::Server | Ground::Pair(_) => Ok(self.holder()? == Some(i)),
            Ground::Nodes(nodes) => {
                let token = self.stage.clients[i].token.as_deref();
                Ok(token.is_some() && nodes.snapshot()?.majority() == token)
            }
        }
    }

    /// The virtual time now, in ms: the nodes' clock, which a Redlock's calls move on, or the
    /// second's start.
    fn now_ms(&self) -> u64 {
        match &self.ground {
            Ground::Server | Ground::Pair(_) => self.ms(),
            Ground::Nodes(nodes) => nodes.now_ms(),
        }
    }

    /// Moves the world's clock to this second; returns what Redis did on its own.
    fn expire(&mut self) -> Result<Vec<Note>, GradeError> {
        let holder = self.holder()?;
        let expired = enter(&self.world).advance_to(self.ms())?;
        Ok(match (expired, holder) {
            (true, Some(h)) => vec![Note::expiry(format!(
                "{}'s lock expired",
                self.stage.clients[h].name()
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
        let clients = &self.stage.clients;
        self.grants
            .iter()
            .rev()
            .map(|(c, _)| *c)
            .find(|&c| clients[c].token.as_deref() == Some(value))
            .or_else(|| {
                clients
                    .iter()
                    .position(|c| c.token.as_deref() == Some(value))
            })
    }

    /// Calls learner code for client `i`; a failure stops the story.
    fn call<T, F>(&mut self, i: usize, function: &'static str, f: F) -> Result<T, Stop>
    where
        T: Send + 'static,
        F: FnOnce(&mut Wire) -> redis::RedisResult<T> + Send + 'static,
    {
        let c = &mut self.stage.clients[i];
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
        self.stage.clients[i].wire = wire;
        outcome.map_err(|failure| self.halt(i, function, failure))
    }

    fn ensure_token(&mut self, i: usize) -> Result<(), Stop> {
        if self.stage.clients[i].token.is_none() {
            let token =
                sandbox::isolated(self.lock.new_token).map_err(|f| self.halt(i, "new_token", f))?;
            self.stage.clients[i].token = Some(token);
        }
        Ok(())
    }
}
