//! What happened in a scenario, second by second.
//!
//! A timeline is the record a learner reads when a check fails, the snapshot
//! the grader's own tests compare, and the data the book draws (as JSON, see
//! `book/timelines/SCHEMA.md`). So it describes *what happened*, in words
//! that do not depend on how a lock is written: "acquired", "denied", "deleted
//! B's lock", "write rejected: 33 < 34". Two correct locks give the same
//! timeline, whatever commands they send and whatever tokens they draw.
//!
//! Each second holds, per client, what it did and whether it believes it holds
//! the lock; and, from Redis, whose token is really in the lock key, the
//! counter in the storage and the highest fencing token the storage has seen.
//! An action taken on a lock the client no longer holds is *unsafe*: the
//! red ✗ of the book, "rejected" when the storage refused it.
//!
//! The grader writes these types and the book's preprocessor reads them back
//! from `book/timelines/<name>.json`, so they mirror the JSON exactly and
//! refuse unknown fields: a misspelt `"unsafe"` would otherwise drop the one
//! mark the reader is meant to see. [`Timeline::validate`] then checks what
//! serde cannot: the seconds are numbered without gaps and every second
//! describes every client.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A whole run of a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timeline {
    /// The timeline's name, e.g. `gc-pause-fenced`: in the book, the JSON
    /// file's stem and the directives' argument.
    pub name: String,
    /// A short title.
    pub title: String,
    /// What the scenario sets up, in plain words.
    pub story: String,
    /// Which lock ran: `reference`, a catalogue name, or `your lock`.
    pub implementation: String,
    /// The lock's TTL, in seconds.
    pub ttl_s: u64,
    /// Whether the clients use fencing tokens.
    pub fencing: bool,
    /// The clients, in column order.
    pub clients: Vec<String>,
    /// The Redis nodes, in row order, when the story runs on more than one
    /// (Redlock's five, or a primary and its replica); empty for one server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<String>,
    /// One entry per second from t = 0, without gaps.
    pub seconds: Vec<Second>,
    /// How it ended.
    pub outcome: Outcome,
    /// The commands the clients sent and the replies they got, in the order
    /// they happened: the book's message diagram. Kept beside the seconds,
    /// not in them, because two correct locks may send different commands
    /// and must still give the same seconds. Empty in older files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
}

/// One command a client sent, and the reply it got.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Message {
    /// The second it was sent in.
    pub t: u64,
    /// The client that sent it.
    pub client: String,
    /// Where it went.
    pub to: Lane,
    /// The command as a report shows it, e.g. `SET lock <A's token> NX PX 10000`:
    /// keys without their machine-specific prefix, random tokens by owner.
    pub command: String,
    /// The reply, as `redis-cli` would show it, e.g. `OK` or `(nil)`; for a
    /// command no server answered, what the client saw instead.
    pub reply: String,
    /// Whether the server answered: false for a node that is paused (the
    /// request timed out) or down (the connection was refused). Omitted when
    /// true, so files written before it read the same.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub answered: bool,
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

/// The servers a client talks to: one lane each in the message diagram.
///
/// Written as one string: `"redis"`, `"storage"`, or the name of one of the
/// timeline's [`Timeline::nodes`] (`"node 3"`), so that files with one
/// server read as before and a node's lane is named as its row is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum Lane {
    /// Redis, which holds the lock key and the fence counter.
    Redis,
    /// The storage the lock protects (in the course, a hash on the same
    /// Redis server standing for a database row).
    Storage,
    /// One of several Redis nodes, by its name in [`Timeline::nodes`].
    Node(String),
}

impl From<String> for Lane {
    fn from(name: String) -> Lane {
        match name.as_str() {
            "redis" => Lane::Redis,
            "storage" => Lane::Storage,
            _ => Lane::Node(name),
        }
    }
}

impl From<Lane> for String {
    fn from(lane: Lane) -> String {
        match lane {
            Lane::Redis => "redis".to_owned(),
            Lane::Storage => "storage".to_owned(),
            Lane::Node(name) => name,
        }
    }
}

/// One second of a timeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Second {
    /// The second, from 0.
    pub t: u64,
    /// Each client's second, by name.
    pub clients: BTreeMap<String, ClientSecond>,
    /// Whose token the lock key holds at the end of the second. With several
    /// nodes: the client whose token a majority of the nodes hold (Redlock),
    /// or the one the current primary holds (a primary and its replica).
    pub holder: Option<String>,
    /// The lock key's remaining TTL at the end of the second, in seconds.
    pub ttl_left_s: Option<u64>,
    /// The counter in the storage at the end of the second.
    pub counter: i64,
    /// The highest fencing token the storage has seen (fencing only).
    pub highest_token: Option<u64>,
    /// What happened to Redis this second apart from the clients' commands,
    /// in the order it happened: a key expiring, a fault done to a node.
    #[serde(default)]
    pub notes: Vec<Note>,
    /// Each node at the end of the second, by name (see [`Timeline::nodes`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub nodes: BTreeMap<String, NodeSecond>,
}

/// Something that happened to Redis in a second, apart from the clients'
/// commands. Its kind decides the book's mark: ◷ for an expiry only, ⚡ for a
/// fault, so that a killed node never reads as an expired key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Note {
    /// What kind of thing happened.
    pub kind: NoteKind,
    /// It, in words: `A's lock expired`, `node 4 is killed`.
    pub text: String,
}

impl Note {
    /// A key that ran out of time: `text` says whose, and where.
    pub fn expiry(text: impl Into<String>) -> Note {
        Note {
            kind: NoteKind::Expiry,
            text: text.into(),
        }
    }

    /// A fault done to a node, or what it did to the keys on it.
    pub fn fault(text: impl Into<String>) -> Note {
        Note {
            kind: NoteKind::Fault,
            text: text.into(),
        }
    }
}

/// The kinds of [`Note`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoteKind {
    /// A key's TTL ran out (on its own, or because a node's clock jumped).
    Expiry,
    /// A node was paused, resumed, killed, restarted, promoted or cut off, or
    /// lost its keys by it.
    Fault,
}

/// One Redis node during one second, in a story on several nodes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSecond {
    /// Whether the node runs, is stopped, or is gone.
    pub health: NodeHealth,
    /// Its role, where nodes have one (a primary and its replicas); `None`
    /// for Redlock's independent nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<NodeRole>,
    /// Whose token the lock key holds on this node at the end of the second.
    /// For a node that is down: the token it held when it went down, as long
    /// as that key would still live, since the node comes back only after
    /// (Redlock's delayed restart) and so still keeps others out.
    pub holder: Option<String>,
    /// How many seconds this node's clock runs ahead of the others' (a jump).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub clock_ahead_s: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What a node is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeHealth {
    /// Running and answering.
    Up,
    /// Stopped (`SIGSTOP`, `docker pause`): it keeps its data, answers nothing.
    Paused,
    /// Killed: no process; it comes back empty, if at all.
    Down,
}

/// A node's role in a primary–replica pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeRole {
    /// Takes writes; its replicas copy them, asynchronously.
    Primary,
    /// Copies the primary; promoted to primary on a failover.
    Replica,
}

/// One client during one second.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientSecond {
    /// Where the client is in its job.
    pub state: State,
    /// Whether it believes it holds the lock at the end of the second.
    pub believes: bool,
    /// Its fencing token, while it has one.
    pub token: Option<u64>,
    /// What it did this second, in order.
    #[serde(default)]
    pub actions: Vec<Action>,
}

/// Where a client is in its job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Not started yet.
    Idle,
    /// Trying to take the lock.
    Waiting,
    /// Holding the lock, as far as it knows, and working.
    Working,
    /// Frozen (a GC pause, say): it does nothing and notices nothing.
    Paused,
    /// Gone for good.
    Crashed,
    /// Finished its job.
    Done,
}

impl State {
    /// The word shown to the reader, as in the JSON: `idle`, `waiting`, …
    pub fn label(self) -> &'static str {
        match self {
            State::Idle => "idle",
            State::Waiting => "waiting",
            State::Working => "working",
            State::Paused => "paused",
            State::Crashed => "crashed",
            State::Done => "done",
        }
    }
}

/// One thing a client did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Action {
    /// What kind of thing.
    pub kind: ActionKind,
    /// A short description, e.g. `wrote 1` or `write rejected: 33 < 34`.
    pub text: String,
    /// Done on a lock the client no longer holds.
    #[serde(rename = "unsafe")]
    pub unsafe_: bool,
    /// Refused by the storage.
    pub rejected: bool,
}

impl Action {
    /// An action of `kind` described by `text`, unsafe or refused by the storage as marked.
    pub fn new(kind: ActionKind, text: impl Into<String>, unsafe_: bool, rejected: bool) -> Action {
        Action {
            kind,
            text: text.into(),
            unsafe_,
            rejected,
        }
    }
}

/// The kinds of [`Action`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionKind {
    /// Took the lock.
    Acquired,
    /// Found the lock taken.
    Denied,
    /// Read the counter.
    Read,
    /// Wrote the counter.
    Wrote,
    /// The storage refused its read.
    ReadRejected,
    /// The storage refused its write.
    WriteRejected,
    /// Deleted its own lock.
    Released,
    /// Tried to release a lock that was no longer its own; nothing deleted.
    ReleaseRefused,
    /// Deleted another client's lock.
    DeletedOther,
    /// Froze.
    Paused,
    /// Woke up.
    Resumed,
    /// Crashed.
    Crashed,
    /// Its lease keeper renewed the lock.
    Renewed,
    /// Its lease keeper found a renewal failed, and the job stopped.
    LeaseLost,
    /// The lock's code failed (an error, a panic, a time-out).
    Failed,
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Outcome {
    /// The final counter.
    pub counter: i64,
    /// How many clients set out to add 1.
    pub jobs: u32,
    /// One sentence.
    pub summary: String,
}

impl Timeline {
    /// The timeline as JSON, for the book.
    pub fn to_json(&self) -> String {
        // Serialising plain structs and maps of strings cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// The same timeline with its fencing tokens renumbered 1, 2, 3… in the
    /// order they were granted. Correct locks may number differently (one that
    /// increments the counter before trying the lock uses up a number on every
    /// refusal); what must match is the order.
    pub fn with_tokens_renumbered(&self) -> Timeline {
        let mut order: Vec<u64> = Vec::new();
        for second in &self.seconds {
            for client in second.clients.values() {
                if let Some(t) = client.token.filter(|t| !order.contains(t)) {
                    order.push(t);
                }
            }
        }
        let rank = |t: u64| {
            order
                .iter()
                .position(|&o| o == t)
                .map_or(t, |i| i as u64 + 1)
        };
        let renumber_text = |text: &str| -> String {
            text.split(' ')
                .map(|word| match word.parse::<u64>() {
                    Ok(n) if order.contains(&n) => rank(n).to_string(),
                    _ => word.to_string(),
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut out = self.clone();
        for second in &mut out.seconds {
            second.highest_token = second.highest_token.map(rank);
            for client in second.clients.values_mut() {
                client.token = client.token.map(rank);
                for action in &mut client.actions {
                    action.text = renumber_text(&action.text);
                }
            }
        }
        out
    }

    /// Every action of one second, each with the client that took it, in
    /// the order they happened: column order, and each client's in turn.
    pub fn actions<'a>(
        &'a self,
        second: &'a Second,
    ) -> impl Iterator<Item = (&'a str, &'a Action)> {
        self.clients
            .iter()
            .filter_map(|name| second.clients.get(name).map(|c| (name.as_str(), c)))
            .flat_map(|(name, client)| client.actions.iter().map(move |a| (name, a)))
    }

    /// The unsafe actions of one second, each with the client that took it,
    /// in column order: the ✗ marks of that second.
    pub fn unsafe_actions<'a>(
        &'a self,
        second: &'a Second,
    ) -> impl Iterator<Item = (&'a str, &'a Action)> {
        self.actions(second).filter(|(_, a)| a.unsafe_)
    }
}

pub mod html;
mod render;
mod validate;
pub mod what_if;

pub use what_if::{Cell, Control, WhatIf};

#[cfg(test)]
mod tests;
