//! Removing the containers and networks that killed runs left behind.
//!
//! Every container start first lists this host's grader containers and removes those whose owner
//! run is gone, as [`owner`] tells it: by pid where the owner shared this process's pid namespace,
//! else by the lease the owner held on its container's Redis. A container that is still starting,
//! or whose owner cannot be judged, is kept. Then come the private networks of Redlock's nodes
//! (`crate::nodes`), labelled alike: a network whose owner is gone goes too, and one whose owner
//! cannot be judged by pid goes once it is past its start-up and no container is on it (a live
//! run keeps its nodes on its network until it ends).

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use testcontainers::bollard::errors::Error as DockerError;
use testcontainers::bollard::models::Network;
use testcontainers::bollard::models::{ContainerSummary, ContainerSummaryStateEnum};
use testcontainers::bollard::query_parameters::{
    InspectNetworkOptions, ListContainersOptionsBuilder, ListNetworksOptionsBuilder,
    RemoveContainerOptionsBuilder,
};

use super::ServerError;
use super::container::{command_password, docker_call, engine_is_local};
use super::owner::{self, Judgement, Owner};

/// A container younger than this may belong to a run that has not yet taken its lease.
const LEASE_GRACE: Duration = Duration::from_secs(90);

/// How long a removal waits for the engine to let go of a network's last container.
pub(crate) const NETWORK_PATIENCE: Duration = Duration::from_secs(5);

/// Ids of the grader's containers started by process `owner_pid` on this host, running or not.
pub fn containers_owned_by(owner_pid: u32) -> Result<Vec<String>, ServerError> {
    Ok(grader_containers()?
        .into_iter()
        .filter(|(_, summary)| owner_of(summary).pid == Some(owner_pid))
        .map(|(id, _)| id)
        .collect())
}

/// Names of the grader's networks (those of Redlock's nodes) created by process `owner_pid` on
/// this host.
pub fn networks_owned_by(owner_pid: u32) -> Result<Vec<String>, ServerError> {
    Ok(grader_networks()?
        .into_iter()
        .filter(|(_, network)| network_owner(network).pid == Some(owner_pid))
        .map(|(name, _)| name)
        .collect())
}

/// Removes the grader's containers on this host whose owner run is gone (see the owner labels in
/// `server/owner.rs`), then the networks such runs left, and returns the containers' ids.
/// Starting a container does this first; it is public for tools and tests.
pub fn remove_stale_containers() -> Result<Vec<String>, ServerError> {
    let my_ns = owner::pid_namespace();
    let stale: Vec<String> = grader_containers()?
        .into_iter()
        .filter(|(_, summary)| {
            let owner = owner_of(summary);
            match owner::judge_by_pid(&owner, my_ns.as_deref(), owner::look) {
                Judgement::Gone => true,
                Judgement::Alive => false,
                Judgement::Unknown => lease_lost(&owner, summary),
            }
        })
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
    remove_stale_networks(my_ns.as_deref())?;
    Ok(stale)
}

/// Removes the networks whose owner is gone, or, when its pid cannot tell, that are past their
/// start-up and empty. A network that still has a container (of a live run in another pid
/// namespace, or one the engine is still taking down) is left for a later sweep.
fn remove_stale_networks(my_ns: Option<&str>) -> Result<(), ServerError> {
    for (name, network) in grader_networks()? {
        let owner = network_owner(&network);
        let stale = match owner::judge_by_pid(&owner, my_ns, owner::look) {
            Judgement::Gone => true,
            Judgement::Alive => false,
            Judgement::Unknown => past_start_up(&network) && is_empty(&name),
        };
        if !stale {
            continue;
        }
        // The engine may still be letting go of the containers just removed.
        remove_network(&name, NETWORK_PATIENCE).map_err(|cause| {
            ServerError::DockerUnavailable {
                cause: format!("removing the stale network {name} failed: {cause}"),
            }
        })?;
    }
    Ok(())
}

/// What became of a network asked to be removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NetworkRemoval {
    /// It is gone (now, or it already was).
    Gone,
    /// A container was still on it when `patience` ran out: a later sweep removes it.
    StillInUse,
}

/// Removes the network `name`, waiting up to `patience` while a container is still on it. The
/// engine answers "has active endpoints" with 409 (before Docker 25) or 403 (since), and for a
/// moment after the last container on it was removed; both are retried. Every other refusal is
/// an error.
pub(crate) fn remove_network(name: &str, patience: Duration) -> Result<NetworkRemoval, String> {
    let deadline = std::time::Instant::now() + patience;
    loop {
        let target = name.to_owned();
        let removal = docker_call(|docker| async move {
            match docker.remove_network(&target).await {
                Err(DockerError::DockerResponseServerError {
                    status_code: 404, ..
                }) => Ok(NetworkRemoval::Gone),
                Err(DockerError::DockerResponseServerError {
                    status_code: 403 | 409,
                    ..
                }) => Ok(NetworkRemoval::StillInUse),
                other => other.map(|()| NetworkRemoval::Gone),
            }
        })?;
        if removal == NetworkRemoval::Gone || std::time::Instant::now() >= deadline {
            return Ok(removal);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn network_owner(network: &Network) -> Owner {
    network
        .labels
        .as_ref()
        .map(Owner::from_labels)
        .unwrap_or_default()
}

/// Whether a network was created longer than [`LEASE_GRACE`] ago, by its label.
fn past_start_up(network: &Network) -> bool {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    network
        .labels
        .as_ref()
        .and_then(|labels| labels.get(owner::LABEL_CREATED))
        .and_then(|created| created.parse::<u64>().ok())
        .is_some_and(|created| now.saturating_sub(created) >= LEASE_GRACE.as_secs())
}

/// Whether no container is on the network `name` (false when the engine cannot say).
fn is_empty(name: &str) -> bool {
    let name = name.to_owned();
    docker_call(|docker| async move {
        docker
            .inspect_network(&name, None::<InspectNetworkOptions>)
            .await
    })
    .is_ok_and(|inspect| inspect.containers.is_none_or(|c| c.is_empty()))
}

/// (name, summary) of every grader network of this host.
fn grader_networks() -> Result<Vec<(String, Network)>, ServerError> {
    let host_filter = format!("{}={}", owner::LABEL_HOST, owner::host_name());
    let networks = docker_call(|docker| async move {
        let filters = HashMap::from([("label", vec![host_filter.as_str()])]);
        let options = ListNetworksOptionsBuilder::new().filters(&filters).build();
        docker.list_networks(Some(options)).await
    })
    .map_err(|cause| ServerError::DockerUnavailable {
        cause: format!("listing networks failed: {cause}"),
    })?;
    Ok(networks
        .into_iter()
        .filter_map(|network| Some((network.name.clone()?, network)))
        .collect())
}

fn owner_of(summary: &ContainerSummary) -> Owner {
    summary
        .labels
        .as_ref()
        .map(Owner::from_labels)
        .unwrap_or_default()
}

/// Whether an owner that its pid cannot judge has provably let go of its container: the
/// container is past its start-up and either ended (or never started) or no longer lists the
/// owner's lease. A paused container is kept: someone paused it on purpose.
fn lease_lost(owner: &Owner, summary: &ContainerSummary) -> bool {
    let Some(run) = &owner.run else {
        return false;
    };
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let created = summary.created.and_then(|c| u64::try_from(c).ok());
    if created.is_none_or(|created| now.saturating_sub(created) < LEASE_GRACE.as_secs()) {
        return false;
    }
    use ContainerSummaryStateEnum::{CREATED, DEAD, EXITED, RUNNING};
    match summary.state {
        Some(EXITED | DEAD | CREATED) => return true,
        Some(RUNNING) => {}
        _ => return false,
    }
    let published = summary
        .ports
        .iter()
        .flatten()
        .find(|port| port.private_port == 6379)
        .and_then(|port| port.public_port);
    // The owner's server requires the password in its command (see `redis_request`); one
    // started without one, by a grader before passwords, is asked without.
    let url = |port: u16| match summary.command.as_deref().and_then(command_password) {
        Some(password) => password.url("127.0.0.1", port),
        None => format!("redis://127.0.0.1:{port}"),
    };
    match published {
        Some(port) if engine_is_local() => owner::lease_held(&url(port), run) == Some(false),
        _ => false,
    }
}

/// (id, summary) of every grader container of this host.
fn grader_containers() -> Result<Vec<(String, ContainerSummary)>, ServerError> {
    let host_filter = format!("{}={}", owner::LABEL_HOST, owner::host_name());
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
        .filter_map(|summary| Some((summary.id.clone()?, summary)))
        .collect())
}
