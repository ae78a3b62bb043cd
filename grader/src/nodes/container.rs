//! A node as a Redis container on the run's private Docker network, and its faults as the
//! engine's own.
//!
//! Each node is a container from the image of the container source (`REDIS_IMAGE`), asked for as
//! the one server's container is (persistence off, labelled with the run for the sweep), with a
//! name of its own on the run's network ([`super::network`]). Its faults are the engine's: a pause
//! is `docker pause`, which freezes every process of the container in its cgroup (the freezer)
//! with its connections and data, until `docker unpause`; a kill is `docker kill`, `SIGKILL` to
//! its server; a restart starts the same container again, empty since nothing was saved. The
//! container keeps its name, and Docker gives it back its address on the network: the address
//! is free, since only this run's nodes live there and they restart one at a time. The address
//! is read again after every start all the same, so that the grader follows the node should it
//! ever move.
//!
//! The grader reaches a node at its address on the private network when the host can route to
//! it, as a Linux host can (the network's bridge is one of its interfaces): that is the address
//! the other nodes use too ([`ContainerNode::peer_address`]), and no port mapping stands in
//! between. Where it cannot (Docker Desktop's virtual machine, an engine elsewhere), it uses the
//! port the container also publishes, on loopback for a local engine; the first node tells which.
//!
//! A node's container is a [`RedisContainer`], started as the one server's is, so no node outlives
//! the test process: the grader's Docker helper removes the containers, then the network, when
//! the process ends, however it ends (`server/engine.rs`); a helper killed itself leaves them to
//! the next run's sweep, which finds them by their owner labels.

use std::net::{SocketAddr, TcpStream};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::server::{Password, Placement, RedisContainer, ServerError, lease_connection, redacted};

/// The port Redis listens on inside each container.
const REDIS_PORT: u16 = 6379;

/// How long a restarted container may take to answer.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the first node may take to accept a connection on its network address before the
/// grader counts that address as out of the host's reach.
const ROUTE_TIMEOUT: Duration = Duration::from_millis(500);

/// Whether the host reaches the nodes at their network addresses, as the first node showed.
static ROUTABLE: OnceLock<bool> = OnceLock::new();

/// One node's container and where it is.
pub(super) struct ContainerNode {
    container: RedisContainer,
    network: &'static str,
    /// Its address on the private network.
    ip: String,
    /// Where the grader reaches it: the network address and 6379, or a published port.
    reach: (String, u16),
    /// The host process id of its `redis-server`, as the engine reports it; 0 when stopped.
    pid: i32,
    /// The connection that marks the container as this live run's (see `server/owner.rs`).
    lease: Option<redis::Connection>,
    /// The password its server requires, in the container's command, so the same after a
    /// restart.
    password: Password,
}

impl ContainerNode {
    /// Starts `n` nodes on the run's network, at the same time, and waits until each answers.
    pub(super) fn start_all(n: usize, image: &str) -> Result<Vec<ContainerNode>, ServerError> {
        crate::server::prepare_engine()?;
        let network = super::network::name()?;
        let passwords = (0..n)
            .map(|_| Password::fresh())
            .collect::<Result<Vec<_>, _>>()?;
        // Names unique on the network: a process may start its nodes more than once, and the
        // checks of one harness share its network.
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let run = crate::server::run_id();
        let starts = passwords
            .iter()
            .map(|password| {
                let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let placement = Placement {
                    network: Some(network.to_owned()),
                    name: Some(format!("dlcourse-nodes-{run}-{n}")),
                };
                (placement, password)
            })
            .collect();
        let containers = RedisContainer::start_all(image, "Redlock node container", starts)?;
        containers
            .into_iter()
            .zip(passwords)
            .map(|(container, password)| {
                let mut node = ContainerNode {
                    container,
                    network,
                    ip: String::new(),
                    reach: (String::new(), 0),
                    pid: 0,
                    lease: None,
                    password,
                };
                // Dropping the node on an error removes its container.
                node.locate()?;
                Ok(node)
            })
            .collect()
    }

    pub(super) fn id(&self) -> &str {
        self.container.id()
    }

    pub(super) fn reach(&self) -> (String, u16) {
        self.reach.clone()
    }

    pub(super) fn peer_address(&self) -> (String, u16) {
        (self.ip.clone(), REDIS_PORT)
    }

    pub(super) fn pid(&self) -> i32 {
        self.pid
    }

    pub(super) fn password(&self) -> &Password {
        &self.password
    }

    /// `docker pause`: the engine returns once the container is frozen.
    pub(super) fn pause(&self) -> Result<(), ServerError> {
        self.container.pause()
    }

    /// `docker unpause`.
    pub(super) fn resume(&self) -> Result<(), ServerError> {
        self.container.unpause()
    }

    /// `docker kill` (`SIGKILL`), paused or not; returns once the engine shows it stopped.
    pub(super) fn kill(&mut self) -> Result<(), ServerError> {
        self.lease = None;
        self.container.kill()?;
        self.pid = 0;
        Ok(())
    }

    /// Starts the killed container again, empty, and waits until it answers where it is now.
    pub(super) fn restart(&mut self) -> Result<(), ServerError> {
        self.container.start_again()?;
        self.locate()
    }

    /// Reads where the running container is, checks that it answers there within
    /// [`SETTLE_TIMEOUT`], and marks it as this run's.
    fn locate(&mut self) -> Result<(), ServerError> {
        let inspect = self.container.inspect()?;
        let ip = inspect
            .addresses
            .get(self.network)
            .cloned()
            .ok_or_else(|| self.failed("start", format!("no address on {}", self.network)))?;
        let published = inspect.published_port;
        self.pid = i32::try_from(inspect.pid).unwrap_or(0);
        let routable = *ROUTABLE.get_or_init(|| {
            format!("{ip}:{REDIS_PORT}")
                .parse::<SocketAddr>()
                .is_ok_and(|address| TcpStream::connect_timeout(&address, ROUTE_TIMEOUT).is_ok())
        });
        self.reach = match (routable, published) {
            (true, _) => (ip.clone(), REDIS_PORT),
            (false, Some(port)) => (self.container.published_host().to_owned(), port),
            (false, None) => {
                return Err(self.failed(
                    "start",
                    format!("the host cannot reach {ip}, and no port is published"),
                ));
            }
        };
        self.ip = ip;
        let url = self.url();
        let deadline = Instant::now() + SETTLE_TIMEOUT;
        loop {
            match crate::server::connect_url(&url).and_then(|mut con| {
                redis::cmd("PING")
                    .query::<String>(&mut con)
                    .map_err(|e| e.to_string())
            }) {
                Ok(_) => break,
                Err(cause) if Instant::now() >= deadline => {
                    let at = redacted(&url);
                    return Err(self.failed("start", format!("no answer at {at}: {cause}")));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
        self.lease = lease_connection(&url);
        Ok(())
    }

    /// The URL the grader reaches the node at, with its password.
    pub(super) fn url(&self) -> String {
        let (host, port) = &self.reach;
        self.password.url(host, *port)
    }

    fn failed(&self, action: &str, cause: String) -> ServerError {
        ServerError::DockerUnavailable {
            cause: format!(
                "`docker {action}` of the Redlock node container {} failed: {cause}",
                &self.id()[..self.id().len().min(12)]
            ),
        }
    }
}

impl std::fmt::Debug for ContainerNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContainerNode")
            .field("id", &self.id())
            .field("network", &self.network)
            .field("reach", &self.reach)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}
