//! The timeline a scenario run leaves behind, as the grader writes it to
//! `book/timelines/<name>.json` (the format is described in
//! `book/timelines/SCHEMA.md`).
//!
//! A timeline is a list of seconds. Each second says what every client did
//! and believed, who really held the lock key in Redis, and what the storage
//! looked like. The types here mirror the JSON exactly and refuse unknown
//! fields: a misspelt `"unsafe"` would otherwise drop the one mark the reader
//! is meant to see. [`Timeline::validate`] then checks what serde cannot: the
//! seconds are numbered without gaps and every second describes every client.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One recorded scenario run, second by second.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timeline {
    /// File name without `.json`; the directives' argument.
    pub name: String,
    /// Short title for menus and captions.
    pub title: String,
    /// One paragraph telling what happens, in plain words.
    pub story: String,
    /// Which lock implementation ran: `"reference"` or a wrong one's name.
    pub implementation: String,
    /// The lock's time to live, in seconds.
    pub ttl_s: u64,
    /// Whether clients send fencing tokens and the storage checks them.
    pub fencing: bool,
    /// The clients' names, in column order.
    pub clients: Vec<String>,
    /// One entry per second, starting at t = 0, without gaps.
    pub seconds: Vec<Second>,
    /// How the run ended.
    pub outcome: Outcome,
}

/// Everything that is true at the end of one second.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Second {
    /// The second, counted from the start of the run.
    pub t: u64,
    /// Each client's view and actions, keyed by client name.
    pub clients: BTreeMap<String, ClientSecond>,
    /// Whose token the lock key holds in Redis; `None` when the key is absent.
    pub holder: Option<String>,
    /// The key's remaining time to live, `None` when it is absent.
    pub ttl_left_s: Option<u64>,
    /// The counter in the storage.
    pub counter: i64,
    /// The highest fencing token the storage has seen (`None` without fencing).
    pub highest_token: Option<u64>,
    /// Things Redis did on its own during this second, such as an expiry.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// One client during one second.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientSecond {
    /// What the client is doing.
    pub state: ClientState,
    /// Whether the client believes it holds the lock at the end of the second.
    pub believes: bool,
    /// Its fencing token, if it has one.
    pub token: Option<u64>,
    /// What it did during this second, in order.
    #[serde(default)]
    pub actions: Vec<Action>,
}

/// What a client is doing during a second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientState {
    /// Has not started, or waits for nothing.
    Idle,
    /// Wants the lock and polls for it.
    Waiting,
    /// Runs its job.
    Working,
    /// Frozen (a GC pause, swapping): it does nothing and notices nothing.
    Paused,
    /// Gone for good.
    Crashed,
    /// Finished its job.
    Done,
}

impl ClientState {
    /// The word shown to the reader.
    pub fn label(self) -> &'static str {
        match self {
            ClientState::Idle => "idle",
            ClientState::Waiting => "waiting",
            ClientState::Working => "working",
            ClientState::Paused => "paused",
            ClientState::Crashed => "crashed",
            ClientState::Done => "done",
        }
    }
}

/// Something a client did to Redis or to the storage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Action {
    /// The kind of step, for styling and for tests.
    pub kind: ActionKind,
    /// What happened, in words.
    pub text: String,
    /// The client acted on the lock or the storage while not holding the lock.
    #[serde(rename = "unsafe")]
    pub is_unsafe: bool,
    /// The storage (or Redis) refused the step.
    pub rejected: bool,
}

/// The kinds of step the grader records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)] // The names are the schema's words and say it all.
pub enum ActionKind {
    Acquired,
    Denied,
    Read,
    Wrote,
    ReadRejected,
    WriteRejected,
    Released,
    ReleaseRefused,
    DeletedOther,
    Paused,
    Resumed,
    Crashed,
    Failed,
}

/// How the run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Outcome {
    /// The final counter.
    pub counter: i64,
    /// How many clients set out to add 1.
    pub jobs: u32,
    /// One sentence: what the numbers mean.
    pub summary: String,
}

impl Timeline {
    /// Checks the rules the JSON shape alone does not enforce, and returns
    /// the first one broken, in words.
    ///
    /// `expected_name` is the file's stem: a timeline renamed on disk but
    /// not inside would show one name in the menu and need another in the
    /// directive.
    pub fn validate(&self, expected_name: &str) -> Result<(), String> {
        if self.name != expected_name {
            return Err(format!(
                "\"name\" is {:?} but the file is named {expected_name:?}.json",
                self.name
            ));
        }
        if self.clients.is_empty() {
            return Err("\"clients\" is empty".to_owned());
        }
        for (i, client) in self.clients.iter().enumerate() {
            if self.clients[..i].contains(client) {
                return Err(format!("client {client:?} is listed twice in \"clients\""));
            }
        }
        if self.seconds.is_empty() {
            return Err("\"seconds\" is empty".to_owned());
        }
        for (index, second) in self.seconds.iter().enumerate() {
            self.validate_second(index, second)?;
        }
        Ok(())
    }

    fn validate_second(&self, index: usize, second: &Second) -> Result<(), String> {
        // `t` doubles as the index everywhere (table rows, the player's
        // slider), so a gap would shift every later second.
        if usize::try_from(second.t).ok() != Some(index) {
            return Err(format!(
                "seconds[{index}] has t = {}, expected t = {index} (no gaps, starting at 0)",
                second.t
            ));
        }
        let t = second.t;
        for client in &self.clients {
            if !second.clients.contains_key(client) {
                return Err(format!("t = {t}: client {client:?} is missing"));
            }
        }
        if let Some(extra) = second.clients.keys().find(|c| !self.clients.contains(c)) {
            return Err(format!(
                "t = {t}: client {extra:?} is not in \"clients\" {:?}",
                self.clients
            ));
        }
        if let Some(holder) = &second.holder
            && !self.clients.contains(holder)
        {
            return Err(format!(
                "t = {t}: holder {holder:?} is not in \"clients\" {:?}",
                self.clients
            ));
        }
        Ok(())
    }

    /// The unsafe actions of one second, each with the client that took it,
    /// in column order: the ✗ marks of that second in the unsafe row.
    pub fn unsafe_marks<'a>(&'a self, second: &'a Second) -> Vec<(&'a str, &'a Action)> {
        self.clients
            .iter()
            .filter_map(|name| second.clients.get(name).map(|c| (name.as_str(), c)))
            .flat_map(|(name, client)| {
                client
                    .actions
                    .iter()
                    .filter(|a| a.is_unsafe)
                    .map(move |a| (name, a))
            })
            .collect()
    }
}
