//! The judge's orders, and the runner's answers, word by word.

use std::time::Duration;

use super::{Fault, Unreadable};

/// One learner function, with its arguments (the connections are links, named apart).
///
/// Each field is the argument of the same name in the signature the variant's
/// doc gives, as the exercise's stub documents it.
#[allow(missing_docs)]
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
    Open {
        /// The link's name.
        link: String,
    },
    /// Close a link: the judge's connection it stood for is gone.
    Close {
        /// The link's name.
        link: String,
    },
    /// Call a function: its answer goes on `home`, its connections are `home`
    /// (for a function of one connection) or `nodes` (for Redlock).
    Call {
        /// The link the answer goes on, and the connection of a function of one.
        home: String,
        /// The links standing for Redlock's nodes, in order.
        nodes: Vec<String>,
        /// The function and its arguments.
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
        /// What `keep_alive` returned.
        result: Result<(), Fault>,
        /// `renewed_at` after the call.
        renewed_at: Duration,
        /// `lost` after the call.
        lost: bool,
    },
    /// `redlock_acquire`'s validity.
    Validity(Option<Duration>),
    /// `redlock_release`'s count.
    Released(usize),
    /// The function panicked (a `todo!()` included).
    Panicked {
        /// The panic's message.
        message: String,
        /// Where it panicked (`file:line`), when the hook saw it.
        location: Option<String>,
    },
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
}
