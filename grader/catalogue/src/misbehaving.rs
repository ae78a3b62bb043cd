//! Code that does not return properly: each must be reported for its own
//! check, within the time limit, while the other checks go on. And, in a
//! section of their own, hostile locks that reach beyond their keys.
//!
//! The locks from [`EXITS`] on go further: they end, abort, stop or starve
//! the whole process, or print lines that look like the test harness's. No
//! grader in the same process can report them; the harness, which runs each
//! check in a process of its own, must fail the check and name the cause.
//! Only run them through the harness (the `grade-lock` binary does).

use std::time::Duration;

use redis::{ConnectionLike, RedisResult};

use grader::lock::Lock;
use grader::reference::LOCK as REFERENCE;

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
/// An `acquire` whose Lua script never ends: Redis runs it, and nothing else,
/// until someone stops it.
pub const SCRIPT_SPINS: Lock = Lock {
    name: "acquire whose script never ends",
    acquire: script_spins,
    ..REFERENCE
};
/// A `redlock_release` whose script on the first node never ends.
pub const REDLOCK_SCRIPT_SPINS: Lock = Lock {
    name: "redlock_release whose script never ends",
    redlock_release: redlock_script_spins,
    ..REFERENCE
};
/// An `acquire` whose command Redis refuses.
pub const ERRS: Lock = Lock {
    name: "acquire with a typo",
    acquire: errs,
    ..REFERENCE
};

/// An `acquire` that ends the process with status 0, as if all went well.
pub const EXITS: Lock = Lock {
    name: "acquire that exits the process",
    acquire: exits,
    ..REFERENCE
};
/// An `acquire` that aborts the process.
pub const ABORTS: Lock = Lock {
    name: "acquire that aborts",
    acquire: aborts,
    ..REFERENCE
};
/// An `acquire` that prints the test harness's result lines, then exits
/// with status 0, so that a reader counting lines would see a full pass.
pub const FAKES_RESULTS: Lock = Lock {
    name: "acquire that prints fake results",
    acquire: fakes_results,
    ..REFERENCE
};
/// An `acquire` that panics, and panics again while unwinding (in a `Drop`),
/// which aborts the process.
pub const PANICS_WHILE_UNWINDING: Lock = Lock {
    name: "acquire that panics while unwinding",
    acquire: panics_while_unwinding,
    ..REFERENCE
};
/// An `acquire` that allocates without bound. The blocks are zeroed pages
/// that are never touched, so they cost address space, not memory.
pub const HOGS_MEMORY: Lock = Lock {
    name: "acquire that allocates without bound",
    acquire: hogs_memory,
    ..REFERENCE
};
/// An `acquire` that stops its own process (as Ctrl-Z does) for good.
pub const STOPS: Lock = Lock {
    name: "acquire that stops its process",
    acquire: stops,
    ..REFERENCE
};

/// The same misbehaving `acquire`s, by the names `grade-lock` knows them by,
/// at the runner's connection type: played in a runner of their own, they
/// end, abort, stop or starve the runner, not the check.
pub const IN_A_RUNNER: &[(&str, lock_runner::Lock)] = &[
    ("exits", in_a_runner(exits)),
    ("aborts", in_a_runner(aborts)),
    ("fakes-results", in_a_runner(fakes_results)),
    (
        "panics-while-unwinding",
        in_a_runner(panics_while_unwinding),
    ),
    ("hogs-memory", in_a_runner(hogs_memory)),
    ("stops", in_a_runner(stops)),
    ("panics", in_a_runner(panics)),
    ("spins", in_a_runner(spins)),
    ("script-spins", in_a_runner(script_spins)),
    ("hammers", in_a_runner(hammers)),
    ("errs", in_a_runner(errs)),
];

/// The reference lock for a runner, with `acquire` replaced.
const fn in_a_runner(
    acquire: fn(&mut lock_runner::Connection, &str, &str, Duration) -> RedisResult<bool>,
) -> lock_runner::Lock {
    lock_runner::Lock {
        acquire,
        ..grader::reference::RUNNER_LOCK
    }
}

/// The fake lines [`FAKES_RESULTS`] prints.
pub const FAKE_RESULT_LINES: &[&str] = &[
    "test acquire::takes_a_free_lock ... ok",
    "test result: ok. 34 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.50s",
];

fn exits<C: ConnectionLike>(_: &mut C, _: &str, _: &str, _: Duration) -> RedisResult<bool> {
    std::process::exit(0)
}

fn aborts<C: ConnectionLike>(_: &mut C, _: &str, _: &str, _: Duration) -> RedisResult<bool> {
    std::process::abort()
}

fn fakes_results<C: ConnectionLike>(_: &mut C, _: &str, _: &str, _: Duration) -> RedisResult<bool> {
    for line in FAKE_RESULT_LINES {
        println!("{line}");
        // A carriage return would bring it to the start of a terminal's line.
        eprintln!("\r{line}");
    }
    std::process::exit(0)
}

/// Panics when dropped: during the unwinding of another panic, that aborts.
struct PanicsOnDrop;

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        panic!("a second panic, in a Drop, while the first one unwinds");
    }
}

fn panics_while_unwinding<C: ConnectionLike>(
    _: &mut C,
    _: &str,
    _: &str,
    _: Duration,
) -> RedisResult<bool> {
    let _guard = PanicsOnDrop;
    panic!("the first panic");
}

fn hogs_memory<C: ConnectionLike>(_: &mut C, _: &str, _: &str, _: Duration) -> RedisResult<bool> {
    let mut hoard: Vec<Vec<u8>> = Vec::new();
    loop {
        hoard.push(vec![0u8; 64 << 20]);
        std::hint::black_box(&hoard);
    }
}

fn stops<C: ConnectionLike>(_: &mut C, _: &str, _: &str, _: Duration) -> RedisResult<bool> {
    grader::sys::stop_this_process();
    Ok(true)
}

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

/// A learner's loop in Lua that waits for a key which never comes, as it would
/// be written by mistake.
fn script_spins<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    _token: &str,
    _ttl: Duration,
) -> RedisResult<bool> {
    redis::cmd("EVAL")
        .arg("while redis.call('EXISTS', KEYS[1] .. ':never') == 0 do end return 1")
        .arg(1)
        .arg(key)
        .query(con)
}

/// The same loop, on the first of Redlock's nodes.
fn redlock_script_spins(nodes: &mut [grader::Wire], key: &str, token: &str) -> usize {
    usize::from(script_spins(&mut nodes[0], key, token, Duration::ZERO).unwrap_or(false))
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
    format!("{}someone-elses-data", grader::prefix::course())
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

const fn hostile(name: &'static str, acquire: grader::lock::AcquireFn) -> Lock {
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
    grader::reference::acquire::acquire(con, key, token, ttl)
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
    grader::reference::acquire::acquire(con, key, token, ttl)
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
        None => grader::reference::acquire::acquire(con, key, token, ttl),
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
