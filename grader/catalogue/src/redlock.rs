//! Redlocks with one classic mistake each, as the libraries' trackers report them.
//!
//! Each is the reference Redlock with one step changed: a quorum off by one, the time spent
//! forgotten, no release after a failure, a release only where an `OK` came back, no drift
//! allowance, a node's clock read instead of the client's own, the validity counted from the
//! reply that made the majority, an expired lock returned as held, a validity that wraps around
//! when the round outlasts the TTL, a plain `DEL` to release, a release that reads and then
//! deletes. The rows that
//! pair each with the check that must catch it are in [`super::wrong::ALL`]. At the end, a
//! correct Redlock written differently, which must pass every check.

use std::time::Duration;

use redis::{ConnectionLike, RedisResult, Value};

use grader::model::redlock::drift;

/// `SET key token NX PX ttl` on every node; how many granted it.
fn grants<C: ConnectionLike>(nodes: &mut [C], key: &str, token: &str, ttl: Duration) -> usize {
    said_yes(nodes, key, token, ttl).len()
}

/// `SET key token NX PX ttl` on every node; the nodes whose `OK` came back.
fn said_yes<C: ConnectionLike>(
    nodes: &mut [C],
    key: &str,
    token: &str,
    ttl: Duration,
) -> Vec<usize> {
    let mut yes = Vec::new();
    for (i, node) in nodes.iter_mut().enumerate() {
        let reply: RedisResult<Option<String>> = redis::cmd("SET")
            .arg(key)
            .arg(token)
            .arg("NX")
            .arg("PX")
            .arg(ttl.as_millis() as u64)
            .query(node);
        if matches!(reply, Ok(Some(_))) {
            yes.push(i);
        }
    }
    yes
}

fn release_all<C: ConnectionLike>(nodes: &mut [C], key: &str, token: &str) {
    grader::reference::redlock::redlock_release(nodes, key, token);
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

/// On a refusal, releases only the nodes whose `OK` came back: a node that set the key and lost
/// its reply keeps A's token for a whole TTL, and with it a vote against everyone else.
pub fn releases_only_where_it_heard_ok<C: ConnectionLike>(
    nodes: &mut [C],
    clock: &dyn Fn() -> Duration,
    key: &str,
    token: &str,
    ttl: Duration,
) -> Option<Duration> {
    let started = clock();
    let said_yes = said_yes(nodes, key, token, ttl);
    let validity = ttl
        .saturating_sub(clock() - started)
        .saturating_sub(drift(ttl));
    if said_yes.len() > nodes.len() / 2 && !validity.is_zero() {
        return Some(validity);
    }
    for i in said_yes {
        release_all(&mut nodes[i..=i], key, token);
    }
    None
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

/// Reads the clock when the majority's last grant arrives ("the lock is ours from here") and counts
/// the validity from then: the nodes asked after it cost time the validity does not lose.
pub fn validity_from_the_majority<C: ConnectionLike>(
    nodes: &mut [C],
    clock: &dyn Fn() -> Duration,
    key: &str,
    token: &str,
    ttl: Duration,
) -> Option<Duration> {
    let started = clock();
    let majority = nodes.len() / 2 + 1;
    let (mut granted, mut held_at) = (0, None);
    for node in nodes.iter_mut() {
        granted += grants(std::slice::from_mut(node), key, token, ttl);
        if granted == majority && held_at.is_none() {
            held_at = Some(clock());
        }
    }
    let spent = held_at.unwrap_or_else(clock) - started;
    let validity = ttl.saturating_sub(spent).saturating_sub(drift(ttl));
    if granted >= majority && !validity.is_zero() {
        return Some(validity);
    }
    release_all(nodes, key, token);
    None
}

/// Returns whatever is left of the TTL once a majority granted it, nothing included: a round
/// that used the TTL up hands back a lock valid for 0 ms, which has already expired.
pub fn returns_an_expired_lock<C: ConnectionLike>(
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
    if granted > nodes.len() / 2 {
        return Some(validity);
    }
    release_all(nodes, key, token);
    None
}

/// Counts what is left of the TTL in unsigned milliseconds that wrap around, as C's and Go's
/// unsigned types do: a round that outlasts the TTL leaves an enormous validity, which passes the
/// test against the drift.
pub fn wraps_past_the_ttl<C: ConnectionLike>(
    nodes: &mut [C],
    clock: &dyn Fn() -> Duration,
    key: &str,
    token: &str,
    ttl: Duration,
) -> Option<Duration> {
    let started_ms = clock().as_millis() as u64;
    let granted = grants(nodes, key, token, ttl);
    let spent_ms = clock().as_millis() as u64 - started_ms;
    let ttl_ms = ttl.as_millis() as u64;
    let left_ms = ttl_ms.wrapping_sub(spent_ms);
    let drift_ms = drift(ttl).as_millis() as u64;
    if granted > nodes.len() / 2 && left_ms > drift_ms {
        return Some(Duration::from_millis(left_ms - drift_ms));
    }
    release_all(nodes, key, token);
    None
}

/// Wants a tenth of the TTL left, not just some: a lock with less validity is given up, though
/// the exercise's text grants it with any validity above zero.
pub fn wants_a_tenth_left<C: ConnectionLike>(
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
    if granted > nodes.len() / 2 && validity > ttl / 10 {
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

// ---- Correct Redlocks written differently, listed in `super::variants::ALL`.

/// The published algorithm in whole milliseconds, asking the nodes in reverse order; 1 % of the
/// TTL rounded down, as go-redsync does.
pub fn in_milliseconds<C: ConnectionLike>(
    nodes: &mut [C],
    clock: &dyn Fn() -> Duration,
    key: &str,
    token: &str,
    ttl: Duration,
) -> Option<Duration> {
    in_whole_milliseconds(
        nodes,
        clock,
        key,
        token,
        ttl,
        ttl.as_millis() as u64 / 100 + 2,
    )
}

/// As [`in_milliseconds`], with 1 % of the TTL rounded up: where under a millisecond of
/// validity is left, it sees none and refuses.
pub fn drift_rounded_up<C: ConnectionLike>(
    nodes: &mut [C],
    clock: &dyn Fn() -> Duration,
    key: &str,
    token: &str,
    ttl: Duration,
) -> Option<Duration> {
    let drift_ms = (ttl.as_millis() as u64).div_ceil(100) + 2;
    in_whole_milliseconds(nodes, clock, key, token, ttl, drift_ms)
}

/// The published algorithm in whole milliseconds, with a drift allowance of `drift_ms`.
fn in_whole_milliseconds<C: ConnectionLike>(
    nodes: &mut [C],
    clock: &dyn Fn() -> Duration,
    key: &str,
    token: &str,
    ttl: Duration,
    drift_ms: u64,
) -> Option<Duration> {
    let ttl_ms = ttl.as_millis() as u64;
    let started_ms = clock().as_millis() as u64;
    let mut granted = 0;
    for node in nodes.iter_mut().rev() {
        let reply: RedisResult<Value> = redis::cmd("SET")
            .arg(key)
            .arg(token)
            .arg("PX")
            .arg(ttl_ms)
            .arg("NX")
            .query(node);
        if reply == Ok(Value::Okay) {
            granted += 1;
        }
    }
    let spent_ms = clock().as_millis() as u64 - started_ms;
    let left_ms = ttl_ms as i64 - spent_ms as i64 - drift_ms as i64;
    if 2 * granted > nodes.len() && left_ms > 0 {
        return Some(Duration::from_millis(left_ms as u64));
    }
    eval_release(nodes, key, token);
    None
}

/// Check-and-delete sent as a plain `EVAL`, the nodes in reverse order.
pub fn eval_release<C: ConnectionLike>(nodes: &mut [C], key: &str, token: &str) -> usize {
    const SOURCE: &str = "if redis.call('get', KEYS[1]) == ARGV[1] then \
                          return redis.call('del', KEYS[1]) end return 0";
    let mut deleted = 0;
    for node in nodes.iter_mut().rev() {
        let reply: RedisResult<i64> = redis::cmd("EVAL")
            .arg(SOURCE)
            .arg(1)
            .arg(key)
            .arg(token)
            .query(node);
        if reply == Ok(1) {
            deleted += 1;
        }
    }
    deleted
}
