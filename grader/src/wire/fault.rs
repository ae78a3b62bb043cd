//! The grader's failures: making the lock's next command go wrong.
//!
//! A lock meets more than races: Redis answers a command with an error, the
//! connection drops before a command reaches Redis, or it drops after the
//! command ran, so that its reply is lost, or the reply comes too late and the
//! client gives up waiting. The last two are the hard ones: the command ran,
//! and the client cannot know it. Code that turns such an error into an answer
//! (`unwrap_or(true)`, `.ok()`, `unwrap_or_default()`) claims a release, a
//! renewal or a grant it cannot know; the checks make every command of a call
//! meet each [`Fault`] in turn to see what the function returns then.
//!
//! A fault is armed by an intervention ([`super::Fired::Fault`]) and hits the
//! next command the record shows: redis-rs's own reload of a missing script
//! (see [`super::tally`]) is let through first, so that the same command meets
//! the fault whether Redis had the script cached or not. Each variant's effect
//! is written here once: whether the command runs, what the lock's code gets,
//! what the record shows, what a report says the grader did. On the single
//! server a fault that cuts the connection leaves it cut for the rest of the
//! call: every later command fails too, without going out. A Redlock's node
//! connection opens again for the next command, as it does after a node came
//! back ([`Faults::reconnecting`]); there the fault is the cluster's, and hits
//! the next command to whichever node.

use std::io;

use redis::{RedisError, Value};

/// A failure the grader makes the lock's next command meet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fault {
    /// Redis answers with an error reply; the command does not run.
    ErrorReply,
    /// The connection drops before the command reaches Redis; it does not run.
    Dropped,
    /// The command runs, and the connection drops before its reply arrives.
    LostReply,
    /// The command runs, and its reply comes too late: the client times out.
    TimedOut,
}

/// What a fault did to a call: which fault, on which command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    /// The fault.
    pub fault: Fault,
    /// The command it hit, by name (`EVALSHA`, `SET`).
    pub command: String,
    /// The Redlock node the command went to, if it went to one.
    pub node: Option<usize>,
}

impl Fault {
    /// Every fault, the ones that stop the command first.
    pub const ALL: [Fault; 4] = [
        Fault::ErrorReply,
        Fault::Dropped,
        Fault::LostReply,
        Fault::TimedOut,
    ];

    /// Whether the command runs in Redis despite the fault.
    pub fn runs(self) -> bool {
        matches!(self, Fault::LostReply | Fault::TimedOut)
    }

    /// Whether the fault cuts the connection, so that nothing more goes out in this call.
    pub fn cuts(self) -> bool {
        !matches!(self, Fault::ErrorReply)
    }

    /// The error the lock's code gets instead of the reply.
    pub fn error(self) -> RedisError {
        match self {
            Fault::ErrorReply => server_error(ERROR_REPLY),
            // The client cannot tell a cut before the command from one after it.
            Fault::Dropped | Fault::LostReply => RedisError::from(io::Error::new(
                io::ErrorKind::ConnectionReset,
                "the connection to Redis was reset before a reply came",
            )),
            Fault::TimedOut => RedisError::from(io::Error::new(
                io::ErrorKind::TimedOut,
                "no reply from Redis in time",
            )),
        }
    }

    /// The reply column of the record, for a command that got `real` from
    /// Redis (`None`: it did not go out).
    pub fn shown(self, real: Option<&str>) -> String {
        let real = real.unwrap_or("?");
        match self {
            Fault::ErrorReply => format!("(error) {ERROR_REPLY}"),
            Fault::Dropped => "(connection dropped before it reached Redis: it did not run)".into(),
            Fault::LostReply => format!("{real}, but the reply was lost: it ran"),
            Fault::TimedOut => {
                format!("{real}, but the reply came too late: it ran, and the client timed out")
            }
        }
    }

    /// What the grader did, as a report says it: "the reply to EVALSHA was
    /// lost after it ran".
    pub fn did(self, command: &str) -> String {
        match self {
            Fault::ErrorReply => {
                format!("Redis answered {command} with an error (it did not run)")
            }
            Fault::Dropped => {
                format!("the connection dropped before {command} reached Redis (it did not run)")
            }
            Fault::LostReply => format!("the reply to {command} was lost after it ran"),
            Fault::TimedOut => {
                format!("the reply to {command} came too late (it ran, and the client timed out)")
            }
        }
    }
}

impl Hit {
    /// What the grader did, as a report says it ([`Fault::did`]).
    pub fn did(&self) -> String {
        match self.node {
            Some(i) => self.fault.did(&format!("{} on node {i}", self.command)),
            None => self.fault.did(&self.command),
        }
    }
}

/// The error reply the grader gives, code first as Redis writes it.
const ERROR_REPLY: &str = "ERR the grader failed this command on purpose: it did not run";

/// What a command that went out after a cut connection gets, and the record shows.
const CUT: &str = "the connection to Redis is gone: it was cut earlier in this call";

/// A wire's (or a cluster's) fault for the current call: armed, then what it hit.
#[derive(Default)]
pub struct Faults {
    armed: Option<Fault>,
    hit: Option<Hit>,
    /// The connection opens again after a cut ([`Faults::reconnecting`]).
    reconnects: bool,
}

/// What became of a command that met the fault.
pub(crate) struct Stopped {
    /// What the lock's code gets.
    pub(crate) error: RedisError,
    /// What the record shows as its reply.
    pub(crate) shown: String,
}

impl Faults {
    /// The faults of connections that open again for the next command after
    /// a cut: a Redlock's, to its nodes.
    pub fn reconnecting() -> Faults {
        Faults {
            reconnects: true,
            ..Faults::default()
        }
    }

    /// Arms `fault` for the next command.
    pub fn arm(&mut self, fault: Fault) {
        self.armed = Some(fault);
    }

    /// What the fault hit, if anything; the fault is forgotten, armed or not, so that the next
    /// call starts without one.
    pub(crate) fn take(&mut self) -> Option<Hit> {
        self.armed = None;
        self.hit.take()
    }

    /// Forgets the last call's fault (at the start of a call).
    pub(super) fn reset(&mut self) {
        *self = Faults {
            reconnects: self.reconnects,
            ..Faults::default()
        };
    }

    /// What the fault hit in this call, if it hit anything.
    pub fn hit(&self) -> Option<&Hit> {
        self.hit.as_ref()
    }

    /// Whether a fault cut the connection in this call, for good.
    pub(super) fn cut(&self) -> bool {
        !self.reconnects && self.hit.as_ref().is_some_and(|h| h.fault.cuts())
    }

    /// Before the command `name` goes out (to `node`, if a Redlock node): what
    /// it gets instead when it must not go out (a fault that stops it, or a
    /// connection cut earlier).
    pub(crate) fn before_send(&mut self, name: &str, node: Option<usize>) -> Option<Stopped> {
        if self.cut() {
            return Some(Stopped {
                error: RedisError::from(io::Error::new(io::ErrorKind::NotConnected, CUT)),
                shown: format!("(not sent: {CUT})"),
            });
        }
        let fault = self.armed.filter(|f| !f.runs())?;
        self.armed = None;
        self.hit = Some(Hit {
            fault,
            command: name.to_owned(),
            node,
        });
        Some(Stopped {
            error: fault.error(),
            shown: fault.shown(None),
        })
    }

    /// After the command `name` ran (on `node`, if a Redlock node) and the
    /// record showed its reply `real`: the error the lock's code gets instead,
    /// and the record's new reply, when the armed fault takes the reply.
    pub(crate) fn after_reply(
        &mut self,
        name: &str,
        node: Option<usize>,
        real: &str,
    ) -> Option<Stopped> {
        let fault = self.armed.filter(|f| f.runs())?;
        self.armed = None;
        self.hit = Some(Hit {
            fault,
            command: name.to_owned(),
            node,
        });
        Some(Stopped {
            error: fault.error(),
            shown: fault.shown(Some(real)),
        })
    }
}

/// How a report names the command `args`: `EVALSHA`, `SCRIPT LOAD`.
pub(super) fn command_name(args: &[Vec<u8>]) -> String {
    crate::confine::name_of(args).replace('|', " ")
}

/// How a report names a pipeline of `commands`: `the pipeline MULTI, SET, EXEC`.
pub(super) fn pipeline_name(commands: &[Vec<Vec<u8>>]) -> String {
    let names: Vec<String> = commands.iter().map(|c| command_name(c)).collect();
    format!("the pipeline {}", names.join(", "))
}

/// An error reply of Redis's, `text` being its code and message.
fn server_error(text: &str) -> RedisError {
    match redis::parse_redis_value(format!("-{text}\r\n").as_bytes()) {
        Ok(Value::ServerError(e)) => RedisError::from(e),
        _ => RedisError::from(io::Error::other(text.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_that_stops_the_command_hits_before_it_goes_out_and_cuts_what_follows() {
        let mut faults = Faults::default();
        faults.arm(Fault::Dropped);
        assert!(
            faults.after_reply("GET", None, "nil").is_none(),
            "not one that runs"
        );
        let stopped = faults.before_send("EVALSHA", None).expect("stopped");
        assert!(stopped.error.is_io_error(), "{}", stopped.error);
        assert_eq!(
            faults.hit().map(Hit::did).as_deref(),
            Some("the connection dropped before EVALSHA reached Redis (it did not run)")
        );
        let next = faults
            .before_send("GET", None)
            .expect("the connection stays cut");
        assert!(next.shown.starts_with("(not sent"), "{}", next.shown);
    }

    #[test]
    fn a_fault_that_lets_the_command_run_takes_its_reply() {
        let mut faults = Faults::default();
        faults.arm(Fault::TimedOut);
        assert!(faults.before_send("EVALSHA", None).is_none());
        let stopped = faults
            .after_reply("EVALSHA", None, "(integer) 1")
            .expect("taken");
        assert!(stopped.error.is_timeout());
        assert!(
            stopped.shown.starts_with("(integer) 1, but"),
            "{}",
            stopped.shown
        );
        assert!(faults.before_send("GET", None).is_some(), "cut");
    }

    #[test]
    fn a_reconnecting_connection_is_cut_for_one_command_only() {
        let mut faults = Faults::reconnecting();
        faults.arm(Fault::Dropped);
        assert!(faults.before_send("SET", None).is_some());
        assert!(faults.before_send("SET", None).is_none(), "open again");
    }

    #[test]
    fn an_error_reply_is_redis_s_and_leaves_the_connection_up() {
        let mut faults = Faults::default();
        faults.arm(Fault::ErrorReply);
        let stopped = faults.before_send("SET", None).expect("stopped");
        assert_eq!(stopped.error.code(), Some("ERR"));
        assert!(
            faults.before_send("SET", None).is_none(),
            "one command only"
        );
    }
}
