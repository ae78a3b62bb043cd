//! What the grader asks of its Docker helper, and what the helper answers.
//!
//! The grader (the judge) makes no Docker call itself: a small program of its own,
//! `course-docker`, holds every one of them, so that a learner who grades against a local
//! `redis-server` never compiles a Docker client. The judge starts the helper as a child with
//! two pipes and writes one [`Request`] per line, as JSON, on its standard input; the helper
//! answers each with one [`Answer`] line on its standard output, in order, one request at a
//! time. When its standard input ends (the judge exited, or was killed), the helper removes
//! every container and network it started and exits.
//!
//! ```text
//! judge → helper   {"Start":{"containers":[{"image":"redis:7.4","command":[…],…}]}}
//! helper → judge   {"Ok":{"Started":[{"Ok":{"id":"3f2a…","host":"localhost"}}]}}
//! ```
//!
//! The helper knows nothing of owners, leases or passwords: the judge decides what a container
//! is started with and which stale ones to remove, and the helper only does it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One thing the judge asks the helper to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Request {
    /// Whether the engine answers, with a versioned call too: answered by [`Reply::Done`].
    Check,
    /// Whether the engine has `image` already, pulling nothing: [`Reply::Present`].
    ImagePresent {
        /// The image, `name[:tag]`.
        image: String,
    },
    /// Starts every container asked for, at the same time, and waits until each is ready:
    /// [`Reply::Started`], one result per container, in order.
    Start {
        /// What to start.
        containers: Vec<ContainerSpec>,
    },
    /// `docker pause`: [`Reply::Done`] once the container is frozen.
    Pause {
        /// The container.
        id: String,
    },
    /// `docker unpause`: [`Reply::Done`].
    Unpause {
        /// The container.
        id: String,
    },
    /// `docker kill` (SIGKILL), then a wait until the engine shows it stopped: [`Reply::Done`].
    Kill {
        /// The container.
        id: String,
    },
    /// `docker start` of a stopped container: [`Reply::Done`].
    StartAgain {
        /// The container.
        id: String,
    },
    /// Where a container is and what runs in it: [`Reply::Inspected`].
    Inspect {
        /// The container.
        id: String,
    },
    /// Removes a container, running or not, with its volumes: [`Reply::Done`]. One of the
    /// helper's own is forgotten, so that the end of input does not remove it twice.
    Remove {
        /// The container.
        id: String,
    },
    /// Creates a bridge network that the helper removes at the end: [`Reply::Done`].
    CreateNetwork {
        /// Its name.
        name: String,
        /// Its labels.
        labels: BTreeMap<String, String>,
        /// How long the engine may take: on a loaded machine a new bridge (its subnet, its
        /// firewall rules) takes far longer than any other call.
        timeout_ms: u64,
    },
    /// Removes a network, waiting up to `patience_ms` while a container is still on it:
    /// [`Reply::Network`].
    RemoveNetwork {
        /// Its name.
        name: String,
        /// How long to retry an engine that says the network is still in use.
        patience_ms: u64,
    },
    /// The containers, running or not, that carry the label `key=value`: [`Reply::Containers`].
    ListContainers {
        /// The label filter, `key=value`.
        label: String,
    },
    /// The networks that carry the label `key=value`: [`Reply::Networks`].
    ListNetworks {
        /// The label filter, `key=value`.
        label: String,
    },
}

/// A Redis container to start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerSpec {
    /// The image, `name[:tag]` (a registry's port is no tag: `host:5000/redis`).
    pub image: String,
    /// The command, in place of the image's own.
    pub command: Vec<String>,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
    /// The network to put it on, with `name` as its name there; Docker's default otherwise.
    pub network: Option<String>,
    /// The container's name; the engine picks one otherwise.
    pub name: Option<String>,
    /// Publish port 6379 on the host's loopback interface only (for a local engine), rather
    /// than on every interface.
    pub loopback_only: bool,
    /// The log line on standard output that says the server is ready.
    pub ready_line: String,
    /// How long the container may take from creation to `ready_line`.
    pub startup_timeout_ms: u64,
}

/// The helper's answer to one request.
pub type Answer = Result<Reply, Failure>;

/// What a request that went through answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reply {
    /// Done, nothing to say.
    Done,
    /// Whether the image is there.
    Present(bool),
    /// One result per container asked for, in order.
    Started(Vec<Result<Started, Failure>>),
    /// What an inspection found.
    Inspected(Inspection),
    /// What became of a network asked to be removed.
    Network(NetworkRemoval),
    /// The containers that carry a label.
    Containers(Vec<ContainerSummary>),
    /// The networks that carry a label.
    Networks(Vec<NetworkSummary>),
}

/// Why a request did not go through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// Which kind of failure, for the judge's remedy.
    pub kind: FailureKind,
    /// The engine's or the client's words.
    pub message: String,
}

/// The kinds of failure the judge tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FailureKind {
    /// The engine does not answer, or not in time.
    Unavailable,
    /// The image is not here and could not be pulled.
    ImageUnavailable,
    /// The engine answered, and refused.
    Refused,
}

/// A container that started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Started {
    /// Its id.
    pub id: String,
    /// The host its published ports are on, as the client sees the engine (`localhost` for a
    /// local one).
    pub host: String,
}

/// What the engine says of a container.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inspection {
    /// Whether it runs.
    pub running: bool,
    /// The host process id of its main process; 0 when stopped.
    pub pid: i64,
    /// Its address on each network it is on, by network name.
    pub addresses: BTreeMap<String, String>,
    /// The host port that its port 6379 is published on (an IPv4 binding), if any.
    pub published_port: Option<u16>,
}

/// What became of a network asked to be removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NetworkRemoval {
    /// It is gone (now, or it already was).
    Gone,
    /// A container was still on it when the patience ran out.
    StillInUse,
}

/// A container, as a listing shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerSummary {
    /// Its id.
    pub id: String,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
    /// Its state as the engine names it: `created`, `running`, `paused`, `exited`, `dead`…
    pub state: String,
    /// When it was created, in seconds since the epoch.
    pub created: Option<i64>,
    /// Its command line as the engine lists it (path and arguments joined by spaces).
    pub command: String,
    /// The host port its port 6379 is published on, if any.
    pub published_port: Option<u16>,
}

/// A network, as a listing shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkSummary {
    /// Its name.
    pub name: String,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
    /// How many containers are on it; `None` when the engine could not say.
    pub containers: Option<usize>,
}
