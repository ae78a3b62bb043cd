//! Several independent Redis nodes, and the faults that really happen to them.
//!
//! Redlock runs against N independent primaries (the course uses five). To show what it survives
//! and what breaks it, the grader needs nodes it can hurt: a node the operating system stops
//! (`SIGSTOP`, as a long pause or a swapped-out machine would) and continues, a node killed and
//! started again without persistence, so that it comes back empty, and the same restart held back
//! for the longest TTL, as antirez proposes. These are real `redis-server` processes on loopback,
//! started by the process source ([`crate::server`]) under the same watchdog, so none outlives
//! the test process, however it ends.
//!
//! The [`NodeSet`] here owns the processes and applies faults; [`cluster`] runs one scenario on
//! them, on virtual time, with a clock of its own for each node, and [`wire`] is the connection
//! a Redlock under test gets to each node. One test process starts its nodes once and lends them
//! to one [`cluster::Cluster`] at a time: a fault in one scenario cannot reach another.

pub mod cluster;
pub mod wire;

use std::net::TcpStream;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::server::{RedisServer, ServerError, process};

pub use cluster::{Cluster, SharedCluster};
pub use wire::NodeWire;

/// How many nodes Redlock runs on in this course.
pub const NODES: usize = 5;

/// How long a killed node may take to let go of its port.
const EXIT_TIMEOUT: Duration = Duration::from_secs(5);

/// What a node is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Health {
    /// Running and answering.
    Up,
    /// Stopped by `SIGSTOP`: it holds its connections and its data, and answers nothing.
    Paused,
    /// Killed: no process, no data.
    Down,
}

/// One `redis-server` process and what has been done to it.
#[derive(Debug)]
pub struct Node {
    server: Option<RedisServer>,
    port: u16,
    pid: i32,
    health: Health,
    /// How many times the node was started: a connection opened before a restart is dead.
    generation: u64,
}

impl Node {
    pub(crate) fn start(port: Option<u16>) -> Result<Node, ServerError> {
        let server = process::start_process_on(port)?;
        let port = port_of(server.url());
        let pid = pid_of(&server)?;
        Ok(Node {
            server: Some(server),
            port,
            pid,
            health: Health::Up,
            generation: 0,
        })
    }

    /// The node's URL, e.g. `redis://127.0.0.1:40001`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The loopback port the node listens on, the same across restarts.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The address another node uses to reach this one, e.g. for `REPLICAOF`.
    pub fn peer_address(&self) -> (String, u16) {
        ("127.0.0.1".into(), self.port)
    }

    /// What the node is doing.
    pub fn health(&self) -> Health {
        self.health
    }

    /// How many times the node was restarted.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The process id of the running `redis-server` (that of the last one, when down).
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Opens a connection to the node, with the grader's time-outs.
    pub fn connect(&self) -> Result<redis::Connection, ServerError> {
        match &self.server {
            Some(server) => server.connect(),
            None => Err(ServerError::Connect {
                url: self.url(),
                cause: "the node is down".to_owned(),
            }),
        }
    }

    /// Stops the process where it is (`SIGSTOP`), and returns once it has stopped.
    pub fn pause(&mut self) {
        if self.health == Health::Up {
            signal(self.pid, libc::SIGSTOP);
            self.health = Health::Paused;
            // The signal is delivered asynchronously; where /proc tells, wait for the stop.
            let stat = format!("/proc/{}/stat", self.pid);
            let deadline = Instant::now() + EXIT_TIMEOUT;
            while Instant::now() < deadline {
                match std::fs::read_to_string(&stat) {
                    Ok(text)
                        if !text
                            .rsplit(')')
                            .next()
                            .is_some_and(|r| r.trim_start().starts_with('T')) =>
                    {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    _ => break,
                }
            }
        }
    }

    /// Lets a paused process go on (`SIGCONT`).
    pub fn resume(&mut self) {
        if self.health == Health::Paused {
            signal(self.pid, libc::SIGCONT);
            self.health = Health::Up;
        }
    }

    /// Kills the process (`SIGKILL`): it loses everything it held, as it runs without
    /// persistence. Returns once its port is closed.
    pub fn kill(&mut self) {
        if self.health == Health::Down {
            return;
        }
        signal(self.pid, libc::SIGKILL);
        // A stopped process dies of SIGKILL too; the continue is for good measure.
        signal(self.pid, libc::SIGCONT);
        self.server = None;
        self.health = Health::Down;
        let deadline = Instant::now() + EXIT_TIMEOUT;
        while TcpStream::connect(("127.0.0.1", self.port)).is_ok() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Starts a killed node again on its port, empty. A running node is left alone.
    pub fn restart(&mut self) -> Result<(), ServerError> {
        if self.health != Health::Down {
            return Ok(());
        }
        let mut fresh = Node::start(Some(self.port))?;
        self.server = fresh.server.take();
        self.pid = fresh.pid;
        self.health = Health::Up;
        self.generation += 1;
        Ok(())
    }

    /// Brings the node back to running, whatever was done to it.
    fn heal(&mut self) -> Result<(), ServerError> {
        self.resume();
        self.restart()
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        // A paused server would never act on the watchdog's stop.
        self.resume();
    }
}

/// The port of a `redis://127.0.0.1:PORT` URL.
fn port_of(url: &str) -> u16 {
    url.rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_default()
}

/// The server's process id, as its `INFO server` reports it.
fn pid_of(server: &RedisServer) -> Result<i32, ServerError> {
    let unusable = |cause: String| ServerError::Connect {
        url: server.url().to_owned(),
        cause,
    };
    let mut con = server.connect()?;
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query(&mut con)
        .map_err(|e| unusable(format!("INFO server failed: {e}")))?;
    info.lines()
        .find_map(|line| line.strip_prefix("process_id:"))
        .and_then(|pid| pid.trim().parse().ok())
        .ok_or_else(|| unusable("INFO server names no process_id".to_owned()))
}

fn signal(pid: i32, signal: libc::c_int) {
    if pid > 0 {
        // SAFETY: kill(2) on a pid this process started; a pid that has gone is harmless (ESRCH).
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

/// The test process's nodes, started on first use.
#[derive(Debug)]
pub struct NodeSet {
    nodes: Vec<Node>,
}

impl NodeSet {
    /// Starts `n` nodes, each on a free loopback port.
    pub fn start(n: usize) -> Result<NodeSet, ServerError> {
        let nodes = (0..n)
            .map(|_| Node::start(None))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(NodeSet { nodes })
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
