//! What every engine records of a story: each client's second, the whole run as a
//! [`Timeline`], and the outcome's sentence.
//!
//! An engine looks at its own topology (one server's key, a pair's nodes, N nodes' majority) to
//! write down who holds the lock; what the clients did and believed, how their messages hide
//! their random tokens, and how the run is named and summed up, is written here, once for every
//! topology.

use std::collections::BTreeMap;

use super::Story;
use super::client::Client;
use crate::timeline::{ClientSecond, Lane, Message, Outcome, Second, Timeline};
use crate::wire::Step;

/// Each client at the end of second `t`, taking the actions it did in it.
pub(crate) fn clients_second(clients: &mut [Client], t: u64) -> BTreeMap<String, ClientSecond> {
    let mut seconds = BTreeMap::new();
    for c in clients {
        seconds.insert(
            c.name().to_string(),
            ClientSecond {
                state: c.state(t),
                believes: c.believes,
                token: if c.believes { c.fence } else { None },
                actions: std::mem::take(&mut c.actions),
            },
        );
    }
    seconds
}

/// `text` (a command or a reply) with every client's random token replaced by its owner
/// (`<A's token>`), so that a recorded message is the same on every run.
fn hide_tokens(clients: &[Client], text: &str) -> String {
    clients
        .iter()
        .fold(text.to_string(), |text, c| match &c.token {
            Some(token) if !token.is_empty() => {
                text.replace(token, &format!("<{}'s token>", c.name()))
            }
            _ => text,
        })
}

/// Client `i`'s `command` to `to` in second `t`, with the `reply` it got (`answered`: from the
/// server, or what the client saw when none came), its tokens hidden.
pub(crate) fn message(
    clients: &[Client],
    i: usize,
    t: u64,
    to: Lane,
    (command, reply): (&str, &str),
    answered: bool,
) -> Message {
    Message {
        t,
        client: clients[i].name().to_string(),
        to,
        command: hide_tokens(clients, command),
        reply: hide_tokens(clients, reply),
        answered,
    }
}

/// The commands of client `i`'s call in second `t` that a wire to `to` recorded as `steps`.
pub(crate) fn sent(clients: &[Client], i: usize, t: u64, to: Lane, steps: &[Step]) -> Vec<Message> {
    steps
        .iter()
        .filter_map(|step| match step {
            Step::Sent { command, reply } => {
                Some(message(clients, i, t, to.clone(), (command, reply), true))
            }
            Step::Intervened(_) => None,
        })
        .collect()
}

/// Client `i`'s plain read of the counter in second `t`, which gave `value`: with fencing off
/// the grader makes it for the client, and records what the client would have sent.
pub(crate) fn plain_read(clients: &[Client], i: usize, t: u64, value: i64) -> Message {
    let reply = format!("\"{value}\"");
    message(
        clients,
        i,
        t,
        Lane::Storage,
        ("HGET row value", &reply),
        true,
    )
}

/// Client `i`'s plain write of `value` to the counter in second `t`, made as [`plain_read`] is.
pub(crate) fn plain_write(clients: &[Client], i: usize, t: u64, value: i64) -> Message {
    let command = format!("HSET row value {value}");
    message(
        clients,
        i,
        t,
        Lane::Storage,
        (&command, "(integer) 0"),
        true,
    )
}

/// The whole run of `story` with the lock called `implementation`: its `seconds`, the counter it
/// left, the topology's `nodes` by name (none for one server) and the clients' `messages`.
pub(crate) fn timeline(
    story: &Story,
    implementation: &str,
    clients: &[Client],
    nodes: Vec<String>,
    seconds: Vec<Second>,
    counter: i64,
    messages: Vec<Message>,
) -> Timeline {
    let names: Vec<&str> = clients.iter().map(Client::name).collect();
    let crashed: Vec<&str> = clients
        .iter()
        .filter(|c| c.crashed)
        .map(Client::name)
        .collect();
    let stopped: Vec<&str> = clients
        .iter()
        .filter(|c| c.stopped)
        .map(Client::name)
        .collect();
    let summary = summary(&names, &seconds, counter, &crashed, &stopped);
    Timeline {
        name: story.timeline.to_string(),
        title: story.title.to_string(),
        story: story.text.to_string(),
        implementation: implementation.to_string(),
        ttl_s: story.ttl_s,
        fencing: story.fenced(),
        clients: names.iter().map(|n| n.to_string()).collect(),
        nodes,
        seconds,
        outcome: Outcome {
            counter,
            jobs: names.len() as u32,
            summary,
        },
        messages,
    }
}

/// The outcome's sentence: how many jobs ran, the counter they left, and why
/// it is short, if it is: a crash (`crashed`), a keeper that stopped its job
/// (`stopped`), a request the storage refused (read from `seconds`), or
/// updates lost. `clients` are all the clients, each with one job.
fn summary(
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
