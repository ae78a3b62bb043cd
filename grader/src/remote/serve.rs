//! The judge's proxy for one call: the learner's commands, through a wire.
//!
//! While a learner function runs in the runner, every command it sends comes
//! to the judge on one of the call's links. The judge hands it to the wire the
//! check gave that connection ([`crate::Wire`], to the one server or
//! to a Redlock node), exactly as the function's
//! own code once called the wire in-process: the wire records it, keeps it to
//! the check's keys, lets the virtual clock see it, steps in before it when an
//! intervention is due, and sends it on to Redis. The reply, or the wire's
//! error, goes back on the link. So everything the grader knew how to do
//! between two commands, it still does, one process away.

use std::time::Duration;

use lock_runner::protocol::{self, Answer};
use redis::{ConnectionLike, RedisError, RedisResult, Value};

use super::process::Link;
use crate::lock::ExtendFn;
use crate::wire::Wire;

/// What a link's serving came to.
pub(super) enum Served {
    /// The function's answer (on a home link).
    Answer(Answer),
    /// The node link is done for this call.
    Ended,
    /// The link closed: the runner is gone, or dropped the link.
    Closed,
    /// The runner sent something outside the protocol.
    Unreadable(String),
}

/// Serves `link` until the runner answers on it (`DONE`) or ends it (`END`).
///
/// `con` is the wire the learner's commands on this link go through (`None`
/// for a link that carries no Redis connection); `clock` answers `CLOCK`;
/// `extend` answers a keeper's `EXTEND`, run on `con`.
pub(super) fn serve(
    link: &mut Link,
    mut con: Option<&mut Wire>,
    clock: Option<&dyn Fn() -> Duration>,
    extend: Option<ExtendFn>,
) -> Served {
    loop {
        let parts = match link.read() {
            Ok(Some(parts)) => parts,
            Ok(None) => return Served::Closed,
            Err(e) => return Served::Unreadable(e.to_string()),
        };
        let reply: RedisResult<Value> = match parts.first().map(Vec::as_slice) {
            Some(b"ONE") => match (con.as_deref_mut(), parts.get(1)) {
                (Some(con), Some(packed)) => con.req_packed_command(packed),
                (None, _) => Err(no_connection()),
                (_, None) => return Served::Unreadable("ONE without a command".into()),
            },
            Some(b"PIPE") => {
                let number = |i: usize| {
                    parts
                        .get(i)
                        .and_then(|p| std::str::from_utf8(p).ok())
                        .and_then(|p| p.parse::<usize>().ok())
                };
                match (con.as_deref_mut(), parts.get(1), number(2), number(3)) {
                    (Some(con), Some(packed), Some(offset), Some(count)) => con
                        .req_packed_commands(packed, offset, count)
                        .map(Value::Array),
                    (None, ..) => Err(no_connection()),
                    _ => {
                        return Served::Unreadable(
                            "PIPE without its command, offset and count".into(),
                        );
                    }
                }
            }
            Some(b"CLOCK") => match clock {
                Some(clock) => Ok(Value::Int(
                    i64::try_from(clock().as_nanos()).unwrap_or(i64::MAX),
                )),
                None => Err(RedisError::from(std::io::Error::other(
                    "this function has no clock to read",
                ))),
            },
            Some(b"EXTEND") => {
                let text = |i: usize| parts.get(i).and_then(|p| std::str::from_utf8(p).ok());
                let ttl = text(3).and_then(|t| t.parse::<u64>().ok());
                match (con.as_deref_mut(), extend, text(1), text(2), ttl) {
                    (Some(con), Some(extend), Some(key), Some(token), Some(ttl)) => {
                        extend(con, key, token, Duration::from_millis(ttl))
                            .map(|renewed| Value::Int(i64::from(renewed)))
                    }
                    (None, ..) => Err(no_connection()),
                    (_, None, ..) => Err(RedisError::from(std::io::Error::other(
                        "only a keeper is handed an extend to call",
                    ))),
                    _ => {
                        return Served::Unreadable(
                            "EXTEND without its key, token and TTL in ms".into(),
                        );
                    }
                }
            }
            Some(b"END") => return Served::Ended,
            Some(b"DONE") => {
                return match Answer::parse(&parts) {
                    Ok(answer) => Served::Answer(answer),
                    Err(e) => Served::Unreadable(e.to_string()),
                };
            }
            _ => return Served::Unreadable("a message of no known kind".into()),
        };
        if protocol::write_reply(&mut link.writer, &reply).is_err() {
            return Served::Closed;
        }
    }
}

fn no_connection() -> RedisError {
    RedisError::from(std::io::Error::other(
        "this function is handed no Redis connection, so it can send no command",
    ))
}
