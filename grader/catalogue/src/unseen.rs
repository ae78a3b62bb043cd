//! Mistakes the listed checks never saw, each caught only by an explorer.
//!
//! They pass every check written before the explorer: each one needs a
//! state, a value, a name or a third client that those checks never make
//! (a fence crossing from 9 to 10, a row without its `value` field, a read
//! sent twice, a counter whose name is not the lock's plus `:fence`, time
//! that runs out for the counter or the row, a client taking the lock in a
//! gap that lasts one command, a failed command followed by another call on
//! the same connection, a TTL that is no multiple of 100 ms). Their entries are in
//! [`super::wrong::ALL`], each naming the explorer check that catches it.

use std::time::Duration;

use redis::{ConnectionLike, RedisResult, Script};

/// Runs a storage script (KEYS[1] the row, ARGV the token, then the value
/// for a write): these storages differ from the reference only in their Lua.
fn storage_script<C: ConnectionLike, T: redis::FromRedisValue>(
    con: &mut C,
    source: &str,
    row: &str,
    token: u64,
    value: Option<i64>,
) -> RedisResult<T> {
    let script = Script::new(source);
    let mut call = script.key(row);
    call.arg(token);
    if let Some(value) = value {
        call.arg(value);
    }
    call.invoke(con)
}

/// Compares the token with the `fence` field as strings: "10" < "9".
pub fn string_compare<C: ConnectionLike>(
    con: &mut C,
    row: &str,
    token: u64,
    value: i64,
) -> RedisResult<bool> {
    let source = r#"
local highest = redis.call("HGET", KEYS[1], "fence") or "0"
if ARGV[1] < highest then return 0 end
redis.call("HSET", KEYS[1], "fence", ARGV[1], "value", ARGV[2])
return 1
"#;
    let accepted: i64 = storage_script(con, source, row, token, Some(value))?;
    Ok(accepted == 1)
}

/// Returns the `value` field as it is: a row without one reads as refused.
pub fn read_assumes_value<C: ConnectionLike>(
    con: &mut C,
    row: &str,
    token: u64,
) -> RedisResult<Option<i64>> {
    let source = r#"
local highest = tonumber(redis.call("HGET", KEYS[1], "fence")) or 0
if tonumber(ARGV[1]) < highest then return false end
redis.call("HSET", KEYS[1], "fence", ARGV[1])
return tonumber(redis.call("HGET", KEYS[1], "value"))
"#;
    storage_script(con, source, row, token, None)
}

/// `<=` where `<` belongs, in the read: the holder's second read is refused.
pub fn read_refuses_repeat<C: ConnectionLike>(
    con: &mut C,
    row: &str,
    token: u64,
) -> RedisResult<Option<i64>> {
    let source = r#"
local highest = tonumber(redis.call("HGET", KEYS[1], "fence")) or 0
if tonumber(ARGV[1]) <= highest then return false end
redis.call("HSET", KEYS[1], "fence", ARGV[1])
return tonumber(redis.call("HGET", KEYS[1], "value")) or 0
"#;
    storage_script(con, source, row, token, None)
}

/// Stores the token before comparing: a refused stale read lowers the fence.
pub fn read_lowers_fence<C: ConnectionLike>(
    con: &mut C,
    row: &str,
    token: u64,
) -> RedisResult<Option<i64>> {
    let source = r#"
local highest = tonumber(redis.call("HGET", KEYS[1], "fence")) or 0
redis.call("HSET", KEYS[1], "fence", ARGV[1])
if tonumber(ARGV[1]) < highest then return false end
return tonumber(redis.call("HGET", KEYS[1], "value")) or 0
"#;
    storage_script(con, source, row, token, None)
}

/// Gives the row a minute to live with every write.
pub fn row_with_ttl<C: ConnectionLike>(
    con: &mut C,
    row: &str,
    token: u64,
    value: i64,
) -> RedisResult<bool> {
    let source = r#"
local highest = tonumber(redis.call("HGET", KEYS[1], "fence")) or 0
if tonumber(ARGV[1]) < highest then return 0 end
redis.call("HSET", KEYS[1], "fence", ARGV[1], "value", ARGV[2])
redis.call("EXPIRE", KEYS[1], 60)
return 1
"#;
    let accepted: i64 = storage_script(con, source, row, token, Some(value))?;
    Ok(accepted == 1)
}

/// The fenced acquire of the reference, on the counter `{key}:fence`
/// whatever `fence_key` says.
pub fn counter_named_after_lock<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    _fence_key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<Option<u64>> {
    let fence = format!("{key}:fence");
    grader::reference::fencing::acquire_fenced(con, key, &fence, token, ttl)
}

/// Gives the counter the lock's TTL, as if every key needed one.
pub fn counter_with_ttl<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    fence_key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<Option<u64>> {
    Script::new(
        r#"
if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
    local t = redis.call("INCR", KEYS[2])
    redis.call("PEXPIRE", KEYS[2], ARGV[2])
    return t
end
return false
"#,
    )
    .key(key)
    .key(fence_key)
    .arg(token)
    .arg(ttl.as_millis() as u64)
    .invoke(con)
}

/// Takes the lock out to look at it (GETDEL), and puts it back with the TTL
/// it had when it was not the caller's: with two clients nobody notices; a
/// third can take the lock in the gap, and loses it when the key comes back.
pub fn delete_and_put_back<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
) -> RedisResult<bool> {
    let left_ms: i64 = redis::cmd("PTTL").arg(key).query(con)?;
    let holder: Option<String> = redis::cmd("GETDEL").arg(key).query(con)?;
    match holder {
        None => Ok(false),
        Some(holder) if holder == token => Ok(true),
        Some(holder) => {
            let mut put_back = redis::cmd("SET");
            put_back.arg(key).arg(holder);
            if left_ms > 0 {
                put_back.arg("PX").arg(left_ms);
            }
            put_back.exec(con)?;
            Ok(false)
        }
    }
}

/// `SET NX`, then a PEXPIRE whatever the answer: a refused attempt
/// refreshes the holder's TTL, and a failure between the two leaves a lock
/// without one.
pub fn expire_every_time<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let taken: Option<String> = redis::cmd("SET").arg(key).arg(token).arg("NX").query(con)?;
    redis::cmd("PEXPIRE")
        .arg(key)
        .arg(ttl.as_millis() as u64)
        .exec(con)?;
    Ok(taken.is_some())
}

/// The reference's `SET … NX PX`, with the TTL cut to a multiple of 100 ms
/// (`ttl / 100 * 100`), as a lock that keeps its TTLs in tenths of a second
/// does: every TTL the checks ask for (1.5 s, 10 s) is such a multiple.
pub fn ttl_cut_to_100_ms<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let ms = ttl.as_millis() as u64 / 100 * 100;
    let taken: Option<String> = redis::cmd("SET")
        .arg(key)
        .arg(token)
        .arg("NX")
        .arg("PX")
        .arg(ms)
        .query(con)?;
    Ok(taken.is_some())
}

/// The `WATCH`, check, `MULTI`/`DEL`/`EXEC` release, but a command that fails
/// after the `WATCH` returns at once and leaves the `WATCH` on the
/// connection. Redis keeps watching: once the key changes (it expires, a
/// client takes it), the connection's next transaction aborts, and the next
/// release of the caller's own lock returns `false` and deletes nothing.
pub fn watch_left_after_an_error<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
) -> RedisResult<bool> {
    redis::cmd("WATCH").arg(key).exec(con)?;
    let holder: Option<String> = redis::cmd("GET").arg(key).query(con)?;
    if holder.as_deref() != Some(token) {
        redis::cmd("UNWATCH").exec(con)?;
        return Ok(false);
    }
    let done: Option<(i64,)> = redis::pipe().atomic().del(key).query(con)?;
    Ok(done.is_some_and(|(n,)| n == 1))
}
