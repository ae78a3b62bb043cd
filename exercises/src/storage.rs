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

use redis::{ConnectionLike, RedisResult};

/// Writes `value` into `row` on behalf of the holder of `fencing_token`.
///
/// Returns `Ok(true)` when the storage accepted the write, `Ok(false)` when it
/// refused it because it has already seen a larger token. An accepted write
/// also stores its token in the `fence` field. A field that is not there yet
/// reads as 0 (in Lua: `tonumber(redis.call("HGET", …)) or 0`).
///
/// An error from Redis or from the connection (an error reply, a dropped
/// connection, a reply lost or late) goes back to the caller as `Err`, never
/// as an answer: after a lost reply, nobody knows whether the command ran.
///
/// Checks: `cargo test -p exercises storage::`
pub fn fenced_write<C: ConnectionLike>(
    con: &mut C,
    row: &str,
    fencing_token: u64,
    value: i64,
) -> RedisResult<bool> {
    // TODO: one Lua script: read the `fence` field, refuse a smaller token,
    // otherwise HSET both `fence` and `value`.
    todo!("check the token against the row's fence field and write, in one Lua script")
}

/// Reads the value of `row` on behalf of the holder of `fencing_token`.
///
/// Returns `Ok(Some(value))` when the storage accepted the read, `Ok(None)`
/// when it refused it because it has already seen a larger token. An accepted
/// read stores its token in the `fence` field too, so that older holders are
/// fenced off from the moment a newer one has *read*.
///
/// A failed command goes back as `Err`, as in [`fenced_write`].
///
/// Checks: `cargo test -p exercises storage::`
pub fn fenced_read<C: ConnectionLike>(
    con: &mut C,
    row: &str,
    fencing_token: u64,
) -> RedisResult<Option<i64>> {
    // TODO: the same check as fenced_write; remember the token; return the
    // value (0 when there is none yet), or nil when the token is too old.
    todo!("check the token, remember it, and return the row's value, in one Lua script")
}
