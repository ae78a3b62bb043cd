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
/// `token` is fresh for this acquisition (from `new_token`): no other
/// acquisition, yours or another client's, uses it. So the key never holds it
/// already when this is called, and what your code would do then is yours to
/// decide; the checks never ask.
///
/// ```text
/// SET key token NX PX ttl   → OK      (taken)
///                           → (nil)   (held by someone else)
/// ```
///
/// Build the command with `redis::cmd("SET").arg(…)…` and send it with
/// `.query(con)`, or use redis-rs's `SetOptions` through the `Commands`
/// trait. Mind the unit: PX takes milliseconds (`ttl.as_millis()`).
///
/// Checks: `cargo test -p exercises acquire::`
pub fn acquire<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    // TODO: one SET with NX and PX; `Option<String>` is a handy reply type
    // (Some("OK") when taken, None when not).
    todo!("send SET key token NX PX ttl and say whether Redis answered OK")
}
