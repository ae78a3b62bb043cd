//! Exercise 4: renewing the lock while you still hold it.
//!
//! A job that may run longer than the TTL does not pick a huge TTL (a crashed
//! holder would then block everyone for that long); it keeps a modest TTL and
//! renews it while it works. A renewal is a release turned around: it may only
//! touch the lock while the lock still holds the caller's token. Its own lock
//! may have expired during a pause and been taken by someone else, or be gone
//! altogether; renewing then would extend another client's lock, or bring a
//! dead one back. So the renewal compares the token and sets the new TTL in one
//! Lua script, and says whether it renewed: `false` means the lock is lost, and
//! the job must stop.

use std::time::Duration;

use redis::{ConnectionLike, RedisResult, Script};

/// Sets the TTL of `key` to `ARGV[2]` ms only if it still holds `ARGV[1]`.
const CHECK_AND_PEXPIRE: &str = r#"
if redis.call("GET", KEYS[1]) == ARGV[1] then
    return redis.call("PEXPIRE", KEYS[1], ARGV[2])
else
    return 0
end
"#;

/// Renews the lock `key` to a fresh `ttl`, if it still holds `token`.
///
/// Returns `Ok(true)` when this call renewed the lock (it now expires `ttl`
/// from now), `Ok(false)` when the lock was no longer this client's (expired,
/// or taken by someone else), in which case nothing changes.
///
/// An error from Redis or from the connection (an error reply, a dropped
/// connection, a reply lost or late) goes back to the caller as `Err`, never
/// as an answer: after a lost reply, nobody knows whether the command ran.
pub fn extend<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let renewed: i64 = Script::new(CHECK_AND_PEXPIRE)
        .key(key)
        .arg(token)
        .arg(ttl.as_millis() as u64)
        .invoke(con)?;
    Ok(renewed == 1)
}
