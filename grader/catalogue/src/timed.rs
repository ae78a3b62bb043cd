//! Lock functions that set their expiry a way of their own: an absolute
//! instant computed from Redis's clock (`TIME`, then `PXAT`), a TTL set
//! inside the lock's own transaction (`WATCH`, `MULTI`, `EXEC`, the last two
//! sent one at a time or in one pipeline), a
//! millisecond more than asked for (php-lock's way); and their twins that
//! fall short of the TTL asked for by 100 ms.
//!
//! The grader reads a TTL to the millisecond however a lock sets it; these
//! are the functions its catalogue entries ([`super::ported`],
//! [`super::renewal`]) use to hold it to that, one way or the other.

use std::time::Duration;

use redis::{ConnectionLike, RedisResult, Script};

use super::ported::redis_now;

/// Reads Redis's clock (`TIME`) and takes the lock until that instant plus
/// the TTL (`SET … NX PXAT`), as a lock that keeps every instant on the
/// server's clock rather than its own does.
pub(super) fn redis_time_pxat<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let until = redis_now(con)? + ttl;
    let reply: Option<String> = redis::cmd("SET")
        .arg(key)
        .arg(token)
        .arg("NX")
        .arg("PXAT")
        .arg(until.as_millis() as u64)
        .query(con)?;
    Ok(reply.is_some())
}

/// [`redis_time_pxat`] with the instant 100 ms short.
pub(super) fn redis_time_pxat_short<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    redis_time_pxat(
        con,
        key,
        token,
        ttl.saturating_sub(Duration::from_millis(100)),
    )
}

/// [`redis_time_pxat`] with the `SET` in a script, the instant passed as an
/// argument.
pub(super) fn redis_time_pxat_script<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let until = redis_now(con)? + ttl;
    let reply: Option<String> =
        Script::new(r#"return redis.call("SET", KEYS[1], ARGV[1], "NX", "PXAT", ARGV[2])"#)
            .key(key)
            .arg(token)
            .arg(until.as_millis() as u64)
            .invoke(con)?;
    Ok(reply.is_some())
}

/// Takes the lock in a transaction (php-lock's way): `WATCH` the key, look
/// whether it is free, then `SET … NX PX` for `ttl_ms` inside `MULTI`/`EXEC`,
/// which Redis aborts if the key changed since the `WATCH`. After an error
/// it leaves no `WATCH` behind.
fn transaction_acquire<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl_ms: u64,
    pipelined: Pipelined,
) -> RedisResult<bool> {
    let taken = (|| {
        redis::cmd("WATCH").arg(key).exec(con)?;
        let held: bool = redis::cmd("EXISTS").arg(key).query(con)?;
        if held {
            redis::cmd("UNWATCH").exec(con)?;
            return Ok(false);
        }
        redis::cmd("MULTI").exec(con)?;
        let mut set = redis::cmd("SET");
        set.arg(key).arg(token).arg("NX").arg("PX").arg(ttl_ms);
        // nil: the transaction was aborted; `[nil]`: the SET was refused.
        let done: Option<(Option<String>,)> = match pipelined {
            Pipelined::No => {
                set.exec(con)?;
                redis::cmd("EXEC").query(con)?
            }
            Pipelined::SetAndExec => {
                let (_queued, done): (String, Option<(Option<String>,)>) =
                    redis::pipe().add_command(set).cmd("EXEC").query(con)?;
                done
            }
        };
        Ok(matches!(done, Some((Some(_),))))
    })();
    if taken.is_err() {
        // The error is what the caller hears; a connection gone takes its WATCH with it.
        let _ = redis::cmd("UNWATCH").exec(con);
    }
    taken
}

/// How [`transaction_acquire`] sends what follows its `MULTI`.
#[derive(Clone, Copy)]
enum Pipelined {
    /// `SET`, then `EXEC`, one command at a time.
    No,
    /// `SET` and `EXEC` in one pipeline, behind a `MULTI` sent alone.
    SetAndExec,
}

/// [`transaction_acquire`] asking a millisecond more than the TTL, as
/// php-lock does on purpose.
pub(super) fn transaction_one_ms_more<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let ttl_ms = ttl.as_millis() as u64 + 1;
    transaction_acquire(con, key, token, ttl_ms, Pipelined::No)
}

/// [`transaction_acquire`] asking 100 ms less than the TTL.
pub(super) fn transaction_hundred_ms_short<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let ttl_ms = (ttl.as_millis() as u64).saturating_sub(100);
    transaction_acquire(con, key, token, ttl_ms, Pipelined::No)
}

/// [`transaction_one_ms_more`] with its `SET` and `EXEC` in one pipeline.
pub(super) fn pipelined_transaction_one_ms_more<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let ttl_ms = ttl.as_millis() as u64 + 1;
    transaction_acquire(con, key, token, ttl_ms, Pipelined::SetAndExec)
}

/// [`transaction_hundred_ms_short`] with its `SET` and `EXEC` in one pipeline.
pub(super) fn pipelined_transaction_hundred_ms_short<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let ttl_ms = (ttl.as_millis() as u64).saturating_sub(100);
    transaction_acquire(con, key, token, ttl_ms, Pipelined::SetAndExec)
}

/// Renews in a transaction: `WATCH` the key, compare its token, then
/// `PEXPIRE` it for `ttl_ms` inside `MULTI`/`EXEC`, which Redis aborts if the
/// key changed (or expired) since the `WATCH`. After an error it leaves no
/// `WATCH` behind.
fn transaction_extend<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl_ms: u64,
) -> RedisResult<bool> {
    let renewed = (|| {
        redis::cmd("WATCH").arg(key).exec(con)?;
        let holder: Option<String> = redis::cmd("GET").arg(key).query(con)?;
        if holder.as_deref() != Some(token) {
            redis::cmd("UNWATCH").exec(con)?;
            return Ok(false);
        }
        redis::cmd("MULTI").exec(con)?;
        redis::cmd("PEXPIRE").arg(key).arg(ttl_ms).exec(con)?;
        let done: Option<(i64,)> = redis::cmd("EXEC").query(con)?;
        Ok(done == Some((1,)))
    })();
    if renewed.is_err() {
        let _ = redis::cmd("UNWATCH").exec(con);
    }
    renewed
}

/// [`transaction_extend`] asking a millisecond more than the TTL.
pub(super) fn extend_one_ms_more<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    transaction_extend(con, key, token, ttl.as_millis() as u64 + 1)
}

/// [`transaction_extend`] asking 100 ms less than the TTL.
pub(super) fn extend_hundred_ms_short<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    transaction_extend(
        con,
        key,
        token,
        (ttl.as_millis() as u64).saturating_sub(100),
    )
}

/// The reference's renewal script asking a millisecond more than the TTL,
/// in one command.
pub(super) fn script_extend_one_ms_more<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    grader::reference::extend::extend(con, key, token, ttl + Duration::from_millis(1))
}

/// The reference's renewal script asking 100 ms less than the TTL.
pub(super) fn script_extend_hundred_ms_short<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    grader::reference::extend::extend(
        con,
        key,
        token,
        ttl.saturating_sub(Duration::from_millis(100)),
    )
}
