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

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// A whole run of a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// The timeline's name, e.g. `gc-pause-fenced`.
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
    /// One entry per second from t = 0.
    pub seconds: Vec<Second>,
    /// How it ended.
    pub outcome: Outcome,
}

/// One second of a timeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Second {
    /// The second, from 0.
    pub t: u64,
    /// Each client's second, by name.
    pub clients: BTreeMap<String, ClientSecond>,
    /// Whose token the lock key holds at the end of the second.
    pub holder: Option<String>,
    /// The lock key's remaining TTL at the end of the second, in seconds.
    pub ttl_left_s: Option<u64>,
    /// The counter in the storage at the end of the second.
    pub counter: i64,
    /// The highest fencing token the storage has seen (fencing only).
    pub highest_token: Option<u64>,
    /// What Redis did on its own this second (a key expiring).
    pub notes: Vec<String>,
}

/// One client during one second.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClientSecond {
    /// Where the client is in its job.
    pub state: State,
    /// Whether it believes it holds the lock at the end of the second.
    pub believes: bool,
    /// Its fencing token, while it has one.
    pub token: Option<u64>,
    /// What it did this second, in order.
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

/// One thing a client did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// The lock's code failed (an error, a panic, a time-out).
    Failed,
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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

    /// The unsafe actions of a second, as `(client, action)`.
    pub fn unsafe_actions(second: &Second) -> impl Iterator<Item = (&String, &Action)> {
        second.clients.iter().flat_map(|(name, c)| {
            c.actions
                .iter()
                .filter(|a| a.unsafe_)
                .map(move |a| (name, a))
        })
    }

    /// The timeline as a text table, one line per second, with `mark` (if
    /// any) pointing at one second. Runs of seconds in which nothing happens
    /// are folded into one line.
    pub fn render(&self, mark: Option<u64>) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{}: {} (TTL {} s, {}, lock: {})",
            self.name,
            self.title,
            self.ttl_s,
            if self.fencing {
                "fencing on"
            } else {
                "no fencing"
            },
            self.implementation
        );
        let mut header = vec!["t".to_string()];
        header.extend(self.clients.iter().cloned());
        header.extend(["key in Redis", "counter"].map(String::from));
        if self.fencing {
            header.push("highest".into());
        }
        header.push("unsafe".into());
        // Seconds that repeat the one before (same doings, same holder, only
        // the TTL running down) fold into one row, so that a 40 s pause reads
        // as one line.
        let mut rows: Vec<Vec<String>> = Vec::new();
        let mut marks: Vec<bool> = Vec::new();
        let mut i = 0;
        while i < self.seconds.len() {
            let first = &self.seconds[i];
            let mut last = i;
            while let Some(next) = self.seconds.get(last + 1) {
                let foldable = Some(next.t) != mark
                    && Some(first.t) != mark
                    && next.notes.is_empty()
                    && self.signature(next) == self.signature(first);
                if !foldable {
                    break;
                }
                last += 1;
            }
            let mut row = self.row(first);
            if last > i {
                let end = &self.seconds[last];
                row[0] = format!("{}–{}", first.t, end.t);
                let key_col = 1 + self.clients.len();
                row[key_col] = match (&first.holder, first.ttl_left_s, end.ttl_left_s) {
                    (Some(h), Some(from), Some(to)) => format!("{h} ({from}…{to} s left)"),
                    _ => row[key_col].clone(),
                };
            }
            rows.push(row);
            marks.push(Some(first.t) == mark);
            i = last + 1;
        }
        let columns = header.len();
        let mut widths = vec![0; columns];
        for row in std::iter::once(&header).chain(rows.iter()) {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |cells: &[String]| -> String {
            let mut l = String::new();
            for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
                let pad = w.saturating_sub(cell.chars().count());
                if i == 0 {
                    let _ = write!(l, "{}{cell}", " ".repeat(pad));
                } else if i + 1 == cells.len() {
                    let _ = write!(l, " │ {cell}");
                } else {
                    let _ = write!(l, " │ {cell}{}", " ".repeat(pad));
                }
            }
            l.trim_end().to_string()
        };
        let _ = writeln!(out, "{}", line(&header));
        let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
        let _ = writeln!(out, "{}", line(&rule).replace(" │ ", "─┼─"));
        for (row, marked) in rows.iter().zip(marks) {
            let _ = writeln!(
                out,
                "{}{}",
                line(row),
                if marked { "   ◀ here" } else { "" }
            );
        }
        let _ = writeln!(out, "{}", self.outcome.summary);
        out
    }

    /// What a second shows apart from its number and the TTL running down.
    fn signature(&self, s: &Second) -> (Vec<String>, Option<String>, i64, Option<u64>, bool) {
        let cells = self
            .clients
            .iter()
            .map(|n| s.clients.get(n).map(client_cell).unwrap_or_default())
            .collect();
        let has_unsafe = Self::unsafe_actions(s).next().is_some();
        (
            cells,
            s.holder.clone(),
            s.counter,
            s.highest_token,
            has_unsafe || s.ttl_left_s.is_none() && s.holder.is_some(),
        )
    }

    fn row(&self, s: &Second) -> Vec<String> {
        let mut row = vec![s.t.to_string()];
        for name in &self.clients {
            let cell = s.clients.get(name).map(client_cell).unwrap_or_default();
            row.push(cell);
        }
        let mut key = match (&s.holder, s.ttl_left_s) {
            (Some(h), Some(ttl)) => format!("{h} ({ttl} s left)"),
            (Some(h), None) => format!("{h} (no TTL)"),
            (None, _) => "free".into(),
        };
        for note in &s.notes {
            key = format!("{key}; {note}");
        }
        row.push(key);
        row.push(s.counter.to_string());
        if self.fencing {
            row.push(s.highest_token.map_or("–".into(), |t| t.to_string()));
        }
        let unsafe_cells: Vec<String> = Self::unsafe_actions(s)
            .map(|(name, a)| {
                if a.rejected {
                    format!("✗ {name}: {} (rejected)", a.text)
                } else {
                    format!("✗ {name}: {}", a.text)
                }
            })
            .collect();
        row.push(unsafe_cells.join("; "));
        row
    }
}

/// `● wrote 1` for a client that believes it holds the lock, `○ …` otherwise;
/// a paused client shows `⏸`.
fn client_cell(c: &ClientSecond) -> String {
    let marker = match c.state {
        State::Idle => return String::new(),
        State::Crashed if c.actions.is_empty() => return "†".into(),
        State::Done if c.actions.is_empty() => return String::new(),
        _ if c.believes => "●",
        _ => "○",
    };
    let doing: Vec<&str> = c.actions.iter().map(|a| a.text.as_str()).collect();
    let doing = if doing.is_empty() {
        match c.state {
            State::Paused => "⏸".to_string(),
            State::Working => "working".to_string(),
            _ => String::new(),
        }
    } else {
        doing.join(", ")
    };
    format!("{marker} {doing}").trim_end().to_string()
}
