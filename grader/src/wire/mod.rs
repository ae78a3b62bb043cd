//! The connection a lock under test talks through: the judge's one proxy.
//!
//! A [`Wire`] is a real Redis connection with the grader standing on it,
//! whatever the lock reaches: a client of one scenario's world on the single
//! server ([`world`]), or a Redlock's connection to one node of a cluster
//! ([`node`]). It forwards every command and, around each one:
//!
//! - records it with its reply, so a report can show what the lock sent;
//! - lets the virtual clock notice any TTL the command set: the command goes
//!   out between two `TIME`s and ahead of a `PEXPIRETIME` of each timed key,
//!   in one round trip, so the clock knows when it ran and whether it changed
//!   an expiry at all ([`crate::clock::TimedFrame`]);
//! - counts it, and stops a runaway loop after [`COMMAND_BUDGET`] commands
//!   ([`tally`]);
//! - can act *between* two commands: an [`Intervention`] (on a node, the
//!   cluster's move) fires just before a chosen command, to expire the lock,
//!   let another client in, pause or kill a node, or make the caller crash so
//!   that it never sends the rest. Stepping in before command k is also what a
//!   reply to command k − 1 that arrives late looks like, and stepping in
//!   after the last command is a late reply to the call itself. Trying this at
//!   every command boundary is how a check catches a lock that does in two
//!   commands what must happen in one.
//! - can make the next command fail: an intervention may arm a [`Fault`]
//!   (an error reply, a dropped connection, a lost or late reply), and the
//!   record shows it on that command's line ([`fault`]).
//!
//! What differs is where it stands. On the single server the wire takes turns
//! with other wires ([`Turns`]) so that three clients racing for a lock
//! interleave command by command, the same way on every run; keeps every key
//! a command names inside its world's namespace, and every function inside
//! its check's, refusing, before it goes out, any command that acts beyond
//! them ([`confined`], [`crate::confine`]; where the grader may create Redis
//! users, the connection is also signed in as one limited to the namespace,
//! [`crate::acl`], which holds Lua scripts too); answers `TIME`, `PTTL`,
//! `TTL` and the expiry times on the virtual clock, and puts an absolute
//! expiry a lock computed from that `TIME` back on Redis's real one
//! ([`timing`]). On a node it goes where the
//! cluster routes it: a paused node times out, a killed one refuses, a
//! delayed one charges its delay, each node on its own clock.

mod confined;
pub mod fault;
mod intervention;
mod node;
mod request;
mod show;
mod tally;
mod timing;
mod turns;
mod world;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use redis::{ConnectionLike, RedisError, RedisResult, Value};

pub use crate::call::Step;
use crate::error::GradeError;
use crate::nodes::SharedCluster;
use crate::world::SharedWorld;
pub use fault::{Fault, Hit};
pub use intervention::{Action, Fired, Intervention};
use show::show_arg;
pub use turns::Turns;

/// How many commands one call of the lock may send before the grader decides
/// it is stuck in a loop.
pub const COMMAND_BUDGET: usize = 1_000;

/// The panic payload that stops a call which went over [`COMMAND_BUDGET`].
#[derive(Debug)]
pub struct OverBudget;

/// The URL of `world`'s server: its replicated pair's primary, or the shared server.
fn world_url(world: &SharedWorld) -> Option<String> {
    crate::world::enter(world).server_url().ok()
}

/// A watched connection to Redis, handed to the lock under test.
pub struct Wire {
    /// Which wire this is, for the runner's link to it ([`crate::remote`]).
    id: u64,
    tally: tally::Tally,
    place: Place,
}

/// Where a wire stands, and what it does there.
enum Place {
    /// A client of a world on the single server (or a replicated pair).
    World(Box<world::OnWorld>),
    /// A client of one Redlock node.
    Node(node::OnNode),
}

impl Wire {
    /// A wire for a new client of `world`.
    pub fn open(world: &SharedWorld) -> Result<Wire, GradeError> {
        let id = next_id();
        let on = world::OnWorld::open(world, id)?;
        Ok(Wire {
            id,
            tally: tally::Tally::default(),
            place: Place::World(Box::new(on)),
        })
    }

    /// The wires to every node of `cluster`, in node order: a Redlock's
    /// connections.
    pub fn to_nodes(cluster: &SharedCluster) -> Vec<Wire> {
        let n = crate::nodes::cluster::enter(cluster).len();
        (0..n)
            .map(|index| Wire {
                id: next_id(),
                tally: tally::Tally::default(),
                place: Place::Node(node::OnNode::new(cluster, index)),
            })
            .collect()
    }

    /// This wire's number, unique in the process: the runner's link to it is found by it.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Which node this wire reaches, if it reaches one.
    pub fn node(&self) -> Option<usize> {
        match &self.place {
            Place::Node(on) => Some(on.index),
            Place::World(_) => None,
        }
    }

    /// The URL of the server this wire's commands go to, for the grader's own connection to it
    /// (to stop a script the lock left running there, [`crate::server::stop_scripts`]); `None`
    /// when it cannot be had (the world is gone).
    pub fn server_url(&self) -> Option<String> {
        match &self.place {
            Place::World(on) => on.world.upgrade().and_then(|w| world_url(&w)),
            Place::Node(on) => Some(on.url()),
        }
    }

    /// Sends `WAIT replicas timeout_ms` for the course's own client code around a learner's
    /// call (never for learner code, whose commands the filter holds to the exercises' list),
    /// and records it as a step of the current call: how many replicas have every write this
    /// connection made.
    ///
    /// When the caller knows that no replica is linked (cut off, dead, or not yet following),
    /// no wait can change the answer: Redis is sent `WAIT 0 0`, which counts the replicas that
    /// have this connection's writes (none) and answers at once, where `WAIT 1 250` would
    /// answer the same 0 after a tenth of a second or more of real time. The step shows the
    /// client's `WAIT`: a story's time is virtual.
    pub fn wait_for_replicas(
        &mut self,
        replicas: u64,
        timeout_ms: u64,
        none_linked: bool,
    ) -> RedisResult<u64> {
        match &mut self.place {
            Place::World(on) => on.wait_for_replicas(replicas, timeout_ms, none_linked),
            Place::Node(_) => Err(RedisError::from(std::io::Error::other(
                "a Redlock node has no replicas to wait for",
            ))),
        }
    }

    /// Arms an intervention for the next call (on a world's wire; a node's
    /// boundaries are the cluster's, [`crate::nodes::Cluster::intervene`]).
    pub fn intervene(&mut self, intervention: Intervention) {
        if let Place::World(on) = &mut self.place {
            on.intervention = Some(intervention);
        }
    }

    /// Makes this wire take turn `me` among `turns` (on a world's wire).
    pub fn take_turns(&mut self, turns: Arc<Turns>, me: usize) {
        if let Place::World(on) = &mut self.place {
            on.turns = Some((turns, me));
        }
    }

    /// Leaves the turn-taking, if any (at the end of a call).
    pub fn leave_turns(&mut self) {
        if let Place::World(on) = &mut self.place {
            on.leave_turns();
        }
    }

    /// Starts the record of a new call.
    pub fn begin_call(&mut self) {
        if let Place::World(on) = &mut self.place {
            on.steps.clear();
            on.faults.reset();
        }
        self.tally.reset();
    }

    /// The record of the current (or last) call; a node's wire keeps none of
    /// its own (the cluster's record holds every node's commands).
    pub fn steps(&self) -> &[Step] {
        match &self.place {
            Place::World(on) => &on.steps,
            Place::Node(_) => &[],
        }
    }

    /// How many commands the current call has sent, readable from elsewhere.
    pub fn sent_counter(&self) -> Arc<AtomicUsize> {
        self.tally.counter()
    }

    /// What the fault an intervention armed hit in the current (or last) call, if it hit a
    /// command ([`fault`]).
    pub fn fault_hit(&self) -> Option<&Hit> {
        match &self.place {
            Place::World(on) => on.faults.hit(),
            Place::Node(_) => None,
        }
    }

    /// Whether an intervention made this client crash.
    pub fn crashed(&self) -> bool {
        match &self.place {
            Place::World(on) => on.crashed,
            Place::Node(_) => false,
        }
    }

    /// Fires an intervention that the call did not reach (it sent fewer
    /// commands than `before`): it then happens after the call's last command.
    pub fn fire_if_pending(&mut self) -> Result<(), GradeError> {
        if let Place::World(on) = &mut self.place
            && on.intervention.as_ref().is_some_and(|i| !i.fired)
        {
            on.fire()?;
        }
        Ok(())
    }
}

/// `args` as one line of a record: each argument through `display` (which
/// takes the run's prefixes out of key names), then cut to a readable length.
fn shown(args: &[Vec<u8>], display: impl Fn(&str) -> String) -> String {
    args.iter()
        .map(|a| show_arg(&display(&String::from_utf8_lossy(a))))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A number no other wire of this process has.
fn next_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Turns a problem of the grader's into an error the lock sees (it can only
/// give up), while the message still says whose problem it is.
fn grader_trouble(e: GradeError) -> RedisError {
    RedisError::from(std::io::Error::other(format!(
        "grader problem, not yours: {e}"
    )))
}

impl Drop for Wire {
    /// A wire dropped in the middle of a call (its code panicked) must not
    /// keep the others waiting for its turn; the runner's link to it goes
    /// with it.
    fn drop(&mut self) {
        self.leave_turns();
        crate::remote::forget(self.id);
    }
}

impl ConnectionLike for Wire {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        match &mut self.place {
            Place::World(on) => on.one(&mut self.tally, cmd),
            Place::Node(on) => on.one(&mut self.tally, cmd),
        }
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        match &mut self.place {
            Place::World(on) => on.pipeline(&mut self.tally, cmd, offset, count),
            Place::Node(on) => on.pipeline(&mut self.tally, cmd, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match &self.place {
            Place::World(on) => on.inner.get_db(),
            Place::Node(_) => 0,
        }
    }

    fn check_connection(&mut self) -> bool {
        match &mut self.place {
            Place::World(on) => on.inner.check_connection(),
            Place::Node(_) => true,
        }
    }

    fn is_open(&self) -> bool {
        match &self.place {
            Place::World(on) => !on.crashed && !on.faults.cut() && on.inner.is_open(),
            Place::Node(_) => true,
        }
    }
}
