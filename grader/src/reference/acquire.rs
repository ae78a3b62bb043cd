//! Exercise 2: taking the lock.
//!
//! The whole lock is one Redis key. `SET key token NX PX ttl` writes it only if
//! it does not exist yet (NX), with an expiry in milliseconds (PX), in one
//! atomic command: two clients can never both see "free" and both write, and a
//! holder that crashes cannot block everyone forever.

use std::time::Duration;

use redis::{ConnectionLike, RedisResult};

/// Tries once to take the lock `key` for `ttl`, writing `token` into it.
///
/// Returns `Ok(true)` when this call took the lock, `Ok(false)` when someone
/// else holds it.
///
/// An error from Redis or from the connection (an error reply, a dropped
/// connection, a reply lost or late) goes back to the caller as `Err`, never
/// as an answer: after a lost reply, nobody knows whether the command ran.
///
/// ```text
/// SET key token NX PX ttl   → OK      (taken)
///                           → (nil)   (held by someone else)
/// ```
pub fn acquire<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    // SET … NX answers OK when it wrote the key and nil when it did not.
    let reply: Option<String> = redis::cmd("SET")
        .arg(key)
        .arg(token)
        .arg("NX")
        .arg("PX")
        .arg(ttl.as_millis() as u64)
        .query(con)?;
    Ok(reply.is_some())
}
