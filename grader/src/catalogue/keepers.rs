//! The lease keepers of [`super::renewal`]: wrong ones, each with one
//! classic mistake, and a correct one written differently from the
//! reference.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use redis::{ConnectionLike, RedisResult};

use super::renewal::bare_pexpire;
use crate::reference;

/// Whether a renewal is due: `every` has passed since the last one.
fn due(now: Duration, renewed_at: Duration, every: Duration) -> bool {
    now.saturating_sub(renewed_at) >= every
}

/// Renews on time, and ignores what the renewal answered.
pub(super) fn never_tells<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
    now: Duration,
    renewed_at: &mut Duration,
    _lost: &AtomicBool,
) -> RedisResult<()> {
    if due(now, *renewed_at, ttl / 3) {
        reference::extend::extend(con, key, token, ttl)?;
        *renewed_at = now;
    }
    Ok(())
}

/// Notes a failed renewal in `renewed_at` and sets `lost` at the next tick.
pub(super) fn tells_late<C: ConnectionLike>(
    con: &mut C,
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
        *renewed_at = if reference::extend::extend(con, key, token, ttl)? {
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
    key: &str,
    token: &str,
    ttl: Duration,
    now: Duration,
    renewed_at: &mut Duration,
    lost: &AtomicBool,
) -> RedisResult<()> {
    if lost.load(Ordering::SeqCst) {
        if reference::acquire::acquire(con, key, token, ttl)? {
            *renewed_at = now;
            lost.store(false, Ordering::SeqCst);
        }
        return Ok(());
    }
    reference::keeper::keep_alive(con, key, token, ttl, now, renewed_at, lost)
}

/// Renews only once the whole TTL has passed: the lock lapses first.
pub(super) fn renews_every_ttl<C: ConnectionLike>(
    con: &mut C,
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
    if reference::extend::extend(con, key, token, ttl)? {
        *renewed_at = now;
    } else {
        lost.store(true, Ordering::SeqCst);
    }
    Ok(())
}

/// Renews every third of the TTL, but only for that third.
pub(super) fn renews_for_a_third<C: ConnectionLike>(
    con: &mut C,
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
    if reference::extend::extend(con, key, token, ttl / 3)? {
        *renewed_at = now;
    } else {
        lost.store(true, Ordering::SeqCst);
    }
    Ok(())
}

/// Renews every quarter of the TTL, and keeps its own idea of failure.
pub(super) fn every_quarter<C: ConnectionLike>(
    con: &mut C,
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
        let renewed = reference::extend::extend(con, key, token, ttl).unwrap_or(false);
        if !renewed {
            lost.store(true, Ordering::Release);
            return Ok(());
        }
        *renewed_at = now;
    }
    Ok(())
}
