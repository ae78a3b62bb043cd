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
use std::fmt::Write as _;

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
    /// The reply, as `redis-cli` would show it, e.g. `OK` or `(nil)`.
    pub reply: String,
}

/// The two servers a client talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lane {
    /// Redis, which holds the lock key and the fence counter.
    Redis,
    /// The storage the lock protects (in the course, a hash on the same
    /// Redis server standing for a database row).
    Storage,
}

/// One second of a timeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
    #[serde(default)]
    pub notes: Vec<String>,
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
    /// in column order: the ✗ marks of that second.
    pub fn unsafe_actions<'a>(
        &'a self,
        second: &'a Second,
    ) -> impl Iterator<Item = (&'a str, &'a Action)> {
        self.clients
            .iter()
            .filter_map(|name| second.clients.get(name).map(|c| (name.as_str(), c)))
            .flat_map(|(name, client)| {
                client
                    .actions
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
        let has_unsafe = self.unsafe_actions(s).next().is_some();
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
        let unsafe_cells: Vec<String> = self
            .unsafe_actions(s)
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

#[cfg(test)]
mod tests {
    //! The JSON's shape, the rules [`Timeline::validate`] enforces, and the
    //! order of the ✗ marks.

    use super::*;

    fn client(state: State, believes: bool, actions: Vec<Action>) -> ClientSecond {
        ClientSecond {
            state,
            believes,
            token: None,
            actions,
        }
    }

    fn wrote(text: &str, unsafe_: bool) -> Action {
        Action {
            kind: ActionKind::Wrote,
            text: text.into(),
            unsafe_,
            rejected: false,
        }
    }

    /// Two seconds, with the columns out of alphabetical order: B, then A.
    fn sample() -> Timeline {
        let second = |t: u64, a: Vec<Action>, b: Vec<Action>| Second {
            t,
            clients: BTreeMap::from([
                ("A".to_string(), client(State::Working, true, a)),
                ("B".to_string(), client(State::Waiting, false, b)),
            ]),
            holder: Some("A".into()),
            ttl_left_s: Some(10 - t),
            counter: 0,
            highest_token: None,
            notes: Vec::new(),
        };
        Timeline {
            name: "sample".into(),
            title: "A sample".into(),
            story: "A and B both write.".into(),
            implementation: "reference".into(),
            ttl_s: 10,
            fencing: false,
            clients: vec!["B".into(), "A".into()],
            seconds: vec![
                second(0, vec![], vec![]),
                second(
                    1,
                    vec![wrote("wrote 1", true)],
                    vec![wrote("wrote 1", true)],
                ),
            ],
            outcome: Outcome {
                counter: 1,
                jobs: 2,
                summary: "Two jobs, counter = 1: one update was lost.".into(),
            },
            messages: vec![Message {
                t: 0,
                client: "A".into(),
                to: Lane::Redis,
                command: "SET lock <A's token> NX PX 10000".into(),
                reply: "OK".into(),
            }],
        }
    }

    #[test]
    fn json_round_trips_byte_for_byte() {
        let timeline = sample();
        let json = timeline.to_json();
        let back: Timeline = serde_json::from_str(&json).expect("parses");
        assert_eq!(back, timeline);
        assert_eq!(back.to_json(), json);
        assert!(json.contains(r#""unsafe": true"#), "{json}");
        assert!(json.contains(r#""state": "waiting""#), "{json}");
    }

    #[test]
    fn a_file_without_messages_still_reads() {
        let mut timeline = sample();
        timeline.messages.clear();
        let json = timeline.to_json();
        assert!(!json.contains("\"messages\""), "{json}");
        let back: Timeline = serde_json::from_str(&json).expect("parses without messages");
        assert_eq!(back, timeline);
        assert!(sample().to_json().contains(r#""to": "redis""#));
    }

    #[test]
    fn unknown_fields_are_refused() {
        let json = sample()
            .to_json()
            .replacen("\"unsafe\":", "\"unsafe_\":", 1);
        let err = serde_json::from_str::<Timeline>(&json).expect_err("unknown field");
        assert!(err.to_string().contains("unsafe_"), "{err}");
    }

    #[test]
    fn validate_accepts_a_whole_timeline() {
        assert_eq!(sample().validate("sample"), Ok(()));
    }

    #[test]
    fn validate_refuses_a_wrong_name_a_gap_and_a_missing_client() {
        let timeline = sample();
        assert!(timeline.validate("other").is_err());

        let mut gap = sample();
        gap.seconds[1].t = 2;
        let err = gap.validate("sample").expect_err("gap");
        assert!(err.contains("seconds[1] has t = 2"), "{err}");

        let mut missing = sample();
        missing.seconds[1].clients.remove("B");
        let err = missing.validate("sample").expect_err("missing client");
        assert!(err.contains("client \"B\" is missing"), "{err}");

        let mut stranger = sample();
        stranger.seconds[0].holder = Some("C".into());
        assert!(stranger.validate("sample").is_err());
    }

    #[test]
    fn unsafe_actions_follow_the_columns() {
        let timeline = sample();
        let marks: Vec<&str> = timeline
            .unsafe_actions(&timeline.seconds[1])
            .map(|(name, _)| name)
            .collect();
        assert_eq!(marks, ["B", "A"]);
        assert_eq!(timeline.unsafe_actions(&timeline.seconds[0]).count(), 0);
    }

    #[test]
    fn labels_are_the_json_words() {
        for state in [
            State::Idle,
            State::Waiting,
            State::Working,
            State::Paused,
            State::Crashed,
            State::Done,
        ] {
            let json = serde_json::to_string(&state).expect("serialises");
            assert_eq!(json, format!("\"{}\"", state.label()));
        }
    }

    #[test]
    fn tokens_are_renumbered_in_the_order_granted() {
        let mut timeline = sample();
        timeline.seconds[0].clients.get_mut("A").expect("A").token = Some(33);
        let b = timeline.seconds[1].clients.get_mut("B").expect("B");
        b.token = Some(35);
        b.actions = vec![wrote("write with token 35", false)];
        let renumbered = timeline.with_tokens_renumbered();
        let b = &renumbered.seconds[1].clients["B"];
        assert_eq!(renumbered.seconds[0].clients["A"].token, Some(1));
        assert_eq!(b.token, Some(2));
        assert_eq!(b.actions[0].text, "write with token 2");
    }
}
