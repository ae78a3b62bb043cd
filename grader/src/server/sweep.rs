//! Removing the containers and networks that killed runs left behind.
//!
//! Every container start first lists this host's grader containers and removes those whose owner
//! run is gone, as [`owner`] tells it: by pid where the owner shared this process's pid namespace,
//! else by the lease the owner held on its container's Redis. A container that is still starting,
//! or whose owner cannot be judged, is kept. Then come the private networks of Redlock's nodes
//! (`crate::nodes`), labelled alike: a network whose owner is gone goes too, and one whose owner
//! cannot be judged by pid goes once it is past its start-up and no container is on it (a live
//! run keeps its nodes on its network until it ends).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use course_docker_protocol::{
    ContainerSummary, NetworkRemoval, NetworkSummary as Network, Reply, Request,
};

use super::ServerError;
use super::container::{command_password, engine_is_local};
use super::engine::{self, DOCKER_CALL_TIMEOUT, unexpected, unusable};
use super::owner::{self, Judgement, Owner};

/// A container younger than this may belong to a run that has not yet taken its lease.
const LEASE_GRACE: Duration = Duration::from_secs(90);

/// How long a removal waits for the engine to let go of a network's last container.
const NETWORK_PATIENCE: Duration = Duration::from_secs(5);

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
        let request = Request::Remove { id: id.clone() };
        engine::call(
            &request,
            DOCKER_CALL_TIMEOUT,
            unusable("removing a stale container"),
        )?;
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
            // A network whose containers the engine could not count is kept.
            Judgement::Unknown => past_start_up(&network) && network.containers == Some(0),
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

/// Removes the network `name`, waiting up to `patience` while a container is still on it (the
/// helper retries the engine's "has active endpoints"). Every other refusal is an error.
fn remove_network(name: &str, patience: Duration) -> Result<NetworkRemoval, String> {
    let request = Request::RemoveNetwork {
        name: name.to_owned(),
        patience_ms: patience.as_millis() as u64,
    };
    let reply = engine::call(&request, patience + DOCKER_CALL_TIMEOUT, |failure| {
        ServerError::DockerUnavailable {
            cause: failure.message,
        }
    })
    .map_err(|e| e.to_string())?;
    match reply {
        Reply::Network(removal) => Ok(removal),
        other => Err(unexpected(&other).to_string()),
    }
}

fn network_owner(network: &Network) -> Owner {
    owner_of_labels(&network.labels)
}

fn owner_of_labels(labels: &std::collections::BTreeMap<String, String>) -> Owner {
    Owner::from_labels(&labels.clone().into_iter().collect())
}

/// Whether a network was created longer than [`LEASE_GRACE`] ago, by its label.
fn past_start_up(network: &Network) -> bool {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    network
        .labels
        .get(owner::LABEL_CREATED)
        .and_then(|created| created.parse::<u64>().ok())
        .is_some_and(|created| now.saturating_sub(created) >= LEASE_GRACE.as_secs())
}

/// (name, summary) of every grader network of this host.
fn grader_networks() -> Result<Vec<(String, Network)>, ServerError> {
    let label = format!("{}={}", owner::LABEL_HOST, owner::host_name());
    // Each network is inspected for its containers: a bound per network.
    let bound = 10 * DOCKER_CALL_TIMEOUT;
    match engine::call(
        &Request::ListNetworks { label },
        bound,
        unusable("listing networks"),
    )? {
        Reply::Networks(networks) => Ok(networks
            .into_iter()
            .map(|network| (network.name.clone(), network))
            .collect()),
        other => Err(unexpected(&other)),
    }
}

fn owner_of(summary: &ContainerSummary) -> Owner {
    owner_of_labels(&summary.labels)
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
    match summary.state.as_str() {
        "exited" | "dead" | "created" => return true,
        "running" => {}
        _ => return false,
    }
    let published = summary.published_port;
    // The owner's server requires the password in its command (see `redis_request`); one
    // started without one, by a grader before passwords, is asked without.
    let url = |port: u16| match command_password(&summary.command) {
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
    let label = format!("{}={}", owner::LABEL_HOST, owner::host_name());
    let request = Request::ListContainers { label };
    match engine::call(
        &request,
        DOCKER_CALL_TIMEOUT,
        unusable("listing containers"),
    )? {
        Reply::Containers(containers) => Ok(containers
            .into_iter()
            .map(|summary| (summary.id.clone(), summary))
            .collect()),
        other => Err(unexpected(&other)),
    }
}
