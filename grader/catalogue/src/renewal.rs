//! Renewals and lease keepers, wrong and correct (the `extend` and `keeper`
//! exercises).
//!
//! The wrong ones are the mistakes lock libraries' bug trackers show again
//! and again: a renewal that does not look at the token, or looks in one
//! command and renews in the next; a renewal in seconds; one that brings a
//! lost lock back; a keeper that renews but never tells the job, renews too
//! late, or takes the lock back once it lost it. Each names the check that
//! must fail on it and the rule that check must report. The correct ones
//! send other commands than the reference, and must pass.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redis::{ConnectionLike, RedisResult, Script};

use super::keepers::{
    checks_then_pexpires, clears_lost, counts_from_the_acquire, every_quarter, keeps_with_pexpire,
    never_tells, own_script, passes_errors_on, renews_every_tick, renews_every_ttl,
    renews_for_a_third, renews_once_lost, takes_an_error_for_a_renewal, takes_it_back, tells_late,
    waits_past_the_third, whole_milliseconds,
};
use super::timed::{
    extend_hundred_ms_short, extend_one_ms_more, script_extend_hundred_ms_short,
    script_extend_one_ms_more,
};
use super::wrong::Wrong;
use grader::lock::Lock;
use grader::reference::{self, LOCK as REFERENCE};
use grader::verdict::Property;

/// Every wrong renewal and keeper.
pub const WRONG: &[Wrong] = &[
    Wrong {
        lock: Lock {
            name: "extend without comparing the token",
            extend: bare_pexpire,
            ..REFERENCE
        },
        fails: "extend::leaves_another_holders_lock",
        breaks: Property::ExtendSparesOthers,
    },
    Wrong {
        lock: Lock {
            name: "GET then PEXPIRE extend",
            extend: get_then_pexpire,
            ..REFERENCE
        },
        fails: "extend::never_renews_a_lock_that_changed_hands",
        breaks: Property::ExtendSparesOthers,
    },
    Wrong {
        lock: Lock {
            name: "extend with EXPIRE in seconds",
            extend: expire_in_seconds,
            ..REFERENCE
        },
        fails: "extend::renews_its_own_lock",
        breaks: Property::ExtendRenewsOwnLock,
    },
    Wrong {
        lock: Lock {
            name: "extend that brings a lost lock back",
            extend: brings_back,
            ..REFERENCE
        },
        fails: "extend::never_brings_back_a_lost_lock",
        breaks: Property::ExtendSparesOthers,
    },
    Wrong {
        lock: Lock {
            name: "extend 100 ms short",
            extend: script_extend_hundred_ms_short,
            ..REFERENCE
        },
        fails: "extend::renews_its_own_lock",
        breaks: Property::ExtendRenewsOwnLock,
    },
    Wrong {
        lock: Lock {
            name: "extend in a transaction 100 ms short",
            extend: extend_hundred_ms_short,
            ..REFERENCE
        },
        fails: "extend::renews_its_own_lock",
        breaks: Property::ExtendRenewsOwnLock,
    },
    Wrong {
        lock: Lock {
            name: "extend that always says yes",
            extend: always_renewed,
            ..REFERENCE
        },
        fails: "extend::leaves_another_holders_lock",
        breaks: Property::ExtendTellsTruth,
    },
    Wrong {
        lock: Lock {
            name: "keeper that never tells the job",
            keep_alive: never_tells,
            ..REFERENCE
        },
        fails: "keeper::stops_the_job_when_a_renewal_fails",
        breaks: Property::KeeperStopsJob,
    },
    Wrong {
        lock: Lock {
            name: "keeper that tells the job a tick late",
            keep_alive: tells_late,
            ..REFERENCE
        },
        fails: "keeper::stops_the_job_when_a_renewal_fails",
        breaks: Property::KeeperStopsJob,
    },
    Wrong {
        lock: Lock {
            name: "keeper that renews with a bare PEXPIRE",
            keep_alive: keeps_with_pexpire,
            ..REFERENCE
        },
        fails: "keeper::stops_the_job_when_a_renewal_fails",
        breaks: Property::KeeperStopsJob,
    },
    Wrong {
        lock: Lock {
            name: "keeper that takes the lock back",
            keep_alive: takes_it_back,
            ..REFERENCE
        },
        fails: "keeper::stops_the_job_when_a_renewal_fails",
        breaks: Property::KeeperStopsForGood,
    },
    Wrong {
        lock: Lock {
            name: "keeper that renews every TTL",
            keep_alive: renews_every_ttl,
            ..REFERENCE
        },
        fails: "keeper::renews_in_time",
        breaks: Property::KeeperRenewsInTime,
    },
    Wrong {
        lock: Lock {
            name: "keeper that renews for a third of the TTL",
            keep_alive: renews_for_a_third,
            ..REFERENCE
        },
        fails: "keeper::renews_in_time",
        breaks: Property::KeeperRenewsInTime,
    },
    // Only the explorer meets these (see `keepers`).
    Wrong {
        lock: Lock {
            name: "keeper that renews at every tick",
            keep_alive: renews_every_tick,
            ..REFERENCE
        },
        fails: "keeper::explored",
        breaks: Property::KeeperRenewsOnPace,
    },
    Wrong {
        lock: Lock {
            name: "keeper that waits past the third",
            keep_alive: waits_past_the_third,
            ..REFERENCE
        },
        fails: "keeper::explored",
        breaks: Property::KeeperRenewsInTime,
    },
    Wrong {
        lock: Lock {
            name: "keeper that passes an error on without setting lost",
            keep_alive: passes_errors_on,
            ..REFERENCE
        },
        fails: "keeper::explored",
        breaks: Property::KeeperStopsJob,
    },
    Wrong {
        lock: Lock {
            name: "keeper that takes an error for a renewal",
            keep_alive: takes_an_error_for_a_renewal,
            ..REFERENCE
        },
        fails: "keeper::explored",
        breaks: Property::KeeperStopsJob,
    },
    Wrong {
        lock: Lock {
            name: "keeper that renews once lost",
            keep_alive: renews_once_lost,
            ..REFERENCE
        },
        fails: "keeper::explored",
        breaks: Property::KeeperStopsForGood,
    },
    Wrong {
        lock: Lock {
            name: "keeper that clears lost when its token is back",
            keep_alive: clears_lost,
            ..REFERENCE
        },
        fails: "keeper::explored",
        breaks: Property::KeeperStopsForGood,
    },
    Wrong {
        lock: Lock {
            name: "keeper that counts thirds from the acquire",
            keep_alive: counts_from_the_acquire,
            ..REFERENCE
        },
        fails: "keeper::explored",
        breaks: Property::KeeperRenewsOnPace,
    },
    Wrong {
        lock: Lock {
            name: "keeper that checks with GET, then renews with PEXPIRE",
            keep_alive: checks_then_pexpires,
            ..REFERENCE
        },
        fails: "keeper::explored",
        breaks: Property::KeeperStopsJob,
    },
];

/// Every correct renewal and keeper written differently from the reference.
pub const VARIANTS: &[Lock] = &[
    Lock {
        name: "PEXPIREAT extend",
        extend: with_pexpireat,
        ..REFERENCE
    },
    Lock {
        name: "EVAL extend, OK or nil",
        extend: eval_extend,
        ..REFERENCE
    },
    Lock {
        name: "extend asking a millisecond more",
        extend: script_extend_one_ms_more,
        ..REFERENCE
    },
    Lock {
        name: "extend in a transaction asking a millisecond more",
        extend: extend_one_ms_more,
        ..REFERENCE
    },
    Lock {
        name: "keeper renewing every quarter",
        keep_alive: every_quarter,
        ..REFERENCE
    },
    Lock {
        name: "keeper with a script of its own",
        keep_alive: own_script,
        ..REFERENCE
    },
    Lock {
        name: "keeper counting whole milliseconds",
        keep_alive: whole_milliseconds,
        ..REFERENCE
    },
];

// ---------------------------------------------------------------- extend

fn millis(ttl: Duration) -> u64 {
    ttl.as_millis() as u64
}

/// PEXPIRE whatever the key holds: B's lock gets A's TTL.
pub(super) fn bare_pexpire<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    _token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let set: i64 = redis::cmd("PEXPIRE").arg(key).arg(millis(ttl)).query(con)?;
    Ok(set == 1)
}

/// Compares in Rust, then renews: the lock can change hands in between.
fn get_then_pexpire<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let holder: Option<String> = redis::cmd("GET").arg(key).query(con)?;
    if holder.as_deref() != Some(token) {
        return Ok(false);
    }
    let set: i64 = redis::cmd("PEXPIRE").arg(key).arg(millis(ttl)).query(con)?;
    Ok(set == 1)
}

/// The right script with EXPIRE and whole seconds: 1.5 s becomes 1 s.
fn expire_in_seconds<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let script = r#"
if redis.call("GET", KEYS[1]) == ARGV[1] then
    return redis.call("EXPIRE", KEYS[1], ARGV[2])
end
return 0
"#;
    let set: i64 = Script::new(script)
        .key(key)
        .arg(token)
        .arg(ttl.as_secs())
        .invoke(con)?;
    Ok(set == 1)
}

/// Renews its own lock, and SETs it again when it finds it gone.
fn brings_back<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let script = r#"
local holder = redis.call("GET", KEYS[1])
if holder == ARGV[1] then
    return redis.call("PEXPIRE", KEYS[1], ARGV[2])
elseif not holder then
    redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
    return 1
end
return 0
"#;
    let set: i64 = Script::new(script)
        .key(key)
        .arg(token)
        .arg(millis(ttl))
        .invoke(con)?;
    Ok(set == 1)
}

/// The reference's renewal, answering true whatever happened.
fn always_renewed<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    reference::extend::extend(con, key, token, ttl)?;
    Ok(true)
}

/// An absolute expiry from the local clock, in the same script as the check.
fn with_pexpireat<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let until = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        + ttl;
    let script = r#"
if redis.call("GET", KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call("PEXPIREAT", KEYS[1], ARGV[2])
"#;
    let set: i64 = Script::new(script)
        .key(key)
        .arg(token)
        .arg(until.as_millis() as u64)
        .invoke(con)?;
    Ok(set == 1)
}

/// EVAL with the script text each time, answering "OK" or nil.
fn eval_extend<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let script = r#"if redis.call("get", KEYS[1]) == ARGV[1] then redis.call("pexpire", KEYS[1], ARGV[2]); return "OK" end return nil"#;
    let reply: Option<String> = redis::cmd("EVAL")
        .arg(script)
        .arg(1)
        .arg(key)
        .arg(token)
        .arg(millis(ttl))
        .query(con)?;
    Ok(reply.is_some())
}
