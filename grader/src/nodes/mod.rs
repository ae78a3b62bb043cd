//! Several independent Redis nodes, and the faults that really happen to them.
//!
//! Redlock runs against N independent primaries (the course uses five). To show what it survives
//! and what breaks it, the grader needs nodes it can hurt: a node stopped where it is (as a long
//! pause or a swapped-out machine would stop it) and continued, a node killed and started again
//! without persistence, so that it comes back empty, and the same restart held back for the
//! longest TTL, as antirez proposes. The nodes come from the source that starts the grader's
//! servers ([`crate::server::node_source`]), and a [`Node`] hides which:
//!
//! | source    | a node is                                  | pause / resume        | kill          | restart |
//! |-----------|--------------------------------------------|-----------------------|---------------|---------|
//! | process   | `redis-server` on loopback ([`process`])   | `SIGSTOP` / `SIGCONT` | `SIGKILL`     | a fresh server on the same port |
//! | container | a container on a private Docker network ([`container`], [`network`]) | `docker pause` / `docker unpause` | `docker kill` | the same container started again, at the same address |
//!
//! Either way none outlives the test process, however it ends: the kernel kills a process when
//! the test process ends, and the grader's Docker helper removes a container and the network when
//! the process ends (the next run's sweep, should the helper itself be killed).
//! And either way each node requires a password of its own, kept across its restarts, which
//! [`Node::url`] carries to every connection: the grader's, and the wires' of a Redlock under
//! test.
//!
//! The [`NodeSet`] here owns the nodes and applies faults; [`cluster`] runs one scenario on
//! them, on virtual time, with a clock of its own for each node, and a Redlock under test reaches
//! each node through the grader's one proxy, [`crate::Wire::to_nodes`], which writes what each
//! command got in the cluster's [`record`]. One test process starts its nodes once and lends them
//! to one [`cluster::Cluster`] at a time: a fault in one scenario cannot reach another.

pub mod cluster;
mod container;
pub mod network;
mod process;
pub mod record;

use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};

use crate::server::{NodeSource, Password, ServerError, node_source};

use container::ContainerNode;
use process::ProcessNode;

pub use cluster::{Cluster, SharedCluster};

/// How many nodes Redlock runs on in this course.
pub const NODES: usize = 5;

/// What a node is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Health {
    /// Running and answering.
    Up,
    /// Stopped where it is (`SIGSTOP`, `docker pause`): it holds its connections and its data,
    /// and answers nothing.
    Paused,
    /// Killed: no server, no data.
    Down,
}

/// What a node runs on.
#[derive(Debug)]
enum Backend {
    Process(ProcessNode),
    Container(ContainerNode),
}

/// One Redis node and what has been done to it.
#[derive(Debug)]
pub struct Node {
    backend: Backend,
    health: Health,
    /// How many times the node was started: a connection opened before a restart is dead.
    generation: u64,
    /// A kill that did not happen as it should: the node cannot be trusted to come back empty.
    fault: Option<ServerError>,
    /// The grader's own connection the last scenario gave back, and the generation it reaches:
    /// the next scenario takes it rather than opening one (a Redlock check plays hundreds).
    spare: Spare,
}

/// A connection kept for the next scenario on a node.
#[derive(Default)]
struct Spare(Option<(u64, redis::Connection)>);

impl std::fmt::Debug for Spare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Spare(kept)"
        } else {
            "Spare(none)"
        })
    }
}

impl Node {
    fn new(backend: Backend) -> Node {
        Node {
            backend,
            health: Health::Up,
            generation: 0,
            fault: None,
            spare: Spare::default(),
        }
    }

    /// The node's URL, with the node's own password: its Unix socket for a process
    /// (`redis+unix:///PATH?pass=PASSWORD`), `redis://:PASSWORD@172.18.0.2:6379` for a container
    /// reached on its network. What the grader and the proxy of a Redlock under test connect
    /// with. Never print it: print [`crate::server::redacted`]`(url)`, or [`Node::address`].
    pub fn url(&self) -> String {
        match &self.backend {
            Backend::Process(node) => node.url(),
            Backend::Container(node) => {
                let (host, port) = node.reach();
                self.password().url(&host, port)
            }
        }
    }

    /// The node's password, the same across restarts: for the grader's own configuration of
    /// the nodes (a replica's `masterauth`).
    pub(crate) fn password(&self) -> &Password {
        match &self.backend {
            Backend::Process(node) => node.password(),
            Backend::Container(node) => node.password(),
        }
    }

    /// The host and port the node listens at, the same across restarts (a process node is
    /// reached by its socket, see [`Node::url`], and keeps its port for its peers).
    pub fn address(&self) -> (String, u16) {
        match &self.backend {
            Backend::Process(node) => ("127.0.0.1".to_owned(), node.port()),
            Backend::Container(node) => node.reach(),
        }
    }

    /// The port the grader reaches the node at (see [`Node::address`] for the host).
    pub fn port(&self) -> u16 {
        self.address().1
    }

    /// The host and port another node uses to reach this one (for `REPLICAOF`): loopback and
    /// its port for a process, its address on the private network and 6379 for a container.
    pub fn peer_address(&self) -> (String, u16) {
        match &self.backend {
            Backend::Process(node) => ("127.0.0.1".to_owned(), node.port()),
            Backend::Container(node) => node.peer_address(),
        }
    }

    /// The node's container id, when the nodes are containers.
    pub fn container(&self) -> Option<&str> {
        match &self.backend {
            Backend::Process(_) => None,
            Backend::Container(node) => Some(node.id()),
        }
    }

    /// What the node is doing.
    pub fn health(&self) -> Health {
        self.health
    }

    /// How many times the node was restarted.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The process id of the node's `redis-server` on this host (that of the last one, when a
    /// process node is down; 0 when a container node is).
    pub fn pid(&self) -> i32 {
        match &self.backend {
            Backend::Process(node) => node.pid(),
            Backend::Container(node) => node.pid(),
        }
    }

    /// Opens a connection to the node, with the grader's time-outs.
    pub fn connect(&self) -> Result<redis::Connection, ServerError> {
        let url = self.url();
        let cause = match self.health {
            Health::Down => "the node is down".to_owned(),
            _ => match crate::server::connect_url(&url) {
                Ok(con) => return Ok(con),
                Err(cause) => cause,
            },
        };
        Err(ServerError::connect(&url, cause))
    }

    /// The grader's own connection to the node: the one the last scenario gave back, if it
    /// still reaches this server, else a new one. Only the grader's connections are kept: a
    /// client's may have been left inside a `MULTI` or a `WATCH` by the code under test.
    pub fn grader_connection(&mut self) -> Result<redis::Connection, ServerError> {
        match self.spare.0.take() {
            Some((generation, con)) if generation == self.generation => Ok(con),
            _ => self.connect(),
        }
    }

    /// Keeps `con`, a connection of the grader's own opened at `generation`, for the next
    /// scenario, if the node still runs that server.
    pub fn give_back(&mut self, generation: u64, con: redis::Connection) {
        if generation == self.generation && self.health != Health::Down {
            self.spare.0 = Some((generation, con));
        }
    }

    /// Stops the node where it is, and returns once it has stopped.
    pub fn pause(&mut self) -> Result<(), ServerError> {
        if self.health == Health::Up {
            match &self.backend {
                Backend::Process(node) => node.pause(),
                Backend::Container(node) => node.pause()?,
            }
            self.health = Health::Paused;
        }
        Ok(())
    }

    /// Lets a paused node go on.
    pub fn resume(&mut self) -> Result<(), ServerError> {
        if self.health == Health::Paused {
            match &self.backend {
                Backend::Process(node) => node.resume(),
                Backend::Container(node) => node.resume()?,
            }
            self.health = Health::Up;
        }
        Ok(())
    }

    /// Kills the node's server (`SIGKILL`): it loses everything it held, as it runs without
    /// persistence. Returns once it has stopped. Should the engine fail to kill a container, the
    /// node counts as down all the same, and its restart says why it cannot be trusted.
    pub fn kill(&mut self) {
        if self.health == Health::Down {
            return;
        }
        match &mut self.backend {
            Backend::Process(node) => node.kill(),
            Backend::Container(node) => {
                if let Err(e) = node.kill() {
                    self.fault.get_or_insert(e);
                }
            }
        }
        self.health = Health::Down;
        self.spare.0 = None;
    }

    /// Starts a killed node again at its address, empty. A running node is left alone.
    pub fn restart(&mut self) -> Result<(), ServerError> {
        if let Some(fault) = &self.fault {
            return Err(fault.clone());
        }
        if self.health != Health::Down {
            return Ok(());
        }
        match &mut self.backend {
            Backend::Process(node) => node.restart()?,
            Backend::Container(node) => node.restart()?,
        }
        self.health = Health::Up;
        self.generation += 1;
        Ok(())
    }

    /// Brings the node back to running, whatever was done to it.
    fn heal(&mut self) -> Result<(), ServerError> {
        self.resume()?;
        self.restart()
    }
}

/// The test process's nodes, started on first use.
#[derive(Debug)]
pub struct NodeSet {
    nodes: Vec<Node>,
}

impl NodeSet {
    /// Starts `n` nodes from this process's node source ([`node_source`]).
    pub fn start(n: usize) -> Result<NodeSet, ServerError> {
        NodeSet::start_from(n, &node_source()?)
    }

    /// Starts `n` nodes from `source`: processes each on a free loopback port, or containers on
    /// the run's private network.
    pub fn start_from(n: usize, source: &NodeSource) -> Result<NodeSet, ServerError> {
        let nodes = match source {
            NodeSource::Process => (0..n)
                .map(|_| ProcessNode::start().map(Backend::Process))
                .collect::<Result<Vec<_>, _>>()?,
            NodeSource::Container { image } => ContainerNode::start_all(n, image)?
                .into_iter()
                .map(Backend::Container)
                .collect(),
        };
        Ok(NodeSet {
            nodes: nodes.into_iter().map(Node::new).collect(),
        })
    }

    /// The first two nodes, apart (a primary and its replica); a set of fewer is a bug here.
    pub fn into_pair(self) -> [Node; 2] {
        let mut nodes = self.nodes.into_iter();
        match (nodes.next(), nodes.next()) {
            (Some(first), Some(second)) => [first, second],
            _ => panic!("into_pair on a set of fewer than two nodes"),
        }
    }

    /// The nodes, in order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Node `i`.
    pub fn node(&mut self, i: usize) -> &mut Node {
        &mut self.nodes[i]
    }

    /// Resumes every paused node and restarts every killed one.
    pub fn heal(&mut self) -> Result<(), ServerError> {
        self.nodes.iter_mut().try_for_each(Node::heal)
    }
}

/// The test process's [`NODES`] nodes, started on the first call, lent to one holder at a time:
/// the returned [`Lease`] gives them back when dropped.
pub fn lease() -> Result<Lease, ServerError> {
    static SET: OnceLock<Result<Mutex<NodeSet>, ServerError>> = OnceLock::new();
    let set = SET
        .get_or_init(|| NodeSet::start(NODES).map(Mutex::new))
        .as_ref()
        .map_err(Clone::clone)?;
    let mut busy = LENT.0.lock().unwrap_or_else(|p| p.into_inner());
    while *busy {
        busy = LENT.1.wait(busy).unwrap_or_else(|p| p.into_inner());
    }
    *busy = true;
    Ok(Lease { set })
}

/// Whether the nodes are lent out, and the wait for their return.
static LENT: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());

/// The right to use the nodes until dropped. It can cross threads, unlike a mutex guard.
#[derive(Debug)]
pub struct Lease {
    set: &'static Mutex<NodeSet>,
}

impl Lease {
    /// The nodes, for one quick step (a fault, a connection).
    pub fn nodes(&self) -> MutexGuard<'static, NodeSet> {
        self.set.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let mut busy = LENT.0.lock().unwrap_or_else(|p| p.into_inner());
        *busy = false;
        LENT.1.notify_one();
    }
}
