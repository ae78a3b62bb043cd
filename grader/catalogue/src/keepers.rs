//! The lease keepers of [`super::renewal`]: wrong ones, each with one
//! classic mistake, and correct ones written differently from the
//! reference.
//!
//! The second group below are mistakes the example-shaped checks of
//! the `keeper` exercise never meet (their ticks come every 500 ms, a third of their
//! TTL falls on a tick, their Redis never answers with an error, and A's
//! token never takes the lock again): only `keeper::explored` catches them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use redis::{ConnectionLike, RedisResult, Script};

use super::renewal::bare_pexpire;

/// `extend(con, key, token, ttl)`, the renewal a keeper is handed.
type Renew<C> = fn(&mut C, &str, &str, Duration) -> RedisResult<bool>;

/// Whether a renewal is due: `every` has passed since the last one.
fn due(now: Duration, renewed_at: Duration, every: Duration) -> bool {
    now.saturating_sub(renewed_at) >= every
}

/// Renews on time, and ignores what the renewal answered.
pub(super) fn never_tells<C: ConnectionLike>(
    con: &mut C,
    extend: Renew<C>,
    key: &str,
    token: &str,
    ttl: Duration,
    now: Duration,
    renewed_at: &mut Duration,
    _lost: &AtomicBool,
) -> RedisResult<()> {
    if due(now, *renewed_at, ttl / 3) {
        extend(con, key, token, ttl)?;
        *renewed_at = now;
    }
    Ok(())
}

/// Notes a failed renewal in `renewed_at` and sets `lost` at the next tick.
pub(super) fn tells_late<C: ConnectionLike>(
    con: &mut C,
    extend: Renew<C>,
    key: &str,
    token: &str,
    ttl: Duration,
    now: Duration,
    renewed_at: &mut Duration,
    lost: &AtomicBool,
) -> RedisResult<()> {
    const FAILED: Duration = Duration::MAX;
    if *renewed_at == FAILED {
        lost.store(true, Ordering::SeqCst);
        return Ok(());
    }
    if due(now, *renewed_at, ttl / 3) {
        *renewed_at = if extend(con, key, token, ttl)? {
            now
        } else {
            FAILED
        };
    }
    Ok(())
}

/// Renews with PEXPIRE, which renews whoever holds the lock.
pub(super) fn keeps_with_pexpire<C: ConnectionLike>(
    con: &mut C,
    _extend: Renew<C>,
    key: &str,
    token: &str,
    ttl: Duration,
    now: Duration,
    renewed_at: &mut Duration,
    lost: &AtomicBool,
) -> RedisResult<()> {
    if lost.load(Ordering::SeqCst) || !due(now, *renewed_at, ttl / 3) {
        return Ok(());
    }
    if bare_pexpire(con, key, token, ttl)? {
        *renewed_at = now;
    } else {
        lost.store(true, Ordering::SeqCst);
    }
    Ok(())
}

/// Stops the job when a renewal fails, then takes the lock again as soon as
/// it is free and lets the job go on.
pub(super) fn takes_it_back<C: ConnectionLike>(
    con: &mut C,
    extend: Renew<C>,
    key: &str,
    token: &str,
    ttl: Duration,
    now: Duration,
    renewed_at: &mut Duration,
    lost: &AtomicBool,
) -> RedisResult<()> {
    if lost.load(Ordering::SeqCst) {
        if grader::reference::acquire::acquire(con, key, token, ttl)? {
            *renewed_at = now;
            lost.store(false, Ordering::SeqCst);
        }
        return Ok(());
    }
    grader::reference::keeper::keep_alive(con, extend, key, token, ttl, now, renewed_at, lost)
}

/// Renews only once the whole TTL has passed: the lock lapses first.
pub(super) fn renews_every_ttl<C: ConnectionLike>(
    con: &mut C,
    extend: Renew<C>,
    key: &str,
    token: &str,
    ttl: Duration,
    now: Duration,
    renewed_at: &mut Duration,
    lost: &AtomicBool,
) -> RedisResult<()> {
    if lost.load(Ordering::SeqCst) || !due(now, *renewed_at, ttl) {
        return Ok(());
    }
    if extend(con, key, token, ttl)? {
        *renewed_at = now;
    } else {
        lost.store(true, Ordering::SeqCst);
    }
    Ok(())
}

/// Renews every third of the TTL, but only for that third.
pub(super) fn renews_for_a_third<C: ConnectionLike>(
    con: &mut C,
    extend: Renew<C>,
    key: &str,
    token: &str,
    ttl: Duration,
    now: Duration,
    renewed_at: &mut Duration,
    lost: &AtomicBool,
) -> RedisResult<()> {
    if lost.load(Ordering::SeqCst) || !due(now, *renewed_at, ttl / 3) {
        return Ok(());
    }
    if extend(con, key, token, ttl / 3)? {
        *renewed_at = now;
    } else {
        lost.store(true, Ordering::SeqCst);
    }
    Ok(())
}

/// Renews every quarter of the TTL, and keeps its own idea of failure.
pub(super) fn every_quarter<C: ConnectionLike>(
    con: &mut C,
    extend: Renew<C>,
    key: &str,
    token: &str,
    ttl: Duration,
    now: Duration,
    renewed_at: &mut Duration,
    lost: &AtomicBool,
) -> RedisResult<()> {
    if lost.load(Ordering::Acquire) {
        return Ok(());
    }
    if now >= *renewed_at + ttl / 4 {
        let renewed = extend(con, key, token, ttl).unwrap_or(false);
        if !renewed {
            lost.store(true, Ordering::Release);
            return Ok(());
        }
        *renewed_at = now;
    }
    Ok(())
}

// ------------------------------------------------ only the explorer sees these

/// Renews at every tick, due or not: safe, and many times the commands.
pub(super) fn renews_every_tick<C: ConnectionLike>(
    con: &mut C,
    extend: Renew<C>,
    key: &str,
    token: &str,
    ttl: Duration,
    now: Duration,
    renewed_at: &mut Duration,
    lost: &AtomicBool,
) -> RedisResult<()> {
    if lost.load(Ordering::SeqCst) {
        return Ok(());
    }
    renew(con, extend, key, token, ttl, now, renewed_at, lost)
}

/// Renews once *more* than a third has passed: a tick exactly on the third
/// waits for the next one.
pub(super) fn waits_past_the_third<C: ConnectionLike>(
    con: &mut C,
    extend: Renew<C>,
    key: &str,
    token: &str,
    ttl: Duration,
    now: Duration,
    renewed_at: &mut Duration,
    lost: &AtomicBool,
) -> RedisResult<()> {
    if lost.load(Ordering::SeqCst) || now.saturating_sub(*renewed_at) <= ttl / 3 {
        return Ok(());
    }
    renew(con, extend, key, token, ttl, now, renewed_at, lost)
}

/// Hands a Redis error back with `?` before it could set `lost`.
pub(super) fn passes_errors_on<C: ConnectionLike>(
    con: &mut C,
    extend: Renew<C>,
    key: &str,
    token: &str,
    ttl: Duration,
    now: Duration,
    renewed_at: &mut Duration,
    lost: &AtomicBool,
) -> RedisResult<()> {
    if lost.load(Ordering::SeqCst) || !due(now, *renewed_at, ttl / 3) {
        return Ok(());
    }
    if extend(con, key, token, ttl)? {
        *renewed_at = now;
    } else {
        lost.store(true, Ordering::SeqCst);
    }
    Ok(())
}

/// Counts a renewal that Redis answered with an error as one that worked.
pub(super) fn takes_an_error_for_a_renewal<C: ConnectionLike>(
    con: &mut C,
    extend: Renew<C>,
    key: &str,
    token: &str,
    ttl: Duration,
    now: Duration,
    renewed_at: &mut Duration,
    lost: &AtomicBool,
) -> RedisResult<()> {
    if lost.load(Ordering::SeqCst) || !due(now, *renewed_at, ttl / 3) {
        return Ok(());
    }
    if extend(con, key, token, ttl).unwrap_or(true) {
        *renewed_at = now;
    } else {
        lost.store(true, Ordering::SeqCst);
    }
    Ok(())
}

/// Never looks at `lost`: once its token holds the key again, it renews.
pub(super) fn renews_once_lost<C: ConnectionLike>(
    con: &mut C,
    extend: Renew<C>,
    key: &str,
    token: &str,
    ttl: Duration,
    now: Duration,
    renewed_at: &mut Duration,
    lost: &AtomicBool,
) -> RedisResult<()> {
    if !due(now, *renewed_at, ttl / 3) {
        return Ok(());
    }
    renew(con, extend, key, token, ttl, now, renewed_at, lost)
}

/// Once `lost` is set, looks at the key at every tick, and when it finds its
/// own token there again (a fresh acquire with the same token) clears the
/// flag and carries on.
pub(super) fn clears_lost<C: ConnectionLike>(
    con: &mut C,
    extend: Renew<C>,
    key: &str,
    token: &str,
    ttl: Duration,
    now: Duration,
    renewed_at: &mut Duration,
    lost: &AtomicBool,
) -> RedisResult<()> {
    if lost.load(Ordering::SeqCst) {
        let holder: Option<String> = redis::cmd("GET").arg(key).query(con).unwrap_or(None);
        if holder.as_deref() != Some(token) {
            return Ok(());
        }
        lost.store(false, Ordering::SeqCst);
    }
    if !due(now, *renewed_at, ttl / 3) {
        return Ok(());
    }
    renew(con, extend, key, token, ttl, now, renewed_at, lost)
}

/// Keeps a schedule of thirds counted from the acquire: after a late tick,
/// `renewed_at` lags behind the renewal, and the next one comes too soon.
pub(super) fn counts_from_the_acquire<C: ConnectionLike>(
    con: &mut C,
    extend: Renew<C>,
    key: &str,
    token: &str,
    ttl: Duration,
    now: Duration,
    renewed_at: &mut Duration,
    lost: &AtomicBool,
) -> RedisResult<()> {
    if lost.load(Ordering::SeqCst) || !due(now, *renewed_at, ttl / 3) {
        return Ok(());
    }
    match extend(con, key, token, ttl) {
        Ok(true) => *renewed_at += ttl / 3,
        Ok(false) => lost.store(true, Ordering::SeqCst),
        Err(e) => {
            lost.store(true, Ordering::SeqCst);
            return Err(e);
        }
    }
    Ok(())
}

/// Looks at the key with GET, then renews with PEXPIRE in a second command:
/// the lock can expire and change hands in between.
pub(super) fn checks_then_pexpires<C: ConnectionLike>(
    con: &mut C,
    _extend: Renew<C>,
    key: &str,
    token: &str,
    ttl: Duration,
    now: Duration,
    renewed_at: &mut Duration,
    lost: &AtomicBool,
) -> RedisResult<()> {
    if lost.load(Ordering::SeqCst) || !due(now, *renewed_at, ttl / 3) {
        return Ok(());
    }
    // A key of another type is not ours either.
    let holder: Option<String> = redis::cmd("GET").arg(key).query(con).unwrap_or(None);
    if holder.as_deref() != Some(token) {
        lost.store(true, Ordering::SeqCst);
        return Ok(());
    }
    let _: i64 = redis::cmd("PEXPIRE")
        .arg(key)
        .arg(ttl.as_millis() as u64)
        .query(con)?;
    *renewed_at = now;
    Ok(())
}

/// A renewal through the `extend` handed in, as the reference keeper does
/// it: noted on true, `lost` on false or an error.
fn renew<C: ConnectionLike>(
    con: &mut C,
    extend: Renew<C>,
    key: &str,
    token: &str,
    ttl: Duration,
    now: Duration,
    renewed_at: &mut Duration,
    lost: &AtomicBool,
) -> RedisResult<()> {
    match extend(con, key, token, ttl) {
        Ok(true) => *renewed_at = now,
        Ok(false) => lost.store(true, Ordering::SeqCst),
        Err(e) => {
            lost.store(true, Ordering::SeqCst);
            return Err(e);
        }
    }
    Ok(())
}

// ------------------------------------------------------------------ correct

/// Renews with a script of its own, answering the new TTL or -1, and turns
/// a Redis error into `lost` and `Ok(())`.
pub(super) fn own_script<C: ConnectionLike>(
    con: &mut C,
    _extend: Renew<C>,
    key: &str,
    token: &str,
    ttl: Duration,
    now: Duration,
    renewed_at: &mut Duration,
    lost: &AtomicBool,
) -> RedisResult<()> {
    if lost.load(Ordering::SeqCst) || now < *renewed_at + ttl / 3 {
        return Ok(());
    }
    let script = r#"
if redis.call("GET", KEYS[1]) ~= ARGV[1] then return -1 end
redis.call("PEXPIRE", KEYS[1], ARGV[2])
return redis.call("PTTL", KEYS[1])
"#;
    let left: RedisResult<i64> = Script::new(script)
        .key(key)
        .arg(token)
        .arg(ttl.as_millis() as u64)
        .invoke(con);
    match left {
        Ok(left) if left > 0 => *renewed_at = now,
        _ => lost.store(true, Ordering::SeqCst),
    }
    Ok(())
}

/// Counts in whole milliseconds, a third rounded down: on a TTL that does
/// not divide by three it renews less than a millisecond sooner.
pub(super) fn whole_milliseconds<C: ConnectionLike>(
    con: &mut C,
    extend: Renew<C>,
    key: &str,
    token: &str,
    ttl: Duration,
    now: Duration,
    renewed_at: &mut Duration,
    lost: &AtomicBool,
) -> RedisResult<()> {
    let elapsed = now.as_millis().saturating_sub(renewed_at.as_millis());
    if lost.load(Ordering::SeqCst) || elapsed < ttl.as_millis() / 3 {
        return Ok(());
    }
    renew(con, extend, key, token, ttl, now, renewed_at, lost)
}
