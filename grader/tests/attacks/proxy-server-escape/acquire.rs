//! Attack: the failover stories' primary and replica as a way out (see
//! `redlock.rs`, which does the same on Redlock's nodes).
//!
//! In `scenarios::failover_lost_lock` the learner's `acquire` talks to a
//! primary with a replica, two servers the grader starts for this student
//! alone. Its first call sends the `MIGRATE` script, `CONFIG GET` and
//! `FLUSHALL` there. On the single server that every other check uses, the
//! grader signs the connection in as a user held to its keys and commands,
//! so the same script is refused; a sound grader does the same here.

#[path = "atk_kit.rs"]
mod kit;
#[path = "redlock.rs"]
mod redlock;

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use redis::{ConnectionLike, RedisResult};

static DONE: AtomicBool = AtomicBool::new(false);

pub fn acquire<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    _token: &str,
    _ttl: Duration,
) -> RedisResult<bool> {
    if kit::first(&DONE) {
        redlock::escape(con, key, "the failover story's server");
    }
    todo!("send SET key token NX PX ttl and say whether Redis answered OK")
}
