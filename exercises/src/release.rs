//! Exercise 3: releasing the lock safely.
//!
//! A client may only delete the lock while it still holds it. Its own lock may
//! have expired long ago, and the key may now hold another client's token. So
//! the release compares the token and deletes in one step, inside a Lua script
//! that Redis runs atomically: nothing can happen between the comparison and
//! the delete.

use redis::{ConnectionLike, RedisResult};

/// Releases the lock `key` if it still holds `token`.
///
/// Returns `Ok(true)` when this call deleted the lock, `Ok(false)` when the
/// lock was no longer this client's (expired, or taken by someone else), in
/// which case nothing is deleted.
///
/// An error from Redis or from the connection (an error reply, a dropped
/// connection, a reply lost or late) goes back to the caller as `Err`, never
/// as an answer: after a lost reply, nobody knows whether the command ran.
///
/// ```lua
/// if redis.call("GET", KEYS[1]) == ARGV[1] then ... DEL ... end
/// ```
///
/// `redis::Script::new(source).key(key).arg(token).invoke(con)` runs a script
/// (with EVALSHA, loading it when Redis does not know it yet).
///
/// Checks: `cargo test -p exercises release::`
pub fn release<C: ConnectionLike>(con: &mut C, key: &str, token: &str) -> RedisResult<bool> {
    // TODO: a Lua script that GETs the key, compares it with the token and
    // DELs only on a match; return whether it deleted. Not a plain DEL, and
    // not GET then DEL as two commands: the grader steps in between them.
    todo!("compare the token and delete, in one Lua script")
}
