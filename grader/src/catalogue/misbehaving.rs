//! Code that does not return properly: each must be reported for its own
//! check, within the time limit, while the other checks go on. And, in a
//! section of their own, hostile locks that reach beyond their keys.

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

// ------------------------------------------------------------ hostile locks
//
// Code that reaches beyond the keys its check hands over: each sends one
// command that would spoil other people's data or the server itself, ignores
// the reply, and then takes the lock as the reference does, so that only the
// refusal can fail it. Each must leave every foreign key intact and fail its
// check with the refused command named.

/// The foreign key that [`SCRIPT_OUTSIDE_KEYS`] goes after, under the course
/// prefix so that a test can create it even as a user limited to that prefix.
pub fn foreign_target() -> String {
    format!("{}someone-elses-data", crate::prefix::course())
}

/// The hostile `acquire`s, each with the command it sends first.
pub const HOSTILE: &[(&str, Lock)] = &[
    ("FLUSHALL", FLUSHALL),
    ("FLUSHDB", FLUSHDB),
    ("KEYS", KEYS_THEN_DEL),
    ("CONFIG SET", CONFIG_SET),
    ("SHUTDOWN", SHUTDOWN),
    ("CLIENT KILL", CLIENT_KILL),
    ("EVAL", SCRIPT_OUTSIDE_KEYS),
    ("SCRIPT FLUSH", SCRIPT_FLUSH),
];

/// An `acquire` that empties every database first.
pub const FLUSHALL: Lock = hostile("acquire that sends FLUSHALL", flushall);
/// An `acquire` that empties the current database first.
pub const FLUSHDB: Lock = hostile("acquire that sends FLUSHDB", flushdb);
/// An `acquire` that lists every key and deletes the ones it did not get.
pub const KEYS_THEN_DEL: Lock = hostile("acquire that sends KEYS * and DEL", keys_then_del);
/// An `acquire` that changes the server's configuration.
pub const CONFIG_SET: Lock = hostile("acquire that sends CONFIG SET", config_set);
/// An `acquire` that stops the server.
pub const SHUTDOWN: Lock = hostile("acquire that sends SHUTDOWN", shutdown);
/// An `acquire` that disconnects every other client.
pub const CLIENT_KILL: Lock = hostile("acquire that sends CLIENT KILL", client_kill);
/// An `acquire` whose Lua script deletes a key it does not declare in KEYS.
pub const SCRIPT_OUTSIDE_KEYS: Lock = hostile(
    "acquire whose script deletes a foreign key",
    script_outside_keys,
);
/// An `acquire` that empties the server's script cache.
pub const SCRIPT_FLUSH: Lock = hostile("acquire that sends SCRIPT FLUSH", script_flush);

const fn hostile(name: &'static str, acquire: crate::lock::AcquireFn) -> Lock {
    Lock {
        name,
        acquire,
        ..REFERENCE
    }
}

/// Sends `first`, ignores what comes back, then acquires as the reference does.
fn after<C: ConnectionLike>(
    con: &mut C,
    first: redis::Cmd,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let _ = first.exec(con);
    crate::reference::acquire::acquire(con, key, token, ttl)
}

fn flushall<C: ConnectionLike>(c: &mut C, k: &str, t: &str, ttl: Duration) -> RedisResult<bool> {
    after(c, redis::cmd("FLUSHALL"), k, t, ttl)
}

fn flushdb<C: ConnectionLike>(c: &mut C, k: &str, t: &str, ttl: Duration) -> RedisResult<bool> {
    after(c, redis::cmd("FLUSHDB"), k, t, ttl)
}

fn keys_then_del<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let all: Vec<String> = redis::cmd("KEYS").arg("*").query(con).unwrap_or_default();
    let others: Vec<&String> = all.iter().filter(|k| *k != key).collect();
    if !others.is_empty() {
        let _ = redis::cmd("DEL").arg(others).exec(con);
    }
    crate::reference::acquire::acquire(con, key, token, ttl)
}

fn config_set<C: ConnectionLike>(c: &mut C, k: &str, t: &str, ttl: Duration) -> RedisResult<bool> {
    let mut set = redis::cmd("CONFIG");
    set.arg("SET").arg("maxmemory-policy").arg("allkeys-random");
    after(c, set, k, t, ttl)
}

fn shutdown<C: ConnectionLike>(c: &mut C, k: &str, t: &str, ttl: Duration) -> RedisResult<bool> {
    let mut stop = redis::cmd("SHUTDOWN");
    stop.arg("NOSAVE");
    after(c, stop, k, t, ttl)
}

fn client_kill<C: ConnectionLike>(c: &mut C, k: &str, t: &str, ttl: Duration) -> RedisResult<bool> {
    let mut kill = redis::cmd("CLIENT");
    kill.arg("KILL")
        .arg("TYPE")
        .arg("normal")
        .arg("SKIPME")
        .arg("yes");
    after(c, kill, k, t, ttl)
}

fn script_outside_keys<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    // Declares the lock key only, then deletes a key by a name passed as ARGV.
    let reply: Option<String> = redis::cmd("EVAL")
        .arg(
            "redis.call('DEL', ARGV[3])\n\
             return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])",
        )
        .arg(1)
        .arg(key)
        .arg(token)
        .arg(ttl.as_millis() as u64)
        .arg(foreign_target())
        .query(con)
        .ok()
        .flatten();
    match reply {
        Some(_) => Ok(true),
        // The script was refused before its SET: take the lock plainly.
        None => crate::reference::acquire::acquire(con, key, token, ttl),
    }
}

fn script_flush<C: ConnectionLike>(
    c: &mut C,
    k: &str,
    t: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let mut flush = redis::cmd("SCRIPT");
    flush.arg("FLUSH");
    after(c, flush, k, t, ttl)
}
