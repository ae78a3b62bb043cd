//! The lock under test, as a table of plain functions.
//!
//! The grader does not care how a lock is written, only what it does against
//! Redis. So an implementation is just a few functions with fixed signatures:
//! the learner's (from the `exercises` crate), the reference solution, a
//! deliberately wrong variant from the catalogue, or a correct variant written
//! differently. Each function receives a [`Wire`]: a real Redis connection that
//! the grader watches, so it can record every command and step in between two
//! of them. Learners write their functions generic over
//! `C: redis::ConnectionLike`; the table takes them at `C = Wire`.
//!
//! A variant that differs in one function is written as
//! `Lock { release: my_release, ..reference::LOCK }`.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use redis::RedisResult;

use crate::wire::Wire;

/// `new_token()`: a fresh, unguessable value for one acquisition.
pub type NewTokenFn = fn() -> String;
/// `acquire(con, key, token, ttl)`: take the lock if it is free; `true` when taken.
pub type AcquireFn = fn(&mut Wire, &str, &str, Duration) -> RedisResult<bool>;
/// `release(con, key, token)`: delete the lock only if it still holds `token`; `true` when deleted.
pub type ReleaseFn = fn(&mut Wire, &str, &str) -> RedisResult<bool>;
/// `acquire_fenced(con, key, fence_key, token, ttl)`: take the lock and a fencing token in one step.
pub type AcquireFencedFn = fn(&mut Wire, &str, &str, &str, Duration) -> RedisResult<Option<u64>>;
/// `fenced_write(con, row, fencing_token, value)`: the storage's conditional write; `true` when accepted.
pub type FencedWriteFn = fn(&mut Wire, &str, u64, i64) -> RedisResult<bool>;
/// `fenced_read(con, row, fencing_token)`: the storage's fenced read; `None` when refused.
pub type FencedReadFn = fn(&mut Wire, &str, u64) -> RedisResult<Option<i64>>;

/// `extend(con, key, token, ttl)`: renew the lock to `ttl` only while it holds `token`; `true` when renewed.
pub type ExtendFn = fn(&mut Wire, &str, &str, Duration) -> RedisResult<bool>;
/// `keep_alive(con, extend, key, token, ttl, now, renewed_at, lost)`: one tick of a lease
/// keeper, renewing with the `extend` it is handed. A check of the keeper hands it the
/// reference's, so that a mistake in `extend` fails only extend's checks; a check that plays the
/// whole lock hands it the lock's own.
pub type KeepAliveFn = fn(
    &mut Wire,
    ExtendFn,
    &str,
    &str,
    Duration,
    Duration,
    &mut Duration,
    &AtomicBool,
) -> RedisResult<()>;
/// `redlock_acquire(nodes, clock, key, token, ttl)`: the lock on a majority of the nodes; the
/// validity left, or `None` (and released everywhere).
pub type RedlockAcquireFn =
    fn(&mut [Wire], &dyn Fn() -> Duration, &str, &str, Duration) -> Option<Duration>;
/// `redlock_release(nodes, key, token)`: check-and-delete on every node; how many deleted.
pub type RedlockReleaseFn = fn(&mut [Wire], &str, &str) -> usize;

/// One implementation of the course's lock, function by function.
///
/// The exercises crate builds one from the learner's functions; the grader
/// keeps the reference solution ([`crate::reference::LOCK`]) and catalogues of
/// wrong and correct variants built the same way.
#[derive(Clone, Copy)]
pub struct Lock {
    /// A short name shown in reports, e.g. `"your lock"` or `"plain DEL release"`.
    pub name: &'static str,
    /// See `exercises/src/token.rs`.
    pub new_token: NewTokenFn,
    /// See `exercises/src/acquire.rs`.
    pub acquire: AcquireFn,
    /// See `exercises/src/release.rs`.
    pub release: ReleaseFn,
    /// See `exercises/src/extend.rs`.
    pub extend: ExtendFn,
    /// See `exercises/src/keeper.rs`.
    pub keep_alive: KeepAliveFn,
    /// See `exercises/src/fencing.rs`.
    pub acquire_fenced: AcquireFencedFn,
    /// See `exercises/src/storage.rs`.
    pub fenced_write: FencedWriteFn,
    /// See `exercises/src/storage.rs`.
    pub fenced_read: FencedReadFn,
    /// See `exercises/src/redlock.rs`.
    pub redlock_acquire: RedlockAcquireFn,
    /// See `exercises/src/redlock.rs`.
    pub redlock_release: RedlockReleaseFn,
}

impl std::fmt::Debug for Lock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lock")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}
