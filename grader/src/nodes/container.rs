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
//! No node outlives the test process: the containers are kept in a list that an `atexit` handler
//! removes, then the network, when the process exits; a process killed by a signal leaves them to
//! the next run's sweep, which finds them by their owner labels.

use std::net::{SocketAddr, TcpStream};
use std::sync::{Mutex, Once, OnceLock};
use std::time::{Duration, Instant};

use testcontainers::bollard::models::ContainerInspectResponse;
use testcontainers::bollard::query_parameters::{
    InspectContainerOptions, KillContainerOptions, StartContainerOptions,
};
use testcontainers::{Container, GenericImage, ImageExt};

use crate::server::{
    Password, ServerError, docker_call, engine_is_local, lease_connection, off_runtime, redacted,
    redis_request, start_request,
};

/// The port Redis listens on inside each container.
const REDIS_PORT: u16 = 6379;

/// How long a killed container may take to stop, and a restarted one to answer.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the first node may take to accept a connection on its network address before the
/// grader counts that address as out of the host's reach.
const ROUTE_TIMEOUT: Duration = Duration::from_millis(500);

/// The node containers still running, removed at exit (or when their node is dropped).
static LIVE: Mutex<Vec<Container<GenericImage>>> = Mutex::new(Vec::new());

/// Whether the host reaches the nodes at their network addresses, as the first node showed.
static ROUTABLE: OnceLock<bool> = OnceLock::new();

/// One node's container and where it is.
pub(super) struct ContainerNode {
    id: String,
    network: &'static str,
    /// Its address on the private network.
    ip: String,
    /// Where the grader reaches it: the network address and 6379, or a published port.
    reach: (String, u16),
    /// The host its published port is on, when the network address is out of reach.
    published_host: String,
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
        off_runtime(|| {
            std::thread::scope(|scope| {
                let starts: Vec<_> = (0..n)
                    .map(|_| scope.spawn(|| ContainerNode::start(image, network)))
                    .collect();
                starts
                    .into_iter()
                    .map(|start| {
                        start.join().unwrap_or_else(|_| {
                            Err(ServerError::DockerUnavailable {
                                cause: "the Docker client panicked".to_owned(),
                            })
                        })
                    })
                    .collect()
            })
        })
    }

    fn start(image: &str, network: &'static str) -> Result<ContainerNode, ServerError> {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let password = Password::fresh()?;
        let request = redis_request(image, &password)
            .with_network(network)
            .with_container_name(format!("{network}-{n}"));
        let container = start_request(image, request)?;
        let id = container.id().to_owned();
        let published_host = match container.get_host().map(|host| host.to_string()) {
            Ok(host) if !engine_is_local() && host != "localhost" => host,
            _ => "127.0.0.1".to_owned(),
        };
        register_exit_handler();
        LIVE.lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(container);
        let mut node = ContainerNode {
            id,
            network,
            ip: String::new(),
            reach: (String::new(), 0),
            published_host,
            pid: 0,
            lease: None,
            password,
        };
        // From here on the container is in LIVE: dropping the node removes it on any error.
        node.locate()?;
        Ok(node)
    }

    pub(super) fn id(&self) -> &str {
        &self.id
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
        let id = self.id.clone();
        self.engine("pause", |docker| async move {
            docker.pause_container(&id).await
        })
    }

    /// `docker unpause`.
    pub(super) fn resume(&self) -> Result<(), ServerError> {
        let id = self.id.clone();
        self.engine("unpause", |docker| async move {
            docker.unpause_container(&id).await
        })
    }

    /// `docker kill` (`SIGKILL`), paused or not, then waits until the engine shows it stopped.
    pub(super) fn kill(&mut self) -> Result<(), ServerError> {
        self.lease = None;
        let id = self.id.clone();
        self.engine("kill", |docker| async move {
            let options = KillContainerOptions {
                signal: "SIGKILL".to_owned(),
            };
            docker.kill_container(&id, Some(options)).await
        })?;
        let deadline = Instant::now() + SETTLE_TIMEOUT;
        while self.inspect()?.state.and_then(|s| s.running) == Some(true) {
            if Instant::now() >= deadline {
                return Err(self.failed(
                    "kill",
                    format!("it still runs {} s after SIGKILL", SETTLE_TIMEOUT.as_secs()),
                ));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        self.pid = 0;
        Ok(())
    }

    /// Starts the killed container again, empty, and waits until it answers where it is now.
    pub(super) fn restart(&mut self) -> Result<(), ServerError> {
        let id = self.id.clone();
        self.engine("start", |docker| async move {
            docker
                .start_container(&id, None::<StartContainerOptions>)
                .await
        })?;
        self.locate()
    }

    /// Reads where the running container is, checks that it answers there within
    /// [`SETTLE_TIMEOUT`], and marks it as this run's.
    fn locate(&mut self) -> Result<(), ServerError> {
        let inspect = self.inspect()?;
        let ip = inspect
            .network_settings
            .as_ref()
            .and_then(|settings| settings.networks.as_ref()?.get(self.network))
            .and_then(|endpoint| endpoint.ip_address.clone())
            .filter(|ip| !ip.is_empty())
            .ok_or_else(|| self.failed("start", format!("no address on {}", self.network)))?;
        let published = inspect
            .network_settings
            .as_ref()
            .and_then(|settings| settings.ports.as_ref()?.get("6379/tcp").cloned().flatten())
            .and_then(|bindings| bindings.first()?.host_port.as_deref()?.parse::<u16>().ok());
        self.pid = inspect
            .state
            .and_then(|state| state.pid)
            .and_then(|pid| i32::try_from(pid).ok())
            .unwrap_or(0);
        let routable = *ROUTABLE.get_or_init(|| {
            format!("{ip}:{REDIS_PORT}")
                .parse::<SocketAddr>()
                .is_ok_and(|address| TcpStream::connect_timeout(&address, ROUTE_TIMEOUT).is_ok())
        });
        self.reach = match (routable, published) {
            (true, _) => (ip.clone(), REDIS_PORT),
            (false, Some(port)) => (self.published_host.clone(), port),
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

    fn inspect(&self) -> Result<ContainerInspectResponse, ServerError> {
        let (id, name) = (self.id.clone(), self.id.as_str());
        off_runtime(|| {
            docker_call(|docker| async move {
                docker
                    .inspect_container(&id, None::<InspectContainerOptions>)
                    .await
            })
            .map_err(|cause| failed(name, "inspect", cause))
        })
    }

    /// Runs one call on the engine, bounded in time, naming the container and the action when
    /// it fails.
    fn engine<F>(
        &self,
        action: &str,
        call: impl FnOnce(testcontainers::bollard::Docker) -> F + Send,
    ) -> Result<(), ServerError>
    where
        F: Future<Output = Result<(), testcontainers::bollard::errors::Error>>,
    {
        let id = self.id.as_str();
        off_runtime(|| docker_call(call).map_err(|cause| failed(id, action, cause)))
    }

    fn failed(&self, action: &str, cause: String) -> ServerError {
        failed(&self.id, action, cause)
    }
}

/// A Docker call on node container `id` failed.
fn failed(id: &str, action: &str, cause: String) -> ServerError {
    ServerError::DockerUnavailable {
        cause: format!(
            "`docker {action}` of the Redlock node container {} failed: {cause}",
            &id[..id.len().min(12)]
        ),
    }
}

impl std::fmt::Debug for ContainerNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContainerNode")
            .field("id", &self.id)
            .field("network", &self.network)
            .field("reach", &self.reach)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

impl Drop for ContainerNode {
    fn drop(&mut self) {
        let taken = {
            let mut live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
            let at = live.iter().position(|c| c.id() == self.id);
            at.map(|at| live.swap_remove(at))
        };
        if let Some(container) = taken {
            remove(container);
        }
    }
}

fn remove(container: Container<GenericImage>) {
    let id = container.id().to_owned();
    if let Err(e) = container.rm() {
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            format!(
                "grader: could not remove the Redlock node container {id}: {e} (the next \
                 container start removes it, or run `docker rm -f {id}`)\n"
            )
            .as_bytes(),
        );
    }
}

/// Registers, once, the removal of the node containers and then of their network at exit.
pub(super) fn register_exit_handler() {
    static REGISTERED: Once = Once::new();
    REGISTERED.call_once(|| {
        // SAFETY: the handler is a plain function with C ABI that never unwinds.
        let result = unsafe { libc::atexit(remove_at_exit) };
        if result != 0 {
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                b"grader: could not register the exit handler: Redlock's node containers may \
                  outlive this run (the next container start removes them)\n",
            );
        }
    });
}

extern "C" fn remove_at_exit() {
    // Unwinding out of an atexit handler would abort the process mid-exit. The work runs on
    // threads of its own: the exiting thread's thread-locals, Tokio's among them, may be gone.
    let _ = std::panic::catch_unwind(|| {
        let live = std::mem::take(&mut *LIVE.lock().unwrap_or_else(|p| p.into_inner()));
        std::thread::scope(|scope| {
            for container in live {
                scope.spawn(move || remove(container));
            }
        });
        let network = std::thread::spawn(super::network::remove_now).join();
        let failure = match network {
            Ok(Ok(())) => return,
            Ok(Err(e)) => e,
            Err(_) => "the Docker client panicked".to_owned(),
        };
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            format!("grader: could not remove the network of Redlock's nodes: {failure}\n")
                .as_bytes(),
        );
    });
}
