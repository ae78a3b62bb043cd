//! The private Docker network that a run's container nodes share.
//!
//! One network per run, named after the process that created it (`dlcourse-nodes-RUN`), created
//! with the first container node and removed by the grader's Docker helper when that process
//! ends, after its containers (a network with containers on it cannot be removed). A harness
//! creates it for the checks it runs and hands its name down ([`NETWORK_VAR`]), so that a run of
//! every check makes one bridge, not one per Redlock check: creating and removing bridges is
//! the slowest thing a Docker engine does, and the one it gets wrong under load. It carries the
//! owner labels of the grader's containers, so that the sweep of stale containers
//! (`server/sweep.rs`) removes it too when a killed run left it. Its own bridge keeps the nodes
//! off Docker's default one, and off every other run's.

use std::sync::OnceLock;
use std::time::Duration;

use course_docker_protocol::Request;

use crate::server::{DOCKER_CALL_TIMEOUT, ServerError, docker_call, network_labels};

/// How long the engine may take to create the network. A bridge is a subnet and firewall rules:
/// with several runs creating and removing theirs on a loaded machine, that has taken more than
/// the 10 s any other call gets.
const CREATE_TIMEOUT: Duration = Duration::from_secs(60);

/// The variable that names the network a harness created for the checks it runs.
pub const NETWORK_VAR: &str = "GRADER_NODES_NETWORK";

/// This run's network, once asked for: its name, or why it could not be created.
static NETWORK: OnceLock<Result<String, ServerError>> = OnceLock::new();

/// The name of this run's network: the one handed down in [`NETWORK_VAR`], or one this process
/// creates on the first call (or why it could not).
pub fn name() -> Result<&'static str, ServerError> {
    NETWORK
        .get_or_init(|| match std::env::var(NETWORK_VAR) {
            Ok(given) if !given.trim().is_empty() => Ok(given),
            _ => create(),
        })
        .as_deref()
        .map_err(Clone::clone)
}

fn create() -> Result<String, ServerError> {
    let name = format!("dlcourse-nodes-{}", crate::server::run_id());
    let request = Request::CreateNetwork {
        name: name.clone(),
        labels: network_labels().into_iter().collect(),
        timeout_ms: CREATE_TIMEOUT.as_millis() as u64,
    };
    docker_call(&request, CREATE_TIMEOUT + DOCKER_CALL_TIMEOUT, |failure| {
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
