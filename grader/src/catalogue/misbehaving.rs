//! Code that does not return properly: each must be reported for its own
//! check, within the time limit, while the other checks go on.

use std::time::Duration;

use redis::{ConnectionLike, RedisResult};

use crate::lock::Lock;
use crate::reference::LOCK as REFERENCE;

/// An `acquire` that panics (`unwrap()` on a missing reply).
pub const PANICS: Lock = Lock {
    name: "acquire that panics",
    acquire: panics,
    ..REFERENCE
};
/// An `acquire` that never returns and sends nothing.
pub const SPINS: Lock = Lock {
    name: "acquire that spins",
    acquire: spins,
    ..REFERENCE
};
/// An `acquire` that retries for ever, hammering Redis.
pub const HAMMERS: Lock = Lock {
    name: "acquire that retries for ever",
    acquire: hammers,
    ..REFERENCE
};
/// An `acquire` whose command Redis refuses.
pub const ERRS: Lock = Lock {
    name: "acquire with a typo",
    acquire: errs,
    ..REFERENCE
};

fn panics<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    _ttl: Duration,
) -> RedisResult<bool> {
    let reply: Option<String> = redis::cmd("SET")
        .arg(key)
        .arg(token)
        .arg("NX")
        .arg("PX")
        .arg(0)
        .query(con)
        .ok();
    let reply = reply.unwrap();
    Ok(!reply.is_empty())
}

#[allow(clippy::empty_loop)]
fn spins<C: ConnectionLike>(
    _con: &mut C,
    _key: &str,
    _token: &str,
    _ttl: Duration,
) -> RedisResult<bool> {
    loop {
        std::hint::spin_loop();
    }
}

fn hammers<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    _token: &str,
    _ttl: Duration,
) -> RedisResult<bool> {
    loop {
        // Waits for a lock that a holder keeps: "not yet, try again".
        let _: Option<String> = redis::cmd("GET").arg(key).query(con)?;
        let _: Option<String> = redis::cmd("SET").arg(key).arg("someone-else").query(con)?;
    }
}

fn errs<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let reply: Option<String> = redis::cmd("SET")
        .arg(key)
        .arg(token)
        .arg("NX")
        .arg("PXX")
        .arg(ttl.as_millis() as u64)
        .query(con)?;
    Ok(reply.is_some())
}
