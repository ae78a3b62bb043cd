//! Connecting to a Redis server and checking that the grader can use it.
//!
//! A server is usable when it speaks the Redis protocol, is Redis 7.0 or newer, and runs
//! `PEXPIRETIME`, which every check uses to read a key's expiry. [`probe`] finds this out with as
//! few permissions as possible, so that it also passes for an ACL user limited to the course's keys
//! (`~dlcourse:*`). The commands it needs:
//!
//! - `HELLO` (no arguments) for the version. Redis lets every connection run it, whatever its ACL
//!   user may do; on a server too old to know it (before 6.0), `INFO server` is asked instead, and
//!   a user allowed neither leaves the version unknown, which the next step makes harmless.
//! - `PEXPIRETIME dlcourse:server-probe`, a read of a key that does not exist: it proves that the
//!   command exists (Redis 7.0+, not renamed away by `rename-command`) and that the user may run it
//!   on the course's keys.
//! - On connecting, redis-rs also sends `CLIENT SETINFO`, whose refusal it ignores.
//!
//! When something goes wrong, [`explain`] turns redis-rs's error into a sentence with a remedy:
//! a server that does not answer in time may be paused or overloaded; one that answers something
//! other than Redis is probably another service on that port; one that wants a password needs it
//! in the URL.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use redis::{ErrorKind, RedisError, Value};

/// Bound on establishing a connection in [`RedisServer::connect`](super::RedisServer::connect),
/// including redis-rs's own set-up commands.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How many times a connection is tried again when a stop of this process interrupted its set-up.
const INTERRUPTED_ATTEMPTS: usize = 8;

/// The oldest Redis the grader accepts, as (major, minor): `PEXPIRETIME` came in 7.0.
pub(super) const MIN_VERSION: (u32, u32) = (7, 0);

/// The key [`probe`] reads the expiry of: it never exists, and it is under the course's prefix, so
/// a user limited to that prefix may read it.
/// The key the probe reads, under the course prefix (`GRADER_KEY_PREFIX`, default `dlcourse:`),
/// so that a user limited to that prefix may read it.
fn probe_key() -> String {
    format!("{}server-probe", crate::prefix::course())
}

/// How long the look at what answers on a port that is not Redis may take.
const SNIFF_TIMEOUT: Duration = Duration::from_secs(1);

/// Opens a connection to `url` within [`CONNECT_TIMEOUT`], or says why it cannot.
pub(super) fn connect_to(url: &str) -> Result<redis::Connection, String> {
    let client = redis::Client::open(url).map_err(|e| {
        format!(
            "the URL is not valid ({e}): write it as redis://HOST:PORT, with a password \
             redis://:PASSWORD@HOST:PORT or redis://USER:PASSWORD@HOST:PORT"
        )
    })?;
    let mut interrupted = 0;
    let connection = loop {
        let started = Instant::now();
        match client.get_connection_with_timeout(CONNECT_TIMEOUT) {
            Ok(connection) => break connection,
            // A fresh connection is safe to try again: nothing of the check has gone over it.
            Err(e) if crate::stall::is_interrupted(&e) && interrupted < INTERRUPTED_ATTEMPTS => {
                interrupted += 1;
            }
            // redis-rs's set-up reads one reply per command it sent, each within the bound.
            Err(e) if e.is_timeout() => return Err(not_answering(started.elapsed(), &e)),
            Err(e) => return Err(explain_at(url, &e)),
        }
    };
    // Once set up, reads and writes have no time-out of their own. On Linux a blocking socket
    // call that has one ends with EINTR whenever its process is stopped and continued
    // (signal(7)), and a grading process can be stopped at any moment: Ctrl-Z, a frozen cgroup,
    // a throttled runner. Without one the kernel resumes the call where it was, and whether the
    // stop mattered is for the virtual clock to judge ([`crate::clock`]). A server that stops
    // answering in the middle of a check is caught by the time limit on the check's process.
    connection
        .set_read_timeout(None)
        .and_then(|()| connection.set_write_timeout(None))
        .map_err(|e| format!("cannot clear the set-up's time-outs: {e}"))?;
    Ok(connection)
}

/// Why [`probe`] rejected a server.
pub(super) enum ProbeError {
    /// It answers, with this version, which is older than [`MIN_VERSION`].
    TooOld(String),
    /// It refuses a command the grader needs.
    Refused {
        /// The command.
        command: &'static str,
        /// What the grader uses it for.
        why: &'static str,
        /// The server's reply.
        reply: String,
        /// What to change.
        remedy: String,
    },
    /// It does not answer as Redis should, for this reason.
    Unusable(String),
}

/// Checks that `url` is a Redis the grader can use, and returns its version ("unknown" when the
/// user may ask for it neither by `HELLO` nor by `INFO`). See the module documentation.
pub(super) fn probe(url: &str) -> Result<String, ProbeError> {
    let mut connection = connect_to(url).map_err(ProbeError::Unusable)?;
    let version = read_version(url, &mut connection)?;
    if let Some(version) = &version
        && !version_at_least(version, MIN_VERSION)
    {
        return Err(ProbeError::TooOld(version.clone()));
    }
    let expires: Result<i64, RedisError> = redis::cmd("PEXPIRETIME")
        .arg(probe_key())
        .query(&mut connection);
    match expires {
        Ok(_) => Ok(version.unwrap_or_else(|| "unknown".to_owned())),
        // A server still loading its data refuses everything for a moment: not a verdict.
        Err(e) if is_refusal(&e) && e.code() != Some("LOADING") => Err(refused_pexpiretime(&e)),
        Err(e) => Err(ProbeError::Unusable(format!(
            "PEXPIRETIME failed: {}",
            explain_at(url, &e)
        ))),
    }
}

/// The version from `HELLO`, else from `INFO server`; `None` when the user may run neither.
fn read_version(
    url: &str,
    connection: &mut redis::Connection,
) -> Result<Option<String>, ProbeError> {
    let unusable = |what: &str, e: &RedisError| {
        ProbeError::Unusable(format!("{what} failed: {}", explain_at(url, e)))
    };
    let hello_error = match redis::cmd("HELLO").query::<Value>(connection) {
        Ok(reply) => match field(&reply, "version") {
            Some(version) => return Ok(Some(version)),
            None => {
                return Err(ProbeError::Unusable(format!(
                    "HELLO answered without a version: {reply:?}"
                )));
            }
        },
        // A refusal (an older server, an unusual proxy) leaves INFO to try; anything else, such
        // as a time-out or a reply that is not Redis, would only repeat itself.
        Err(e) if is_refusal(&e) && !needs_password(&e) => e,
        Err(e) => return Err(unusable("HELLO", &e)),
    };
    match redis::cmd("INFO").arg("server").query::<String>(connection) {
        Ok(info) => info
            .lines()
            .find_map(|line| line.strip_prefix("redis_version:"))
            .map(|v| Some(v.trim().to_owned()))
            .ok_or_else(|| ProbeError::Unusable("INFO server reports no redis_version".to_owned())),
        Err(e) if e.code() == Some("NOPERM") => Ok(None),
        Err(e) if is_refusal(&e) => Err(ProbeError::Unusable(format!(
            "it refuses both HELLO ({}) and INFO ({})",
            explain(&hello_error),
            explain(&e)
        ))),
        Err(e) => Err(unusable("INFO server", &e)),
    }
}

/// The value after `name` in a `HELLO` reply (a map in RESP3, a flat list of pairs in RESP2).
fn field(reply: &Value, name: &str) -> Option<String> {
    let text = |value: &Value| match value {
        Value::BulkString(bytes) => Some(String::from_utf8_lossy(bytes).into_owned()),
        Value::SimpleString(s) => Some(s.clone()),
        _ => None,
    };
    match reply {
        Value::Map(pairs) => pairs
            .iter()
            .find(|(key, _)| text(key).as_deref() == Some(name))
            .and_then(|(_, value)| text(value)),
        Value::Array(items) => items
            .chunks(2)
            .find(|pair| text(&pair[0]).as_deref() == Some(name))
            .and_then(|pair| pair.get(1).and_then(text)),
        _ => None,
    }
}

fn refused_pexpiretime(e: &RedisError) -> ProbeError {
    let remedy = if e.code() == Some("NOPERM") {
        "The server's ACL user may not run it on the course's keys: grant it with \
         `ACL SETUSER USER +pexpiretime ~dlcourse:*`, or use another user"
            .to_owned()
    } else {
        "The server's configuration renames or removes it (a `rename-command PEXPIRETIME` line): \
         remove that line and restart the server, or use another server"
            .to_owned()
    };
    ProbeError::Refused {
        command: "PEXPIRETIME",
        why: "every check reads a key's expiry time with it",
        reply: e.to_string(),
        remedy,
    }
}

/// Whether Redis answered with an error reply (the connection itself is fine).
fn is_refusal(e: &RedisError) -> bool {
    matches!(e.kind(), ErrorKind::Server(_) | ErrorKind::Extension)
}

fn needs_password(e: &RedisError) -> bool {
    e.kind() == ErrorKind::AuthenticationFailed || matches!(e.code(), Some("NOAUTH" | "WRONGPASS"))
}

/// redis-rs's error, as a sentence that says what probably happened and what to do.
///
/// The grader's own messages use it wherever a Redis error reaches a person.
pub fn explain(e: &RedisError) -> String {
    if e.code() == Some("BUSY") {
        format!(
            "Redis was busy running a script that did not end, the lock's own (in this check or \
             in another graded beside it), until the grader stopped it ({e})"
        )
    } else if e.is_timeout() {
        not_answering(CONNECT_TIMEOUT, e)
    } else if needs_password(e) {
        format!(
            "the server wants a password, or refused the one given ({e}): put it in the URL as \
             redis://:PASSWORD@HOST:PORT, or as redis://USER:PASSWORD@HOST:PORT for an ACL user"
        )
    } else if e.kind() == ErrorKind::Parse {
        // redis-rs's own text lists the unexpected bytes, one per line: no help to a person.
        "what answers there does not speak the Redis protocol: check the port; another service \
         may be listening on it"
            .to_owned()
    } else if e.is_connection_refusal() {
        format!("nothing listens there ({e}): check the host and port, and that the server runs")
    } else {
        e.to_string()
    }
}

fn not_answering(waited: Duration, e: &RedisError) -> String {
    format!(
        "the server did not answer within {} s: it may be paused (stopped with Ctrl-Z or \
         SIGSTOP, or held in a debugger) or overloaded; check that it runs and answers \
         `redis-cli ping` ({e})",
        waited.as_secs_f64().round()
    )
}

/// Like [`explain`], and for a reply that is not Redis, shows what answered.
fn explain_at(url: &str, e: &RedisError) -> String {
    let explained = explain(e);
    match (e.kind() == ErrorKind::Parse).then(|| sniff(url)).flatten() {
        Some(answer) => format!("{explained}; it answered {answer:?}"),
        None => explained,
    }
}

/// The first line that the service at `url`'s host and port sends back to a `PING`, if any.
fn sniff(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = &rest[..rest.find('/').unwrap_or(rest.len())];
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
    let address = host_port.to_socket_addrs().ok()?.next()?;
    let mut stream = TcpStream::connect_timeout(&address, SNIFF_TIMEOUT).ok()?;
    stream.set_read_timeout(Some(SNIFF_TIMEOUT)).ok()?;
    stream.write_all(b"*1\r\n$4\r\nPING\r\n").ok()?;
    let mut buffer = [0u8; 80];
    let read = stream.read(&mut buffer).ok().filter(|n| *n > 0)?;
    let text = String::from_utf8_lossy(&buffer[..read]);
    Some(text.lines().next().unwrap_or_default().to_owned())
}

pub(super) fn version_at_least(version: &str, (major, minor): (u32, u32)) -> bool {
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let found = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    found >= (major, minor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_numerically() {
        assert!(version_at_least("7.0.15", (7, 0)));
        assert!(version_at_least("10.0.0", (7, 0)));
        assert!(!version_at_least("6.2.14", (7, 0)));
    }

    #[test]
    fn hello_replies_give_their_version() {
        let bulk = |s: &str| Value::BulkString(s.as_bytes().to_vec());
        let resp2 = Value::Array(vec![
            bulk("server"),
            bulk("redis"),
            bulk("version"),
            bulk("7.0.15"),
        ]);
        assert_eq!(field(&resp2, "version").as_deref(), Some("7.0.15"));
        let resp3 = Value::Map(vec![(bulk("version"), bulk("7.4.1"))]);
        assert_eq!(field(&resp3, "version").as_deref(), Some("7.4.1"));
        assert_eq!(field(&Value::Nil, "version"), None);
    }
}
