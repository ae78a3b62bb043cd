//! The container source: Redis from a Docker image, started for this test process and removed
//! when it ends. Redlock's container nodes (`crate::nodes`) are asked for and started the same
//! way ([`redis_request`], [`start_request`]), so they share the image, the persistence off, the
//! owner labels and the sweep.
//!
//! The image is `REDIS_IMAGE`, or [`DEFAULT_IMAGE`]; testcontainers pulls it only when the engine
//! does not have it. An image that is neither here nor pullable (no registry answers) is a
//! [`ServerError::ImageUnavailable`], which tells the two remedies apart: pull it where a registry
//! answers, or build the local one.
//!
//! Test harnesses exit without dropping statics, so the removal does not rely on `Drop`: an
//! `atexit` handler removes the container when the process exits normally (which is also how a
//! test binary exits when tests fail). A process killed by a signal runs no handler, so every
//! container is labelled with its owner run (see [`owner`](super::owner)), and the next container
//! start removes this host's containers whose owner is gone (see [`sweep`](super::sweep)).
//!
//! Docker engines that only speak an older API (Docker 20.10 speaks 1.41) work: the client in
//! testcontainers 0.28 sends unversioned request paths, which the engine serves at its own API
//! version. Should a later client pin a version the engine rejects, the up-front check turns the
//! engine's answer into a [`ServerError::DockerUnavailable`] that says what to do.

use std::collections::HashMap;
use std::sync::{Mutex, Once};
use std::time::Duration;

use testcontainers::bollard::models::PortBinding;
use testcontainers::core::error::{ClientError, TestcontainersError};
use testcontainers::core::{IntoContainerPort, WaitFor};
use testcontainers::runners::SyncRunner;
use testcontainers::{Container, ContainerRequest, GenericImage, ImageExt};

use super::owner::{self, Owner};
use super::password::{Password, redacted};
use super::probe::{self, ProbeError};
use super::sweep::remove_stale_containers;
use super::{DEFAULT_IMAGE, RedisServer, ServerError, ServerKind, env_nonempty, note};

/// How long a Docker API call may take before the engine counts as not answering.
const DOCKER_CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a container may take from creation to "Ready to accept connections".
const CONTAINER_STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// The container of this process, taken and removed by [`remove_container_at_exit`].
static CONTAINER: Mutex<Option<Container<GenericImage>>> = Mutex::new(None);

/// The connection that shows this run is alive to other runs' sweeps (see [`owner`]). It is never
/// used, only held until the process ends.
static LEASE: Mutex<Option<redis::Connection>> = Mutex::new(None);

pub(super) fn start_container() -> Result<RedisServer, ServerError> {
    off_runtime(start_container_here)
}

/// Runs `work` on a thread of its own: testcontainers' blocking API and [`docker_call`] drive
/// Tokio runtimes of their own, which cannot start inside another one, so this keeps the Docker
/// calls callable from async code too.
pub(crate) fn off_runtime<T: Send>(
    work: impl FnOnce() -> Result<T, ServerError> + Send,
) -> Result<T, ServerError> {
    std::thread::scope(|scope| {
        scope.spawn(work).join().unwrap_or_else(|_| {
            Err(ServerError::DockerUnavailable {
                cause: "the Docker client panicked".to_owned(),
            })
        })
    })
}

/// Checks that the engine answers and removes what killed runs left (see [`sweep`](super::sweep)),
/// before this run starts containers of its own.
pub(crate) fn prepare_engine() -> Result<(), ServerError> {
    docker_check()?;
    // Best effort: a failure to clean up after an earlier run must not stop this one.
    if let Err(e) = remove_stale_containers() {
        note(&format!(
            "could not remove containers left by killed runs: {e}"
        ));
    }
    Ok(())
}

/// The image the container source starts: `REDIS_IMAGE`, or [`DEFAULT_IMAGE`].
pub(crate) fn image_name() -> String {
    env_nonempty("REDIS_IMAGE").unwrap_or_else(|| DEFAULT_IMAGE.to_owned())
}

/// The option that gives a container's server its password, in the container's command.
const REQUIREPASS: &str = "--requirepass";

/// How every Redis container of the grader is asked for (the shared server and Redlock's
/// nodes): requiring `password`, persistence off, labelled with this run for the sweep, and, on
/// a local engine, published on the loopback interface only.
///
/// The password is in the container's command, where `docker inspect` shows it: whoever may
/// ask the engine that may also `docker exec` into the container, so it hides nothing from
/// them, and the sweep of another run reads it there ([`command_password`]). A container
/// restarted by the engine runs the same command, so a node restarted after a kill keeps its
/// password. On the host, `redis-server` replaces its arguments with its title once it starts.
pub(crate) fn redis_request(image: &str, password: &Password) -> ContainerRequest<GenericImage> {
    let (name, tag) = split_image(image);
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
            REQUIREPASS,
            password.expose(),
        ])
        .with_startup_timeout(CONTAINER_STARTUP_TIMEOUT);
    for (label, value) in Owner::this_process().labels() {
        request = request.with_label(label, value);
    }
    if engine_is_local() {
        // The grader's servers are for this machine alone: publish them on the loopback
        // interface only (testcontainers would publish on all of them).
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
    request
}

/// Starts `request` for a container from `image`, or says why it did not start and what to do.
pub(crate) fn start_request(
    image: &str,
    request: ContainerRequest<GenericImage>,
) -> Result<Container<GenericImage>, ServerError> {
    request.start().map_err(|e| match &e {
        TestcontainersError::Client(ClientError::PullImage { .. }) => {
            ServerError::ImageUnavailable {
                image: image.to_owned(),
                cause: e.to_string(),
                remedy: image_remedy(image),
            }
        }
        _ => ServerError::ContainerFailed {
            image: image.to_owned(),
            cause: e.to_string(),
            remedy: "Check the image (REDIS_IMAGE) and the Docker engine, or set \
                     GRADER_REDIS=process to use a local redis-server"
                .to_owned(),
        },
    })
}

fn start_container_here() -> Result<RedisServer, ServerError> {
    prepare_engine()?;
    let image = image_name();
    let local_engine = engine_is_local();
    let failed = |cause: String, remedy: String| ServerError::ContainerFailed {
        image: image.clone(),
        cause,
        remedy,
    };
    let password = Password::fresh()?;
    let container = start_request(&image, redis_request(&image, &password))?;
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
    let url = password.url(&host, port);
    let server = format!("the container {} from image {image}", short_id(&id));
    match probe::probe(&url) {
        Ok(version) => {
            take_lease(&url);
            Ok(RedisServer {
                url,
                kind: ServerKind::Container { image },
                version,
                _process: None,
                passed_over: None,
            })
        }
        Err(ProbeError::TooOld(version)) => {
            remove_container_now();
            Err(ServerError::TooOld {
                server,
                version,
                remedy: format!("Set REDIS_IMAGE to a newer image, e.g. {DEFAULT_IMAGE}."),
            })
        }
        Err(ProbeError::Refused {
            command,
            why,
            reply,
            remedy,
        }) => {
            remove_container_now();
            Err(ServerError::CommandRefused {
                server,
                command: command.to_owned(),
                why: why.to_owned(),
                reply,
                remedy: format!("{remedy} (set REDIS_IMAGE to another image)."),
            })
        }
        Err(ProbeError::Unusable(cause)) => Err(setup(format!(
            "it started but does not answer at {}: {cause}",
            redacted(&url)
        ))),
    }
}

/// Opens the connection that marks this run alive (see [`owner`]); without it, a sweep from
/// another pid namespace keeps the container, so a failure is only a note.
fn take_lease(url: &str) {
    if let Some(connection) = lease_connection(url) {
        *LEASE.lock().unwrap_or_else(|e| e.into_inner()) = Some(connection);
    }
}

/// A connection to the Redis at `url` named as this run's lease (see [`owner`]), to be held for
/// as long as the container should live; `None`, with a note, when it cannot be opened.
pub(crate) fn lease_connection(url: &str) -> Option<redis::Connection> {
    let name = owner::lease_name(owner::run_id());
    let lease = probe::connect_to(url).and_then(|mut connection| {
        redis::cmd("CLIENT")
            .arg("SETNAME")
            .arg(&name)
            .exec(&mut connection)
            .map(|()| connection)
            .map_err(|e| e.to_string())
    });
    lease
        .map_err(|e| note(&format!("could not mark the container as this run's: {e}")))
        .ok()
}

/// The password in a grader container's command as Docker lists it (`Path` and `Args` joined by
/// spaces, e.g. `redis-server --save  … --requirepass PASSWORD`), for the sweep's look at the
/// lease of another run; `None` in a container started without one.
pub(super) fn command_password(command: &str) -> Option<Password> {
    let mut words = command.split_whitespace();
    words.find(|word| *word == REQUIREPASS)?;
    Password::parse(words.next()?)
}

fn image_remedy(image: &str) -> String {
    let fallback = "or set GRADER_REDIS=process to use a local redis-server";
    if image == DEFAULT_IMAGE {
        format!(
            "Run `docker pull {image}` where a registry is reachable, or build the local image \
             with `.ci/build-redis-image` and set REDIS_IMAGE=redis-course:local, {fallback}"
        )
    } else {
        format!(
            "Build or pull it (`.ci/build-redis-image` builds redis-course:local), check \
             REDIS_IMAGE, {fallback}"
        )
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
pub(crate) fn engine_is_local() -> bool {
    env_nonempty("DOCKER_HOST").is_none_or(|host| host.starts_with("unix://"))
}

fn short_id(id: &str) -> &str {
    &id[..id.len().min(12)]
}

/// Runs a future against the Docker engine on a runtime of its own, within a time bound.
pub(crate) fn docker_call<T, F>(
    call: impl FnOnce(testcontainers::bollard::Docker) -> F,
) -> Result<T, String>
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

/// Whether a Docker engine answers here (`Ok`), or why not. The container source needs one;
/// tools and tests ask before they rely on it.
pub fn docker_available() -> Result<(), ServerError> {
    docker_check()
}

/// Whether the engine holds the image `image` already (`Ok(false)`: a start
/// would have to pull it), or why the engine could not say. Pulls nothing.
pub fn image_present(image: &str) -> Result<bool, ServerError> {
    use testcontainers::bollard::errors::Error;
    let image = image.to_owned();
    docker_call(|docker| async move {
        match docker.inspect_image(&image).await {
            Ok(_) => Ok(true),
            Err(Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(false),
            Err(e) => Err(e),
        }
    })
    .map_err(|cause| ServerError::DockerUnavailable { cause })
}

/// Checks up front that the engine answers, including a versioned call: `/_ping` alone also
/// succeeds on an engine that would refuse every other request as "client version too new".
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
    // Unwinding out of an atexit handler would abort the process mid-exit. The work runs on a
    // thread of its own: the exiting thread's thread-locals, Tokio's among them, may be gone
    // already, and the Docker client dropping its runtime there panics while it cleans up.
    let _ = std::panic::catch_unwind(|| std::thread::spawn(remove_container_now).join());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sweep_reads_the_password_in_a_containers_command() {
        let password = Password::fresh().unwrap_or_else(|e| panic!("{e}"));
        let request = redis_request("redis:7.4", &password);
        let command = format!(
            "docker-entrypoint.sh {}",
            request.cmd().collect::<Vec<_>>().join(" ")
        );
        assert_eq!(command_password(&command), Some(password));
        let without = "docker-entrypoint.sh redis-server --save  --appendonly no";
        assert_eq!(command_password(without), None);
        assert_eq!(command_password("redis-server --requirepass"), None);
    }

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
}
