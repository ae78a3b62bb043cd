//! What serde cannot check in a timeline read back from JSON: its name, the
//! seconds numbered without gaps, every second describing every client, and,
//! in a story on several nodes, every node, and the lock's holder the one
//! the story's rule gives.

use crate::{Lane, Message, NodeRole, Second, Timeline};

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
        for (i, node) in self.nodes.iter().enumerate() {
            if self.nodes[..i].contains(node) {
                return Err(format!("node {node:?} is listed twice in \"nodes\""));
            }
            // A message's lane names a node as it names Redis or the storage.
            if matches!(Lane::from(node.clone()), Lane::Redis | Lane::Storage) {
                return Err(format!("a node may not be called {node:?}"));
            }
        }
        if self.seconds.is_empty() {
            return Err("\"seconds\" is empty".to_owned());
        }
        for (index, second) in self.seconds.iter().enumerate() {
            self.validate_second(index, second)?;
        }
        for (index, message) in self.messages.iter().enumerate() {
            self.validate_message(index, message)?;
        }
        Ok(())
    }

    /// A message is drawn in its second, from its client's lane to its
    /// server's: all three must exist, or the diagram would drop it.
    fn validate_message(&self, index: usize, message: &Message) -> Result<(), String> {
        let at = format!("messages[{index}] ({:?})", message.command);
        if message.t >= self.seconds.len() as u64 {
            return Err(format!(
                "{at} is sent at t = {}, after the last second",
                message.t
            ));
        }
        if !self.clients.contains(&message.client) {
            return Err(format!(
                "{at} is sent by {:?}, who is not in \"clients\" {:?}",
                message.client, self.clients
            ));
        }
        match &message.to {
            Lane::Node(node) if !self.nodes.contains(node) => Err(format!(
                "{at} goes to {node:?}, which is neither \"redis\", \"storage\" nor in \"nodes\" {:?}",
                self.nodes
            )),
            _ => Ok(()),
        }
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
        for node in &self.nodes {
            if !second.nodes.contains_key(node) {
                return Err(format!("t = {t}: node {node:?} is missing"));
            }
        }
        if let Some(extra) = second.nodes.keys().find(|n| !self.nodes.contains(n)) {
            return Err(format!(
                "t = {t}: node {extra:?} is not in \"nodes\" {:?}",
                self.nodes
            ));
        }
        for (node, state) in &second.nodes {
            if let Some(holder) = &state.holder
                && holder != "?"
                && !self.clients.contains(holder)
            {
                return Err(format!(
                    "t = {t}: node {node:?} holds {holder:?}, who is not in \"clients\" {:?}",
                    self.clients
                ));
            }
        }
        if !self.nodes.is_empty() {
            let by_rule = self.holder_by_rule(second);
            if second.holder != by_rule {
                return Err(format!(
                    "t = {t}: \"holder\" is {:?}, but by the {} rule the nodes give {by_rule:?}",
                    second.holder,
                    self.key_rule().unwrap_or("majority")
                ));
            }
        }
        Ok(())
    }

    /// Whose the lock is in `second` by the story's rule, from its nodes
    /// alone: the holder of the primary, or the client whose token more than
    /// half of the nodes hold. The book's key row shows `holder`, and its
    /// legend states this rule, so the two must agree at every second.
    pub fn holder_by_rule(&self, second: &Second) -> Option<String> {
        let holders = || second.nodes.values().filter_map(|n| n.holder.as_deref());
        if self.key_rule() == Some("primary") {
            return second
                .nodes
                .values()
                .find(|n| n.role == Some(NodeRole::Primary))
                .and_then(|n| n.holder.clone());
        }
        holders()
            .find(|h| 2 * holders().filter(|o| o == h).count() > self.nodes.len())
            .map(str::to_owned)
    }
}
