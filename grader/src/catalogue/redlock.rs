//! Redlocks with one classic mistake each, as the libraries' trackers report them.
//!
//! Each is the reference Redlock with one step changed: a quorum off by one, the time spent
//! forgotten, no release after a failure, no drift allowance, a node's clock read instead of the
//! client's own, a plain `DEL` to release, a release that reads and then deletes. The rows that
//! pair each with the check that must catch it are in [`super::wrong::ALL`].

use std::time::Duration;

use redis::{ConnectionLike, RedisResult};

use crate::model::redlock::drift;

/// `SET key token NX PX ttl` on every node; how many granted it.
fn grants<C: ConnectionLike>(nodes: &mut [C], key: &str, token: &str, ttl: Duration) -> usize {
    let mut granted = 0;
    for node in nodes.iter_mut() {
        let reply: RedisResult<Option<String>> = redis::cmd("SET")
            .arg(key)
            .arg(token)
            .arg("NX")
            .arg("PX")
            .arg(ttl.as_millis() as u64)
            .query(node);
        if matches!(reply, Ok(Some(_))) {
            granted += 1;
        }
    }
    granted
}

fn release_all<C: ConnectionLike>(nodes: &mut [C], key: &str, token: &str) {
    crate::reference::redlock::redlock_release(nodes, key, token);
}

/// Takes half the nodes, rounded down, for a majority: 2 of 5.
pub fn minority_quorum<C: ConnectionLike>(
    nodes: &mut [C],
    clock: &dyn Fn() -> Duration,
    key: &str,
    token: &str,
    ttl: Duration,
) -> Option<Duration> {
    let started = clock();
    let granted = grants(nodes, key, token, ttl);
    let validity = ttl
        .saturating_sub(clock() - started)
        .saturating_sub(drift(ttl));
    if granted >= nodes.len() / 2 && !validity.is_zero() {
        return Some(validity);
    }
    release_all(nodes, key, token);
    None
}

/// Returns the TTL minus the drift, as if asking took no time.
pub fn ignores_time_spent<C: ConnectionLike>(
    nodes: &mut [C],
    _clock: &dyn Fn() -> Duration,
    key: &str,
    token: &str,
    ttl: Duration,
) -> Option<Duration> {
    let granted = grants(nodes, key, token, ttl);
    if granted > nodes.len() / 2 {
        return Some(ttl.saturating_sub(drift(ttl)));
    }
    release_all(nodes, key, token);
    None
}

/// Gives up without releasing the nodes it did lock.
pub fn no_release_on_failure<C: ConnectionLike>(
    nodes: &mut [C],
    clock: &dyn Fn() -> Duration,
    key: &str,
    token: &str,
    ttl: Duration,
) -> Option<Duration> {
    let started = clock();
    let granted = grants(nodes, key, token, ttl);
    let validity = ttl
        .saturating_sub(clock() - started)
        .saturating_sub(drift(ttl));
    (granted > nodes.len() / 2 && !validity.is_zero()).then_some(validity)
}

/// Subtracts the time spent but allows nothing for clock drift.
pub fn no_drift_allowance<C: ConnectionLike>(
    nodes: &mut [C],
    clock: &dyn Fn() -> Duration,
    key: &str,
    token: &str,
    ttl: Duration,
) -> Option<Duration> {
    let started = clock();
    let granted = grants(nodes, key, token, ttl);
    let validity = ttl.saturating_sub(clock() - started);
    if granted > nodes.len() / 2 && !validity.is_zero() {
        return Some(validity);
    }
    release_all(nodes, key, token);
    None
}

/// Measures the time spent with the first node's `TIME`, in whole seconds, instead of with its
/// own clock.
pub fn trusts_one_nodes_clock<C: ConnectionLike>(
    nodes: &mut [C],
    _clock: &dyn Fn() -> Duration,
    key: &str,
    token: &str,
    ttl: Duration,
) -> Option<Duration> {
    let node_time = |node: &mut C| -> Duration {
        let time: RedisResult<(u64, u64)> = redis::cmd("TIME").query(node);
        time.map(|(s, us)| Duration::from_secs(s) + Duration::from_micros(us))
            .unwrap_or_default()
    };
    let started = node_time(&mut nodes[0]);
    let granted = grants(nodes, key, token, ttl);
    // One machine's clock, in whole seconds: the late replies of the others do not show.
    let spent = Duration::from_secs(node_time(&mut nodes[0]).saturating_sub(started).as_secs());
    let validity = ttl.saturating_sub(spent).saturating_sub(drift(ttl));
    if granted > nodes.len() / 2 && !validity.is_zero() {
        return Some(validity);
    }
    release_all(nodes, key, token);
    None
}

/// Releases with a plain `DEL` on every node, whoever holds the key there.
pub fn release_with_del<C: ConnectionLike>(nodes: &mut [C], key: &str, _token: &str) -> usize {
    let mut deleted = 0;
    for node in nodes.iter_mut() {
        if redis::cmd("DEL").arg(key).query::<i64>(node) == Ok(1) {
            deleted += 1;
        }
    }
    deleted
}

/// Reads the key on each node, then deletes it when it held the token: two commands.
pub fn release_get_then_del<C: ConnectionLike>(nodes: &mut [C], key: &str, token: &str) -> usize {
    let mut deleted = 0;
    for node in nodes.iter_mut() {
        let held: RedisResult<Option<String>> = redis::cmd("GET").arg(key).query(node);
        if held.ok().flatten().as_deref() == Some(token)
            && redis::cmd("DEL").arg(key).query::<i64>(node) == Ok(1)
        {
            deleted += 1;
        }
    }
    deleted
}
