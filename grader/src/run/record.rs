//! What the runner records: every command for the message diagram, and at
//! the end of each second who holds what, for the timeline and its summary.

use std::collections::BTreeMap;

use super::Runner;
use super::client::Client;
use crate::clock::Expiry;
use crate::error::GradeError;
use crate::scenario::Fencing;
use crate::timeline::{ClientSecond, Lane, Message, Note, Outcome, Second, Timeline};
use crate::wire::{Step as WireStep, Wire};
use crate::world::enter;

impl Runner<'_> {
    /// Keeps the commands of client `i`'s last call of `function` for the
    /// message diagram, with every client's random token replaced by its
    /// owner (`<A's token>`), so that the record is the same on every run.
    pub(super) fn record(&mut self, i: usize, function: &str, wire: Option<&Wire>) {
        let to = if function.starts_with("fenced_") {
            Lane::Storage
        } else {
            Lane::Redis
        };
        for step in wire.map_or(&[][..], Wire::steps) {
            if let WireStep::Sent { command, reply } = step {
                let (command, reply) = (self.hide_tokens(command), self.hide_tokens(reply));
                let client = self.clients[i].name().to_string();
                let t = self.t;
                self.messages.push(Message {
                    t,
                    client,
                    to,
                    command,
                    reply,
                });
            }
        }
    }

    /// The job's own plain read or write of the storage, which the grader
    /// makes for the client when fencing is off.
    pub(super) fn note(&mut self, i: usize, command: &str, reply: String) {
        let (t, client) = (self.t, self.clients[i].name().to_string());
        let (to, command) = (Lane::Storage, command.to_string());
        self.messages.push(Message {
            t,
            client,
            to,
            command,
            reply,
        });
    }

    fn hide_tokens(&self, text: &str) -> String {
        self.clients
            .iter()
            .fold(text.to_string(), |text, c| match &c.token {
                Some(token) if !token.is_empty() => {
                    text.replace(token, &format!("<{}'s token>", c.name()))
                }
                _ => text,
            })
    }

    /// Looks at Redis and the clients at the end of the second.
    pub(super) fn observe(&mut self, notes: Vec<Note>) -> Result<Second, GradeError> {
        let holder = self.holder()?;
        let (expiry, row) = {
            let mut world = enter(&self.world);
            (world.lock_expiry()?, world.row()?)
        };
        let ms = self.ms();
        let ttl_left_s = match expiry {
            Expiry::At(at) if holder.is_some() || at > ms => {
                // A TTL read a millisecond or two over the one asked for shows as that one.
                let left = at.saturating_sub(ms);
                let left = match left.checked_sub(crate::clock::SLACK_MS) {
                    Some(less) if less > 0 => less,
                    _ => left,
                };
                Some(left.div_ceil(1000))
            }
            _ => None,
        };
        let has_key = !matches!(expiry, Expiry::Missing);
        let t = self.t;
        let mut clients = BTreeMap::new();
        for c in &mut self.clients {
            let state = c.state(t);
            clients.insert(
                c.name().to_string(),
                ClientSecond {
                    state,
                    believes: c.believes,
                    token: if c.believes { c.fence } else { None },
                    actions: std::mem::take(&mut c.actions),
                },
            );
        }
        let holder_name = match holder {
            Some(h) => Some(self.clients[h].name().to_string()),
            None if has_key => Some("?".to_string()),
            None => None,
        };
        Ok(Second {
            t,
            clients,
            holder: holder_name,
            ttl_left_s,
            counter: row.value,
            highest_token: (self.scenario.fencing != Fencing::Off)
                .then_some(row.fence)
                .filter(|&f| f > 0),
            notes,
            nodes: self.node_seconds()?,
        })
    }

    pub(super) fn timeline(&mut self, seconds: Vec<Second>) -> Result<Timeline, GradeError> {
        let counter = enter(&self.world).row()?.value;
        let jobs = self.clients.len() as u32;
        let names: Vec<&str> = self.clients.iter().map(Client::name).collect();
        let crashed: Vec<&str> = self
            .clients
            .iter()
            .filter(|c| c.crashed)
            .map(Client::name)
            .collect();
        let stopped: Vec<&str> = self
            .clients
            .iter()
            .filter(|c| c.stopped)
            .map(Client::name)
            .collect();
        let summary = summary(&names, &seconds, counter, &crashed, &stopped);
        Ok(Timeline {
            name: self.scenario.name.to_string(),
            title: self.scenario.title.to_string(),
            story: self.scenario.story.to_string(),
            implementation: self.lock.name.to_string(),
            ttl_s: self.scenario.ttl_s,
            fencing: self.scenario.fencing != Fencing::Off,
            clients: self.clients.iter().map(|c| c.name().to_string()).collect(),
            nodes: self.node_names(),
            seconds,
            outcome: Outcome {
                counter,
                jobs,
                summary,
            },
            messages: std::mem::take(&mut self.messages),
        })
    }
}

/// The outcome's sentence: how many jobs ran, the counter they left, and why
/// it is short, if it is: a crash (`crashed`), a keeper that stopped its job
/// (`stopped`), a request the storage refused (read from `seconds`), or
/// updates lost. `clients` are all the clients, each with one job.
pub(crate) fn summary(
    clients: &[&str],
    seconds: &[Second],
    counter: i64,
    crashed: &[&str],
    stopped: &[&str],
) -> String {
    let jobs = clients.len() as u32;
    let rejected: Vec<&str> = clients
        .iter()
        .copied()
        .filter(|name| {
            seconds.iter().any(|s| {
                s.clients
                    .get(*name)
                    .is_some_and(|cs| cs.actions.iter().any(|a| a.rejected))
            })
        })
        .collect();
    let mut summary = format!("{} jobs, counter = {counter}", number(jobs));
    let mut reasons = Vec::new();
    for name in crashed {
        reasons.push(format!("{name} crashed before writing"));
    }
    for name in stopped {
        reasons.push(format!(
            "{name}'s keeper found its lease lost, and {name} stopped before writing"
        ));
    }
    for name in &rejected {
        reasons.push(format!(
            "the storage refused {name}'s stale request, and {name} knows its job failed"
        ));
    }
    let explained = (crashed.len() + rejected.len() + stopped.len()) as i64;
    let lost = jobs as i64 - explained - counter;
    if lost > 0 {
        reasons.push(format!(
            "{} lost",
            if lost == 1 {
                "one update was".to_string()
            } else {
                format!("{} updates were", number(lost as u32).to_lowercase())
            }
        ));
    }
    let unsafe_count = seconds
        .iter()
        .flat_map(|s| s.clients.values())
        .flat_map(|c| &c.actions)
        .filter(|a| a.unsafe_ && !a.rejected)
        .count();
    if reasons.is_empty() && unsafe_count > 0 {
        let what = if unsafe_count == 1 {
            "1 action ran on a lock its client no longer held".to_string()
        } else {
            format!("{unsafe_count} actions ran on locks their clients no longer held")
        };
        summary.push_str(&format!(
            ": every update counted, but only by luck: {what}."
        ));
    } else if reasons.is_empty() {
        summary.push_str(": every update counted.");
    } else {
        summary = format!("{summary}: {}.", reasons.join("; "));
    }
    summary
}

/// `Three` for 3: timelines are read as sentences.
fn number(n: u32) -> String {
    const WORDS: [&str; 11] = [
        "No", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten",
    ];
    WORDS
        .get(n as usize)
        .map_or(n.to_string(), |w| w.to_string())
}
