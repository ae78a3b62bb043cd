//! One look at Redlock's nodes: whether each runs, whose token its lock key holds, and how far its
//! clock runs ahead.
//!
//! Two [`Snapshot`]s side by side tell what a moment did to the keys ("A's key expires on node
//! 3"). At the end of a second the engine writes down the holder, with several nodes the client
//! whose token a majority of them hold, which is the only sense in which a Redlock "is held", and
//! each node's row.
//!
//! A node that is down holds nothing and grants nothing. Until the key it held when it went down
//! would have expired, that key still counts towards its owner's majority: nobody can take it from
//! a node that is not there. That is antirez's delayed restart: a node that stays down for the
//! longest TTL takes nothing from its holder's majority, and comes back when no key it forgot
//! could still matter. A node restarted at once comes back empty, and its share is gone.

use std::collections::BTreeMap;

use crate::error::GradeError;
use crate::nodes::cluster::Cluster;
use crate::nodes::{Health, NODES};
use crate::story::client::Client;
use crate::story::fault::node_name;
use crate::timeline::{NodeHealth, NodeSecond, Note};

/// One node, as last seen.
#[derive(Clone, Debug, PartialEq)]
struct Seen {
    health: Health,
    /// The token in the lock key; a paused node keeps the one it held when it stopped.
    token: Option<String>,
    /// When the key expires on the node's own clock, in the story's time (running nodes only).
    expires_ms: Option<u64>,
    /// A node that is down: the token it held when it went down, and when that key would have
    /// expired, as long as it would not have.
    kept: Option<(String, u64)>,
    /// How far the node's clock runs ahead of the others', in ms.
    ahead_ms: u64,
}

/// One look at every node.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Snapshot(Vec<Seen>);

impl Snapshot {
    /// Looks at every node of `c` now, `was` the nodes as last seen. A look at a node brings it to
    /// its own time, and brings back a node whose restart is due.
    pub(super) fn take(c: &mut Cluster, was: &Snapshot) -> Result<Snapshot, GradeError> {
        let now = c.now_ms();
        let mut nodes = Vec::with_capacity(NODES);
        for (i, was) in was.0.iter().enumerate() {
            let token = c.holder(i)?;
            let health = c.health(i);
            let (token, expires_ms) = match health {
                // A stopped node answers nothing; it holds what it held when it stopped.
                Health::Paused => (was.token.clone(), was.expires_ms),
                Health::Down => (None, None),
                Health::Up if token.is_some() => (token, c.ttl_left(i)?.map(|ms| now + ms)),
                Health::Up => (None, None),
            };
            let kept = match (health, was.health) {
                (Health::Down, Health::Down) => was.kept.clone(),
                (Health::Down, _) => was.token.clone().zip(was.expires_ms),
                _ => None,
            }
            .filter(|(_, until)| *until > now);
            nodes.push(Seen {
                health,
                token,
                expires_ms,
                ahead_ms: c.node_now_ms(i) - now,
                kept,
            });
        }
        Ok(Snapshot(nodes))
    }

    /// No node seen yet: all running, all free.
    pub(super) fn empty() -> Snapshot {
        let free = Seen {
            health: Health::Up,
            token: None,
            expires_ms: None,
            ahead_ms: 0,
            kept: None,
        };
        Snapshot(vec![free; NODES])
    }

    /// The nodes (from 0) whose lock key holds `token`.
    pub(super) fn nodes_of(&self, token: &str) -> Vec<usize> {
        (0..self.0.len())
            .filter(|&i| self.0[i].token.as_deref() == Some(token))
            .collect()
    }

    /// Whether node `i` was down.
    pub(super) fn is_down(&self, i: usize) -> bool {
        self.0[i].health == Health::Down
    }

    /// What each node counts for: the token it holds, or a down node's kept one, with when the
    /// key expires.
    fn claims(&self) -> impl Iterator<Item = (&str, Option<u64>)> {
        self.0.iter().filter_map(|n| match (&n.token, &n.kept) {
            (Some(token), _) => Some((token.as_str(), n.expires_ms)),
            (None, Some((token, until))) => Some((token.as_str(), Some(*until))),
            (None, None) => None,
        })
    }

    /// The token a majority of the nodes count for, if one does.
    pub(super) fn majority(&self) -> Option<&str> {
        self.claims()
            .map(|(token, _)| token)
            .find(|t| self.claims().filter(|(c, _)| c == t).count() > NODES / 2)
    }

    /// How long `token` keeps its majority after `now_ms`, in whole seconds rounded up: until the
    /// key that is the last of a majority to run out does.
    pub(super) fn majority_left_s(&self, token: &str, now_ms: u64) -> Option<u64> {
        let mut until: Vec<u64> = self
            .claims()
            .filter(|(c, _)| *c == token)
            .filter_map(|(_, at)| at)
            .collect();
        until.sort_unstable_by(|a, b| b.cmp(a));
        until
            .get(NODES / 2)
            .map(|at| at.saturating_sub(now_ms).div_ceil(1000))
    }

    /// What happened between `self` and `after`: a node back up (a fault), and keys gone, an
    /// expiry unless `lost` (then a fault's doing: "is lost on").
    pub(super) fn changes(&self, after: &Snapshot, lost: bool) -> Vec<Note> {
        let mut notes = Vec::new();
        for (i, (was, is)) in self.0.iter().zip(&after.0).enumerate() {
            if was.health == Health::Down && is.health == Health::Up {
                notes.push(Note::fault(format!("{} comes back, empty", node_name(i))));
            }
        }
        let mut gone: Vec<(&str, Vec<usize>)> = Vec::new();
        for (i, (was, is)) in self.0.iter().zip(&after.0).enumerate() {
            let Some(token) = was.token.as_deref() else {
                continue;
            };
            if is.token.as_deref() == Some(token) {
                continue;
            }
            match gone.iter_mut().find(|(t, _)| *t == token) {
                Some((_, nodes)) => nodes.push(i),
                None => gone.push((token, vec![i])),
            }
        }
        for (token, nodes) in gone {
            let (owner, nodes) = (owner(token), list(&nodes));
            notes.push(if lost {
                Note::fault(format!("{owner}'s key is lost on {nodes}"))
            } else {
                Note::expiry(format!("{owner}'s key expires on {nodes}"))
            });
        }
        notes
    }

    /// Each node's holder for a line of text: `A`, `B`, `·` free, `‖` paused, `✗` down.
    pub(super) fn marks(&self, clients: &[Client]) -> String {
        let marks: Vec<&str> = self
            .0
            .iter()
            .map(|n| match n.health {
                Health::Paused => "‖",
                Health::Down => "✗",
                Health::Up => match &n.token {
                    None => "·",
                    Some(token) => clients
                        .iter()
                        .find(|c| c.token.as_deref() == Some(token.as_str()))
                        .map_or("?", Client::name),
                },
            })
            .collect();
        marks.join(" ")
    }

    /// Each node's row of a timeline's second, by name. A node that is down counts for the key it
    /// kept others from, as the majority does; the timeline's rule reads the same.
    pub(super) fn rows(&self) -> BTreeMap<String, NodeSecond> {
        self.0
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let row = NodeSecond {
                    health: match n.health {
                        Health::Up => NodeHealth::Up,
                        Health::Paused => NodeHealth::Paused,
                        Health::Down => NodeHealth::Down,
                    },
                    role: None,
                    holder: n
                        .token
                        .as_deref()
                        .or(n.kept.as_ref().map(|(t, _)| t.as_str()))
                        .map(|t| owner(t).to_owned()),
                    clock_ahead_s: n.ahead_ms / 1000,
                };
                (node_name(i), row)
            })
            .collect()
    }
}

/// "nodes 1, 2 and 3", "node 4", "every node".
pub(super) fn list(nodes: &[usize]) -> String {
    let names: Vec<String> = nodes.iter().map(|&i| (i + 1).to_string()).collect();
    match names.as_slice() {
        [] => "no node".to_owned(),
        [one] => format!("node {one}"),
        _ if nodes.len() == crate::nodes::NODES => "every node".to_owned(),
        [rest @ .., last] => format!("nodes {} and {last}", rest.join(", ")),
    }
}

/// The client a story's token belongs to ("A" for A's token), or "?".
pub(super) fn owner(token: &str) -> &'static str {
    use crate::run::redlock::{TOKEN_A, TOKEN_B};
    match token {
        TOKEN_A => "A",
        TOKEN_B => "B",
        _ => "?",
    }
}
