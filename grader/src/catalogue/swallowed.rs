//! Locks that swallow errors: each function's classic way of turning a failed
//! command into an answer.
//!
//! A release written as `invoke(con).unwrap_or(1)` passes every check that
//! only races or crashes clients: nothing there makes Redis answer with an
//! error or lose a reply. The grader's faults do ([`crate::wire::fault`]), and
//! each of these locks must fail its exercise's `reports_a_failed_command`
//! check on them, with the exercise's rule, through the same probe and judge
//! that every lock meets: no entry here has a check of its own.

use std::time::Duration;

use redis::{ConnectionLike, RedisResult};

use super::wrong::Wrong;
use crate::lock::Lock;
use crate::reference::{self, LOCK as REFERENCE};
use crate::verdict::Property;

/// Every lock that swallows an error.
pub const WRONG: &[Wrong] = &[
    Wrong {
        lock: Lock {
            name: "release that takes an error for a release",
            release: release_unwrap_or_deleted,
            ..REFERENCE
        },
        fails: "release::reports_a_failed_command",
        breaks: Property::ReleaseReportsFailure,
    },
    Wrong {
        lock: Lock {
            name: "release that takes a lost connection for a lost lock",
            release: release_io_error_as_false,
            ..REFERENCE
        },
        fails: "release::reports_a_failed_command",
        breaks: Property::ReleaseReportsFailure,
    },
    Wrong {
        lock: Lock {
            name: "extend that takes an error for a renewal",
            extend: extend_unwrap_or_renewed,
            ..REFERENCE
        },
        fails: "extend::reports_a_failed_command",
        breaks: Property::ExtendReportsFailure,
    },
    Wrong {
        lock: Lock {
            name: "acquire that takes an error for a refusal",
            acquire: acquire_ok_or_refused,
            ..REFERENCE
        },
        fails: "acquire::reports_a_failed_command",
        breaks: Property::AcquireReportsFailure,
    },
    Wrong {
        lock: Lock {
            name: "acquire that takes a time-out for a grant",
            acquire: acquire_timeout_as_granted,
            ..REFERENCE
        },
        fails: "acquire::reports_a_failed_command",
        breaks: Property::AcquireReportsFailure,
    },
];

/// The reference release, but an error counts as a delete: "the key will be
/// gone by now anyway".
fn release_unwrap_or_deleted<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
) -> RedisResult<bool> {
    Ok(reference::release::release(con, key, token).unwrap_or(true))
}

/// The reference release, but a failed connection reads as "not ours any
/// more": Redis's own errors still go back.
fn release_io_error_as_false<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
) -> RedisResult<bool> {
    match reference::release::release(con, key, token) {
        Err(e) if e.is_io_error() => Ok(false),
        other => other,
    }
}

/// The reference renewal, but an error counts as renewed, so the job goes on.
fn extend_unwrap_or_renewed<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    Ok(reference::extend::extend(con, key, token, ttl).unwrap_or(true))
}

/// The reference acquire, but any error reads as "held by someone else".
fn acquire_ok_or_refused<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    Ok(reference::acquire::acquire(con, key, token, ttl).unwrap_or_default())
}

/// The reference acquire, but a time-out reads as a grant: "the SET surely
/// went through". Every other error goes back, so only a reply that comes too
/// late shows it.
fn acquire_timeout_as_granted<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    match reference::acquire::acquire(con, key, token, ttl) {
        Err(e) if e.is_timeout() => Ok(true),
        other => other,
    }
}
