//! One scenario on the nodes: their keys, their clocks, and the faults played on them.
//!
//! A [`Cluster`] borrows the test process's nodes ([`super::lease`]), heals whatever the last
//! scenario did to them, and gives this one a fresh lock key. Time is virtual, as everywhere in
//! the grader: the scenario's now moves when a client waits, when a node's reply is held back
//! (a per-node delay, charged after the command ran), or when a client's request to a paused node
//! times out. Each node keeps its own [`Clock`], at the scenario's now plus the node's own skew, so
//! one node's clock can jump ahead while the others' do not; a node's keys are brought to its time
//! just before anyone reads or writes them, which no one can tell from a clock that ran all along.
//! A paused node's clock cannot move (its process is stopped): it catches up when it resumes, as
//! a real Redis, whose expiry follows the wall clock, would.
//!
//! An intervention can fire before any command a Redlock under test sends, counted across all
//! nodes, or after its last one: the same boundaries the single-node [`crate::probe`] steps in at.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use redis::Connection;

use super::record::{Answer, Entry, Sent};
use super::{Health, Lease};
use crate::clock::{Clock, Expiry, Sighting};
use crate::error::GradeError;
use crate::wire::fault::Faults;
use crate::wire::{Fault, Hit, Step};

/// How long a client waits for a paused node before it gives up on the request, in virtual
/// milliseconds: the per-node time-out of the published algorithm, small beside the TTL.
pub const NODE_TIMEOUT_MS: u64 = 50;

/// What a scenario does between two commands: a fault, a wait, another client. It returns what
/// it did, for the record.
pub type Move = Box<dyn FnMut(&mut Cluster) -> Result<String, GradeError> + Send>;

/// A cluster shared by the grader and the wires of the Redlock under test.
pub type SharedCluster = Arc<Mutex<Cluster>>;

/// Locks a shared cluster (a panic in learner code never leaves it half-changed).
pub fn enter(cluster: &SharedCluster) -> MutexGuard<'_, Cluster> {
    cluster.lock().unwrap_or_else(|p| p.into_inner())
}

/// Where a command to a node goes.
pub(crate) enum Route {
    /// To the node, on a connection of this generation.
    Send { url: String, generation: u64 },
    /// Nowhere: the node is paused, and the request times out.
    Paused,
    /// Nowhere: the node is down.
    Down,
}

/// The grader's side of one node in a scenario.
struct Seat {
    con: Option<Connection>,
    /// The node's generation `con` was opened at, to give it back to the node.
    generation: u64,
    clock: Clock,
    skew_ms: u64,
    delay_ms: u64,
    /// When a killed node comes back (scenario time), if it is to come back.
    restart_at: Option<u64>,
    /// Down for the rest of the scenario without being killed ([`Cluster::make_unreachable`]).
    unreachable: bool,
}

/// One scenario on the nodes.
pub struct Cluster {
    lease: Lease,
    key: String,
    book: String,
    now_ms: u64,
    seats: Vec<Seat>,
    /// Commands sent by the calls under test, across all nodes.
    commands: usize,
    pending: Option<(usize, Move)>,
    /// The fault a move armed for the next command to any node, and what it hit.
    faults: Faults,
    /// What the calls under test sent, and the grader's moves in between.
    record: Vec<Entry>,
    /// A problem of the grader's own met while learner code held the wires.
    trouble: Option<GradeError>,
}

impl Drop for Cluster {
    /// Gives the grader's own connections back to their nodes, for the next scenario: a
    /// connection that broke (its node killed, a read that failed) is not kept.
    fn drop(&mut self) {
        let mut nodes = self.lease.nodes();
        for (i, seat) in self.seats.iter_mut().enumerate() {
            if let Some(con) = seat.con.take()
                && redis::ConnectionLike::is_open(&con)
            {
                nodes.node(i).give_back(seat.generation, con);
            }
        }
    }
}

impl Cluster {
    /// Borrows the nodes (starting them on first use), heals them, and opens a scenario at
    /// virtual 0 with a fresh lock key.
    pub fn open() -> Result<Cluster, GradeError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let lease = super::lease()?;
        lease.nodes().heal()?;
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let prefix = format!("dlcourse:redlock:{}:{n}:", std::process::id());
        let key = format!("{prefix}lock");
        let book = format!("{prefix}clock");
        let mut cluster = Cluster {
            lease,
            key,
            book,
            now_ms: 0,
            seats: Vec::new(),
            commands: 0,
            pending: None,
            faults: Faults::reconnecting(),
            record: Vec::new(),
            trouble: None,
        };
        for i in 0..super::NODES {
            let seat = cluster.seat(i)?;
            cluster.seats.push(seat);
        }
        Ok(cluster)
    }

    /// A fresh seat at node `i`, as it is now.
    fn seat(&self, i: usize) -> Result<Seat, GradeError> {
        let mut nodes = self.lease.nodes();
        let node = nodes.node(i);
        let generation = node.generation();
        let con = node.grader_connection()?;
        Ok(Seat {
            con: Some(con),
            generation,
            clock: Clock::new(self.book.clone(), std::slice::from_ref(&self.key)),
            skew_ms: 0,
            delay_ms: 0,
            restart_at: None,
            unreachable: false,
        })
    }

    /// Wraps the cluster for sharing with wires.
    pub fn shared(self) -> SharedCluster {
        Arc::new(Mutex::new(self))
    }

    /// The lock key, the same on every node.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// How many nodes there are.
    pub fn len(&self) -> usize {
        self.seats.len()
    }

    /// Whether there are no nodes (never, once open).
    pub fn is_empty(&self) -> bool {
        self.seats.is_empty()
    }

    /// The scenario's virtual now, in milliseconds.
    pub fn now_ms(&self) -> u64 {
        self.now_ms
    }

    /// Node `i`'s own virtual now: the scenario's plus its clock's jumps.
    pub fn node_now_ms(&self, i: usize) -> u64 {
        self.now_ms + self.seats[i].skew_ms
    }

    /// What node `i` is doing, as the scenario sees it: down when it is unreachable.
    pub fn health(&self, i: usize) -> Health {
        if self.seats[i].unreachable {
            return Health::Down;
        }
        self.lease.nodes().nodes()[i].health()
    }

    /// The process id of node `i`'s `redis-server` (the last one, when down).
    pub fn pid(&self, i: usize) -> i32 {
        self.lease.nodes().nodes()[i].pid()
    }

    /// The port the grader reaches node `i` at.
    pub fn port(&self, i: usize) -> u16 {
        self.lease.nodes().nodes()[i].port()
    }

    /// The URL the grader and the proxy reach node `i` by, with its password: never print it.
    pub fn url(&self, i: usize) -> String {
        self.lease.nodes().nodes()[i].url()
    }

    /// The host and port the grader reaches node `i` at.
    pub fn address(&self, i: usize) -> (String, u16) {
        self.lease.nodes().nodes()[i].address()
    }

    /// Node `i`'s container id, when the nodes are containers.
    pub fn container(&self, i: usize) -> Option<String> {
        self.lease.nodes().nodes()[i].container().map(str::to_owned)
    }

    /// Time passes for everyone (a client waits, or is paused).
    pub fn advance(&mut self, ms: u64) {
        self.now_ms += ms;
    }

    /// Node `i`'s clock jumps `ms` ahead of the others' (an NTP step, an operator's fix).
    pub fn jump(&mut self, i: usize, ms: u64) -> Result<(), GradeError> {
        self.seats[i].skew_ms += ms;
        self.catch_up(i)
    }

    /// Every reply of node `i` arrives `ms` of virtual time after the node ran the command.
    pub fn delay(&mut self, i: usize, ms: u64) {
        self.seats[i].delay_ms = ms;
    }

    /// Stops node `i` where it is (`SIGSTOP`, `docker pause`).
    pub fn pause(&mut self, i: usize) -> Result<(), GradeError> {
        // Its keys first reach the time at which it stops.
        self.catch_up(i)?;
        self.lease.nodes().node(i).pause()?;
        Ok(())
    }

    /// Lets node `i` go on (`SIGCONT`, `docker unpause`); its clock catches up with the time it missed.
    pub fn resume(&mut self, i: usize) -> Result<(), GradeError> {
        self.lease.nodes().node(i).resume()?;
        self.catch_up(i)
    }

    /// Kills node `i` (`SIGKILL`, `docker kill`); it stays down until [`Cluster::restart_after`].
    pub fn kill(&mut self, i: usize) {
        self.lease.nodes().node(i).kill();
        let seat = &mut self.seats[i];
        seat.con = None;
        seat.restart_at = None;
    }

    /// Node `i` is down for the rest of this scenario, for everyone in it: every command sent to
    /// it is refused as a dead node's port refuses it, and the grader reads nothing from it. The
    /// node itself runs on, untouched. For a node that is down from a scenario's start to its
    /// end (the explorer's rounds), this is all a kill would do that anyone could tell, since no
    /// command of the scenario reaches a node either way: what the lock under test sees is what
    /// the proxy answers for it ([`Route::Down`]). It spares the kill and the restart the next
    /// scenario would need. A node that goes down in the middle of a scenario, with keys that
    /// must be lost, is killed ([`Cluster::kill`]).
    pub fn make_unreachable(&mut self, i: usize) {
        self.seats[i].unreachable = true;
    }

    /// Kills node `i` if it runs, and starts it again, empty, once `ms` of virtual time have
    /// passed: at once with 0, after the longest TTL for antirez's delayed restart.
    pub fn restart_after(&mut self, i: usize, ms: u64) -> Result<(), GradeError> {
        if self.health(i) != Health::Down {
            self.kill(i);
        }
        self.seats[i].restart_at = Some(self.now_ms + ms);
        self.catch_up(i)
    }

    /// Brings node `i` to its own now: restarts it if its time has come, and runs the expiry of
    /// its keys up to its clock. A paused or down node is left as it is.
    fn catch_up(&mut self, i: usize) -> Result<(), GradeError> {
        let due = self.seats[i].restart_at.is_some_and(|at| at <= self.now_ms);
        if due && self.health(i) == Health::Down {
            self.lease.nodes().node(i).restart()?;
            let mut fresh = self.seat(i)?;
            fresh.skew_ms = self.seats[i].skew_ms;
            fresh.delay_ms = self.seats[i].delay_ms;
            self.seats[i] = fresh;
        }
        if self.health(i) != Health::Up {
            return Ok(());
        }
        let now = self.node_now_ms(i);
        let seat = &mut self.seats[i];
        if let Some(con) = seat.con.as_mut() {
            seat.clock.advance_to(con, now)?;
        }
        Ok(())
    }

    /// The grader's own connection to node `i`, brought to its now; `None` when the node is
    /// paused or down.
    fn look(&mut self, i: usize) -> Result<Option<&mut Connection>, GradeError> {
        self.catch_up(i)?;
        if self.health(i) != Health::Up {
            return Ok(None);
        }
        Ok(self.seats[i].con.as_mut())
    }

    /// The token in the lock key on node `i`; `None` when there is none or the node cannot be
    /// asked (paused or down).
    pub fn holder(&mut self, i: usize) -> Result<Option<String>, GradeError> {
        let key = self.key.clone();
        let Some(con) = self.look(i)? else {
            return Ok(None);
        };
        Ok(redis::cmd("GET").arg(&key).query(con)?)
    }

    /// The tokens in the lock key, node by node.
    pub fn holders(&mut self) -> Result<Vec<Option<String>>, GradeError> {
        (0..self.len()).map(|i| self.holder(i)).collect()
    }

    /// How many nodes hold `token`.
    pub fn held_by(&mut self, token: &str) -> Result<usize, GradeError> {
        Ok(self
            .holders()?
            .iter()
            .filter(|h| h.as_deref() == Some(token))
            .count())
    }

    /// How long the lock key on node `i` has left on the node's clock, if it has a TTL.
    pub fn ttl_left(&mut self, i: usize) -> Result<Option<u64>, GradeError> {
        let key = self.key.clone();
        if self.look(i)?.is_none() {
            return Ok(None);
        }
        let now = self.node_now_ms(i);
        let seat = &mut self.seats[i];
        let Some(con) = seat.con.as_mut() else {
            return Ok(None);
        };
        seat.clock.settle(con)?;
        Ok(match seat.clock.expiry(con, &key)? {
            Expiry::At(at) => Some(at.saturating_sub(now)),
            Expiry::Missing | Expiry::Never => None,
        })
    }

    /// Another client (the grader) takes the lock on node `i` with `SET NX PX`, as a correct
    /// Redlock would; `true` when it did.
    pub fn take(&mut self, i: usize, token: &str, ttl_ms: u64) -> Result<bool, GradeError> {
        let key = self.key.clone();
        let Some(con) = self.look(i)? else {
            return Ok(false);
        };
        let ok: Option<String> = redis::cmd("SET")
            .arg(&key)
            .arg(token)
            .arg("NX")
            .arg("PX")
            .arg(ttl_ms)
            .query(con)?;
        let seat = &mut self.seats[i];
        if let Some(con) = seat.con.as_mut() {
            seat.clock.settle(con)?;
        }
        Ok(ok.is_some())
    }

    /// Runs `action` just before command number `before` (0-based, counted across nodes) of the
    /// calls under test; `before` equal to the number of commands they send means after the last.
    pub fn intervene(&mut self, before: usize, action: Move) {
        self.pending = Some((before, action));
    }

    /// Makes `fault` hit the next command of the calls under test, to whichever node
    /// ([`crate::wire::fault`]); a [`Move`] that does only this shows on that command's line.
    pub fn fail_at(&mut self, before: usize, fault: Fault) {
        self.intervene(
            before,
            Box::new(move |c: &mut Cluster| {
                c.faults.arm(fault);
                Ok(String::new())
            }),
        );
    }

    /// What the fault [`Cluster::fail_at`] armed hit, if anything, and forgets it and any
    /// intervention not yet due (the call sent fewer commands than it waited for): the next call
    /// starts without them.
    pub fn take_fault(&mut self) -> Option<Hit> {
        self.pending = None;
        self.faults.take()
    }

    /// What the fault [`Cluster::fail_at`] armed hit, if it hit a command.
    pub fn fault_hit(&self) -> Option<&Hit> {
        self.faults.hit()
    }

    /// The calls' faults, for their wires.
    pub(crate) fn faults(&mut self) -> &mut Faults {
        &mut self.faults
    }

    /// How many commands the calls under test have sent so far.
    pub fn commands(&self) -> usize {
        self.commands
    }

    /// The record of the calls under test: every command, its node and reply, and the grader's
    /// moves in between.
    pub fn steps(&self) -> Vec<Step> {
        self.record.iter().map(Entry::step).collect()
    }

    /// The commands the calls under test sent, in order, across all nodes.
    pub fn sent(&self) -> impl Iterator<Item = &Sent> {
        self.record.iter().filter_map(|entry| match entry {
            Entry::Sent(sent) => Some(sent),
            Entry::Moved(_) => None,
        })
    }

    /// Adds a line to the record.
    pub fn note(&mut self, what: impl Into<String>) {
        self.record.push(Entry::Moved(what.into()));
    }

    /// Fires the pending intervention if its boundary is the current one.
    pub fn fire_if_due(&mut self) -> Result<(), GradeError> {
        let due = self
            .pending
            .as_ref()
            .is_some_and(|(before, _)| *before == self.commands);
        if due && let Some((_, mut action)) = self.pending.take() {
            let what = action(self)?;
            if !what.is_empty() {
                self.note(what);
            }
        }
        Ok(())
    }

    /// Takes the grader's own problem met during a call, if any.
    pub fn take_trouble(&mut self) -> Result<(), GradeError> {
        match self.trouble.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Before a command of the call under test goes to node `i`: fires a due intervention,
    /// brings the node to its now, and says where the command goes.
    pub(crate) fn before_command(&mut self, i: usize) -> Route {
        let ready = self.fire_if_due().and_then(|()| self.catch_up(i));
        if let Err(e) = ready {
            self.trouble.get_or_insert(e);
        }
        match self.health(i) {
            Health::Paused => Route::Paused,
            Health::Down => Route::Down,
            Health::Up => {
                let nodes = self.lease.nodes();
                let node = &nodes.nodes()[i];
                Route::Send {
                    url: node.url(),
                    generation: node.generation(),
                }
            }
        }
    }

    /// After a command of the call under test reached node `i` (or did not): notes any TTL it
    /// set (its round trip, sent at the instant given with `sent`, told the clock what the
    /// [`Sighting`] says), charges the node's reply delay or the client's time-out, and, unless
    /// `hidden` (redis-rs loading a script the node did not know), counts and records it with
    /// the `answer` that came back.
    pub(crate) fn after_command(
        &mut self,
        i: usize,
        command: String,
        answer: Answer,
        sent: Option<(std::time::Instant, Sighting)>,
        hidden: bool,
    ) {
        if let Some((sent, sighting)) = sent {
            let seat = &mut self.seats[i];
            if let Some(con) = seat.con.as_mut()
                && let Err(e) = seat.clock.settle_after(con, sent, &sighting)
            {
                self.trouble.get_or_insert(e);
            }
            self.now_ms += self.seats[i].delay_ms;
        } else if self.health(i) == Health::Paused {
            self.now_ms += NODE_TIMEOUT_MS;
        }
        if !hidden {
            self.commands += 1;
            self.record.push(Entry::Sent(Sent {
                node: i,
                command,
                answer,
            }));
        }
    }

    /// `arg` with the scenario's lock key shown as `lock`, for reports.
    pub fn display(&self, arg: &str) -> String {
        arg.replace(&self.key, "lock")
    }
}
