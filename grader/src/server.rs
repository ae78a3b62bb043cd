//! Finds or starts the Redis server that the grader runs its lock scenarios against.
//!
//! The grader needs a real Redis, version 7.0 or newer (the scenarios read `PEXPIRETIME`), and a
//! learner should not have to set one up by hand. So the first call to [`shared`] in a test process
//! picks one source, in this order, and every later call gets the same server (or the same error):
//!
//! 1. **`REDIS_URL`**, when it is set: a server someone else runs. It is only checked (it must
//!    answer `PING` and report Redis >= 7.0); nothing is started and nothing is flushed.
//! 2. **A container**, when a Docker engine answers: the image `REDIS_IMAGE` (default
//!    [`DEFAULT_IMAGE`]) started through testcontainers, published on a loopback port.
//! 3. **A local `redis-server`** (`REDIS_SERVER=/path`, or the first one on `PATH`), started as a
//!    child process on a free loopback port with persistence off.
//!
//! `GRADER_REDIS=url|container|process` forces one source: if it is unavailable, [`shared`] fails
//! and says why instead of falling back, so a run that meant to test one path cannot silently
//! test another. Without it, a container that fails to start falls back to a local `redis-server`,
//! with a note on stderr. Once chosen, the server is announced on stderr as
//! `grader: redis via <url|container|process>: …`, a line that test output capture does not hide.
//!
//! The environment variables, all optional:
//!
//! | variable       | meaning                                                             |
//! |----------------|---------------------------------------------------------------------|
//! | `GRADER_REDIS` | `url`, `container` or `process`: use that source or fail            |
//! | `REDIS_URL`    | a Redis 7+ server to use as it is, e.g. `redis://127.0.0.1:6379`    |
//! | `REDIS_IMAGE`  | the image for the container source (default [`DEFAULT_IMAGE`])      |
//! | `REDIS_SERVER` | the `redis-server` for the process source (default: the one on `PATH`) |
//! | `DOCKER_HOST`  | the Docker engine, read by testcontainers as by the `docker` CLI    |
//!
//! Whatever was started must not outlive the test process, and test harnesses exit without
//! dropping statics, so the cleanup does not rely on `Drop`:
//!
//! * The container is removed by an `atexit` handler when the process exits normally (which is
//!   also how a test binary exits when tests fail). A process killed by a signal runs no handler,
//!   so every container is labelled with its owner's host name and pid, and the next container
//!   start removes this host's containers whose owner is gone.
//! * The `redis-server` runs under a small `sh` watchdog whose standard input is a pipe held open by
//!   this process only. The kernel closes it when this process ends in any way, `SIGKILL`
//!   included; the watchdog then reads end-of-file and stops the server. (`PR_SET_PDEATHSIG`
//!   would not do: it fires when the spawning *thread* ends, and test threads end early.)
//!
//! Docker engines that only speak an older API (Docker 20.10 speaks 1.41) work: the client in
//! testcontainers 0.28 sends unversioned request paths, which the engine serves at its own API
//! version. Should a later client pin a version the engine rejects, the up-front check turns the
//! engine's answer into a [`ServerError::DockerUnavailable`] that says what to do.
//!
//! The module is Unix-only (it relies on `sh` and `atexit`).

use std::collections::{HashMap, VecDeque};
use std::ffi::CStr;
use std::fmt;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex, Once, OnceLock};
use std::time::{Duration, Instant};

use testcontainers::bollard::models::PortBinding;
use testcontainers::bollard::query_parameters::{
    ListContainersOptionsBuilder, RemoveContainerOptionsBuilder,
};
use testcontainers::core::error::{ClientError, TestcontainersError};
use testcontainers::core::{IntoContainerPort, WaitFor};
use testcontainers::runners::SyncRunner;
use testcontainers::{Container, GenericImage, ImageExt};

/// The image started when `REDIS_IMAGE` is not set: the official Redis image, pinned to a minor
/// version so that every learner's grader talks to the same server behaviour.
pub const DEFAULT_IMAGE: &str = "redis:7.4";

/// Bound on establishing a connection in [`RedisServer::connect`].
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Bound on every read and write on a connection from [`RedisServer::connect`]: a scenario that
/// waits on a stuck server fails instead of hanging the test run.
pub const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// The oldest Redis the grader accepts, as (major, minor): `PEXPIRETIME` came in 7.0.
const MIN_VERSION: (u32, u32) = (7, 0);

/// How long a Docker API call may take before the engine counts as not answering.
const DOCKER_CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a container may take from creation to "Ready to accept connections".
const CONTAINER_STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a local `redis-server` may take to answer its first `PING`.
const PROCESS_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// Labels that mark the grader's containers and tie them to the process that started them.
const LABEL_OWNER_PID: &str = "redis-course.grader.owner-pid";
const LABEL_OWNER_HOST: &str = "redis-course.grader.owner-host";

/// What a person can do when no source works, for [`ServerError::NothingAvailable`].
fn remedies() -> String {
    format!(
        "To give the grader a Redis 7+ server, do one of:\n  \
         - set REDIS_URL=redis://HOST:PORT to a server you run;\n  \
         - install Docker and run `docker pull {DEFAULT_IMAGE}` (or build the local image with \
         `.ci/build-redis-image` and set REDIS_IMAGE=redis-course:local);\n  \
         - install redis-server (Debian/Ubuntu: `apt-get install redis-server`, macOS: \
         `brew install redis`), or set REDIS_SERVER=/path/to/redis-server."
    )
}

/// Why no Redis server is available to the grader. Every message says what to do about it.
///
/// The error is `Clone` because [`shared`] hands the same failure to every caller in the process.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// `GRADER_REDIS` holds a value other than `url`, `container` or `process`.
    #[error(
        "GRADER_REDIS={value:?} is not a known source: use url, container or process, \
         or unset it to let the grader choose"
    )]
    BadChoice { value: String },

    /// `GRADER_REDIS=url` without a `REDIS_URL`.
    #[error("GRADER_REDIS=url, but REDIS_URL is not set: set REDIS_URL=redis://HOST:PORT")]
    UrlMissing,

    /// The server named by `REDIS_URL` cannot be used.
    #[error(
        "the Redis server at REDIS_URL ({url}) cannot be used: {cause}. Check that it runs and \
         that the URL is right, or unset REDIS_URL to let the grader start its own server"
    )]
    UrlUnusable { url: String, cause: String },

    /// The server answers but is older than the grader needs.
    #[error(
        "{server} runs Redis {version}, but the grader needs Redis {}.{} or newer \
         (the scenarios use PEXPIRETIME). {remedy}",
        MIN_VERSION.0, MIN_VERSION.1
    )]
    TooOld {
        server: String,
        version: String,
        remedy: String,
    },

    /// No Docker engine answers, or it answers in a way the client cannot use.
    #[error(
        "no usable Docker engine: {cause}. Start Docker (or set DOCKER_HOST), \
         or set GRADER_REDIS=process to use a local redis-server"
    )]
    DockerUnavailable { cause: String },

    /// Docker answers, but the Redis container did not start.
    #[error("the Redis container from image {image} did not start: {cause}. {remedy}")]
    ContainerFailed {
        image: String,
        cause: String,
        remedy: String,
    },

    /// No `redis-server` executable was found.
    #[error(
        "no redis-server found: {detail}. Install it (Debian/Ubuntu: `apt-get install \
         redis-server`, macOS: `brew install redis`) or set REDIS_SERVER=/path/to/redis-server"
    )]
    ProcessNotFound { detail: String },

    /// A `redis-server` was found but did not start or did not answer.
    #[error("{path} did not start: {cause}{log}")]
    ProcessFailed {
        path: PathBuf,
        cause: String,
        log: String,
    },

    /// No source worked while choosing automatically; `tried` says what happened to each.
    #[error(
        "no Redis server for the grader. Tried:\n{}\n{}",
        bullet_list(tried),
        remedies()
    )]
    NothingAvailable { tried: Vec<String> },

    /// The server was available but a new connection to it failed.
    #[error("could not connect to the grader's Redis at {url}: {cause}")]
    Connect { url: String, cause: String },
}

fn bullet_list(items: &[String]) -> String {
    items
        .iter()
        .map(|item| format!("  - {item}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Where the grader's Redis comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerKind {
    /// A server named by `REDIS_URL`, run by someone else.
    Url,
    /// A container started from `image`, removed when the test process exits.
    Container { image: String },
    /// A `redis-server` at `path`, run as a child of the test process.
    Process { path: PathBuf },
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
/// Displays as e.g. "Redis 7.0.15 in a container (image redis-course:local)".
#[derive(Debug)]
pub struct RedisServer {
    url: String,
    kind: ServerKind,
    version: String,
    /// Keeps a started `redis-server` alive: see [`ProcessGuard`].
    _process: Option<ProcessGuard>,
}

impl RedisServer {
    /// The URL to connect to, e.g. `redis://127.0.0.1:32768`. It may hold a password when it
    /// comes from `REDIS_URL`: print the server itself (its `Display` hides the password).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Where the server comes from.
    pub fn kind(&self) -> &ServerKind {
        &self.kind
    }

    /// The server's version, as its `INFO` reports it (e.g. "7.0.15").
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Opens a new connection whose connect, read and write each give up after a bounded time
    /// ([`CONNECT_TIMEOUT`], [`IO_TIMEOUT`]).
    pub fn connect(&self) -> Result<redis::Connection, ServerError> {
        connect_to(&self.url).map_err(|cause| ServerError::Connect {
            url: redact(&self.url),
            cause,
        })
    }
}

impl fmt::Display for RedisServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Redis {} {}", self.version, self.kind)?;
        if self.kind == ServerKind::Url {
            write!(f, " ({})", redact(&self.url))?;
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
                _ => format!(" at {}", server.url),
            };
            let _ = writeln!(
                std::io::stderr(),
                "grader: redis via {}: {server}{at}",
                server.kind.name()
            );
            Ok(server)
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// A note for the person running the tests, printed once by the one thread that chooses.
fn note(message: &str) {
    let _ = writeln!(std::io::stderr(), "grader: {message}");
}

fn choose() -> Result<RedisServer, ServerError> {
    let forced = std::env::var("GRADER_REDIS").unwrap_or_default();
    match forced.trim() {
        "url" => match env_nonempty("REDIS_URL") {
            Some(url) => from_url(&url),
            None => Err(ServerError::UrlMissing),
        },
        "container" => start_container(),
        "process" => start_process(),
        "" | "auto" => choose_automatically(),
        other => Err(ServerError::BadChoice {
            value: other.to_owned(),
        }),
    }
}

fn choose_automatically() -> Result<RedisServer, ServerError> {
    // A server the user named is what they want graded against: never replace it.
    if let Some(url) = env_nonempty("REDIS_URL") {
        return from_url(&url);
    }
    let container_error = match start_container() {
        Ok(server) => return Ok(server),
        Err(error) => error,
    };
    let docker_tried = match &container_error {
        ServerError::DockerUnavailable { cause } => format!("Docker: not available ({cause})"),
        other => format!("Docker: {other}"),
    };
    match start_process() {
        Ok(server) => {
            // Docker runs, so the person may well have meant to use it: say why it was not.
            if !matches!(container_error, ServerError::DockerUnavailable { .. }) {
                note(&format!(
                    "{container_error}\ngrader: using {server} instead \
                     (set GRADER_REDIS=container to make this an error)"
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

fn env_nonempty(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|value| !value.trim().is_empty())
}

// ---------------------------------------------------------------------------------------------
// Talking to a server

fn connect_to(url: &str) -> Result<redis::Connection, String> {
    let client = redis::Client::open(url).map_err(|e| format!("invalid URL: {e}"))?;
    let connection = client
        .get_connection_with_timeout(CONNECT_TIMEOUT)
        .map_err(|e| e.to_string())?;
    // The connect timeout bounds only the connect: reads and writes need their own.
    connection
        .set_read_timeout(Some(IO_TIMEOUT))
        .and_then(|()| connection.set_write_timeout(Some(IO_TIMEOUT)))
        .map_err(|e| format!("cannot set timeouts: {e}"))?;
    Ok(connection)
}

/// Why [`probe`] rejected a server.
enum ProbeError {
    /// It answers, with this version, which is older than [`MIN_VERSION`].
    TooOld(String),
    /// It does not answer as Redis should, for this reason.
    Unusable(String),
}

/// Checks that `url` answers `PING`, and returns its version if that is at least [`MIN_VERSION`].
fn probe(url: &str) -> Result<String, ProbeError> {
    let mut connection = connect_to(url).map_err(ProbeError::Unusable)?;
    let pong: String = redis::cmd("PING")
        .query(&mut connection)
        .map_err(|e| ProbeError::Unusable(format!("PING failed: {e}")))?;
    if pong != "PONG" {
        return Err(ProbeError::Unusable(format!("PING answered {pong:?}")));
    }
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query(&mut connection)
        .map_err(|e| ProbeError::Unusable(format!("INFO server failed: {e}")))?;
    let version = info
        .lines()
        .find_map(|line| line.strip_prefix("redis_version:"))
        .map(|v| v.trim().to_owned())
        .ok_or_else(|| ProbeError::Unusable("INFO server reports no redis_version".to_owned()))?;
    if version_at_least(&version, MIN_VERSION) {
        Ok(version)
    } else {
        Err(ProbeError::TooOld(version))
    }
}

fn version_at_least(version: &str, (major, minor): (u32, u32)) -> bool {
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let found = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    found >= (major, minor)
}

/// The URL with any password replaced, for messages.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://***@{}", &rest[at + 1..]),
        None => url.to_owned(),
    }
}

// ---------------------------------------------------------------------------------------------
// Source 1: REDIS_URL

fn from_url(url: &str) -> Result<RedisServer, ServerError> {
    match probe(url) {
        Ok(version) => Ok(RedisServer {
            url: url.to_owned(),
            kind: ServerKind::Url,
            version,
            _process: None,
        }),
        Err(ProbeError::TooOld(version)) => Err(ServerError::TooOld {
            server: format!("the server at REDIS_URL ({})", redact(url)),
            version,
            remedy: "Point REDIS_URL at a newer server, or unset it to let the grader start one."
                .to_owned(),
        }),
        Err(ProbeError::Unusable(cause)) => Err(ServerError::UrlUnusable {
            url: redact(url),
            cause,
        }),
    }
}

// ---------------------------------------------------------------------------------------------
// Source 2: a container

/// The container of this process, taken and removed by [`remove_container_at_exit`].
static CONTAINER: Mutex<Option<Container<GenericImage>>> = Mutex::new(None);

fn start_container() -> Result<RedisServer, ServerError> {
    // testcontainers' blocking API drives its own Tokio runtime, which cannot start inside
    // another one: a thread of our own keeps this callable from async code too.
    std::thread::scope(|scope| {
        scope
            .spawn(start_container_here)
            .join()
            .unwrap_or_else(|_| {
                Err(ServerError::DockerUnavailable {
                    cause: "the Docker client panicked".to_owned(),
                })
            })
    })
}

fn start_container_here() -> Result<RedisServer, ServerError> {
    docker_check()?;
    // Best effort: a failure to clean up after an earlier run must not stop this one.
    if let Err(e) = remove_stale_containers() {
        note(&format!(
            "could not remove containers left by killed runs: {e}"
        ));
    }

    let image = env_nonempty("REDIS_IMAGE").unwrap_or_else(|| DEFAULT_IMAGE.to_owned());
    let (name, tag) = split_image(&image);
    let local_engine = engine_is_local();
    let failed = |cause: String, remedy: String| ServerError::ContainerFailed {
        image: image.clone(),
        cause,
        remedy,
    };

    let mut request = GenericImage::new(name, tag)
        .with_exposed_port(6379.tcp())
        .with_wait_for(WaitFor::message_on_stdout("Ready to accept connections"))
        // The image's own command may persist data or keep protected mode on, which refuses
        // clients that come through Docker's port mapping.
        .with_cmd([
            "redis-server",
            "--save",
            "",
            "--appendonly",
            "no",
            "--protected-mode",
            "no",
        ])
        .with_label(LABEL_OWNER_PID, std::process::id().to_string())
        .with_label(LABEL_OWNER_HOST, host_name())
        .with_startup_timeout(CONTAINER_STARTUP_TIMEOUT);
    if local_engine {
        // A server without a password must not be reachable from the network: publish it on
        // the loopback interface only (testcontainers would publish on all of them).
        request = request.with_host_config_modifier(|host_config| {
            host_config.publish_all_ports = Some(false);
            host_config.port_bindings = Some(HashMap::from([(
                "6379/tcp".to_owned(),
                Some(vec![PortBinding {
                    host_ip: Some("127.0.0.1".to_owned()),
                    host_port: Some(String::new()),
                }]),
            )]));
        });
    }

    let container = request
        .start()
        .map_err(|e| failed(e.to_string(), container_remedy(&image, &e)))?;
    let id = container.id().to_owned();
    // From here on the container exists: hand it to the exit handler before anything can fail.
    register_exit_handler();
    let port = container.get_host_port_ipv4(6379.tcp());
    let host = container.get_host().map(|h| h.to_string());
    *CONTAINER.lock().unwrap_or_else(|e| e.into_inner()) = Some(container);

    let setup = |cause: String| {
        remove_container_now();
        failed(cause, "Check the image and the Docker engine.".to_owned())
    };
    let port = port.map_err(|e| setup(format!("no published port for 6379: {e}")))?;
    let host = host.map_err(|e| setup(format!("no host to reach it on: {e}")))?;
    let host = if local_engine || host == "localhost" {
        "127.0.0.1".to_owned()
    } else {
        host
    };
    let url = format!("redis://{host}:{port}");
    match probe(&url) {
        Ok(version) => Ok(RedisServer {
            url,
            kind: ServerKind::Container { image },
            version,
            _process: None,
        }),
        Err(ProbeError::TooOld(version)) => {
            remove_container_now();
            Err(ServerError::TooOld {
                server: format!("the container {} from image {image}", short_id(&id)),
                version,
                remedy: format!("Set REDIS_IMAGE to a newer image, e.g. {DEFAULT_IMAGE}."),
            })
        }
        Err(ProbeError::Unusable(cause)) => Err(setup(format!(
            "it started but does not answer at {url}: {cause}"
        ))),
    }
}

fn container_remedy(image: &str, error: &TestcontainersError) -> String {
    let missing = matches!(
        error,
        TestcontainersError::Client(ClientError::PullImage { .. })
    );
    let fallback = "or set GRADER_REDIS=process to use a local redis-server";
    if missing && image == DEFAULT_IMAGE {
        format!(
            "The image is not on this machine and could not be pulled: run `docker pull \
             {image}` where a registry is reachable, or build the local image with \
             `.ci/build-redis-image` and set REDIS_IMAGE=redis-course:local, {fallback}"
        )
    } else if missing {
        format!(
            "The image is not on this machine and could not be pulled: build or pull it \
             (`.ci/build-redis-image` builds redis-course:local), check REDIS_IMAGE, {fallback}"
        )
    } else {
        format!("Check the image (REDIS_IMAGE) and the Docker engine, {fallback}")
    }
}

/// Splits "name[:tag]" at the tag's colon, not at a registry's port ("host:5000/redis").
fn split_image(image: &str) -> (String, String) {
    let last_segment = image.rfind('/').map_or(0, |slash| slash + 1);
    match image[last_segment..].rfind(':') {
        Some(colon) => {
            let colon = last_segment + colon;
            (image[..colon].to_owned(), image[colon + 1..].to_owned())
        }
        None => (image.to_owned(), "latest".to_owned()),
    }
}

/// Whether the engine is on this machine, where loopback publishing reaches it. An engine
/// elsewhere (`DOCKER_HOST=tcp://…`) keeps testcontainers' default publishing.
fn engine_is_local() -> bool {
    env_nonempty("DOCKER_HOST").is_none_or(|host| host.starts_with("unix://"))
}

fn short_id(id: &str) -> &str {
    &id[..id.len().min(12)]
}

/// Runs a future against the Docker engine on a runtime of its own, within a time bound.
fn docker_call<T, F>(call: impl FnOnce(testcontainers::bollard::Docker) -> F) -> Result<T, String>
where
    F: Future<Output = Result<T, testcontainers::bollard::errors::Error>>,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start an async runtime: {e}"))?;
    runtime.block_on(async {
        let docker = testcontainers::core::client::docker_client_instance()
            .await
            .map_err(|e| e.to_string())?;
        match tokio::time::timeout(DOCKER_CALL_TIMEOUT, call(docker)).await {
            Ok(result) => result.map_err(|e| e.to_string()),
            Err(_) => Err(format!(
                "no answer within {} s",
                DOCKER_CALL_TIMEOUT.as_secs()
            )),
        }
    })
}

/// Checks up front that the engine answers, including a versioned call: `/_ping` alone also
/// succeeds on an engine that would refuse every other request as "client version too new".
/// Whether a Docker engine answers here (`Ok`), or why not. The container
/// source needs one; tools and tests ask before they rely on it.
pub fn docker_available() -> Result<(), ServerError> {
    docker_check()
}

/// The `redis-server` the process source would start (`REDIS_SERVER`, else
/// the first on `PATH`), or why there is none.
pub fn local_redis_server() -> Result<PathBuf, ServerError> {
    find_redis_server()
}

fn docker_check() -> Result<(), ServerError> {
    let unavailable = |cause: String| ServerError::DockerUnavailable { cause };
    docker_call(|docker| async move { docker.ping().await }).map_err(unavailable)?;
    docker_call(|docker| async move { docker.version().await })
        .map(drop)
        .map_err(|cause| {
            unavailable(format!(
                "the engine answers ping but not a version request ({cause}); \
                 if it says the client version is too new, upgrade Docker Engine"
            ))
        })
}

/// Ids of the grader's containers started by process `owner_pid` on this host, running or not.
pub fn containers_owned_by(owner_pid: u32) -> Result<Vec<String>, ServerError> {
    Ok(grader_containers()?
        .into_iter()
        .filter(|(_, pid)| *pid == Some(owner_pid))
        .map(|(id, _)| id)
        .collect())
}

/// Removes the grader's containers on this host whose owner process no longer runs, and returns
/// their ids. Starting a container does this first; it is public for tools and tests.
pub fn remove_stale_containers() -> Result<Vec<String>, ServerError> {
    let stale: Vec<String> = grader_containers()?
        .into_iter()
        .filter(|(_, pid)| pid.is_some_and(|pid| !process_alive(pid)))
        .map(|(id, _)| id)
        .collect();
    for id in &stale {
        let id = id.clone();
        docker_call(|docker| async move {
            let options = RemoveContainerOptionsBuilder::new()
                .force(true)
                .v(true)
                .build();
            docker.remove_container(&id, Some(options)).await
        })
        .map_err(|cause| ServerError::DockerUnavailable {
            cause: format!("removing a stale container failed: {cause}"),
        })?;
    }
    Ok(stale)
}

/// (id, owner pid) of every grader container of this host.
fn grader_containers() -> Result<Vec<(String, Option<u32>)>, ServerError> {
    let host_filter = format!("{LABEL_OWNER_HOST}={}", host_name());
    let containers = docker_call(|docker| async move {
        let filters = HashMap::from([("label", vec![host_filter.as_str()])]);
        let options = ListContainersOptionsBuilder::new()
            .all(true)
            .filters(&filters)
            .build();
        docker.list_containers(Some(options)).await
    })
    .map_err(|cause| ServerError::DockerUnavailable {
        cause: format!("listing containers failed: {cause}"),
    })?;
    Ok(containers
        .into_iter()
        .filter_map(|summary| {
            let pid = summary
                .labels
                .as_ref()
                .and_then(|labels| labels.get(LABEL_OWNER_PID))
                .and_then(|pid| pid.parse().ok());
            Some((summary.id?, pid))
        })
        .collect())
}

fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // Signal 0 checks for existence only. EPERM means it exists but belongs to someone else.
    // SAFETY: kill with signal 0 sends nothing and touches no memory.
    let result = unsafe { libc::kill(pid, 0) };
    result == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

fn host_name() -> String {
    let mut buffer = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at most that many bytes.
    let result = unsafe { libc::gethostname(buffer.as_mut_ptr().cast(), buffer.len()) };
    if result != 0 {
        return "unknown".to_owned();
    }
    // A name that fills the buffer may lack its NUL: keep the last byte as one.
    buffer[buffer.len() - 1] = 0;
    CStr::from_bytes_until_nul(&buffer)
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "unknown".to_owned())
}

fn register_exit_handler() {
    static REGISTERED: Once = Once::new();
    REGISTERED.call_once(|| {
        // SAFETY: the handler is a plain function with C ABI that never unwinds.
        let result = unsafe { libc::atexit(remove_container_at_exit) };
        if result != 0 {
            note("could not register the exit handler: the Redis container may outlive this run");
        }
    });
}

extern "C" fn remove_container_at_exit() {
    // Unwinding out of an atexit handler would abort the process mid-exit.
    let _ = std::panic::catch_unwind(remove_container_now);
}

fn remove_container_now() {
    let container = CONTAINER.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(container) = container {
        let id = container.id().to_owned();
        if let Err(e) = container.rm() {
            note(&format!(
                "could not remove the Redis container {}: {e} (the next container start \
                 removes it, or run `docker rm -f {id}`)",
                short_id(&id)
            ));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Source 3: a local redis-server

/// Runs the server as `$@` and stops it when standard input reaches end-of-file, i.e. when the
/// process holding the pipe's other end has ended, however it ended. The watcher reads a copy on
/// fd 3 because a background job's own standard input is /dev/null. When the server exits by
/// itself, the watcher is stopped too so it can never signal a reused pid later.
const WATCHDOG: &str = r#"exec 3<&0 </dev/null
"$@" 3<&- 2>&1 &
server=$!
{ read -r _ <&3; kill "$server" 2>/dev/null; } &
watcher=$!
exec 3<&-
wait "$server"
status=$?
kill "$watcher" 2>/dev/null
exit "$status"
"#;

/// How many of the server's last log lines an error shows.
const LOG_LINES_KEPT: usize = 20;

/// A running `redis-server` under the watchdog. Dropping it (or ending the process) closes the
/// watchdog's standard input, which stops the server.
#[derive(Debug)]
struct ProcessGuard {
    watchdog: Child,
    _stdin: ChildStdin,
}

fn find_redis_server() -> Result<PathBuf, ServerError> {
    if let Some(path) = env_nonempty("REDIS_SERVER") {
        let path = PathBuf::from(path);
        return if is_executable(&path) {
            Ok(path)
        } else {
            Err(ServerError::ProcessNotFound {
                detail: format!("REDIS_SERVER={} is not an executable file", path.display()),
            })
        };
    }
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path_var)
        .map(|dir| dir.join("redis-server"))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| ServerError::ProcessNotFound {
            detail: "not on PATH, and REDIS_SERVER is not set".to_owned(),
        })
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

fn start_process() -> Result<RedisServer, ServerError> {
    let path = find_redis_server()?;
    // The free port is found by binding and releasing it, so another program may take it first:
    // a server that then fails to bind is retried on a fresh port.
    let mut attempts = 0;
    loop {
        attempts += 1;
        match start_process_once(&path) {
            Err(ServerError::ProcessFailed { log, .. })
                if attempts < 3 && log.contains("Address already in use") =>
            {
                continue;
            }
            result => return result,
        }
    }
}

fn start_process_once(path: &Path) -> Result<RedisServer, ServerError> {
    let failed = |cause: String, log: &LogTail| ServerError::ProcessFailed {
        path: path.to_owned(),
        cause,
        log: log.render(),
    };
    let no_log = LogTail::default();
    let port = free_loopback_port().map_err(|e| failed(format!("no free port: {e}"), &no_log))?;
    let mut watchdog = Command::new("/bin/sh")
        .arg("-c")
        .arg(WATCHDOG)
        .arg("redis-watchdog")
        .arg(path)
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        // Nothing is written, but the server's working directory is where it would be.
        .arg("--dir")
        .arg(std::env::temp_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| failed(format!("cannot run /bin/sh: {e}"), &no_log))?;
    let (Some(stdin), Some(stdout)) = (watchdog.stdin.take(), watchdog.stdout.take()) else {
        return Err(failed("no pipes to the watchdog".to_owned(), &no_log));
    };
    let log = LogTail::collect(stdout);
    let mut guard = ProcessGuard {
        watchdog,
        _stdin: stdin,
    };

    let url = format!("redis://127.0.0.1:{port}");
    let deadline = Instant::now() + PROCESS_STARTUP_TIMEOUT;
    loop {
        if let Ok(Some(status)) = guard.watchdog.try_wait() {
            // Let the reader catch the last lines the server wrote before it exited.
            std::thread::sleep(Duration::from_millis(50));
            return Err(failed(format!("it exited ({status})"), &log));
        }
        match probe(&url) {
            Ok(version) => {
                return Ok(RedisServer {
                    url,
                    kind: ServerKind::Process {
                        path: path.to_owned(),
                    },
                    version,
                    _process: Some(guard),
                });
            }
            // Dropping the guard on these returns stops the server.
            Err(ProbeError::TooOld(version)) => {
                return Err(ServerError::TooOld {
                    server: path.display().to_string(),
                    version,
                    remedy: "Install a newer redis-server or set REDIS_SERVER to one.".to_owned(),
                });
            }
            Err(ProbeError::Unusable(cause)) if Instant::now() >= deadline => {
                return Err(failed(
                    format!(
                        "no answer on port {port} within {} s ({cause})",
                        PROCESS_STARTUP_TIMEOUT.as_secs()
                    ),
                    &log,
                ));
            }
            Err(ProbeError::Unusable(_)) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

fn free_loopback_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// The last lines a server wrote, kept for error messages. A reader thread drains the pipe for
/// the server's whole life so that the server never blocks on a full pipe.
#[derive(Clone, Default)]
struct LogTail(Arc<Mutex<VecDeque<String>>>);

impl LogTail {
    fn collect(stdout: impl std::io::Read + Send + 'static) -> Self {
        let tail = LogTail::default();
        let lines = Arc::clone(&tail.0);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let mut lines = lines.lock().unwrap_or_else(|e| e.into_inner());
                if lines.len() == LOG_LINES_KEPT {
                    lines.pop_front();
                }
                lines.push_back(line);
            }
        });
        tail
    }

    fn render(&self) -> String {
        let lines = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if lines.is_empty() {
            String::new()
        } else {
            let joined: Vec<&str> = lines.iter().map(String::as_str).collect();
            format!("; its last output:\n{}", joined.join("\n"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_names_split_at_the_tag() {
        let split = |image| split_image(image);
        assert_eq!(split("redis"), ("redis".into(), "latest".into()));
        assert_eq!(split("redis:7.4"), ("redis".into(), "7.4".into()));
        assert_eq!(
            split("localhost:5000/redis"),
            ("localhost:5000/redis".into(), "latest".into())
        );
        assert_eq!(
            split("localhost:5000/redis:7"),
            ("localhost:5000/redis".into(), "7".into())
        );
    }

    #[test]
    fn passwords_are_hidden() {
        assert_eq!(
            redact("redis://:s3cret@host:6379/0"),
            "redis://***@host:6379/0"
        );
        assert_eq!(redact("redis://host:6379"), "redis://host:6379");
    }

    #[test]
    fn versions_compare_numerically() {
        assert!(version_at_least("7.0.15", (7, 0)));
        assert!(version_at_least("10.0.0", (7, 0)));
        assert!(!version_at_least("6.2.14", (7, 0)));
    }
}
