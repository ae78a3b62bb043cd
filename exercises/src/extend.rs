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

use redis::{ConnectionLike, RedisResult};

/// Renews the lock `key` to a fresh `ttl`, if it still holds `token`.
///
/// Returns `Ok(true)` when this call renewed the lock (it now expires `ttl`
/// from now), `Ok(false)` when the lock was no longer this client's (expired,
/// or taken by someone else), in which case nothing changes.
///
/// An error from Redis or from the connection (an error reply, a dropped
/// connection, a reply lost or late) goes back to the caller as `Err`, never
/// as an answer: after a lost reply, nobody knows whether the command ran.
///
/// ```lua
/// if redis.call("GET", KEYS[1]) == ARGV[1] then ... PEXPIRE ... end
/// ```
///
/// Pass the TTL in milliseconds (`ttl.as_millis()`) as a second argument:
/// `Script::new(source).key(key).arg(token).arg(ms).invoke(con)`.
///
/// Checks: `cargo test -p exercises extend::`
pub fn extend<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    // TODO: a Lua script that GETs the key, compares it with the token and
    // PEXPIREs it only on a match; return whether it renewed. Not a PEXPIRE
    // on its own, not GET then PEXPIRE as two commands, and never a SET that
    // brings a lost lock back.
    todo!("compare the token and set the new TTL, in one Lua script")
}
