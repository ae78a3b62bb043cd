//! What the runner records: every command for the message diagram, and at
//! the end of each second who holds what on the server; the clients' seconds, the
//! run and its summary are written by [`crate::story::record`], as for every story.

use super::Runner;
use crate::clock::Expiry;
use crate::error::GradeError;
use crate::story::record;
use crate::timeline::{Lane, Note, Second, Timeline};
use crate::wire::Wire;
use crate::world::enter;

impl Runner<'_> {
    /// Keeps the commands of client `i`'s last call of `function` for the
    /// message diagram, tokens by owner ([`record::sent`]).
    pub(super) fn record(&mut self, i: usize, function: &str, wire: Option<&Wire>) {
        let to = if function.starts_with("fenced_") {
            Lane::Storage
        } else {
            Lane::Redis
        };
        let steps = wire.map_or(&[][..], Wire::steps);
        let sent = record::sent(&self.clients, i, self.t, to, steps);
        self.messages.extend(sent);
    }

    /// Looks at Redis and the clients at the end of the second.
    pub(super) fn look(&mut self, notes: Vec<Note>) -> Result<Second, GradeError> {
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
        let clients = record::clients_second(&mut self.clients, t);
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
            highest_token: self.story.fenced().then_some(row.fence).filter(|&f| f > 0),
            notes,
            nodes: self.node_seconds()?,
        })
    }

    /// The whole run, from its `seconds`.
    pub(super) fn timeline(&mut self, seconds: Vec<Second>) -> Result<Timeline, GradeError> {
        let counter = enter(&self.world).row()?.value;
        Ok(record::timeline(
            self.story,
            self.lock.name,
            &self.clients,
            self.node_names(),
            seconds,
            counter,
            std::mem::take(&mut self.messages),
        ))
    }
}
