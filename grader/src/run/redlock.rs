//! A Redlock's two calls on the nodes: the learner's (or the reference's) `redlock_acquire` and
//! `redlock_release` on every node of a cluster, each in the sandbox, on the cluster's clock,
//! with the tokens and the TTL that the Redlock checks and stories share.
//!
//! A call the grader gives up on (quiet for [`crate::sandbox::CALL_LIMIT`]) may be stuck in a
//! script that holds a node: every running node is asked to stop its script
//! ([`crate::server::stop_scripts`]), so that the next scenario finds the nodes free.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::error::GradeError;
use crate::lock::Lock;
use crate::nodes::Health;
use crate::nodes::cluster::{SharedCluster, enter};
use crate::sandbox::{self, Failure};
use crate::wire::Wire;

/// A's token.
pub const TOKEN_A: &str = "token-of-A";
/// B's token.
pub const TOKEN_B: &str = "token-of-B";
/// The TTL of the checks.
pub const TTL: Duration = Duration::from_secs(10);

/// What one call of `redlock_acquire` did.
pub struct Acquired {
    /// What it returned, or how it failed.
    pub value: Result<Option<Duration>, Failure>,
    /// Virtual milliseconds from the call to its return.
    pub spent_ms: u64,
    /// Virtual milliseconds from the call to the last time it read the clock (to its return, if
    /// it never did): when a lock that reckons its validity made up its mind. A refusal's
    /// release costs time too, which must not excuse a refusal made while validity was left.
    pub reckoned_ms: u64,
}

/// Runs `lock`'s `redlock_acquire` for `token` on every node of `cluster`, on the cluster's clock.
pub fn acquire(
    cluster: &SharedCluster,
    lock: &Lock,
    token: &str,
    ttl: Duration,
) -> Result<Acquired, GradeError> {
    let f = lock.redlock_acquire;
    let (key, started) = {
        let c = enter(cluster);
        (c.key().to_owned(), c.now_ms())
    };
    let shared = cluster.clone();
    let token = token.to_owned();
    let last_read = Arc::new(Mutex::new(None));
    let read = Arc::clone(&last_read);
    let value = sandbox::isolated(move || {
        let mut wires = Wire::to_nodes(&shared);
        let clock = move || {
            let now = enter(&shared).now_ms();
            *read.lock().unwrap_or_else(PoisonError::into_inner) = Some(now);
            Duration::from_millis(now)
        };
        f(&mut wires, &clock, &key, &token, ttl)
    });
    stop_stuck_scripts(cluster, value.as_ref().err());
    let mut c = enter(cluster);
    c.fire_if_due()?;
    c.take_trouble()?;
    let ended = c.now_ms();
    let reckoned = last_read
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .unwrap_or(ended);
    Ok(Acquired {
        value,
        spent_ms: ended - started,
        reckoned_ms: reckoned - started,
    })
}

/// Runs `lock`'s `redlock_release` for `token` on every node of `cluster`.
pub fn release(
    cluster: &SharedCluster,
    lock: &Lock,
    token: &str,
) -> Result<Result<usize, Failure>, GradeError> {
    let f = lock.redlock_release;
    let key = enter(cluster).key().to_owned();
    let shared = cluster.clone();
    let token = token.to_owned();
    let value = sandbox::isolated(move || {
        let mut wires = Wire::to_nodes(&shared);
        f(&mut wires, &key, &token)
    });
    stop_stuck_scripts(cluster, value.as_ref().err());
    let mut c = enter(cluster);
    c.fire_if_due()?;
    c.take_trouble()?;
    Ok(value)
}

/// After a call the grader gave up on, asks every running node to stop the script it may be
/// stuck in (see the module's doc).
fn stop_stuck_scripts(cluster: &SharedCluster, failure: Option<&Failure>) {
    if !matches!(failure, Some(Failure::TimedOut { .. })) {
        return;
    }
    let urls: Vec<String> = {
        let c = enter(cluster);
        (0..c.len())
            .filter(|&i| c.health(i) == Health::Up)
            .map(|i| c.url(i))
            .collect()
    };
    for url in urls {
        crate::server::stop_scripts(&url);
    }
}
