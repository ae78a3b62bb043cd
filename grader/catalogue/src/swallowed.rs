//! Locks that swallow errors: each function's classic way of turning a failed
//! command into an answer.
//!
//! A release written as `invoke(con).unwrap_or(1)` passes every check that
//! only races or crashes clients: nothing there makes Redis answer with an
//! error or lose a reply. The grader's faults do ([`grader::wire::fault`]), and
//! each of these locks must fail its exercise's check of failed commands
//! (`reports_a_failed_command`, Redlock's `counts_a_failed_node_as_a_no`, or
//! the explorer where the exercise has no such check) and its explorer, with
//! the exercise's rule, through the same probe, models and judges that every
//! lock meets: no entry here has a check of its own.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use redis::{ConnectionLike, RedisResult};

use super::wrong::Wrong;
use grader::lock::Lock;
use grader::model::redlock::drift;
use grader::reference::{self, LOCK as REFERENCE};
use grader::verdict::Property;

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
    Wrong {
        lock: Lock {
            name: "keeper that waits out a connection error",
            keep_alive: waits_out_connection_errors,
            ..REFERENCE
        },
        fails: "keeper::reports_a_failed_command",
        breaks: Property::KeeperStopsJob,
    },
    Wrong {
        lock: Lock {
            name: "fenced acquire that takes an error for a refusal",
            acquire_fenced: acquire_fenced_ok_or_refused,
            ..REFERENCE
        },
        fails: "fencing::explored",
        breaks: Property::AcquireReportsFailure,
    },
    Wrong {
        lock: Lock {
            name: "storage that takes an error for a refused write",
            fenced_write: write_ok_or_refused,
            ..REFERENCE
        },
        fails: "storage::explored",
        breaks: Property::StorageReportsFailure,
    },
    Wrong {
        lock: Lock {
            name: "Redlock that counts a connection error as a yes",
            redlock_acquire: connection_error_as_yes,
            ..REFERENCE
        },
        fails: "redlock::counts_a_failed_node_as_a_no",
        breaks: Property::RedlockNeedsMajority,
    },
    Wrong {
        lock: Lock {
            name: "Redlock release that counts an error as a delete",
            redlock_release: redlock_release_error_as_deleted,
            ..REFERENCE
        },
        fails: "redlock::release_counts_what_came_back",
        breaks: Property::RedlockReleaseTellsTruth,
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

/// The reference fenced acquire, but any error reads as "held by someone
/// else": no token, as if the lock were taken.
fn acquire_fenced_ok_or_refused<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    fence: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<Option<u64>> {
    Ok(reference::fencing::acquire_fenced(con, key, fence, token, ttl).unwrap_or(None))
}

/// The reference storage write, but an error reads as a refusal: "a newer
/// token must have come in".
fn write_ok_or_refused<C: ConnectionLike>(
    con: &mut C,
    row: &str,
    token: u64,
    value: i64,
) -> RedisResult<bool> {
    Ok(reference::storage::fenced_write(con, row, token, value).unwrap_or(false))
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

/// A keeper whose renewal, on a connection error, is tried again at the next
/// tick, the job none the wiser: "a network blip".
fn waits_out_connection_errors<C: ConnectionLike>(
    con: &mut C,
    extend: fn(&mut C, &str, &str, Duration) -> RedisResult<bool>,
    key: &str,
    token: &str,
    ttl: Duration,
    now: Duration,
    renewed_at: &mut Duration,
    lost: &AtomicBool,
) -> RedisResult<()> {
    if lost.load(Ordering::SeqCst) || now.saturating_sub(*renewed_at) < ttl / 3 {
        return Ok(());
    }
    match extend(con, key, token, ttl) {
        Ok(true) => *renewed_at = now,
        Ok(false) => lost.store(true, Ordering::SeqCst),
        Err(e) if e.is_io_error() => {}
        Err(e) => {
            lost.store(true, Ordering::SeqCst);
            return Err(e);
        }
    }
    Ok(())
}

/// The reference Redlock, but a node whose connection failed counts as a yes: "the `SET`
/// surely reached it".
fn connection_error_as_yes<C: ConnectionLike>(
    nodes: &mut [C],
    clock: &dyn Fn() -> Duration,
    key: &str,
    token: &str,
    ttl: Duration,
) -> Option<Duration> {
    let started = clock();
    let mut granted = 0;
    for node in nodes.iter_mut() {
        let reply: RedisResult<Option<String>> = redis::cmd("SET")
            .arg(key)
            .arg(token)
            .arg("NX")
            .arg("PX")
            .arg(ttl.as_millis() as u64)
            .query(node);
        match reply {
            Ok(Some(_)) => granted += 1,
            Err(e) if e.is_io_error() => granted += 1,
            _ => {}
        }
    }
    let validity = ttl
        .saturating_sub(clock().saturating_sub(started))
        .saturating_sub(drift(ttl));
    if granted > nodes.len() / 2 && !validity.is_zero() {
        return Some(validity);
    }
    reference::redlock::redlock_release(nodes, key, token);
    None
}

/// The reference Redlock release, but a node that failed counts as freed: "its key is gone, or
/// soon will be".
fn redlock_release_error_as_deleted<C: ConnectionLike>(
    nodes: &mut [C],
    key: &str,
    token: &str,
) -> usize {
    // The single server's release is the same compare-and-delete, node by node.
    let mut deleted = 0;
    for node in nodes.iter_mut() {
        if matches!(
            reference::release::release(node, key, token),
            Ok(true) | Err(_)
        ) {
            deleted += 1;
        }
    }
    deleted
}
