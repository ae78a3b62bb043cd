//! Removing the containers that killed runs left behind.
//!
//! Every container start first lists this host's grader containers and removes those whose owner
//! run is gone, as [`owner`] tells it: by pid where the owner shared this process's pid namespace,
//! else by the lease the owner held on its container's Redis. A container that is still starting,
//! or whose owner cannot be judged, is kept.

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use testcontainers::bollard::models::{ContainerSummary, ContainerSummaryStateEnum};
use testcontainers::bollard::query_parameters::{
    ListContainersOptionsBuilder, RemoveContainerOptionsBuilder,
};

use super::ServerError;
use super::container::{docker_call, engine_is_local};
use super::owner::{self, Judgement, Owner};

/// A container younger than this may belong to a run that has not yet taken its lease.
const LEASE_GRACE: Duration = Duration::from_secs(90);

/// Ids of the grader's containers started by process `owner_pid` on this host, running or not.
pub fn containers_owned_by(owner_pid: u32) -> Result<Vec<String>, ServerError> {
    Ok(grader_containers()?
        .into_iter()
        .filter(|(_, summary)| owner_of(summary).pid == Some(owner_pid))
        .map(|(id, _)| id)
        .collect())
}

/// Removes the grader's containers on this host whose owner run is gone (see the owner labels in
/// `server/owner.rs`), and returns their ids. Starting a container does this first; it is public
/// for tools and tests.
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
    Ok(stale)
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
    match published {
        Some(port) if engine_is_local() => {
            owner::lease_held(&format!("redis://127.0.0.1:{port}"), run) == Some(false)
        }
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
