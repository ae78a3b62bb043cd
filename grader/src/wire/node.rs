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
//! Nodes are private servers the grader started, so no other data lives
//! there and keys keep their names. But they run outside any sandbox, with
//! the network and the whole server at hand: the wire sends on only the
//! commands of [`crate::confine::COMMANDS`], read whole ([`super::request`]),
//! refusing the others as a world's wire does, and signs its connection in as
//! a user of the node that may run nothing else, from a script either
//! ([`crate::acl::confine_own`]).

use std::sync::Arc;
use std::time::Instant;

use redis::{Connection, ConnectionLike, ErrorKind, RedisError, RedisResult, Value};

use super::show::{pack, show_value, unpack};
use super::tally::Tally;
use crate::call::Step;
use crate::clock::{Sighting, TimedFrame};
use crate::confine::{self, Ledger, Namespace, Refusal};
use crate::nodes::cluster::{Route, SharedCluster, enter};
use crate::nodes::record::Answer;

/// What the record shows for a command the wire did not send on.
const REFUSED: &str = "(refused by the grader)";

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
    /// Where refusals go: the ledger of the check that opened the wire.
    ledger: Option<Arc<Ledger>>,
}

impl OnNode {
    /// The URL of the node this wire reaches, as it is now.
    pub(super) fn url(&self) -> String {
        crate::nodes::cluster::enter(&self.cluster).url(self.index)
    }

    /// A client of node `index` of `cluster`, not connected yet.
    pub(super) fn new(cluster: &SharedCluster, index: usize) -> OnNode {
        let frame = TimedFrame::new(&[enter(cluster).key().to_owned()]);
        OnNode {
            index,
            cluster: cluster.clone(),
            con: None,
            frame,
            ledger: confine::current_ledger(),
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
            let mut con = crate::server::connect_url(url).map_err(|cause| {
                RedisError::from(std::io::Error::new(
                    std::io::ErrorKind::ConnectionRefused,
                    cause,
                ))
            })?;
            // A node restarted comes back without its users: each connection makes its own.
            crate::acl::confine_own(&mut con, "").map_err(|e| {
                RedisError::from(std::io::Error::other(format!(
                    "grader problem, not yours: {e}"
                )))
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
        let admitted = super::request::one(cmd).and_then(|args| admit(&args));
        let packed = match admitted {
            Ok(args) => pack(&args),
            Err(refusal) => return Err(self.refuse(tally, cmd, refusal)),
        };
        let reply = self.send(tally, &packed, |con, frame| frame.send(con, &packed));
        self.note_denied(&packed, &reply);
        reply
    }

    /// A pipeline is one step, shown by its first command.
    pub(super) fn pipeline(
        &mut self,
        tally: &mut Tally,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        let admitted: Result<Vec<Vec<Vec<u8>>>, Refusal> =
            super::request::pipeline(cmd, offset, count)
                .and_then(|commands| commands.iter().map(|args| admit(args)).collect());
        let packed: Vec<u8> = match admitted {
            Ok(commands) => commands.iter().flat_map(|args| pack(args)).collect(),
            Err(refusal) => return Err(self.refuse(tally, cmd, refusal)),
        };
        let value = self.send(tally, &packed, |con, _| {
            // The TIME a single command goes behind would upset a transaction's replies; a
            // pipeline's TTLs are read at the look.
            let replies = con.req_packed_commands(&packed, offset, count);
            (replies.map(Value::Array), Sighting::default())
        });
        self.note_denied(&packed, &value);
        match value? {
            Value::Array(values) => Ok(values),
            other => Ok(vec![other]),
        }
    }

    /// Refuses the request `packed` without sending it: the record shows it,
    /// the check's ledger notes why, and the lock's code gets an error reply.
    fn refuse(&mut self, tally: &mut Tally, packed: &[u8], refusal: Refusal) -> RedisError {
        let args = unpack(packed);
        let command = {
            let c = enter(&self.cluster);
            super::shown(&args, |a| c.display(a))
        };
        tally.count();
        enter(&self.cluster).after_command(
            self.index,
            command.clone(),
            Answer::Reply(REFUSED.to_owned()),
            None,
            false,
        );
        let why = refusal.why.clone();
        self.note(refusal, command, REFUSED.to_owned());
        RedisError::from((ErrorKind::Client, lock_runner::protocol::REFUSED, why))
    }

    /// Notes in the check's ledger a command the node's access control refused
    /// (a script that called a command no lock needs).
    fn note_denied(&self, packed: &[u8], reply: &RedisResult<Value>) {
        let Some(denial) = confine::refused_by_redis(reply) else {
            return;
        };
        let args = unpack(packed);
        let refusal = Refusal {
            command: confine::name_of(&args),
            why: format!(
                "it reached beyond what a lock needs on a Redlock node (a command off the \
                 list, in a script or not), and the node refused it: {denial}"
            ),
        };
        let command = super::shown(&args, |a| enter(&self.cluster).display(a));
        self.note(refusal, command, denial);
    }

    fn note(&self, refusal: Refusal, command: String, reply: String) {
        if let Some(ledger) = &self.ledger {
            ledger.note(refusal, vec![Step::Sent { command, reply }]);
        }
    }
}

/// A command of the lock's code as the node gets it, or why it may not: the
/// world's list of commands, on keys of any name (a node holds nothing else).
fn admit(args: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, Refusal> {
    confine::admit(args, &Namespace::new("", "")).map(|admitted| admitted.args)
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
