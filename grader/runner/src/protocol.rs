//! What the judge and the runner say to each other, and how it is written.
//!
//! Both sides already speak RESP, Redis's own protocol, through redis-rs, so
//! every message is written as a RESP array of bulk strings and read back with
//! redis-rs's parser: no second encoding, and nothing but `redis` to compile.
//!
//! Three kinds of traffic:
//!
//! - on the runner's standard input, the judge's orders: [`Order::Open`] (connect
//!   a new link to the judge's socket and name it), [`Order::Close`] and
//!   [`Order::Call`] (call one learner function with these links and arguments);
//! - on a link, from the runner: a Redis command (`ONE`) or a pipeline (`PIPE`)
//!   the learner's code sent, `CLOCK` (Redlock's clock, which the judge answers on
//!   its virtual time), `END` (this node link is done for the call) and, on the
//!   call's home link, the [`Answer`];
//! - on a link, from the judge: the reply to each command, as Redis's value or as
//!   a [`Fault`], the error the connection itself gave.
//!
//! Nothing the runner sends is a verdict: an answer is what the learner's function
//! returned, which the judge holds against the model and against what it sees in
//! Redis itself. A runner that lies only gives wrong answers.

use std::io::{self, Read, Write};
use std::time::Duration;

use redis::{ErrorKind, Parser, RedisError, RedisResult, Value};

/// The message a new link sends first: `HELLO name`.
pub const HELLO: &str = "HELLO";
/// The environment variable that holds the judge's socket, in a runner the judge started.
pub const SOCKET_VAR: &str = "LOCK_RUNNER_SOCKET";
/// The description redis-rs shows for a command the judge refused.
pub const REFUSED: &str = "refused by the grader";

/// One learner function, with its arguments (the connections are links, named apart).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Call {
    /// `new_token()`.
    NewToken,
    /// `acquire(con, key, token, ttl)`.
    Acquire {
        key: String,
        token: String,
        ttl: Duration,
    },
    /// `release(con, key, token)`.
    Release { key: String, token: String },
    /// `acquire_fenced(con, key, fence_key, token, ttl)`.
    AcquireFenced {
        key: String,
        fence_key: String,
        token: String,
        ttl: Duration,
    },
    /// `fenced_write(con, row, fencing_token, value)`.
    FencedWrite {
        row: String,
        fencing_token: u64,
        value: i64,
    },
    /// `fenced_read(con, row, fencing_token)`.
    FencedRead { row: String, fencing_token: u64 },
    /// `extend(con, key, token, ttl)`.
    Extend {
        key: String,
        token: String,
        ttl: Duration,
    },
    /// `keep_alive(con, key, token, ttl, now, renewed_at, lost)`, with the two
    /// in-out arguments' values before the call.
    KeepAlive {
        key: String,
        token: String,
        ttl: Duration,
        now: Duration,
        renewed_at: Duration,
        lost: bool,
    },
    /// `redlock_acquire(nodes, clock, key, token, ttl)`.
    RedlockAcquire {
        key: String,
        token: String,
        ttl: Duration,
    },
    /// `redlock_release(nodes, key, token)`.
    RedlockRelease { key: String, token: String },
}

/// An order on the runner's standard input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Order {
    /// Connect a new link to the judge's socket and send `HELLO name` on it.
    Open { link: String },
    /// Close a link: the judge's connection it stood for is gone.
    Close { link: String },
    /// Call a function: its answer goes on `home`, its connections are `home`
    /// (for a function of one connection) or `nodes` (for Redlock).
    Call {
        home: String,
        nodes: Vec<String>,
        call: Call,
    },
}

/// What a learner function gave back (or that it panicked).
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// `new_token`'s token.
    Token(String),
    /// A function returning `RedisResult<bool>`.
    Bool(Result<bool, Fault>),
    /// `acquire_fenced`'s fencing token.
    Fence(Result<Option<u64>, Fault>),
    /// `fenced_read`'s value.
    Read(Result<Option<i64>, Fault>),
    /// `keep_alive`'s result, and its two in-out arguments after the call.
    Kept {
        result: Result<(), Fault>,
        renewed_at: Duration,
        lost: bool,
    },
    /// `redlock_acquire`'s validity.
    Validity(Option<Duration>),
    /// `redlock_release`'s count.
    Released(usize),
    /// The function panicked (a `todo!()` included).
    Panicked {
        message: String,
        location: Option<String>,
    },
}

/// An error as redis-rs gives it, in a form both sides can rebuild: the same
/// kind, the same text, so a report reads the same whichever side made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// An error reply of Redis's: its code, a space, its details.
    Server(String),
    /// A failure of the connection, with `std::io::ErrorKind`'s name.
    Io { kind: String, text: String },
    /// A command the judge refused before it went out.
    Refused { detail: String },
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

    fn parts(&self) -> Vec<Vec<u8>> {
        let (tag, a, b): (&str, &str, &str) = match self {
            Fault::Server(text) => ("server", text, ""),
            Fault::Io { kind, text } => ("io", kind, text),
            Fault::Refused { detail } => ("refused", detail, ""),
            Fault::Other(text) => ("other", text, ""),
        };
        vec![tag.into(), a.into(), b.into()]
    }

    fn from_parts(parts: &[Vec<u8>]) -> Result<Fault, Unreadable> {
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
fn io_error(e: &RedisError) -> Option<&io::Error> {
    type Shared = std::sync::Arc<dyn std::error::Error + Send + Sync>;
    let source = std::error::Error::source(e)?;
    source
        .downcast_ref::<Shared>()
        .and_then(|shared| shared.downcast_ref::<io::Error>())
        .or_else(|| source.downcast_ref::<io::Error>())
}

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
    io_error(e).is_some_and(|io| io.kind() == io::ErrorKind::UnexpectedEof)
        || e.to_string().contains("end of file")
        || e.to_string().contains("unexpected end")
}

/// Writes a reply to a command: Redis's value, or the connection's fault.
pub fn write_reply<W: Write>(to: &mut W, reply: &RedisResult<Value>) -> io::Result<()> {
    let mut out = Vec::new();
    out.extend_from_slice(b"*2\r\n");
    match reply {
        Ok(value) => {
            out.extend_from_slice(b":0\r\n");
            encode_value(&mut out, value);
        }
        Err(e) => {
            out.extend_from_slice(b":1\r\n");
            let parts = Fault::of(e).parts();
            encode_value(
                &mut out,
                &Value::Array(parts.into_iter().map(Value::BulkString).collect()),
            );
        }
    }
    to.write_all(&out)?;
    to.flush()
}

/// Reads a reply written by [`write_reply`].
pub fn read_reply<R: Read>(parser: &mut Parser, from: R) -> RedisResult<Value> {
    match parser.parse_value(from)? {
        Value::Array(mut items) if items.len() == 2 => {
            let body = items.pop().unwrap_or(Value::Nil);
            match items.pop() {
                Some(Value::Int(0)) => Ok(body),
                Some(Value::Int(1)) => {
                    let Value::Array(parts) = body else {
                        return Err(io::Error::other("a fault that is not an array").into());
                    };
                    let parts: Vec<Vec<u8>> = parts
                        .into_iter()
                        .map(|p| match p {
                            Value::BulkString(b) => b,
                            _ => Vec::new(),
                        })
                        .collect();
                    let fault =
                        Fault::from_parts(&parts).map_err(|e| io::Error::other(e.to_string()))?;
                    Err(fault.error())
                }
                _ => Err(io::Error::other("a reply that is neither a value nor a fault").into()),
            }
        }
        _ => Err(io::Error::other("a reply outside the runner's protocol").into()),
    }
}

/// Writes `value` as RESP (RESP3's own types where a value has one).
pub fn encode_value(out: &mut Vec<u8>, value: &Value) {
    let line = |out: &mut Vec<u8>, prefix: char, text: &str| {
        out.extend_from_slice(format!("{prefix}{text}\r\n").as_bytes());
    };
    let bulk = |out: &mut Vec<u8>, prefix: char, bytes: &[u8]| {
        out.extend_from_slice(format!("{prefix}{}\r\n", bytes.len()).as_bytes());
        out.extend_from_slice(bytes);
        out.extend_from_slice(b"\r\n");
    };
    match value {
        Value::Nil => out.extend_from_slice(b"$-1\r\n"),
        Value::Int(n) => line(out, ':', &n.to_string()),
        Value::BulkString(bytes) => bulk(out, '$', bytes),
        Value::SimpleString(s) => line(out, '+', s),
        Value::Okay => out.extend_from_slice(b"+OK\r\n"),
        Value::Array(items) | Value::Set(items) => {
            let prefix = if matches!(value, Value::Set(_)) {
                '~'
            } else {
                '*'
            };
            line(out, prefix, &items.len().to_string());
            for item in items {
                encode_value(out, item);
            }
        }
        Value::Map(pairs) => {
            line(out, '%', &pairs.len().to_string());
            for (k, v) in pairs {
                encode_value(out, k);
                encode_value(out, v);
            }
        }
        Value::Double(d) => line(out, ',', &d.to_string()),
        Value::Boolean(b) => line(out, '#', if *b { "t" } else { "f" }),
        Value::VerbatimString { text, .. } => bulk(out, '$', text.as_bytes()),
        Value::ServerError(e) => {
            let text = match e.details() {
                Some(details) => format!("{} {details}", e.code()),
                None => e.code().to_string(),
            };
            line(out, '-', &text);
        }
        Value::Attribute { data, .. } => encode_value(out, data),
        Value::Push { data, .. } => {
            line(out, '>', &data.len().to_string());
            for item in data {
                encode_value(out, item);
            }
        }
        // A number too large for an i64, as RESP3 writes it (redis-rs keeps its digits).
        #[allow(unreachable_patterns)]
        other => bulk(out, '$', format!("{other:?}").as_bytes()),
    }
}

/// A duration, as nanoseconds in decimal (an arbitrarily long one is cut at 584 years).
fn nanos(d: Duration) -> Vec<u8> {
    u64::try_from(d.as_nanos())
        .unwrap_or(u64::MAX)
        .to_string()
        .into_bytes()
}

/// A part as text.
fn text(part: &[u8]) -> String {
    String::from_utf8_lossy(part).into_owned()
}

/// Reads the parts of a message in order, naming what is missing.
struct Parts<'a> {
    parts: std::slice::Iter<'a, Vec<u8>>,
}

impl<'a> Parts<'a> {
    fn new(parts: &'a [Vec<u8>]) -> Self {
        Parts {
            parts: parts.iter(),
        }
    }

    fn next(&mut self) -> Result<&'a [u8], Unreadable> {
        self.parts
            .next()
            .map(Vec::as_slice)
            .ok_or(Unreadable("a message cut short"))
    }

    fn string(&mut self) -> Result<String, Unreadable> {
        self.next().map(text)
    }

    fn number<T: std::str::FromStr>(&mut self) -> Result<T, Unreadable> {
        text(self.next()?)
            .parse()
            .map_err(|_| Unreadable("a number that does not parse"))
    }

    fn duration(&mut self) -> Result<Duration, Unreadable> {
        self.number::<u64>().map(Duration::from_nanos)
    }

    fn flag(&mut self) -> Result<bool, Unreadable> {
        Ok(self.next()? == b"1")
    }
}

fn flag(b: bool) -> Vec<u8> {
    if b { b"1".to_vec() } else { b"0".to_vec() }
}

impl Order {
    /// The order as a message.
    pub fn parts(&self) -> Vec<Vec<u8>> {
        match self {
            Order::Open { link } => vec![b"OPEN".to_vec(), link.clone().into_bytes()],
            Order::Close { link } => vec![b"CLOSE".to_vec(), link.clone().into_bytes()],
            Order::Call { home, nodes, call } => {
                let mut parts = vec![
                    b"CALL".to_vec(),
                    home.clone().into_bytes(),
                    nodes.len().to_string().into_bytes(),
                ];
                parts.extend(nodes.iter().map(|n| n.clone().into_bytes()));
                parts.extend(call.parts());
                parts
            }
        }
    }

    /// The order a message stands for.
    pub fn parse(parts: &[Vec<u8>]) -> Result<Order, Unreadable> {
        let mut p = Parts::new(parts);
        match p.next()? {
            b"OPEN" => Ok(Order::Open { link: p.string()? }),
            b"CLOSE" => Ok(Order::Close { link: p.string()? }),
            b"CALL" => {
                let home = p.string()?;
                let n: usize = p.number()?;
                let nodes = (0..n.min(64))
                    .map(|_| p.string())
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Order::Call {
                    home,
                    nodes,
                    call: Call::parse(&mut p)?,
                })
            }
            _ => Err(Unreadable("an order that is neither OPEN, CLOSE nor CALL")),
        }
    }
}

impl Call {
    /// The function's name, as the exercises spell it.
    pub fn function(&self) -> &'static str {
        match self {
            Call::NewToken => "new_token",
            Call::Acquire { .. } => "acquire",
            Call::Release { .. } => "release",
            Call::AcquireFenced { .. } => "acquire_fenced",
            Call::FencedWrite { .. } => "fenced_write",
            Call::FencedRead { .. } => "fenced_read",
            Call::Extend { .. } => "extend",
            Call::KeepAlive { .. } => "keep_alive",
            Call::RedlockAcquire { .. } => "redlock_acquire",
            Call::RedlockRelease { .. } => "redlock_release",
        }
    }

    fn parts(&self) -> Vec<Vec<u8>> {
        let s = |v: &String| v.clone().into_bytes();
        let n = |v: &dyn ToString| v.to_string().into_bytes();
        let mut parts = vec![self.function().as_bytes().to_vec()];
        parts.extend(match self {
            Call::NewToken => vec![],
            Call::Acquire { key, token, ttl } | Call::Extend { key, token, ttl } => {
                vec![s(key), s(token), nanos(*ttl)]
            }
            Call::RedlockAcquire { key, token, ttl } => vec![s(key), s(token), nanos(*ttl)],
            Call::Release { key, token } | Call::RedlockRelease { key, token } => {
                vec![s(key), s(token)]
            }
            Call::AcquireFenced {
                key,
                fence_key,
                token,
                ttl,
            } => {
                vec![s(key), s(fence_key), s(token), nanos(*ttl)]
            }
            Call::FencedWrite {
                row,
                fencing_token,
                value,
            } => {
                vec![s(row), n(fencing_token), n(value)]
            }
            Call::FencedRead { row, fencing_token } => vec![s(row), n(fencing_token)],
            Call::KeepAlive {
                key,
                token,
                ttl,
                now,
                renewed_at,
                lost,
            } => vec![
                s(key),
                s(token),
                nanos(*ttl),
                nanos(*now),
                nanos(*renewed_at),
                flag(*lost),
            ],
        });
        parts
    }

    fn parse(p: &mut Parts<'_>) -> Result<Call, Unreadable> {
        Ok(match p.next()? {
            b"new_token" => Call::NewToken,
            b"acquire" => Call::Acquire {
                key: p.string()?,
                token: p.string()?,
                ttl: p.duration()?,
            },
            b"release" => Call::Release {
                key: p.string()?,
                token: p.string()?,
            },
            b"acquire_fenced" => Call::AcquireFenced {
                key: p.string()?,
                fence_key: p.string()?,
                token: p.string()?,
                ttl: p.duration()?,
            },
            b"fenced_write" => Call::FencedWrite {
                row: p.string()?,
                fencing_token: p.number()?,
                value: p.number()?,
            },
            b"fenced_read" => Call::FencedRead {
                row: p.string()?,
                fencing_token: p.number()?,
            },
            b"extend" => Call::Extend {
                key: p.string()?,
                token: p.string()?,
                ttl: p.duration()?,
            },
            b"keep_alive" => Call::KeepAlive {
                key: p.string()?,
                token: p.string()?,
                ttl: p.duration()?,
                now: p.duration()?,
                renewed_at: p.duration()?,
                lost: p.flag()?,
            },
            b"redlock_acquire" => Call::RedlockAcquire {
                key: p.string()?,
                token: p.string()?,
                ttl: p.duration()?,
            },
            b"redlock_release" => Call::RedlockRelease {
                key: p.string()?,
                token: p.string()?,
            },
            _ => return Err(Unreadable("a call of no function the exercises have")),
        })
    }
}

/// A result's parts: `ok VALUE…` or `err FAULT…`.
fn result_parts<T>(
    result: &Result<T, Fault>,
    value: impl FnOnce(&T) -> Vec<Vec<u8>>,
) -> Vec<Vec<u8>> {
    match result {
        Ok(v) => {
            let mut parts = vec![b"ok".to_vec()];
            parts.extend(value(v));
            parts
        }
        Err(fault) => {
            let mut parts = vec![b"err".to_vec()];
            parts.extend(fault.parts());
            parts
        }
    }
}

fn parse_result<T>(
    p: &mut Parts<'_>,
    value: impl FnOnce(&mut Parts<'_>) -> Result<T, Unreadable>,
) -> Result<Result<T, Fault>, Unreadable> {
    match p.next()? {
        b"ok" => Ok(Ok(value(p)?)),
        b"err" => {
            let parts = [p.next()?.to_vec(), p.next()?.to_vec(), p.next()?.to_vec()];
            Ok(Err(Fault::from_parts(&parts)?))
        }
        _ => Err(Unreadable("a result that is neither ok nor err")),
    }
}

/// An optional number: `nil` or its digits.
fn optional(v: Option<impl ToString>) -> Vec<u8> {
    v.map_or_else(|| b"nil".to_vec(), |v| v.to_string().into_bytes())
}

fn parse_optional<T: std::str::FromStr>(p: &mut Parts<'_>) -> Result<Option<T>, Unreadable> {
    match p.next()? {
        b"nil" => Ok(None),
        digits => text(digits)
            .parse()
            .map(Some)
            .map_err(|_| Unreadable("a number that does not parse")),
    }
}

impl Answer {
    /// The answer as a message: `DONE …`.
    pub fn parts(&self) -> Vec<Vec<u8>> {
        let mut parts = vec![b"DONE".to_vec()];
        parts.extend(match self {
            Answer::Token(token) => vec![b"token".to_vec(), token.clone().into_bytes()],
            Answer::Bool(r) => {
                let mut p = vec![b"bool".to_vec()];
                p.extend(result_parts(r, |b| vec![flag(*b)]));
                p
            }
            Answer::Fence(r) => {
                let mut p = vec![b"fence".to_vec()];
                p.extend(result_parts(r, |v| vec![optional(*v)]));
                p
            }
            Answer::Read(r) => {
                let mut p = vec![b"read".to_vec()];
                p.extend(result_parts(r, |v| vec![optional(*v)]));
                p
            }
            Answer::Kept {
                result,
                renewed_at,
                lost,
            } => {
                let mut p = vec![b"kept".to_vec(), nanos(*renewed_at), flag(*lost)];
                p.extend(result_parts(result, |()| vec![]));
                p
            }
            Answer::Validity(v) => vec![
                b"validity".to_vec(),
                optional(v.map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))),
            ],
            Answer::Released(n) => vec![b"released".to_vec(), n.to_string().into_bytes()],
            Answer::Panicked { message, location } => vec![
                b"panicked".to_vec(),
                message.clone().into_bytes(),
                location.clone().unwrap_or_default().into_bytes(),
            ],
        });
        parts
    }

    /// The answer a `DONE …` message stands for.
    pub fn parse(parts: &[Vec<u8>]) -> Result<Answer, Unreadable> {
        let mut p = Parts::new(parts);
        if p.next()? != b"DONE" {
            return Err(Unreadable("an answer that does not start with DONE"));
        }
        Ok(match p.next()? {
            b"token" => Answer::Token(p.string()?),
            b"bool" => Answer::Bool(parse_result(&mut p, |p| p.flag())?),
            b"fence" => Answer::Fence(parse_result(&mut p, parse_optional)?),
            b"read" => Answer::Read(parse_result(&mut p, parse_optional)?),
            b"kept" => {
                let renewed_at = p.duration()?;
                let lost = p.flag()?;
                Answer::Kept {
                    result: parse_result(&mut p, |_| Ok(()))?,
                    renewed_at,
                    lost,
                }
            }
            b"validity" => {
                Answer::Validity(parse_optional::<u64>(&mut p)?.map(Duration::from_nanos))
            }
            b"released" => Answer::Released(p.number()?),
            b"panicked" => {
                let message = p.string()?;
                let location = Some(p.string()?).filter(|l| !l.is_empty());
                Answer::Panicked { message, location }
            }
            _ => return Err(Unreadable("an answer of no known kind")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip_order(order: Order) {
        assert_eq!(Order::parse(&order.parts()), Ok(order));
    }

    #[test]
    fn orders_read_back_as_written() {
        round_trip_order(Order::Open { link: "l7".into() });
        round_trip_order(Order::Close { link: "l7".into() });
        round_trip_order(Order::Call {
            home: "l1".into(),
            nodes: vec!["n0".into(), "n1".into()],
            call: Call::KeepAlive {
                key: "k with spaces\r\n".into(),
                token: "t".into(),
                ttl: Duration::from_millis(30_001),
                now: Duration::from_nanos(1),
                renewed_at: Duration::ZERO,
                lost: true,
            },
        });
        round_trip_order(Order::Call {
            home: "h".into(),
            nodes: vec![],
            call: Call::FencedWrite {
                row: "r".into(),
                fencing_token: u64::MAX,
                value: i64::MIN,
            },
        });
    }

    #[test]
    fn answers_read_back_as_written() {
        let answers = [
            Answer::Token("abc".into()),
            Answer::Bool(Ok(true)),
            Answer::Bool(Err(Fault::Refused {
                detail: "FLUSHALL is not …".into(),
            })),
            Answer::Fence(Ok(None)),
            Answer::Fence(Ok(Some(34))),
            Answer::Read(Ok(Some(-2))),
            Answer::Kept {
                result: Err(Fault::Io {
                    kind: "TimedOut".into(),
                    text: "late".into(),
                }),
                renewed_at: Duration::from_secs(10),
                lost: true,
            },
            Answer::Validity(Some(Duration::from_millis(9_896))),
            Answer::Validity(None),
            Answer::Released(3),
            Answer::Panicked {
                message: "not yet implemented".into(),
                location: None,
            },
        ];
        for answer in answers {
            assert_eq!(Answer::parse(&answer.parts()), Ok(answer));
        }
    }

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

    #[test]
    fn replies_read_back_as_written() {
        let values = [
            Value::Nil,
            Value::Okay,
            Value::Int(-7),
            Value::BulkString(b"a\r\nb".to_vec()),
            Value::Array(vec![
                Value::Int(1),
                Value::Nil,
                Value::SimpleString("QUEUED".into()),
            ]),
        ];
        for value in values {
            let mut bytes = Vec::new();
            write_reply(&mut bytes, &Ok(value.clone())).expect("writes to a vector");
            let read = read_reply(&mut Parser::new(), bytes.as_slice()).expect("reads back");
            assert_eq!(read, value);
        }
        let mut bytes = Vec::new();
        let refused = RedisError::from((ErrorKind::Client, REFUSED, "why".to_string()));
        write_reply(&mut bytes, &Err(refused.clone())).expect("writes to a vector");
        let read = read_reply(&mut Parser::new(), bytes.as_slice());
        assert_eq!(read.map_err(|e| e.to_string()), Err(refused.to_string()));
    }
}
