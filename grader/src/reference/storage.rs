//! Exercise 7: the storage that checks fencing tokens.
//!
//! Fencing only helps if the storage itself refuses stale requests. Here a
//! Redis hash stands for the database row the clients update:
//!
//! ```text
//! row → { value: 2, fence: 34 }   value: the counter; fence: the highest token seen
//! ```
//!
//! A request whose token is smaller than `fence` comes from a client whose lock
//! has been granted to someone else since: it is refused. An equal token is the
//! current holder asking again and is accepted. The comparison and the update
//! happen in one Lua script, so no other request can slip in between.
//!
//! Redis stores the fields as strings, and Lua compares strings letter by
//! letter ("10" < "9"): turn both sides into numbers (`tonumber`) before you
//! compare. Lua numbers are doubles, exact for whole numbers up to 2^53, which
//! is as far as a fencing token or a value may go here (returning the `value`
//! field as Redis stores it, a string that redis-rs reads into an `i64`, is
//! exact for any `i64`). The row may not exist yet, or lack a field: a missing
//! `fence` or `value` reads as 0.

use redis::{ConnectionLike, RedisResult, Script};

/// Writes `value` unless the token is older than the newest one seen.
const FENCED_WRITE: &str = r#"
local highest = tonumber(redis.call("HGET", KEYS[1], "fence")) or 0
if tonumber(ARGV[1]) < highest then
    return 0
end
redis.call("HSET", KEYS[1], "fence", ARGV[1], "value", ARGV[2])
return 1
"#;

/// Reads the value unless the token is older than the newest one seen, and
/// remembers the token, so that older holders are fenced off from now on.
const FENCED_READ: &str = r#"
local highest = tonumber(redis.call("HGET", KEYS[1], "fence")) or 0
if tonumber(ARGV[1]) < highest then
    return false
end
redis.call("HSET", KEYS[1], "fence", ARGV[1])
return redis.call("HGET", KEYS[1], "value") or 0
"#;

/// Writes `value` into `row` on behalf of the holder of `fencing_token`.
///
/// Returns `Ok(true)` when the storage accepted the write, `Ok(false)` when it
/// refused it because it has already seen a larger token.
///
/// An error from Redis or from the connection (an error reply, a dropped
/// connection, a reply lost or late) goes back to the caller as `Err`, never
/// as an answer: after a lost reply, nobody knows whether the command ran.
pub fn fenced_write<C: ConnectionLike>(
    con: &mut C,
    row: &str,
    fencing_token: u64,
    value: i64,
) -> RedisResult<bool> {
    let accepted: i64 = Script::new(FENCED_WRITE)
        .key(row)
        .arg(fencing_token)
        .arg(value)
        .invoke(con)?;
    Ok(accepted == 1)
}

/// Reads the value of `row` on behalf of the holder of `fencing_token`.
///
/// Returns `Ok(Some(value))` when the storage accepted the read, `Ok(None)`
/// when it refused it because it has already seen a larger token. A failed
/// command goes back as `Err`, as in [`fenced_write`].
pub fn fenced_read<C: ConnectionLike>(
    con: &mut C,
    row: &str,
    fencing_token: u64,
) -> RedisResult<Option<i64>> {
    Script::new(FENCED_READ)
        .key(row)
        .arg(fencing_token)
        .invoke(con)
}
