//! What the calls under test did on a cluster: each command with its node and what came back,
//! and the grader's moves in between.
//!
//! One record serves two readers. A failure report reads it as [`Step`]s, lines of text, the
//! way it reads a single server's wire; the Redlock stories read the commands themselves, node
//! by node, for the book's message diagram, where a node that did not answer must be drawn as
//! silent rather than as a reply that says so. So the record keeps *whether* a node answered
//! beside the text, and the text of a silence is written here, once, for both.

use super::cluster::NODE_TIMEOUT_MS;
use crate::wire::Step;

/// What came back from a command to a node.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// The node's reply (or an error on a live connection), as `redis-cli` shows it.
    Reply(String),
    /// Nothing: the node is paused, and the request timed out.
    TimedOut,
    /// Nothing: the node is down, and the connection was refused.
    Refused,
}

impl Answer {
    /// Whether the node answered.
    pub fn answered(&self) -> bool {
        matches!(self, Answer::Reply(_))
    }

    /// What the client saw, in words that do not name the node: `OK`, or why nothing came.
    pub fn shown(&self) -> String {
        match self {
            Answer::Reply(reply) => reply.clone(),
            Answer::TimedOut => format!("no reply within {NODE_TIMEOUT_MS} ms: the node is paused"),
            Answer::Refused => "connection refused: the node is down".to_owned(),
        }
    }
}

/// One command of a call under test, to one node.
#[derive(Clone, Debug, PartialEq)]
pub struct Sent {
    /// The node, from 0.
    pub node: usize,
    /// The command, with the scenario's lock key shown as `lock`.
    pub command: String,
    /// What came back.
    pub answer: Answer,
}

/// One entry of the record.
#[derive(Clone, Debug)]
pub(super) enum Entry {
    /// A command sent.
    Sent(Sent),
    /// Something the grader made happen between two commands.
    Moved(String),
}

impl Entry {
    /// The entry as a report's line: `node 2: SET …` and its reply, the node counted from 0 as
    /// the checks' reports count it.
    pub(super) fn step(&self) -> Step {
        match self {
            Entry::Moved(what) => Step::Intervened(what.clone()),
            Entry::Sent(Sent {
                node,
                command,
                answer,
            }) => Step::Sent {
                command: format!("node {node}: {command}"),
                reply: match answer {
                    Answer::Reply(reply) => reply.clone(),
                    Answer::TimedOut => {
                        format!("no reply within {NODE_TIMEOUT_MS} ms (node {node} is paused)")
                    }
                    Answer::Refused => format!("connection refused (node {node} is down)"),
                },
            },
        }
    }
}
