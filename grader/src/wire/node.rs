//! The wire's place on a Redlock node: one client's connection to node `i`
//! of a [`Cluster`].
//!
//! Around each command the cluster does what it must: fire a move due at this
//! boundary, bring the node's keys to the node's time, note the TTL the
//! command set, charge the node's reply delay, and record the command with
//! its reply, in the cluster's one record of the call across all nodes. A
//! paused node gets nothing: the client's request times out after
//! [`NODE_TIMEOUT_MS`] of virtual time, the error a real client would see,
//! without the real wait. A killed node refuses the connection. Either way
//! the call goes on: Redlock's point is to carry on without the nodes that do
//! not answer, and the record keeps which did not ([`Answer`]).
//!
//! [`NODE_TIMEOUT_MS`]: crate::nodes::cluster::NODE_TIMEOUT_MS
//!
//! A fault the cluster armed ([`crate::nodes::Cluster::fail_at`]) hits the next command to
//! any node, the way it hits a world's ([`super::fault`]); the connection it
//! cuts opens again for the next command.
//!
//! Nodes are private servers the grader started, so unlike a world's
//! connection this one confines nothing: no other data lives there.

use std::time::Instant;

use redis::{Connection, ConnectionLike, RedisError, RedisResult, Value};

use super::show::{show_value, unpack};
use super::tally::Tally;
use crate::clock::{Sighting, TimedFrame};
use crate::nodes::cluster::{Route, SharedCluster, enter};
use crate::nodes::record::Answer;

/// A client's connection to one node of a cluster.
pub(super) struct OnNode {
    pub(super) index: usize,
    cluster: SharedCluster,
    /// The connection, and the generation of the node it reaches: a node
    /// restarted since needs a new one.
    con: Option<(u64, Connection)>,
    /// The frame around each command that reads back the lock key's expiry
    /// on the node's clock, packed once.
    frame: TimedFrame,
}

impl OnNode {
    /// A client of node `index` of `cluster`, not connected yet.
    pub(super) fn new(cluster: &SharedCluster, index: usize) -> OnNode {
        let frame = TimedFrame::new(&[enter(cluster).key().to_owned()]);
        OnNode {
            index,
            cluster: cluster.clone(),
            con: None,
            frame,
        }
    }

    /// The live connection in `slot` to the node at `url`, as of `generation`:
    /// a node restarted since gets a new one.
    fn connection<'c>(
        slot: &'c mut Option<(u64, Connection)>,
        url: &str,
        generation: u64,
    ) -> RedisResult<&'c mut Connection> {
        if slot.as_ref().is_none_or(|(g, _)| *g != generation) {
            let con = crate::server::connect_url(url).map_err(|cause| {
                RedisError::from(std::io::Error::new(
                    std::io::ErrorKind::ConnectionRefused,
                    cause,
                ))
            })?;
            *slot = Some((generation, con));
        }
        match slot.as_mut() {
            Some((_, con)) => Ok(con),
            None => Err(unreachable_node("no connection")),
        }
    }

    /// One command (or a pipeline, shown by `label`) to the node, through the
    /// cluster: `forward` sends it on a live connection, with the keys the
    /// clock times.
    fn send(
        &mut self,
        tally: &mut Tally,
        label: &[u8],
        forward: impl FnOnce(&mut Connection, &TimedFrame) -> (RedisResult<Value>, Sighting),
    ) -> RedisResult<Value> {
        tally.check_budget();
        let i = self.index;
        let route = enter(&self.cluster).before_command(i);
        let args = unpack(label);
        let command = {
            let c = enter(&self.cluster);
            super::shown(&args, |a| c.display(a))
        };
        let paused = matches!(route, Route::Paused);
        let name = super::fault::command_name(&args);
        let stopped = enter(&self.cluster).faults().before_send(&name, Some(i));
        if let Some(stopped) = stopped {
            self.con = None;
            tally.count();
            let answer = Answer::Reply(stopped.shown);
            enter(&self.cluster).after_command(i, command, answer, None, false);
            return Err(stopped.error);
        }
        let (reply, sent) = match route {
            Route::Paused => (Err(timed_out(i)), None),
            Route::Down => {
                self.con = None;
                (Err(unreachable_node(&format!("node {i} is down"))), None)
            }
            Route::Send { url, generation } => {
                let sent = Instant::now();
                let (reply, mut sighting) = match Self::connection(&mut self.con, &url, generation)
                {
                    Ok(con) => forward(con, &self.frame),
                    Err(e) => (Err(e), Sighting::default()),
                };
                sighting.asked = crate::clock::asked_in([args.as_slice()]);
                if reply.is_err() {
                    self.con = None;
                }
                (reply, Some((sent, sighting)))
            }
        };
        let answer = match &reply {
            // The node's wall clock: real time, which differs on every run and is not the
            // scenario's time.
            Ok(_)
                if args
                    .first()
                    .is_some_and(|a| a.eq_ignore_ascii_case(b"TIME")) =>
            {
                Answer::Reply("(the node's wall clock, in real time)".to_owned())
            }
            Ok(value) => Answer::Reply(show_value(value)),
            Err(_) if sent.is_none() && paused => Answer::TimedOut,
            Err(_) if sent.is_none() => Answer::Refused,
            Err(e) => Answer::Reply(format!("(error) {e}")),
        };
        let hidden = tally.hides(&args, &reply);
        if !hidden {
            tally.count();
        }
        // A reply that came back may still be lost on the way.
        let taken = match (&reply, &answer, hidden) {
            (Ok(_), Answer::Reply(shown), false) => {
                enter(&self.cluster)
                    .faults()
                    .after_reply(&name, Some(i), shown)
            }
            _ => None,
        };
        let (reply, answer) = match taken {
            Some(stopped) => {
                self.con = None;
                (Err(stopped.error), Answer::Reply(stopped.shown))
            }
            None => (reply, answer),
        };
        enter(&self.cluster).after_command(i, command, answer, sent, hidden);
        reply
    }

    /// One command of the lock's code, to the node.
    pub(super) fn one(&mut self, tally: &mut Tally, cmd: &[u8]) -> RedisResult<Value> {
        self.send(tally, cmd, |con, frame| frame.send(con, cmd))
    }

    /// A pipeline is one step, shown by its first command.
    pub(super) fn pipeline(
        &mut self,
        tally: &mut Tally,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        let value = self.send(tally, cmd, |con, _| {
            // The TIME a single command goes behind would upset a transaction's replies; a
            // pipeline's TTLs are read at the look.
            let replies = con.req_packed_commands(cmd, offset, count);
            (replies.map(Value::Array), Sighting::default())
        })?;
        match value {
            Value::Array(values) => Ok(values),
            other => Ok(vec![other]),
        }
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
