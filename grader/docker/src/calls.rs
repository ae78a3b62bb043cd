//! One request, one bounded call on the engine; and, at the end, the removal of what was started.
//!
//! Every call has a time bound of its own, so that an engine that stops answering is a failure
//! the judge can report, not a hang. Containers started here are kept (as testcontainers'
//! handles) until the judge asks for their removal or its input ends; networks created here
//! are removed at the end, after the containers, since a network with a container on it cannot
//! be removed. The engine answers "has active endpoints" with 409 (before Docker 25) or 403
//! (since), and for a moment after its last container went: a removal retries those.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use course_docker_protocol::{
    Answer, ContainerSummary, Failure, FailureKind, Inspection, NetworkRemoval, NetworkSummary,
    Reply, Request,
};
use testcontainers::bollard::Docker;
use testcontainers::bollard::errors::Error as DockerError;
use testcontainers::bollard::models::{ContainerInspectResponse, NetworkCreateRequest};
use testcontainers::bollard::query_parameters::{
    InspectContainerOptions, InspectNetworkOptions, KillContainerOptions,
    ListContainersOptionsBuilder, ListNetworksOptionsBuilder, RemoveContainerOptionsBuilder,
    StartContainerOptions,
};
use testcontainers::{ContainerAsync, GenericImage};

/// How long one call on the engine may take before the engine counts as not answering.
pub(crate) const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a killed container may take to stop.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the removal at the end waits for the engine to let go of a network.
const NETWORK_PATIENCE: Duration = Duration::from_secs(10);

/// How long one removal at the end may take: nobody waits for it any more, and on a loaded
/// machine removing five containers at once takes longer than one call's bound.
const END_TIMEOUT: Duration = Duration::from_secs(60);

/// What this helper started, and its client of the engine.
#[derive(Default)]
pub(crate) struct Helper {
    docker: Option<Docker>,
    containers: HashMap<String, ContainerAsync<GenericImage>>,
    networks: Vec<String>,
}

impl Helper {
    /// Answers one request.
    pub(crate) async fn handle(&mut self, request: Request) -> Answer {
        let docker = self.docker().await?;
        match request {
            Request::Check => check(&docker).await.map(|()| Reply::Done),
            Request::ImagePresent { image } => {
                match bounded(CALL_TIMEOUT, docker.inspect_image(&image)).await {
                    Ok(_) => Ok(Reply::Present(true)),
                    Err(e) if status(&e) == Some(404) => Ok(Reply::Present(false)),
                    Err(e) => Err(e),
                }
            }
            Request::Start { containers } => {
                let started = crate::start::start_all(containers).await;
                Ok(Reply::Started(
                    started
                        .into_iter()
                        .map(|result| {
                            result.map(|(container, started)| {
                                self.containers.insert(started.id.clone(), container);
                                started
                            })
                        })
                        .collect(),
                ))
            }
            Request::Pause { id } => done(bounded(CALL_TIMEOUT, docker.pause_container(&id))).await,
            Request::Unpause { id } => {
                done(bounded(CALL_TIMEOUT, docker.unpause_container(&id))).await
            }
            Request::Kill { id } => kill(&docker, &id).await.map(|()| Reply::Done),
            Request::StartAgain { id } => {
                let start = docker.start_container(&id, None::<StartContainerOptions>);
                done(bounded(CALL_TIMEOUT, start)).await
            }
            Request::Inspect { id } => inspect(&docker, &id).await.map(Reply::Inspected),
            Request::Remove { id } => self.remove(&docker, &id).await.map(|()| Reply::Done),
            Request::CreateNetwork {
                name,
                labels,
                timeout_ms,
            } => {
                let request = NetworkCreateRequest {
                    name: name.clone(),
                    driver: Some("bridge".to_owned()),
                    labels: Some(labels.into_iter().collect()),
                    ..Default::default()
                };
                // Recorded before the call: a creation that outlasts its bound may still
                // happen in the engine, and the removal at the end must try it then too.
                self.networks.push(name);
                let limit = Duration::from_millis(timeout_ms);
                bounded(limit, docker.create_network(request)).await?;
                Ok(Reply::Done)
            }
            Request::RemoveNetwork { name, patience_ms } => {
                let removal =
                    remove_network(&docker, &name, Duration::from_millis(patience_ms)).await?;
                self.networks.retain(|mine| *mine != name);
                Ok(Reply::Network(removal))
            }
            Request::ListContainers { label } => list_containers(&docker, &label)
                .await
                .map(Reply::Containers),
            Request::ListNetworks { label } => {
                list_networks(&docker, &label).await.map(Reply::Networks)
            }
        }
    }

    /// Removes every container this helper started, at the same time, then its networks.
    pub(crate) async fn remove_everything(mut self) {
        let removals: Vec<_> = self
            .containers
            .drain()
            .map(|(_, container)| {
                tokio::spawn(async move { bounded(END_TIMEOUT, container.rm()).await })
            })
            .collect();
        for removal in removals {
            let _ = removal.await;
        }
        let Ok(docker) = self.docker().await else {
            return;
        };
        for name in std::mem::take(&mut self.networks) {
            remove_network_at_end(&docker, &name).await;
        }
    }

    async fn docker(&mut self) -> Result<Docker, Failure> {
        if let Some(docker) = &self.docker {
            return Ok(docker.clone());
        }
        let docker = bounded(
            CALL_TIMEOUT,
            testcontainers::core::client::docker_client_instance(),
        )
        .await?;
        self.docker = Some(docker.clone());
        Ok(docker)
    }

    async fn remove(&mut self, docker: &Docker, id: &str) -> Result<(), Failure> {
        if let Some(container) = self.containers.remove(id) {
            return bounded(CALL_TIMEOUT, container.rm()).await;
        }
        let options = RemoveContainerOptionsBuilder::new()
            .force(true)
            .v(true)
            .build();
        match bounded(CALL_TIMEOUT, docker.remove_container(id, Some(options))).await {
            Err(e) if status(&e) == Some(404) => Ok(()),
            other => other,
        }
    }
}

/// Checks that the engine answers, including a versioned call: `/_ping` alone also succeeds on
/// an engine that would refuse every other request as "client version too new".
async fn check(docker: &Docker) -> Result<(), Failure> {
    bounded(CALL_TIMEOUT, docker.ping()).await?;
    bounded(CALL_TIMEOUT, docker.version())
        .await
        .map(drop)
        .map_err(|e| Failure {
            kind: FailureKind::Unavailable,
            message: format!(
                "the engine answers ping but not a version request ({}); if it says the \
                 client version is too new, upgrade Docker Engine",
                e.message
            ),
        })
}

/// `docker kill`, paused or not, then a wait until the engine shows it stopped.
async fn kill(docker: &Docker, id: &str) -> Result<(), Failure> {
    let options = KillContainerOptions {
        signal: "SIGKILL".to_owned(),
    };
    bounded(CALL_TIMEOUT, docker.kill_container(id, Some(options))).await?;
    let deadline = Instant::now() + SETTLE_TIMEOUT;
    while inspect(docker, id).await?.running {
        if Instant::now() >= deadline {
            return Err(Failure {
                kind: FailureKind::Refused,
                message: format!("it still runs {} s after SIGKILL", SETTLE_TIMEOUT.as_secs()),
            });
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Ok(())
}

async fn inspect(docker: &Docker, id: &str) -> Result<Inspection, Failure> {
    let response: ContainerInspectResponse = bounded(
        CALL_TIMEOUT,
        docker.inspect_container(id, None::<InspectContainerOptions>),
    )
    .await?;
    let settings = response.network_settings.as_ref();
    let addresses = settings
        .and_then(|settings| settings.networks.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|(name, endpoint)| {
            let ip = endpoint.ip_address.clone().filter(|ip| !ip.is_empty())?;
            Some((name.clone(), ip))
        })
        .collect();
    let published_port = settings
        .and_then(|settings| settings.ports.as_ref()?.get("6379/tcp").cloned().flatten())
        .and_then(|bindings| {
            // The IPv4 binding: an engine that publishes on every interface lists `::` too.
            bindings
                .iter()
                .find(|binding| !binding.host_ip.as_deref().unwrap_or_default().contains(':'))
                .and_then(|binding| binding.host_port.as_deref()?.parse::<u16>().ok())
        });
    let state = response.state.as_ref();
    Ok(Inspection {
        running: state.and_then(|s| s.running) == Some(true),
        pid: state.and_then(|s| s.pid).unwrap_or(0),
        addresses,
        published_port,
    })
}

/// Removes a network of this helper's at the end. Whatever container is still on it is this
/// run's too (the network is private to the run): a removal that ran out of time, or a start
/// that finished in the engine after its caller had given up. Those go first, then the network.
async fn remove_network_at_end(docker: &Docker, name: &str) {
    if !matches!(
        remove_network(docker, name, NETWORK_PATIENCE).await,
        Ok(NetworkRemoval::StillInUse)
    ) {
        return;
    }
    let attached = bounded(
        CALL_TIMEOUT,
        docker.inspect_network(name, None::<InspectNetworkOptions>),
    )
    .await
    .ok()
    .and_then(|inspect| inspect.containers)
    .unwrap_or_default();
    let options = RemoveContainerOptionsBuilder::new()
        .force(true)
        .v(true)
        .build();
    for id in attached.keys() {
        let _ = bounded(
            END_TIMEOUT,
            docker.remove_container(id, Some(options.clone())),
        )
        .await;
    }
    let _ = remove_network(docker, name, NETWORK_PATIENCE).await;
}

/// Removes the network `name`, retrying "still in use" for up to `patience`.
async fn remove_network(
    docker: &Docker,
    name: &str,
    patience: Duration,
) -> Result<NetworkRemoval, Failure> {
    let deadline = Instant::now() + patience;
    loop {
        let removal = match bounded(CALL_TIMEOUT, docker.remove_network(name)).await {
            Ok(()) => NetworkRemoval::Gone,
            Err(e) if status(&e) == Some(404) => NetworkRemoval::Gone,
            Err(e) if matches!(status(&e), Some(403 | 409)) => NetworkRemoval::StillInUse,
            Err(e) => return Err(e),
        };
        if removal == NetworkRemoval::Gone || Instant::now() >= deadline {
            return Ok(removal);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn list_containers(docker: &Docker, label: &str) -> Result<Vec<ContainerSummary>, Failure> {
    let filters = HashMap::from([("label", vec![label])]);
    let options = ListContainersOptionsBuilder::new()
        .all(true)
        .filters(&filters)
        .build();
    let summaries = bounded(CALL_TIMEOUT, docker.list_containers(Some(options))).await?;
    Ok(summaries
        .into_iter()
        .filter_map(|summary| {
            let published_port = summary
                .ports
                .iter()
                .flatten()
                .find(|port| port.private_port == 6379)
                .and_then(|port| port.public_port);
            Some(ContainerSummary {
                id: summary.id?,
                labels: summary.labels.unwrap_or_default().into_iter().collect(),
                state: summary.state.map(|s| s.to_string()).unwrap_or_default(),
                created: summary.created,
                command: summary.command.unwrap_or_default(),
                published_port,
            })
        })
        .collect())
}

async fn list_networks(docker: &Docker, label: &str) -> Result<Vec<NetworkSummary>, Failure> {
    let filters = HashMap::from([("label", vec![label])]);
    let options = ListNetworksOptionsBuilder::new().filters(&filters).build();
    let networks = bounded(CALL_TIMEOUT, docker.list_networks(Some(options))).await?;
    let mut summaries = Vec::new();
    for network in networks {
        let Some(name) = network.name else { continue };
        // A listing does not count a network's containers: an inspection does.
        let containers = bounded(
            CALL_TIMEOUT,
            docker.inspect_network(&name, None::<InspectNetworkOptions>),
        )
        .await
        .ok()
        .map(|inspect| inspect.containers.map_or(0, |c| c.len()));
        summaries.push(NetworkSummary {
            name,
            labels: network
                .labels
                .unwrap_or_default()
                .into_iter()
                .collect::<BTreeMap<_, _>>(),
            containers,
        });
    }
    Ok(summaries)
}

/// `Reply::Done` once `call` went through.
async fn done(call: impl Future<Output = Result<(), Failure>>) -> Answer {
    call.await.map(|()| Reply::Done)
}

/// Runs `call` within `limit`; an error or no answer in time is a [`Failure`].
pub(crate) async fn bounded<T, E: ToFailure>(
    limit: Duration,
    call: impl Future<Output = Result<T, E>>,
) -> Result<T, Failure> {
    match tokio::time::timeout(limit, call).await {
        Ok(result) => result.map_err(|e| e.to_failure()),
        Err(_) => Err(Failure {
            kind: FailureKind::Unavailable,
            message: format!("no answer within {} s", limit.as_secs()),
        }),
    }
}

/// The HTTP status of an engine's refusal, if it is one (kept in the failure's words).
fn status(failure: &Failure) -> Option<u16> {
    failure
        .message
        .strip_prefix("status ")?
        .split(':')
        .next()?
        .parse()
        .ok()
}

/// A client's error as the judge is told it.
pub(crate) trait ToFailure {
    fn to_failure(self) -> Failure;
}

impl ToFailure for DockerError {
    fn to_failure(self) -> Failure {
        match self {
            // Its status first, where [`status`] reads it back.
            DockerError::DockerResponseServerError {
                status_code,
                message,
            } => Failure {
                kind: FailureKind::Refused,
                message: format!("status {status_code}: {message}"),
            },
            other => Failure {
                kind: FailureKind::Unavailable,
                message: other.to_string(),
            },
        }
    }
}

impl ToFailure for testcontainers::TestcontainersError {
    fn to_failure(self) -> Failure {
        use testcontainers::core::error::{ClientError, TestcontainersError};
        let kind = match &self {
            TestcontainersError::Client(ClientError::PullImage { .. }) => {
                FailureKind::ImageUnavailable
            }
            TestcontainersError::Client(ClientError::Init(_)) => FailureKind::Unavailable,
            _ => FailureKind::Refused,
        };
        Failure {
            kind,
            message: self.to_string(),
        }
    }
}

impl ToFailure for testcontainers::core::error::ClientError {
    fn to_failure(self) -> Failure {
        Failure {
            kind: FailureKind::Unavailable,
            message: self.to_string(),
        }
    }
}

impl ToFailure for Failure {
    fn to_failure(self) -> Failure {
        self
    }
}
