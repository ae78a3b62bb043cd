//! What the engine records of every story, whatever it runs on: each client's action (and on
//! Redlock's nodes a line of the report with it), every command for the message diagram, and at
//! the end of each second who holds the lock, for how long, the counter, the highest token and the
//! nodes' rows.
//!
//! One path writes it all down for every ground; it asks the ground only what the ground alone can
//! say: who holds the lock and for how long (the lock key on one server or a pair's primary, the
//! majority on nodes, [`Holding`]), each node's row (a pair's two, Redlock's five), and the marks a
//! report's line shows of the nodes. The clients' seconds, the tokens hidden in messages and the
//! run's summary are [`crate::story::record`]'s.

use std::collections::BTreeMap;

use super::{Ground, Runner};
use crate::clock::Expiry;
use crate::error::GradeError;
use crate::story::record;
use crate::timeline::{ActionKind, Lane, NodeSecond, Note, Second, Timeline};
use crate::verdict::seconds;
use crate::wire::Wire;
use crate::world::enter;

/// Who holds the lock at the end of a second, as only the ground can say.
pub(super) struct Holding {
    /// The holder's name (`?` for a key no client was given), if the lock is held.
    pub(super) holder: Option<String>,
    /// How long the lock has left, in whole seconds rounded up.
    pub(super) ttl_left_s: Option<u64>,
    /// Each node of the ground, by name (none on one server).
    pub(super) nodes: BTreeMap<String, NodeSecond>,
}

impl Runner {
    /// Client `i` did something: its action for the timeline, done on a lock it no longer held
    /// (`is_unsafe`) or refused by the storage (`rejected`); on nodes, a fresh look at them and a
    /// line of the report that shows it.
    pub(super) fn act(
        &mut self,
        i: usize,
        kind: ActionKind,
        text: impl Into<String>,
        is_unsafe: bool,
        rejected: bool,
    ) -> Result<(), GradeError> {
        let text = text.into();
        if let Ground::Nodes(nodes) = &mut self.ground {
            nodes.look_again()?;
        }
        let c = &mut self.stage.clients[i];
        let mark = if is_unsafe { "  ✗" } else { "" };
        let what = format!("{} {text}{mark}", c.name());
        c.act(kind, text, is_unsafe, rejected);
        self.line(&what);
        Ok(())
    }

    /// A line of the report for each of `notes`, what time or a fault did.
    pub(super) fn note_lines(&mut self, notes: &[Note]) {
        for note in notes {
            self.line(&note.text);
        }
    }

    /// A line of the report: when, what, and each node's holder as last seen; only on nodes,
    /// whose rows a timeline's table of text does not draw.
    fn line(&mut self, what: &str) {
        let Ground::Nodes(nodes) = &self.ground else {
            return;
        };
        let marks = nodes.marks(&self.stage.clients);
        self.lines.push(format!(
            "t = {:>7}  {what:<68}  nodes: {marks}",
            seconds(nodes.now_ms())
        ));
    }

    /// Keeps the commands of client `i`'s last call of `function` on a wire (to the lock's server,
    /// or a fenced call to the storage) for the message diagram, tokens by owner
    /// ([`record::sent`]).
    pub(super) fn record(&mut self, i: usize, function: &str, wire: Option<&Wire>) {
        let to = if function.starts_with("fenced_") {
            Lane::Storage
        } else {
            Lane::Redis
        };
        let steps = wire.map_or(&[][..], Wire::steps);
        let sent = record::sent(&self.stage.clients, i, self.stage.t, to, steps);
        self.messages.extend(sent);
    }

    /// Writes down the second that ends: each client, who holds the lock, the storage, the
    /// nodes, and `notes`.
    pub(super) fn look(&mut self, notes: Vec<Note>) -> Result<Second, GradeError> {
        let now = self.now_ms();
        let Holding {
            holder,
            ttl_left_s,
            nodes,
        } = match &mut self.ground {
            Ground::Server => self.key_holding()?,
            Ground::Pair(_) => {
                let key = self.key_holding()?;
                let nodes = self.pair_rows()?;
                Holding { nodes, ..key }
            }
            Ground::Nodes(nodes) => nodes.holding(now)?,
        };
        let row = enter(&self.world).row()?;
        // A client that reckons its lock's validity (Redlock's) stops believing once it is spent.
        for c in &mut self.stage.clients {
            c.reckon(now);
        }
        let t = self.stage.t;
        let clients = record::clients_second(&mut self.stage.clients, t);
        Ok(Second {
            t,
            clients,
            holder,
            ttl_left_s,
            counter: row.value,
            highest_token: self
                .stage
                .story
                .fenced()
                .then_some(row.fence)
                .filter(|&f| f > 0),
            notes,
            nodes,
        })
    }

    /// Who holds the lock key on one server or a pair's primary, and for how long.
    fn key_holding(&self) -> Result<Holding, GradeError> {
        let holder = self.holder()?;
        let expiry = enter(&self.world).lock_expiry()?;
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
        let holder = match holder {
            Some(h) => Some(self.stage.clients[h].name().to_string()),
            None if !matches!(expiry, Expiry::Missing) => Some("?".to_string()),
            None => None,
        };
        Ok(Holding {
            holder,
            ttl_left_s,
            nodes: BTreeMap::new(),
        })
    }

    /// The whole run, from its `seconds`.
    pub(super) fn timeline(&mut self, seconds: Vec<Second>) -> Result<Timeline, GradeError> {
        let counter = enter(&self.world).row()?.value;
        let nodes = match &self.ground {
            Ground::Server => Vec::new(),
            Ground::Pair(pair) => pair.names(),
            Ground::Nodes(nodes) => nodes.names(),
        };
        Ok(record::timeline(
            &self.stage.story,
            self.lock.name,
            &self.stage.clients,
            nodes,
            seconds,
            counter,
            std::mem::take(&mut self.messages),
        ))
    }
}
