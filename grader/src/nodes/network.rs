//! The private Docker network that a run's container nodes share.
//!
//! One network per test process, named after the run (`dlcourse-nodes-RUN`), created with the
//! first container node and removed by the grader's Docker helper when the process ends, after
//! its containers (a network with containers on it cannot be removed). It carries the owner labels of the grader's containers,
//! so that the sweep of stale containers (`server/sweep.rs`) removes it too when a killed run
//! left it. Its own bridge keeps the nodes off Docker's default one, and off every other run's.

use std::sync::OnceLock;

use course_docker_protocol::Request;

use crate::server::{DOCKER_CALL_TIMEOUT, ServerError, docker_call, network_labels};

/// This run's network, once asked for: its name, or why it could not be created.
static NETWORK: OnceLock<Result<String, ServerError>> = OnceLock::new();

/// The name of this run's network, created on the first call (or why it could not be).
pub(super) fn name() -> Result<&'static str, ServerError> {
    NETWORK.get_or_init(create).as_deref().map_err(Clone::clone)
}

fn create() -> Result<String, ServerError> {
    let name = format!("dlcourse-nodes-{}", crate::server::run_id());
    let request = Request::CreateNetwork {
        name: name.clone(),
        labels: network_labels().into_iter().collect(),
    };
    docker_call(&request, DOCKER_CALL_TIMEOUT, |failure| {
        ServerError::DockerUnavailable {
            cause: format!(
                "creating the private network of Redlock's nodes failed: {} (Docker may \
                 have run out of address pools: `docker network prune` frees those of \
                 networks no container uses)",
                failure.message
            ),
        }
    })
    .map(|_| name)
}
