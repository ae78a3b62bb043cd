//! Finds or starts the Redis server that the grader runs its lock scenarios against.
//!
//! The grader needs a real Redis, version 7.0 or newer (the scenarios read `PEXPIRETIME`), and a
//! learner should not have to set one up by hand. So the first call to [`shared`] in a test process
//! picks one source, in this order, and every later call gets the same server (or the same error):
//!
//! 1. **`REDIS_URL`**, when it is set: a server someone else runs, with its password in the URL
//!    if it has one (`redis://:PASSWORD@HOST:PORT`, `redis://USER:PASSWORD@HOST:PORT`). It is only
//!    checked ([`at_url`]): `HELLO` (which every connection may run; `INFO server` on servers
//!    before 6.0) must report Redis 7.0+, and `PEXPIRETIME` on a `dlcourse:` key must run, so an
//!    ACL user limited to `~dlcourse:*` passes. Nothing is started and nothing is flushed.
//! 2. **A container**, when a Docker engine answers: the image `REDIS_IMAGE` (default
//!    [`DEFAULT_IMAGE`]) published on a loopback port (`server/container.rs`), requiring a
//!    password of its own. The grader makes no Docker call itself: its helper program
//!    `course-docker` (`grader/docker`), which talks to the engine through testcontainers, does,
//!    and the grader builds it on first need (`server/engine.rs`). A run that never needs
//!    Docker never builds it.
//! 3. **A local `redis-server`** (`REDIS_SERVER=/path`, or the first one on `PATH`), started as a
//!    child process on a free loopback port with persistence off and a password of its own
//!    (`server/process.rs`).
//!
//! `GRADER_REDIS=url|container|process` forces one source: if it is unavailable, [`shared`] fails
//! and says why instead of falling back, so a run that meant to test one path cannot silently
//! test another. Without it, a container that fails to start (an image that is not here and
//! cannot be pulled, say) falls back to a local `redis-server`, with a note on stderr. Once
//! chosen, the server is announced on stderr as `grader: redis via <url|container|process>: …`, a
//! line that test output capture does not hide.
//!
//! The environment variables, all optional:
//!
//! | variable       | meaning                                                             |
//! |----------------|---------------------------------------------------------------------|
//! | `GRADER_REDIS` | `url`, `container` or `process`: use that source or fail            |
//! | `REDIS_URL`    | a Redis 7+ server to use as it is, e.g. `redis://127.0.0.1:6379`    |
//! | `REDIS_IMAGE`  | the image for the container source (default [`DEFAULT_IMAGE`])      |
//! | `REDIS_SERVER` | the `redis-server` for the process source (default: the one on `PATH`) |
//! | `GRADER_NODES` | `container` or `process`: where Redlock's nodes come from          |
//! | `DOCKER_HOST`  | the Docker engine, read by testcontainers as by the `docker` CLI    |
//! | `GRADER_DOCKER_HELPER` | the Docker helper's binary, built already ([`HELPER_VAR`])  |
//!
//! Redlock's five nodes ([`crate::nodes`]) are servers the grader starts itself, so they follow the
//! source that starts servers ([`node_source`]): containers on a private Docker network when
//! `GRADER_REDIS=container`, `redis-server` processes on loopback when `GRADER_REDIS=process`,
//! and otherwise (no forcing, or `url`, whose one server cannot be five) containers when a Docker
//! engine answers and has the image, else processes. `GRADER_NODES=container|process` overrides
//! this: the harness sets it for the checks it runs, which get its server as a `REDIS_URL`, so
//! that their nodes come from the harness's source.
//!
//! Every server the grader starts (the container or process here, Redlock's nodes, the failover
//! pair) requires a password of its own, fresh for each server, so that no other process on the
//! machine can reach it directly; the grader's URLs carry it, and no message shows it
//! (`server/password.rs`, [`redacted`]). A `REDIS_URL` is used as given.
//!
//! Whatever was started must not outlive the test process, whether it exits or is killed: each
//! source module says how. The module is Unix-only (it relies on `sh`, `atexit` and signals).

mod container;
mod engine;
mod error;
mod owner;
mod password;
mod probe;
pub(crate) mod process;
mod scripts;
mod sweep;

use std::fmt;
use std::io::Write;
use std::path::PathBuf;
use std::sync::OnceLock;

pub use engine::{HELPER_VAR, docker_available, helper_path, image_present};
pub use error::ServerError;
pub(crate) use password::Password;
pub use password::redacted;
pub use probe::{CONNECT_TIMEOUT, explain};
pub use process::{local_redis_server, redis_server_version};
pub use scripts::{Stopped, stop_scripts};
pub use sweep::{containers_owned_by, networks_owned_by, remove_stale_containers};

pub use container::image_name;
pub(crate) use container::{Placement, RedisContainer, lease_connection, prepare_engine};
pub(crate) use engine::{DOCKER_CALL_TIMEOUT, call as docker_call};
pub(crate) use owner::{network_labels, run_id};

use probe::{ProbeError, connect_to, probe};
use process::ProcessGuard;

/// The image started when `REDIS_IMAGE` is not set: the official Redis image, pinned to a minor
/// version so that every learner's grader talks to the same server behaviour.
pub const DEFAULT_IMAGE: &str = "redis:7.4";

/// The bounds of every server the grader starts, which runs outside any sandbox while learner
/// code fills it through the commands it may send: writes fail with `OOM` past `maxmemory`
/// (nothing is evicted), and no string a command sends or makes (`SETRANGE`, `APPEND`) may pass
/// `proto-max-bulk-len`. A lock needs a few keys of a few bytes. The memory of Lua, which
/// `maxmemory` does not count, is bounded by the process's own limit (the process source's
/// [`SERVER_DATA_LIMIT`]).
pub(crate) const SERVER_BOUNDS: [&str; 6] = [
    "--maxmemory",
    "64mb",
    "--maxmemory-policy",
    "noeviction",
    "--proto-max-bulk-len",
    "4mb",
];

/// The data a `redis-server` process the grader starts may allocate, in bytes (`RLIMIT_DATA`),
/// its `maxmemory` and its scripts' memory together (an idle server allocates some 45 MiB): a
/// script that builds more gets Redis's "not enough memory" error.
pub(crate) const SERVER_DATA_LIMIT: u64 = 256 << 20;

/// Where the grader's Redis comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerKind {
    /// A server named by `REDIS_URL`, run by someone else.
    Url,
    /// A container started from `image`, removed when the test process exits.
    Container {
        /// The image (`REDIS_IMAGE`, or the default one).
        image: String,
    },
    /// A `redis-server` at `path`, run as a child of the test process.
    Process {
        /// The `redis-server` executable.
        path: PathBuf,
    },
}

impl ServerKind {
    /// The source's name as `GRADER_REDIS` spells it: `url`, `container` or `process`.
    pub fn name(&self) -> &'static str {
        match self {
            ServerKind::Url => "url",
            ServerKind::Container { .. } => "container",
            ServerKind::Process { .. } => "process",
        }
    }
}

impl fmt::Display for ServerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerKind::Url => write!(f, "at REDIS_URL"),
            ServerKind::Container { image } => write!(f, "in a container (image {image})"),
            ServerKind::Process { path } => {
                write!(f, "as a local process ({})", path.display())
            }
        }
    }
}

/// The Redis server the grader uses, as found or started by [`shared`].
///
/// Displays as e.g. "Redis 7.0.15 in a container (image redis-course:local)"; neither that nor
/// its `Debug` shows a password.
pub struct RedisServer {
    url: String,
    kind: ServerKind,
    version: String,
    /// Keeps a started `redis-server` alive: see [`ProcessGuard`].
    process: Option<ProcessGuard>,
    /// The container the server runs in, when it is one of this run's.
    _container: Option<RedisContainer>,
    /// Why the automatic choice passed over a source the person may have
    /// meant (a Docker engine without the image), in a few words.
    passed_over: Option<String>,
}

impl RedisServer {
    /// The URL to connect to, with the server's password: e.g. `redis://:PASSWORD@127.0.0.1:32768`
    /// for a server the grader started (see `server/password.rs`), or `REDIS_URL` as given. Print
    /// the server itself, or [`redacted`]`(url)`, never the URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Where a `redis-server` this process started lives, to start another there (a node's
    /// restart); `None` for a server of another source.
    pub(crate) fn place(&self) -> Option<&process::Place> {
        self.process.as_ref().map(ProcessGuard::place)
    }

    /// The process id of a `redis-server` this process started; `None` for a server of another
    /// source.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(ProcessGuard::pid)
    }

    /// Where the server comes from.
    pub fn kind(&self) -> &ServerKind {
        &self.kind
    }

    /// The server's version, as its `HELLO` (or `INFO`) reports it, e.g. "7.0.15"; "unknown"
    /// for an ACL user allowed to ask neither.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The environment that points another grader process (a check the harness runs, a
    /// harness a test runs) at this process's Redis: this server by its URL, Redlock's nodes from
    /// this process's source (a URL says nothing of where nodes come from, and the automatic
    /// choice would start containers), and the Docker helper built here when either needs one,
    /// so that cargo is not asked again.
    pub fn child_env(&self) -> Vec<(String, String)> {
        let mut env = vec![
            ("GRADER_REDIS".to_string(), "url".to_string()),
            ("REDIS_URL".to_string(), self.url.clone()),
        ];
        let nodes = node_source();
        if let Ok(nodes) = &nodes {
            env.push((NODES_VAR.to_string(), nodes.name().to_string()));
        }
        let containers = matches!(nodes, Ok(NodeSource::Container { .. }))
            || matches!(self.kind, ServerKind::Container { .. });
        if containers && let Ok(helper) = helper_path() {
            env.push((HELPER_VAR.to_string(), helper.display().to_string()));
        }
        env
    }

    /// [`RedisServer::child_env`] for children that start nodes: with container nodes, also this
    /// process's network of nodes, created now, for every child to share (a child that cannot
    /// have it creates its own, and says why it could not if it cannot either).
    pub fn child_env_with_nodes(&self) -> Vec<(String, String)> {
        let mut env = self.child_env();
        if matches!(node_source(), Ok(NodeSource::Container { .. }))
            && let Ok(network) = crate::nodes::network::name()
        {
            env.push((
                crate::nodes::network::NETWORK_VAR.to_string(),
                network.to_string(),
            ));
        }
        env
    }

    /// Opens a new connection, set up within [`CONNECT_TIMEOUT`]; its reads and writes then wait
    /// as long as the server takes (a stopped process resumes them where they were).
    pub fn connect(&self) -> Result<redis::Connection, ServerError> {
        connect_to(&self.url).map_err(|cause| ServerError::connect(&self.url, cause))
    }
}

impl fmt::Debug for RedisServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisServer")
            .field("url", &redacted(&self.url))
            .field("kind", &self.kind)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for RedisServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Redis {} {}", self.version, self.kind)?;
        if self.kind == ServerKind::Url {
            write!(f, " ({})", redacted(&self.url))?;
        }
        Ok(())
    }
}

/// The grader's Redis server for this test process, found or started on the first call.
///
/// Thread-safe: concurrent first callers wait for the one start, and every caller gets the same
/// server or a copy of the same error. See the module documentation for the order of choice
/// and the environment variables.
pub fn shared() -> Result<&'static RedisServer, ServerError> {
    static SHARED: OnceLock<Result<RedisServer, ServerError>> = OnceLock::new();
    SHARED
        .get_or_init(|| {
            let server = choose()?;
            // Straight to the process's stderr, not through eprintln!, which the test harness
            // captures: CI greps this line to prove which source a run used.
            let at = match server.kind {
                ServerKind::Url => String::new(), // its Display shows the URL already
                _ => format!(" at {}", redacted(&server.url)),
            };
            // One line, whatever the choice passed over on the way.
            let passed_over = server
                .passed_over
                .as_ref()
                .map(|why| format!(" ({why})"))
                .unwrap_or_default();
            let _ = writeln!(
                std::io::stderr(),
                "grader: redis via {}: {server}{at}{passed_over}",
                server.kind.name()
            );
            Ok(server)
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Where Redlock's nodes come from (see [`crate::nodes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeSource {
    /// Containers from `image`, on a private Docker network of this run.
    Container {
        /// The image, as `REDIS_IMAGE` or [`DEFAULT_IMAGE`] names it.
        image: String,
    },
    /// `redis-server` processes on loopback, under the process source's watchdog.
    Process,
}

impl NodeSource {
    /// The source's name as `GRADER_NODES` spells it: `container` or `process`.
    pub fn name(&self) -> &'static str {
        match self {
            NodeSource::Container { .. } => "container",
            NodeSource::Process => "process",
        }
    }
}

/// The variable that names where Redlock's nodes come from, overriding `GRADER_REDIS`; the
/// harness sets it for the checks it runs.
pub const NODES_VAR: &str = "GRADER_NODES";

/// Where this test process's Redlock nodes come from, decided on the first call (see the module
/// documentation). Asks nothing of Docker when a variable forces the answer.
pub fn node_source() -> Result<NodeSource, ServerError> {
    static SOURCE: OnceLock<Result<NodeSource, ServerError>> = OnceLock::new();
    SOURCE.get_or_init(choose_nodes).clone()
}

fn choose_nodes() -> Result<NodeSource, ServerError> {
    let container = || NodeSource::Container {
        image: container::image_name(),
    };
    if let Some(value) = env_nonempty(NODES_VAR) {
        return match value.trim() {
            "container" => Ok(container()),
            "process" => Ok(NodeSource::Process),
            _ => Err(ServerError::BadNodesChoice { value }),
        };
    }
    let forced = std::env::var("GRADER_REDIS").unwrap_or_default();
    match forced.trim() {
        "container" => Ok(container()),
        "process" => Ok(NodeSource::Process),
        // As the automatic choice of the one server: a container when Docker can start one from
        // an image it has (five pulls are not tried), else a local redis-server.
        "url" | "" | "auto" => {
            let image = container::image_name();
            let usable = docker_available().is_ok() && image_present(&image).is_ok_and(|here| here);
            Ok(if usable {
                container()
            } else {
                NodeSource::Process
            })
        }
        other => Err(ServerError::BadChoice {
            value: other.to_owned(),
        }),
    }
}

/// Opens a connection to `url` within [`CONNECT_TIMEOUT`], or says why it cannot: for the grader's own nodes ([`crate::nodes`]), whose URLs carry their passwords. The
/// reason never quotes the URL.
pub(crate) fn connect_url(url: &str) -> Result<redis::Connection, String> {
    connect_to(url)
}

/// A note for the person running the tests, printed once by the one thread that chooses.
fn note(message: &str) {
    let _ = writeln!(std::io::stderr(), "grader: {message}");
}

fn choose() -> Result<RedisServer, ServerError> {
    let forced = std::env::var("GRADER_REDIS").unwrap_or_default();
    match forced.trim() {
        "url" => match env_nonempty("REDIS_URL") {
            Some(url) => at_url(&url),
            None => Err(ServerError::UrlMissing),
        },
        "container" => container::start_container(),
        "process" => process::start_process(),
        "" | "auto" => choose_automatically(),
        other => Err(ServerError::BadChoice {
            value: other.to_owned(),
        }),
    }
}

fn choose_automatically() -> Result<RedisServer, ServerError> {
    // A server the user named is what they want graded against: never replace it.
    if let Some(url) = env_nonempty("REDIS_URL") {
        return at_url(&url);
    }
    let container_error = match container::start_container() {
        Ok(server) => return Ok(server),
        Err(error) => error,
    };
    let docker_tried = match &container_error {
        ServerError::DockerUnavailable { cause } => format!("Docker: not available ({cause})"),
        other => format!("Docker: {other}"),
    };
    match process::start_process() {
        Ok(mut server) => {
            // Docker runs, so the person may well have meant to use it: say why it was not,
            // in a few words; `cargo course doctor` has the whole story.
            if !matches!(container_error, ServerError::DockerUnavailable { .. }) {
                server.passed_over = Some(format!(
                    "not a container: {}; `cargo course doctor` says more, and \
                     GRADER_REDIS=container makes this an error",
                    container_error.in_brief()
                ));
            }
            Ok(server)
        }
        Err(process_error) => Err(ServerError::NothingAvailable {
            tried: vec![
                "REDIS_URL: not set".to_owned(),
                docker_tried,
                format!("redis-server: {process_error}"),
            ],
        }),
    }
}

/// Whether the grader accepts a server of this version (7.0 or newer).
pub fn version_supported(version: &str) -> bool {
    probe::version_at_least(version, probe::MIN_VERSION)
}

fn env_nonempty(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|value| !value.trim().is_empty())
}

/// Checks the server at `url` as the `REDIS_URL` source does, and returns it, or says what is
/// wrong with it and what to do. [`shared`] uses it for `REDIS_URL`; it is public for tools (an
/// instructor checking a shared server) and tests.
pub fn at_url(url: &str) -> Result<RedisServer, ServerError> {
    match probe(url) {
        Ok(version) => Ok(RedisServer {
            url: url.to_owned(),
            kind: ServerKind::Url,
            version,
            process: None,
            _container: None,
            passed_over: None,
        }),
        Err(ProbeError::TooOld(version)) => Err(ServerError::TooOld {
            server: format!("the server at REDIS_URL ({})", redacted(url)),
            version,
            remedy: "Point REDIS_URL at a newer server, or unset it to let the grader start one."
                .to_owned(),
        }),
        Err(ProbeError::Refused {
            command,
            why,
            reply,
            remedy,
        }) => Err(ServerError::CommandRefused {
            server: format!("the server at REDIS_URL ({})", redacted(url)),
            command: command.to_owned(),
            why: why.to_owned(),
            reply,
            remedy: format!("{remedy}."),
        }),
        Err(ProbeError::Unusable(cause)) => Err(ServerError::UrlUnusable {
            url: redacted(url),
            cause,
        }),
    }
}
