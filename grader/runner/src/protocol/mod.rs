//! What the judge and the runner say to each other, and how it is written.
//!
//! Both sides already speak RESP, Redis's own protocol, through redis-rs, so
//! every message is written as a RESP array of bulk strings and read back with
//! redis-rs's parser: no second encoding, and nothing but `redis` to compile.
//!
//! Three kinds of traffic:
//!
//! - on the control link, the runner's first ([`CONTROL`]), the judge's orders: [`Order::Open`] (connect
//!   a new link to the judge's socket and name it), [`Order::Close`] and
//!   [`Order::Call`] (call one learner function with these links and arguments);
//! - on a link, from the runner: a Redis command (`ONE`) or a pipeline (`PIPE`)
//!   the learner's code sent, `CLOCK` (Redlock's clock, which the judge answers on
//!   its virtual time), `EXTEND key token ttl_ms` (a keeper's renewal, which the
//!   judge runs with the `extend` its check chose), `END` (this node link is
//!   done for the call) and, on the call's home link, the [`Answer`];
//! - on a link, from the judge: the reply to each command, as Redis's value or as
//!   a [`Fault`], the error the connection itself gave.
//!
//! Nothing the runner sends is a verdict: an answer is what the learner's function
//! returned, which the judge holds against the model and against what it sees in
//! Redis itself. A runner that lies only gives wrong answers.

use std::io::{self, Read, Write};

use redis::{Parser, RedisError, Value};

mod call;
mod fault;
mod reply;

pub use call::{Answer, Call, Order};
pub use fault::Fault;
pub use reply::{encode_value, read_reply, write_reply};

/// The name of the runner's first link, which carries the judge's orders.
pub const CONTROL: &str = "control";
/// The message a new link sends first: `HELLO name`.
pub const HELLO: &str = "HELLO";
/// The environment variable that holds the judge's socket, in a runner the judge started.
pub const SOCKET_VAR: &str = "LOCK_RUNNER_SOCKET";
/// The description redis-rs shows for a command the judge refused.
pub const REFUSED: &str = "refused by the grader";

/// A message that does not follow the protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unreadable(pub &'static str);

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a message outside the runner's protocol: {}", self.0)
    }
}

/// Writes one message: a RESP array of bulk strings.
pub fn write_message<W: Write>(to: &mut W, parts: &[Vec<u8>]) -> io::Result<()> {
    let mut out = Vec::new();
    out.extend_from_slice(format!("*{}\r\n", parts.len()).as_bytes());
    for part in parts {
        out.extend_from_slice(format!("${}\r\n", part.len()).as_bytes());
        out.extend_from_slice(part);
        out.extend_from_slice(b"\r\n");
    }
    to.write_all(&out)?;
    to.flush()
}

/// Reads one message: `None` at the end of the stream.
pub fn read_message<R: Read>(parser: &mut Parser, from: R) -> io::Result<Option<Vec<Vec<u8>>>> {
    match parser.parse_value(from) {
        Ok(Value::Array(items)) => items
            .into_iter()
            .map(|item| match item {
                Value::BulkString(bytes) => Ok(bytes),
                Value::SimpleString(s) => Ok(s.into_bytes()),
                Value::Int(n) => Ok(n.to_string().into_bytes()),
                _ => Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "not a bulk string",
                )),
            })
            .collect::<io::Result<Vec<_>>>()
            .map(Some),
        Ok(_) => Err(io::Error::new(io::ErrorKind::InvalidData, "not an array")),
        Err(e) if ended(&e) => Ok(None),
        Err(e) => Err(io::Error::new(io::ErrorKind::InvalidData, e.to_string())),
    }
}

/// Whether a parse error is the stream's end.
fn ended(e: &RedisError) -> bool {
    fault::io_error(e).is_some_and(|io| io.kind() == io::ErrorKind::UnexpectedEof)
        || e.to_string().contains("end of file")
        || e.to_string().contains("unexpected end")
}
