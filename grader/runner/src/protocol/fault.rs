//! Errors that cross between the two programs, rebuilt as they were.
//!
//! A learner's function sees the errors its connection gives (a command the
//! judge refused, a node that timed out, Redis's own error replies), and the
//! judge reports the errors the function returns. Both must read the same on
//! either side of the pipe, so that a report is the same text whichever
//! process made the error: a [`Fault`] keeps an error's kind and words.

use std::io;

use redis::{ErrorKind, RedisError, Value};

use super::{REFUSED, Unreadable};

/// An error as redis-rs gives it, in a form both sides can rebuild: the same
/// kind, the same text, so a report reads the same whichever side made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// An error reply of Redis's: its code, a space, its details.
    Server(String),
    /// A failure of the connection, with `std::io::ErrorKind`'s name.
    Io {
        /// The `std::io::ErrorKind`, by name.
        kind: String,
        /// The error's text.
        text: String,
    },
    /// A command the judge refused before it went out.
    Refused {
        /// Why, as the judge said it.
        detail: String,
    },
    /// Anything else, by its text.
    Other(String),
}

/// The io kinds a connection's error can carry across, by name.
const IO_KINDS: &[(&str, io::ErrorKind)] = &[
    ("TimedOut", io::ErrorKind::TimedOut),
    ("ConnectionRefused", io::ErrorKind::ConnectionRefused),
    ("ConnectionAborted", io::ErrorKind::ConnectionAborted),
    ("ConnectionReset", io::ErrorKind::ConnectionReset),
    ("BrokenPipe", io::ErrorKind::BrokenPipe),
    ("UnexpectedEof", io::ErrorKind::UnexpectedEof),
    ("NotConnected", io::ErrorKind::NotConnected),
    ("Interrupted", io::ErrorKind::Interrupted),
    ("WouldBlock", io::ErrorKind::WouldBlock),
];

impl Fault {
    /// The fault that stands for `e`.
    pub fn of(e: &RedisError) -> Fault {
        if let Some(code) = e.code() {
            let detail = e.detail().unwrap_or_default();
            return Fault::Server(format!("{code} {detail}").trim_end().to_string());
        }
        if let Some(io) = io_error(e) {
            let kind = IO_KINDS
                .iter()
                .find(|(_, k)| *k == io.kind())
                .map_or("Other", |(name, _)| name);
            return Fault::Io {
                kind: kind.to_string(),
                text: io.to_string(),
            };
        }
        if e.kind() == ErrorKind::Client
            && e.to_string().starts_with(REFUSED)
            && let Some(detail) = e.detail()
        {
            return Fault::Refused {
                detail: detail.to_string(),
            };
        }
        Fault::Other(e.to_string())
    }

    /// The error this fault stands for.
    pub fn error(&self) -> RedisError {
        match self {
            Fault::Server(text) => {
                match redis::parse_redis_value(format!("-{text}\r\n").as_bytes()) {
                    Ok(Value::ServerError(e)) => RedisError::from(e),
                    _ => RedisError::from(io::Error::other(text.clone())),
                }
            }
            Fault::Io { kind, text } => {
                let kind = IO_KINDS
                    .iter()
                    .find(|(name, _)| name == kind)
                    .map_or(io::ErrorKind::Other, |(_, k)| *k);
                RedisError::from(io::Error::new(kind, text.clone()))
            }
            Fault::Refused { detail } => {
                RedisError::from((ErrorKind::Client, REFUSED, detail.clone()))
            }
            Fault::Other(text) => RedisError::from(io::Error::other(text.clone())),
        }
    }

    pub(super) fn parts(&self) -> Vec<Vec<u8>> {
        let (tag, a, b): (&str, &str, &str) = match self {
            Fault::Server(text) => ("server", text, ""),
            Fault::Io { kind, text } => ("io", kind, text),
            Fault::Refused { detail } => ("refused", detail, ""),
            Fault::Other(text) => ("other", text, ""),
        };
        vec![tag.into(), a.into(), b.into()]
    }

    pub(super) fn from_parts(parts: &[Vec<u8>]) -> Result<Fault, Unreadable> {
        let text = |i: usize| {
            parts
                .get(i)
                .map(|p| String::from_utf8_lossy(p).into_owned())
        };
        let (Some(tag), Some(a), Some(b)) = (text(0), text(1), text(2)) else {
            return Err(Unreadable("a fault of fewer than three parts"));
        };
        Ok(match tag.as_str() {
            "server" => Fault::Server(a),
            "io" => Fault::Io { kind: a, text: b },
            "refused" => Fault::Refused { detail: a },
            _ => Fault::Other(a),
        })
    }
}

/// The `std::io::Error` inside a redis-rs error, if it holds one (redis-rs keeps it
/// behind an `Arc`, which is what its `source()` shows).
pub(super) fn io_error(e: &RedisError) -> Option<&io::Error> {
    type Shared = std::sync::Arc<dyn std::error::Error + Send + Sync>;
    let source = std::error::Error::source(e)?;
    source
        .downcast_ref::<Shared>()
        .and_then(|shared| shared.downcast_ref::<io::Error>())
        .or_else(|| source.downcast_ref::<io::Error>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_rebuild_the_same_error() {
        let errors = [
            RedisError::from((
                ErrorKind::Client,
                REFUSED,
                "FLUSHALL is refused".to_string(),
            )),
            RedisError::from(io::Error::new(
                io::ErrorKind::TimedOut,
                "node 2 did not answer in time",
            )),
            RedisError::from(io::Error::other("grader problem, not yours: x")),
        ];
        for e in errors {
            let rebuilt = Fault::of(&e).error();
            assert_eq!(rebuilt.to_string(), e.to_string());
            assert_eq!(rebuilt.kind(), e.kind());
            assert_eq!(rebuilt.is_timeout(), e.is_timeout());
        }
        let Ok(Value::ServerError(server)) =
            redis::parse_redis_value(b"-EXECABORT Transaction discarded\r\n")
        else {
            panic!("a server error parses");
        };
        let e = RedisError::from(server);
        let rebuilt = Fault::of(&e).error();
        assert_eq!(rebuilt.to_string(), e.to_string());
        assert_eq!(rebuilt.kind(), e.kind());
    }
}
