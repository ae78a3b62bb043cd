//! The container source, and the one way the grader starts a Redis container.
//!
//! Every Redis container of the grader (the one server here, Redlock's nodes and the replica
//! pair in `crate::nodes`) is a [`RedisContainer`], asked for the same way: the image
//! `REDIS_IMAGE` (or [`DEFAULT_IMAGE`]), requiring a password of its own, persistence off,
//! labelled with its owner run for the sweep, and, on a local engine, published on loopback only.
//! Starting, pausing, killing and starting again are requests to the grader's Docker helper
//! ([`engine`](super::engine)), which also removes the container when this process ends,
//! however it ends; a helper killed itself leaves that to the next run's sweep
//! ([`sweep`](super::sweep)), which reads the owner labels ([`owner`](super::owner)).
//!
//! The helper pulls an image only when the engine does not have it. An image that is neither
//! here nor pullable (no registry answers) is a [`ServerError::ImageUnavailable`], which tells
//! the two remedies apart: pull it where a registry answers, or build the local one.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use course_docker_protocol::{ContainerSpec, FailureKind, Inspection, Reply, Request};

use super::engine::{self, DOCKER_CALL_TIMEOUT, docker_available, unexpected, unusable};
use super::owner::{self, Owner};
use super::password::{Password, redacted};
use super::probe::{self, ProbeError};
use super::sweep::remove_stale_containers;
use super::{DEFAULT_IMAGE, RedisServer, ServerError, ServerKind, env_nonempty, note};

/// How long a container may take from creation to "Ready to accept connections".
const CONTAINER_STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// The option that gives a container's server its password, in the container's command.
const REQUIREPASS: &str = "--requirepass";

/// How many times a `docker pause` the engine could not complete is asked for. On a loaded
/// machine the kernel's freezer may not stop every process of the container in the time runc
/// gives it ("unable to freeze"); runc then thaws the container, which runs on as before, and
/// another try freezes it. The real time that takes is a stall like any other: the virtual clock
/// absorbs it or the check is run again.
const PAUSE_TRIES: u32 = 5;

/// The engine's words for a freeze that did not complete in time.
const NOT_FROZEN: &str = "unable to freeze";

/// The connection that shows this run is alive to other runs' sweeps (see [`owner`]). It is never
/// used, only held until the process ends.
static LEASE: Mutex<Option<redis::Connection>> = Mutex::new(None);

/// One Redis container of this run, removed when dropped (and, at the latest, when the
/// process ends).
#[derive(Debug)]
pub(crate) struct RedisContainer {
    id: String,
    /// The host its published port is on, as this machine reaches it.
    published_host: String,
    /// What it is, in messages: "Redis container", "Redlock node container".
    role: &'static str,
}

/// Where one container goes: on `network` under `name`, or on Docker's default network.
#[derive(Debug, Clone, Default)]
pub(crate) struct Placement {
    pub network: Option<String>,
    pub name: Option<String>,
}

impl RedisContainer {
    /// Starts one container from `image` for each of `placements`, at the same time, the server
    /// of the `i`-th requiring `passwords[i]`, and waits until each is ready.
    pub(crate) fn start_all(
        image: &str,
        role: &'static str,
        starts: Vec<(Placement, &Password)>,
    ) -> Result<Vec<RedisContainer>, ServerError> {
        let containers = starts
            .into_iter()
            .map(|(placement, password)| spec(image, password, placement))
            .collect();
        let request = Request::Start { containers };
        let bound = CONTAINER_STARTUP_TIMEOUT + 3 * DOCKER_CALL_TIMEOUT;
        let started = match engine::call(&request, bound, unusable("starting a container"))? {
            Reply::Started(started) => started,
            other => return Err(unexpected(&other)),
        };
        // Every one that started is removed on drop, should another have failed.
        let mut containers = Vec::new();
        let mut failure = None;
        for result in started {
            match result {
                Ok(started) => containers.push(RedisContainer {
                    published_host: match started.host.as_str() {
                        _ if engine_is_local() => "127.0.0.1".to_owned(),
                        "localhost" => "127.0.0.1".to_owned(),
                        host => host.to_owned(),
                    },
                    id: started.id,
                    role,
                }),
                Err(e) => {
                    failure.get_or_insert(e);
                }
            }
        }
        match failure {
            None => Ok(containers),
            Some(e) if e.kind == FailureKind::ImageUnavailable => {
                Err(ServerError::ImageUnavailable {
                    image: image.to_owned(),
                    cause: e.message,
                    remedy: image_remedy(image),
                })
            }
            Some(e) => Err(ServerError::ContainerFailed {
                image: image.to_owned(),
                cause: e.message,
                remedy: "Check the image (REDIS_IMAGE) and the Docker engine, or set \
                         GRADER_REDIS=process to use a local redis-server"
                    .to_owned(),
            }),
        }
    }

    /// The container's id.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// The host its published port is on, as this machine reaches it.
    pub(crate) fn published_host(&self) -> &str {
        &self.published_host
    }

    /// What the engine says of it now.
    pub(crate) fn inspect(&self) -> Result<Inspection, ServerError> {
        match self.ask(
            "inspect",
            Request::Inspect {
                id: self.id.clone(),
            },
        )? {
            Reply::Inspected(inspection) => Ok(inspection),
            other => Err(unexpected(&other)),
        }
    }

    /// `docker pause`: returns once the container is frozen. A freeze that did not complete is
    /// asked for again, up to [`PAUSE_TRIES`] times.
    pub(crate) fn pause(&self) -> Result<(), ServerError> {
        let mut tries = 1;
        loop {
            let paused = self.ask(
                "pause",
                Request::Pause {
                    id: self.id.clone(),
                },
            );
            match paused {
                Err(e) if tries < PAUSE_TRIES && e.to_string().contains(NOT_FROZEN) => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(50));
                }
                done => return done.map(drop),
            }
        }
    }

    /// `docker unpause`.
    pub(crate) fn unpause(&self) -> Result<(), ServerError> {
        self.ask(
            "unpause",
            Request::Unpause {
                id: self.id.clone(),
            },
        )
        .map(drop)
    }

    /// `docker kill` (`SIGKILL`), paused or not; returns once the engine shows it stopped.
    pub(crate) fn kill(&self) -> Result<(), ServerError> {
        self.ask(
            "kill",
            Request::Kill {
                id: self.id.clone(),
            },
        )
        .map(drop)
    }

    /// `docker start` of the killed container.
    pub(crate) fn start_again(&self) -> Result<(), ServerError> {
        self.ask(
            "start",
            Request::StartAgain {
                id: self.id.clone(),
            },
        )
        .map(drop)
    }

    fn ask(&self, action: &str, request: Request) -> Result<Reply, ServerError> {
        // A kill waits for the container to stop, beyond its own call.
        let bound = 2 * DOCKER_CALL_TIMEOUT;
        engine::call(&request, bound, |failure| ServerError::DockerUnavailable {
            cause: format!(
                "`docker {action}` of the {} {} failed: {}",
                self.role,
                short_id(&self.id),
                failure.message
            ),
        })
    }
}

impl Drop for RedisContainer {
    fn drop(&mut self) {
        let request = Request::Remove {
            id: self.id.clone(),
        };
        if let Err(e) = engine::call(&request, DOCKER_CALL_TIMEOUT, unusable("removing")) {
            note(&format!(
                "could not remove the {} {}: {e} (the next container start removes it, or run \
                 `docker rm -f {}`)",
                self.role,
                short_id(&self.id),
                self.id
            ));
        }
    }
}

/// How every Redis container of the grader is asked for: requiring `password`, persistence off,
/// labelled with this run for the sweep, and, on a local engine, published on the loopback
/// interface only.
///
/// The password is in the container's command, where `docker inspect` shows it: whoever may
/// ask the engine that may also `docker exec` into the container, so it hides nothing from
/// them, and the sweep of another run reads it there ([`command_password`]). A container
/// restarted by the engine runs the same command, so a node restarted after a kill keeps its
/// password. On the host, `redis-server` replaces its arguments with its title once it starts.
fn spec(image: &str, password: &Password, placement: Placement) -> ContainerSpec {
    // The image's own command may persist data or keep protected mode on, which refuses
    // clients that come through Docker's port mapping.
    let command = [
        "redis-server",
        "--save",
        "",
        "--appendonly",
        "no",
        "--protected-mode",
        "no",
        REQUIREPASS,
        password.expose(),
    ];
    ContainerSpec {
        image: image.to_owned(),
        command: command
            .into_iter()
            .chain(super::SERVER_BOUNDS)
            .map(str::to_owned)
            .collect(),
        labels: Owner::this_process()
            .labels()
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect::<BTreeMap<_, _>>(),
        network: placement.network,
        name: placement.name,
        loopback_only: engine_is_local(),
        ready_line: "Ready to accept connections".to_owned(),
        startup_timeout_ms: CONTAINER_STARTUP_TIMEOUT.as_millis() as u64,
    }
}

pub(super) fn start_container() -> Result<RedisServer, ServerError> {
    prepare_engine()?;
    let image = image_name();
    let password = Password::fresh()?;
    let started = RedisContainer::start_all(
        &image,
        "Redis container",
        vec![(Placement::default(), &password)],
    )?;
    let Some(container) = started.into_iter().next() else {
        return Err(ServerError::DockerUnavailable {
            cause: "the Docker helper started no container".to_owned(),
        });
    };
    let failed = |cause: String| ServerError::ContainerFailed {
        image: image.clone(),
        cause,
        remedy: "Check the image and the Docker engine.".to_owned(),
    };
    let port = container
        .inspect()?
        .published_port
        .ok_or_else(|| failed("no published port for 6379".to_owned()))?;
    let url = password.url(container.published_host(), port);
    let server = format!(
        "the container {} from image {image}",
        short_id(container.id())
    );
    match probe::probe(&url) {
        Ok(version) => {
            take_lease(&url);
            Ok(RedisServer {
                url,
                kind: ServerKind::Container { image },
                version,
                process: None,
                _container: Some(container),
                passed_over: None,
            })
        }
        Err(ProbeError::TooOld(version)) => Err(ServerError::TooOld {
            server,
            version,
            remedy: format!("Set REDIS_IMAGE to a newer image, e.g. {DEFAULT_IMAGE}."),
        }),
        Err(ProbeError::Refused {
            command,
            why,
            reply,
            remedy,
        }) => Err(ServerError::CommandRefused {
            server,
            command: command.to_owned(),
            why: why.to_owned(),
            reply,
            remedy: format!("{remedy} (set REDIS_IMAGE to another image)."),
        }),
        Err(ProbeError::Unusable(cause)) => Err(failed(format!(
            "it started but does not answer at {}: {cause}",
            redacted(&url)
        ))),
    }
}

/// Checks that the engine answers and removes what killed runs left (see [`sweep`](super::sweep)),
/// before this run starts containers of its own.
pub(crate) fn prepare_engine() -> Result<(), ServerError> {
    docker_available()?;
    // Best effort: a failure to clean up after an earlier run must not stop this one.
    if let Err(e) = remove_stale_containers() {
        note(&format!(
            "could not remove containers left by killed runs: {e}"
        ));
    }
    Ok(())
}

/// The image the container source starts: `REDIS_IMAGE`, or [`DEFAULT_IMAGE`].
pub fn image_name() -> String {
    env_nonempty("REDIS_IMAGE").unwrap_or_else(|| DEFAULT_IMAGE.to_owned())
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

/// Whether the engine is on this machine, where loopback publishing reaches it. An engine
/// elsewhere (`DOCKER_HOST=tcp://…`) keeps testcontainers' default publishing.
pub(crate) fn engine_is_local() -> bool {
    env_nonempty("DOCKER_HOST").is_none_or(|host| host.starts_with("unix://"))
}

fn short_id(id: &str) -> &str {
    &id[..id.len().min(12)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sweep_reads_the_password_in_a_containers_command() {
        let password = Password::fresh().unwrap_or_else(|e| panic!("{e}"));
        let spec = spec("redis:7.4", &password, Placement::default());
        let command = format!("docker-entrypoint.sh {}", spec.command.join(" "));
        assert_eq!(command_password(&command), Some(password));
        let without = "docker-entrypoint.sh redis-server --save  --appendonly no";
        assert_eq!(command_password(without), None);
        assert_eq!(command_password("redis-server --requirepass"), None);
    }
}
