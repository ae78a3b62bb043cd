//! The private Docker network that a run's container nodes share.
//!
//! One network per test process, named after the run (`dlcourse-nodes-RUN`), created with the
//! first container node and removed when the process exits, after its containers (a network with
//! containers on it cannot be removed). It carries the owner labels of the grader's containers,
//! so that the sweep of stale containers (`server/sweep.rs`) removes it too when a killed run
//! left it. Its own bridge keeps the nodes off Docker's default one, and off every other run's.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use testcontainers::bollard::errors::Error as DockerError;
use testcontainers::bollard::models::NetworkCreateRequest;

use crate::server::{ServerError, docker_call, network_labels};

/// How long the removal at exit waits for the engine to let go of the network's last container.
const REMOVE_TIMEOUT: Duration = Duration::from_secs(5);

/// This run's network, once asked for: its name, or why it could not be created.
static NETWORK: OnceLock<Result<String, ServerError>> = OnceLock::new();

/// The name of this run's network, created on the first call (or why it could not be).
pub(super) fn name() -> Result<&'static str, ServerError> {
    NETWORK.get_or_init(create).as_deref().map_err(Clone::clone)
}

fn create() -> Result<String, ServerError> {
    let name = format!("dlcourse-nodes-{}", crate::server::run_id());
    let request = NetworkCreateRequest {
        name: name.clone(),
        driver: Some("bridge".to_owned()),
        labels: Some(network_labels()),
        ..Default::default()
    };
    super::container::register_exit_handler();
    docker_call(|docker| async move { docker.create_network(request).await })
        .map(|_| name)
        .map_err(|cause| ServerError::DockerUnavailable {
            cause: format!(
                "creating the private network of Redlock's nodes failed: {cause} (Docker may \
                 have run out of address pools: `docker network prune` frees those of \
                 networks no container uses)"
            ),
        })
}

/// Removes this run's network; one that is already gone is no error. The engine may still be
/// letting go of a container just removed (it answers 409, "active endpoints"): that is retried
/// for up to [`REMOVE_TIMEOUT`].
pub(super) fn remove_now() -> Result<(), String> {
    let Some(Ok(name)) = NETWORK.get() else {
        return Ok(());
    };
    let deadline = Instant::now() + REMOVE_TIMEOUT;
    loop {
        let target = name.clone();
        let removed = docker_call(|docker| async move {
            match docker.remove_network(&target).await {
                Err(DockerError::DockerResponseServerError {
                    status_code: 404, ..
                }) => Ok(true),
                Err(DockerError::DockerResponseServerError {
                    status_code: 409, ..
                }) => Ok(false),
                other => other.map(|()| true),
            }
        })?;
        if removed {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "{name} still has containers after {} s (the next container start removes it, \
                 or run `docker network rm {name}`)",
                REMOVE_TIMEOUT.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
