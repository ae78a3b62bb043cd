//! The private Docker network that a run's container nodes share.
//!
//! One network per test process, named after the run (`dlcourse-nodes-RUN`), created with the
//! first container node and removed when the process exits, after its containers (a network with
//! containers on it cannot be removed). It carries the owner labels of the grader's containers,
//! so that the sweep of stale containers (`server/sweep.rs`) removes it too when a killed run
//! left it. Its own bridge keeps the nodes off Docker's default one, and off every other run's.

use std::sync::OnceLock;

use testcontainers::bollard::models::NetworkCreateRequest;

use crate::server::{
    NETWORK_PATIENCE, NetworkRemoval, ServerError, docker_call, network_labels, remove_network,
};

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

/// Removes this run's network; one that is already gone is no error, and one the engine is
/// still letting go of is waited for (see [`remove_network`]).
pub(super) fn remove_now() -> Result<(), String> {
    let Some(Ok(name)) = NETWORK.get() else {
        return Ok(());
    };
    match remove_network(name, NETWORK_PATIENCE)? {
        NetworkRemoval::Gone => Ok(()),
        NetworkRemoval::StillInUse => Err(format!(
            "{name} still has containers after {} s (the next container start removes it, \
             or run `docker network rm {name}`)",
            NETWORK_PATIENCE.as_secs()
        )),
    }
}
