//! Exercise 3: releasing the lock safely.
//!
//! A client may only delete the lock while it still holds it. Its own lock may
//! have expired long ago, and the key may now hold another client's token. So
//! the release compares the token and deletes in one step, inside a Lua script
//! that Redis runs atomically: nothing can happen between the comparison and
//! the delete.

use redis::{ConnectionLike, RedisResult, Script};

/// Deletes `key` only if it still holds `token`, in one atomic step.
const CHECK_AND_DELETE: &str = r#"
if redis.call("GET", KEYS[1]) == ARGV[1] then
    return redis.call("DEL", KEYS[1])
else
    return 0
end
"#;

/// Releases the lock `key` if it still holds `token`.
///
/// Returns `Ok(true)` when this call deleted the lock, `Ok(false)` when the
/// lock was no longer this client's (expired, or taken by someone else), in
/// which case nothing is deleted.
///
/// An error from Redis or from the connection (an error reply, a dropped
/// connection, a reply lost or late) goes back to the caller as `Err`, never
/// as an answer: after a lost reply, nobody knows whether the command ran.
pub fn release<C: ConnectionLike>(con: &mut C, key: &str, token: &str) -> RedisResult<bool> {
    let deleted: i64 = Script::new(CHECK_AND_DELETE)
        .key(key)
        .arg(token)
        .invoke(con)?;
    Ok(deleted == 1)
}
