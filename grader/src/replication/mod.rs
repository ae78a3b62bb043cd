//! A primary and its replica, and the faults that make a failover lose a lock.
//!
//! Redis replicates asynchronously: the primary answers a write at once and passes it on to its
//! replicas afterwards. When the primary dies in between and a replica is promoted in its place,
//! as Sentinel does, the write is gone although the client was told `OK`. This module holds two
//! real Redis nodes ([`Node`]s from the same source as Redlock's: `redis-server` processes on
//! loopback, or containers on the run's private network), the second a `REPLICAOF` the first,
//! and plays on them what such a story needs: the replica cut off (stopped, with `SIGSTOP` or
//! `docker pause`, and the primary dropping its link, so that what
//! the primary acknowledges from then on reaches no replica), the primary killed, the replica
//! promoted (`REPLICAOF NO ONE`), the old primary back, empty, as the new one's replica, and a
//! replica restarted empty, as one without persistence comes back.
//!
//! One test process starts its pair once and lends it to one scenario at a time ([`lease`]);
//! every lease begins by healing whatever the last one did, so that "node 1" is the primary
//! and "node 2" its replica, linked and in step, with no keys.

use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use redis::Connection;

use crate::error::GradeError;
use crate::nodes::{Health, Node, NodeSet};
use crate::server::ServerError;
use crate::timeline::{NodeHealth, NodeRole};

/// The nodes' names in a timeline, in row order: node 1 starts as the primary.
pub const NAMES: [&str; 2] = ["node 1", "node 2"];

/// How long the grader waits for a replica to link up and catch up, in real time, before it
/// gives up on the machine.
const LINK_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the grader waits for a new replica's first acknowledgement, in real
/// milliseconds: below the grader's read time-out, above the replica's once-a-second report.
const FIRST_ACK_TIMEOUT_MS: u64 = 4_000;

/// The key the grader writes to see a new replica acknowledge it (the nodes are the grader's
/// own: no one else's data is there).
const JOINED_KEY: &str = "dlcourse:replication:joined";

/// Two nodes, one the primary, the other its replica when linked.
#[derive(Debug)]
pub struct Pair {
    nodes: [Node; 2],
    primary: usize,
    /// Whether the replica is linked to the primary and copies what it writes.
    linked: bool,
}

/// The test process's pair, started on the first call and healed for the caller, who has it
/// alone until the guard is dropped.
pub fn lease() -> Result<MutexGuard<'static, Pair>, GradeError> {
    static PAIR: OnceLock<Result<Mutex<Pair>, ServerError>> = OnceLock::new();
    let pair = PAIR
        .get_or_init(|| Pair::start().map(Mutex::new))
        .as_ref()
        .map_err(Clone::clone)?;
    // A scenario that panicked leaves the pair as it was: healing is what comes next anyway.
    let mut pair = pair.lock().unwrap_or_else(|p| p.into_inner());
    pair.heal()?;
    Ok(pair)
}

impl Pair {
    fn start() -> Result<Pair, ServerError> {
        let [first, second] = NodeSet::start(2)?.into_pair();
        Ok(Pair {
            nodes: [first, second],
            primary: 0,
            linked: false,
        })
    }

    /// Brings both nodes back up, node 1 the primary with no keys, node 2 its replica, linked
    /// and in step.
    pub fn heal(&mut self) -> Result<(), GradeError> {
        for node in &mut self.nodes {
            node.resume()?;
            node.restart()?;
        }
        let mut first = self.nodes[0].connect()?;
        redis::cmd("REPLICAOF")
            .arg("NO")
            .arg("ONE")
            .exec(&mut first)?;
        redis::cmd("FLUSHALL").exec(&mut first)?;
        self.primary = 0;
        self.follow(1)
    }

    /// Index of the node that takes writes now.
    pub fn primary(&self) -> usize {
        self.primary
    }

    /// Index of the other node.
    pub fn replica(&self) -> usize {
        1 - self.primary
    }

    /// Whether the replica copies the primary's writes now.
    pub fn linked(&self) -> bool {
        self.linked
    }

    /// Node `i`.
    pub fn node(&self, i: usize) -> &Node {
        &self.nodes[i]
    }

    /// A new connection to the primary, with the grader's time-outs.
    pub fn connect_primary(&self) -> Result<Connection, GradeError> {
        Ok(self.nodes[self.primary].connect()?)
    }

    /// The URL of the primary, where clients send their commands, with its password: never
    /// print it (see [`crate::server::redacted`]).
    pub fn primary_url(&self) -> String {
        self.nodes[self.primary].url()
    }

    /// Node `i` as a timeline shows it.
    pub fn shown(&self, i: usize) -> (NodeHealth, Option<NodeRole>) {
        let health = match self.nodes[i].health() {
            Health::Up => NodeHealth::Up,
            Health::Paused => NodeHealth::Paused,
            Health::Down => NodeHealth::Down,
        };
        // A dead node has no role; it comes back as whatever it is told to be.
        let role = match health {
            NodeHealth::Down => None,
            _ if i == self.primary => Some(NodeRole::Primary),
            _ => Some(NodeRole::Replica),
        };
        (health, role)
    }

    /// Cuts the replica off: once it has everything the primary wrote so far, it is stopped
    /// (`SIGSTOP`, or `docker pause`) and the primary drops its link. What the primary acknowledges from now on
    /// reaches no replica, and the replica cannot ask for it again.
    pub fn cut_off_replica(&mut self) -> Result<(), GradeError> {
        let replica = self.replica();
        self.in_step(replica)?;
        self.nodes[replica].pause()?;
        let mut primary = self.connect_primary()?;
        redis::cmd("CLIENT")
            .arg("KILL")
            .arg("TYPE")
            .arg("replica")
            .exec(&mut primary)?;
        let dropped = || -> Result<bool, GradeError> {
            Ok(field(&info(&mut primary)?, "connected_slaves").as_deref() == Some("0"))
        };
        self.linked = false;
        until(
            dropped,
            &self.nodes[self.primary],
            "the primary to drop its replica",
        )
    }

    /// Kills the primary (`SIGKILL`): whatever it had not passed on is gone with it.
    pub fn kill_primary(&mut self) {
        self.nodes[self.primary].kill();
        self.linked = false;
    }

    /// Kills the replica and starts it again on its port, empty (it runs without persistence)
    /// and on its own: it has not yet found the primary again.
    pub fn restart_replica_empty(&mut self) -> Result<(), GradeError> {
        let replica = self.replica();
        self.nodes[replica].kill();
        self.nodes[replica].restart()?;
        self.linked = false;
        Ok(())
    }

    /// Promotes the replica, as Sentinel does when the primary is gone: it runs again if it was
    /// stopped, stops copying (`REPLICAOF NO ONE`) and takes writes with what it has.
    pub fn promote(&mut self) -> Result<(), GradeError> {
        let replica = self.replica();
        self.nodes[replica].resume()?;
        let mut con = self.nodes[replica].connect()?;
        redis::cmd("REPLICAOF")
            .arg("NO")
            .arg("ONE")
            .exec(&mut con)?;
        self.primary = replica;
        self.linked = false;
        Ok(())
    }

    /// Brings the node that is not the primary back as its replica: started again, empty, if it
    /// was killed, then linked and in step.
    pub fn rejoin(&mut self) -> Result<(), GradeError> {
        let replica = self.replica();
        self.nodes[replica].resume()?;
        self.nodes[replica].restart()?;
        self.follow(replica)
    }

    /// Makes node `i` a replica of the primary and waits until it is linked and in step.
    fn follow(&mut self, i: usize) -> Result<(), GradeError> {
        let mut primary = self.connect_primary()?;
        // The full copy goes through a file in the primary's folder, not straight over the
        // socket (Redis 7's default): after a copy over the socket, the primary streams
        // nothing to the new replica until the replica's first acknowledgement, which may be
        // its once-a-second report, up to a second of real time for every replica that joins.
        // Through a file, the replica takes part at once, in about a tenth of a second on
        // loopback. The replica also loads the copy from a file, Redis's default.
        redis::cmd("CONFIG")
            .arg("SET")
            .arg("repl-diskless-sync")
            .arg("no")
            .exec(&mut primary)?;
        let mut con = self.nodes[i].connect()?;
        // Each node requires a password of its own (see `server/password.rs`): the replica
        // signs in to its primary with the primary's. It is set here, not at start, because
        // either node may be the primary, and a restarted node has forgotten it.
        redis::cmd("CONFIG")
            .arg("SET")
            .arg("masterauth")
            .arg(self.nodes[self.primary].password().expose())
            .exec(&mut con)?;
        let (host, port) = self.nodes[self.primary].peer_address();
        redis::cmd("REPLICAOF").arg(host).arg(port).exec(&mut con)?;
        let up = || -> Result<bool, GradeError> {
            Ok(field(&info(&mut con)?, "master_link_status").as_deref() == Some("up"))
        };
        until(up, &self.nodes[i], "the replica's link to come up")?;
        // The replica may call its link up before the primary counts it: until then `WAIT`
        // would not count it either.
        let counted = || -> Result<bool, GradeError> {
            Ok(info(&mut primary)?
                .lines()
                .any(|line| line.starts_with("slave") && line.contains("state=online")))
        };
        until(counted, &self.nodes[i], "the primary to count its replica")?;
        // The first acknowledgement from a new replica can wait for its once-a-second report
        // instead of coming when asked. The grader takes any such wait here, once, so that a
        // client's `WAIT` then says only whether a replica is linked, and says it at once.
        redis::cmd("SET")
            .arg(JOINED_KEY)
            .arg(NAMES[i])
            .exec(&mut primary)?;
        let acked: u64 = redis::cmd("WAIT")
            .arg(1)
            .arg(FIRST_ACK_TIMEOUT_MS)
            .query(&mut primary)?;
        if acked == 0 {
            return Err(ServerError::connect(
                &self.nodes[i].url(),
                format!("the replica acknowledged nothing in {FIRST_ACK_TIMEOUT_MS} ms"),
            )
            .into());
        }
        self.linked = true;
        self.in_step(i)
    }

    /// Waits until replica `i` has processed everything the primary wrote so far.
    pub fn in_step(&self, i: usize) -> Result<(), GradeError> {
        let mut primary = self.connect_primary()?;
        let mut replica = self.nodes[i].connect()?;
        let caught_up = || -> Result<bool, GradeError> {
            let wrote = field(&info(&mut primary)?, "master_repl_offset");
            let copied = field(&info(&mut replica)?, "slave_repl_offset");
            Ok(wrote.is_some() && wrote == copied)
        };
        until(caught_up, &self.nodes[i], "the replica to catch up")
    }
}

/// `INFO replication` of a node.
fn info(con: &mut Connection) -> Result<String, GradeError> {
    Ok(redis::cmd("INFO").arg("replication").query(con)?)
}

/// The value of `name` in an `INFO` text.
fn field(info: &str, name: &str) -> Option<String> {
    info.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
        .map(|v| v.trim().to_string())
}

/// Polls `done` until it holds, for at most [`LINK_TIMEOUT`] of real time: replication is real,
/// so its progress is waited for, but it only decides when a step may go on, never a verdict.
fn until(
    mut done: impl FnMut() -> Result<bool, GradeError>,
    node: &Node,
    what: &str,
) -> Result<(), GradeError> {
    let deadline = Instant::now() + LINK_TIMEOUT;
    while !done()? {
        if Instant::now() > deadline {
            return Err(ServerError::connect(
                &node.url(),
                format!("waited {} s for {what}", LINK_TIMEOUT.as_secs()),
            )
            .into());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    Ok(())
}
