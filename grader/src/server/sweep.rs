//! Removing the containers and networks that killed runs left behind.
//!
//! Every container start first lists this host's grader containers and removes those whose owner
//! run is gone, as [`owner`] tells it: by pid where the owner shared this process's pid namespace,
//! else by the lease the owner held on its container's Redis. A container that is still starting,
//! or whose owner cannot be judged, is kept. Then come the private networks of Redlock's nodes
//! (`crate::nodes`), labelled alike: a network whose owner is gone goes too, and one whose owner
//! cannot be judged by pid goes once it is past its start-up and no container is on it (a live
//! run keeps its nodes on its network until it ends).

use std::collections::BTreeSet;
use std::time::Duration;

use course_docker_protocol::{
    ContainerSummary, NetworkRemoval, NetworkSummary as Network, Reply, Request,
};

use super::ServerError;
use super::container::{command_password, engine_is_local};
use super::engine::{self, DOCKER_CALL_TIMEOUT, unexpected, unusable};
use super::owner::{self, Judgement, Owner};

/// A container younger than this may belong to a run that has not yet taken its lease.
const LEASE_GRACE: Duration = Duration::from_secs(90);

/// How long a removal waits for the engine to let go of a network's last container, when the
/// sweep has just removed containers.
const NETWORK_PATIENCE: Duration = Duration::from_secs(5);

/// How long the removal of a stale network may wait, when the sweep removed `containers`
/// containers just before: the engine may still be letting go of those, and of nothing else. A
/// network the engine refuses to free with no container left on it, and none just removed, is
/// the engine's own fault (it lost count of its endpoints: moby/moby#42119, which only a restart
/// of the engine mends); waiting for it would cost every later run the whole patience, so it is
/// tried once and left.
fn network_patience(containers: usize) -> Duration {
    if containers == 0 {
        Duration::ZERO
    } else {
        NETWORK_PATIENCE
    }
}

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
    let judged: Vec<(String, ContainerSummary, Owner, Judgement)> = grader_containers()?
        .into_iter()
        .map(|(id, summary)| {
            let owner = owner_of(&summary);
            let judgement = owner::judge_by_pid(&owner, my_ns.as_deref(), owner::look);
            (id, summary, owner, judgement)
        })
        .collect();
    // Runs that their pids cannot judge are judged by all their containers together.
    let unknown: Vec<(&Owner, &ContainerSummary)> = judged
        .iter()
        .filter(|(.., judgement)| *judgement == Judgement::Unknown)
        .map(|(_, summary, owner, _)| (owner, summary))
        .collect();
    let held = runs_held(&unknown, owner::now_s(), lease_of);
    let stale: Vec<String> = judged
        .into_iter()
        .filter(|(_, _, owner, judgement)| match judgement {
            Judgement::Gone => true,
            Judgement::Alive => false,
            Judgement::Unknown => owner.run.as_ref().is_some_and(|run| !held.contains(run)),
        })
        .map(|(id, ..)| id)
        .collect();
    for id in &stale {
        let request = Request::Remove { id: id.clone() };
        engine::call(
            &request,
            DOCKER_CALL_TIMEOUT,
            unusable("removing a stale container"),
        )?;
    }
    remove_stale_networks(my_ns.as_deref(), network_patience(stale.len()))?;
    Ok(stale)
}

/// Removes the networks whose owner is gone, or, when its pid cannot tell, that are past their
/// start-up and empty, each waiting up to `patience` ([`network_patience`]). A network that
/// still has a container (of a live run in another pid
/// namespace, or one the engine is still taking down) is left for a later sweep.
fn remove_stale_networks(my_ns: Option<&str>, patience: Duration) -> Result<(), ServerError> {
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
        remove_network(&name, patience).map_err(|cause| ServerError::DockerUnavailable {
            cause: format!("removing the stale network {name} failed: {cause}"),
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
    let now = owner::now_s();
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

/// The runs among `containers` (of owners that their pids cannot judge) that still hold on to
/// their containers, when it is `now_s` and `lease` says whether a container's Redis still lists
/// a run's lease (`None`: it cannot be asked). A run lets go of its containers only when every
/// one of them has: a run kills one of Redlock's nodes on purpose, and keeps the lease on the
/// others while that node is down (an exited container of a live run), and a node restarted a
/// moment ago has not yet taken its lease again. So a run is held while any of its containers
/// is young (the run may not have taken its lease yet), paused (someone paused it on purpose),
/// in a state the engine is still changing (restarting, removing), or running with a lease that
/// is held or cannot be asked.
fn runs_held(
    containers: &[(&Owner, &ContainerSummary)],
    now_s: u64,
    lease: impl Fn(&ContainerSummary, &str) -> Option<bool>,
) -> BTreeSet<String> {
    let mut held = BTreeSet::new();
    for (owner, summary) in containers {
        let Some(run) = &owner.run else {
            continue;
        };
        if held.contains(run) {
            continue;
        }
        let created = summary.created.and_then(|c| u64::try_from(c).ok());
        let holds = created.is_none_or(|c| now_s.saturating_sub(c) < LEASE_GRACE.as_secs())
            || match summary.state.as_str() {
                "exited" | "dead" | "created" => false,
                "running" => lease(summary, run) != Some(false),
                _ => true,
            };
        if holds {
            held.insert(run.clone());
        }
    }
    held
}

/// Whether the running container `summary` still lists the lease of the run `run`: `None` when
/// its Redis cannot be asked from here.
fn lease_of(summary: &ContainerSummary, run: &str) -> Option<bool> {
    // The owner's server requires the password in its command (see `redis_request`); one
    // started without one, by a grader before passwords, is asked without.
    let url = |port: u16| match command_password(&summary.command) {
        Some(password) => password.url("127.0.0.1", port),
        None => format!("redis://127.0.0.1:{port}"),
    };
    match summary.published_port {
        Some(port) if engine_is_local() => owner::lease_held(&url(port), run),
        _ => None,
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

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_000_000;

    fn container(run: &str, state: &str, age_s: u64) -> (Owner, ContainerSummary) {
        let owner = Owner {
            run: Some(run.to_owned()),
            ..Owner::default()
        };
        let summary = ContainerSummary {
            id: format!("{run}-{state}-{age_s}"),
            state: state.to_owned(),
            created: Some((NOW - age_s) as i64),
            ..ContainerSummary::default()
        };
        (owner, summary)
    }

    /// The runs held among `containers`, where a run's lease is held when
    /// `leases` names it, or cannot be asked when `leases` is `None`.
    fn held(containers: &[(Owner, ContainerSummary)], leases: Option<&[&str]>) -> BTreeSet<String> {
        let pairs: Vec<(&Owner, &ContainerSummary)> =
            containers.iter().map(|(o, s)| (o, s)).collect();
        runs_held(&pairs, NOW, |_, run| leases.map(|l| l.contains(&run)))
    }

    #[test]
    fn a_node_killed_by_a_live_run_is_kept_with_its_run() {
        // Run `live` killed one of its nodes for a delayed restart and holds its lease on the
        // others; run `dead` left only stopped containers and lost leases.
        let containers = [
            container("live", "exited", 600),
            container("live", "running", 600),
            container("dead", "exited", 600),
            container("dead", "running", 600),
        ];
        assert_eq!(
            held(&containers, Some(&["live"])),
            BTreeSet::from(["live".to_owned()])
        );
    }

    #[test]
    fn a_run_whose_containers_all_stopped_long_ago_is_let_go() {
        let containers = [
            container("gone", "exited", 600),
            container("gone", "dead", 600),
        ];
        assert!(held(&containers, Some(&["gone"])).is_empty());
    }

    #[test]
    fn young_paused_or_unaskable_containers_hold_their_run() {
        let young = [container("a", "exited", 10)];
        assert!(held(&young, Some(&[])).contains("a"));
        let paused = [container("b", "paused", 600), container("b", "exited", 600)];
        assert!(held(&paused, Some(&[])).contains("b"));
        let unaskable = [container("c", "running", 600)];
        assert!(held(&unaskable, None).contains("c"));
    }

    #[test]
    fn a_network_waits_for_the_engine_only_after_its_containers_were_removed() {
        assert_eq!(network_patience(3), NETWORK_PATIENCE);
        // Nothing just removed: a refusal is the engine's lost count, and waiting would cost
        // every later run the whole patience.
        assert_eq!(network_patience(0), Duration::ZERO);
    }
}
