//! The connection a Redlock under test gets to one node.
//!
//! A [`NodeWire`] forwards each command to its node unchanged and, around it, lets the
//! [`Cluster`] do what it must: fire a move due at this boundary, bring the node's keys to the
//! node's time, note the TTL the command set, charge the node's reply delay, and record the
//! command with its reply. A paused node gets nothing: the client's request times out after
//! [`super::cluster::NODE_TIMEOUT_MS`] of virtual time, the error a real client would see, without
//! the real wait. A killed node refuses the connection. Either way the call goes on: Redlock's
//! point is to carry on without the nodes that do not answer.
//!
//! As on the single node's wire, redis-rs's own `NOSCRIPT` and `SCRIPT LOAD` are neither counted
//! nor shown. Nodes are private servers the grader started, so unlike the single node's [`crate::Wire`] this
//! one confines nothing: no other data lives there.

use std::time::Instant;

use redis::{Connection, ConnectionLike, RedisError, RedisResult, Value};

use super::cluster::{Route, SharedCluster, enter};
use crate::wire::{COMMAND_BUDGET, OverBudget, show_arg, show_value, unpack};

/// A watched connection to node `index`.
pub struct NodeWire {
    /// Which wire this is, for the runner's link to it ([`crate::remote`]).
    id: u64,
    index: usize,
    cluster: SharedCluster,
    con: Option<(u64, Connection)>,
    sent: usize,
    /// A `NOSCRIPT` reply came: the `SCRIPT LOAD` that follows is redis-rs's.
    reloading: bool,
}

impl NodeWire {
    /// The wires to every node of `cluster`, in node order.
    pub fn all(cluster: &SharedCluster) -> Vec<NodeWire> {
        let n = enter(cluster).len();
        (0..n)
            .map(|index| NodeWire {
                id: crate::wire::next_id(),
                index,
                cluster: cluster.clone(),
                con: None,
                sent: 0,
                reloading: false,
            })
            .collect()
    }

    /// This wire's number, unique in the process.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Which node this wire reaches.
    pub fn index(&self) -> usize {
        self.index
    }

    fn connection(&mut self, url: &str, generation: u64) -> RedisResult<&mut Connection> {
        if self.con.as_ref().is_none_or(|(g, _)| *g != generation) {
            let con = crate::server::connect_url(url).map_err(|cause| {
                RedisError::from(std::io::Error::new(
                    std::io::ErrorKind::ConnectionRefused,
                    cause,
                ))
            })?;
            self.con = Some((generation, con));
        }
        match self.con.as_mut() {
            Some((_, con)) => Ok(con),
            None => Err(unreachable_node("no connection")),
        }
    }

    fn send(
        &mut self,
        label: &[u8],
        forward: impl FnOnce(&mut Connection) -> (RedisResult<Value>, Option<crate::clock::RanAt>),
    ) -> RedisResult<Value> {
        self.sent += 1;
        if self.sent > COMMAND_BUDGET {
            std::panic::panic_any(OverBudget);
        }
        let i = self.index;
        let route = enter(&self.cluster).before_command(i);
        let command = {
            let c = enter(&self.cluster);
            unpack(label)
                .iter()
                .map(|a| show_arg(&c.display(&String::from_utf8_lossy(a))))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let (reply, sent) = match route {
            Route::Paused => (
                Err(timed_out(i)),
                None::<(Instant, Option<crate::clock::RanAt>)>,
            ),
            Route::Down => {
                self.con = None;
                (Err(unreachable_node(&format!("node {i} is down"))), None)
            }
            Route::Send { url, generation } => {
                let sent = Instant::now();
                let (reply, ran_at) = match self.connection(&url, generation) {
                    Ok(con) => forward(con),
                    Err(e) => (Err(e), None),
                };
                if reply.is_err() {
                    self.con = None;
                }
                (reply, Some((sent, ran_at)))
            }
        };
        let shown = match &reply {
            // The node's wall clock: real time, which differs on every run and is not the
            // scenario's time.
            Ok(_)
                if unpack(label)
                    .first()
                    .is_some_and(|a| a.eq_ignore_ascii_case(b"TIME")) =>
            {
                "(the node's wall clock, in real time)".to_owned()
            }
            Ok(value) => show_value(value),
            Err(_) if sent.is_none() => match enter(&self.cluster).health(i) {
                super::Health::Paused => format!(
                    "no reply within {} ms (node {i} is paused)",
                    super::cluster::NODE_TIMEOUT_MS
                ),
                _ => format!("connection refused (node {i} is down)"),
            },
            Err(e) => format!("(error) {e}"),
        };
        // Like the single node's wire, the script (re)load redis-rs does by itself is neither
        // counted nor shown, so a record reads the same whether the node knew the script or not.
        let args = unpack(label);
        let is = |name: &str, n: usize| {
            args.get(n)
                .is_some_and(|a| a.eq_ignore_ascii_case(name.as_bytes()))
        };
        let hidden = if matches!(&reply, Ok(Value::ServerError(e)) if e.code() == "NOSCRIPT") {
            self.reloading = true;
            true
        } else {
            std::mem::take(&mut self.reloading) && is("SCRIPT", 0) && is("LOAD", 1)
        };
        enter(&self.cluster).after_command(i, command, shown, sent, hidden);
        reply
    }
}

impl Drop for NodeWire {
    /// The runner's link to this wire, if any, goes with it.
    fn drop(&mut self) {
        crate::remote::forget(self.id);
    }
}

fn timed_out(i: usize) -> RedisError {
    RedisError::from(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!("node {i} did not answer in time"),
    ))
}

fn unreachable_node(why: &str) -> RedisError {
    RedisError::from(std::io::Error::new(
        std::io::ErrorKind::ConnectionRefused,
        why.to_owned(),
    ))
}

impl ConnectionLike for NodeWire {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        self.send(cmd, |con| crate::clock::sent_timed(con, cmd))
    }

    /// A pipeline is one step, shown by its first command.
    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        let value = self.send(cmd, |con| {
            // The TIME a single command goes behind would upset a transaction's replies; a
            // pipeline's TTLs are read at the look.
            let replies = con.req_packed_commands(cmd, offset, count);
            (replies.map(Value::Array), None)
        })?;
        match value {
            Value::Array(values) => Ok(values),
            other => Ok(vec![other]),
        }
    }

    fn get_db(&self) -> i64 {
        0
    }

    fn check_connection(&mut self) -> bool {
        true
    }

    fn is_open(&self) -> bool {
        true
    }
}
