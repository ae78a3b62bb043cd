//! Correct locks in the style of published lock libraries, and wrong ones
//! that use the same means.
//!
//! The grader must not refuse a correct lock for the commands it chooses.
//! Each of these uses something the reference does not, as a published
//! library does: a Redis function instead of a script, a second key (a signal
//! list that wakes waiters), several keys set at once with `MSETNX` and
//! compared with `GETRANGE`, Redis's own clock (`TIME`, and an absolute
//! expiry computed from it), a question to the server about its replicas
//! (`INFO replication`, `WAIT`), a millisecond more than the TTL. The correct
//! ones must pass every check ([`ALL`]); the wrong ones
//! ([`PLAIN_DEL_FUNCTION`], [`SHORT_TTL`], [`SHORT_PXAT`],
//! [`SHORT_TRANSACTION`], [`SHORT_PIPELINED_TRANSACTION`], [`BASE36_TOKENS`], [`FLOAT_DIGIT_TOKENS`]) are
//! listed in [`super::wrong`] with the check that catches them.

use std::time::Duration;

use redis::{ConnectionLike, RedisResult, Script};

use super::timed;
use grader::lock::Lock;
use grader::reference::LOCK as REFERENCE;

/// Every correct port.
pub const ALL: &[Lock] = &[
    Lock {
        name: "release and extend as Redis functions",
        release: function_release,
        extend: function_extend,
        ..REFERENCE
    },
    Lock {
        name: "release that signals waiters on a list",
        release: signalling_release,
        ..REFERENCE
    },
    Lock {
        name: "MSETNX acquire that may take over its own token",
        acquire: msetnx_acquire,
        ..REFERENCE
    },
    Lock {
        name: "extend timed by Redis's clock",
        extend: timed_extend,
        ..REFERENCE
    },
    Lock {
        name: "acquire that waits for its replicas",
        acquire: replicated_acquire,
        ..REFERENCE
    },
    Lock {
        name: "acquire that cleans up with its own token when refused",
        acquire: cleaning_acquire,
        ..REFERENCE
    },
    Lock {
        name: "22 base-62 digits as tokens",
        new_token: base62_token,
        ..REFERENCE
    },
    Lock {
        name: "acquire that asks a millisecond more",
        acquire: one_ms_more,
        ..REFERENCE
    },
    Lock {
        name: "acquire timed by Redis's clock, with PXAT",
        acquire: timed::redis_time_pxat,
        ..REFERENCE
    },
    Lock {
        name: "acquire timed by Redis's clock, PXAT in a script",
        acquire: timed::redis_time_pxat_script,
        ..REFERENCE
    },
    Lock {
        name: "acquire in a transaction asking a millisecond more",
        acquire: timed::transaction_one_ms_more,
        ..REFERENCE
    },
    Lock {
        name: "acquire in a transaction ended by a pipeline, a millisecond more",
        acquire: timed::pipelined_transaction_one_ms_more,
        ..REFERENCE
    },
];

/// Tokens of 20 base-36 digits: about 103 random bits, short of the 120
/// the exercise asks for, though 20 characters of 6 bits would make 120.
pub const BASE36_TOKENS: Lock = Lock {
    name: "20 base-36 digits as tokens",
    new_token: base36_token,
    ..REFERENCE
};

/// JavaScript's `Math.random().toString(36).substring(2)` as V8 printed it
/// until 2017, the token of many an old lock library: 52 random bits as 20
/// to 26 base-36 digits, which look like 103 to 134.
pub const FLOAT_DIGIT_TOKENS: Lock = Lock {
    name: "Math.random().toString(36) tokens",
    new_token: math_random_base36,
    ..REFERENCE
};

/// An acquire whose TTL falls 100 ms short of the one asked for.
pub const SHORT_TTL: Lock = Lock {
    name: "TTL 100 ms short",
    acquire: hundred_ms_short,
    ..REFERENCE
};

/// [`timed::redis_time_pxat`]'s lock with an instant 100 ms short of Redis's clock
/// plus the TTL.
pub const SHORT_PXAT: Lock = Lock {
    name: "PXAT from Redis TIME 100 ms short",
    acquire: timed::redis_time_pxat_short,
    ..REFERENCE
};

/// [`timed::transaction_one_ms_more`]'s lock asking 100 ms less than the
/// TTL instead.
pub const SHORT_TRANSACTION: Lock = Lock {
    name: "transaction acquire 100 ms short",
    acquire: timed::transaction_hundred_ms_short,
    ..REFERENCE
};

/// [`timed::pipelined_transaction_one_ms_more`]'s lock asking 100 ms less than the TTL instead.
pub const SHORT_PIPELINED_TRANSACTION: Lock = Lock {
    name: "transaction ended by a pipeline, 100 ms short",
    acquire: timed::pipelined_transaction_hundred_ms_short,
    ..REFERENCE
};

/// A release written as a function that deletes without comparing (the wrong
/// ones: listed in [`super::wrong`]).
pub const PLAIN_DEL_FUNCTION: Lock = Lock {
    name: "plain DEL release as a Redis function",
    release: plain_del_function,
    ..REFERENCE
};

/// The library of [`function_release`] and [`function_extend`]: the
/// reference's two scripts, registered as functions.
const LIBRARY: &str = r#"#!lua name=courselock
redis.register_function('courselock_release', function(keys, args)
    if redis.call('GET', keys[1]) == args[1] then
        return redis.call('DEL', keys[1])
    end
    return 0
end)
redis.register_function{
    function_name = 'courselock_extend',
    callback = function(keys, args)
        if redis.call('GET', keys[1]) == args[1] then
            return redis.call('PEXPIRE', keys[1], args[2])
        end
        return 0
    end,
}
"#;

/// Loads [`LIBRARY`] (again: `REPLACE` makes that harmless), then calls it.
fn function_release<C: ConnectionLike>(con: &mut C, key: &str, token: &str) -> RedisResult<bool> {
    redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg("REPLACE")
        .arg(LIBRARY)
        .exec(con)?;
    let deleted: i64 = redis::cmd("FCALL")
        .arg("courselock_release")
        .arg(1)
        .arg(key)
        .arg(token)
        .query(con)?;
    Ok(deleted == 1)
}

/// Calls the function, and loads [`LIBRARY`] only when Redis does not know it.
fn function_extend<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let mut call = redis::cmd("FCALL");
    call.arg("courselock_extend")
        .arg(1)
        .arg(key)
        .arg(token)
        .arg(ttl.as_millis() as u64);
    let renewed: i64 = match call.query(con) {
        Err(e) if e.to_string().contains("Function not found") => {
            redis::cmd("FUNCTION").arg("LOAD").arg(LIBRARY).exec(con)?;
            call.query(con)?
        }
        other => other?,
    };
    Ok(renewed == 1)
}

/// Deletes the lock with a function that never looks at the token.
fn plain_del_function<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    _token: &str,
) -> RedisResult<bool> {
    let library = "#!lua name=courselock\nredis.register_function('courselock_release', \
                   function(keys) return redis.call('DEL', keys[1]) end)";
    redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg("REPLACE")
        .arg(library)
        .exec(con)?;
    let deleted: i64 = redis::cmd("FCALL")
        .arg("courselock_release")
        .arg(1)
        .arg(key)
        .query(con)?;
    Ok(deleted == 1)
}

/// Compares and deletes, and pushes a wake-up to a list of waiters named
/// after the lock (`lock-signal:` and the lock's name), which expires soon.
/// The script answers 0 when it released, 1 when the lock was not its own.
fn signalling_release<C: ConnectionLike>(con: &mut C, key: &str, token: &str) -> RedisResult<bool> {
    let not_ours: i64 = Script::new(
        r#"
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
    return 1
end
redis.call("DEL", KEYS[2])
redis.call("LPUSH", KEYS[2], 1)
redis.call("PEXPIRE", KEYS[2], ARGV[2])
redis.call("DEL", KEYS[1])
return 0
"#,
    )
    .key(key)
    .key(format!("lock-signal:{key}"))
    .arg(token)
    .arg(1_000)
    .invoke(con)?;
    Ok(not_ours == 0)
}

/// Sets every key at once if none exists (`MSETNX`); if one does, takes them
/// over only when each already holds this token (compared with `GETRANGE`),
/// then gives them the TTL.
fn msetnx_acquire<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let taken: Option<String> = Script::new(
        r#"
local pairs = {}
for _, key in ipairs(KEYS) do
    table.insert(pairs, key)
    table.insert(pairs, ARGV[1])
end
if redis.call("MSETNX", unpack(pairs)) ~= 1 then
    local n = tonumber(ARGV[2])
    for _, key in ipairs(KEYS) do
        if redis.call("GETRANGE", key, 0, n - 1) ~= string.sub(ARGV[1], 1, n) then
            return false
        end
    end
    redis.call("MSET", unpack(pairs))
end
for _, key in ipairs(KEYS) do
    redis.call("PEXPIRE", key, ARGV[3])
end
return redis.status_reply("OK")
"#,
    )
    .key(key)
    .arg(token)
    .arg(token.len())
    .arg(ttl.as_millis() as u64)
    .invoke(con)?;
    Ok(taken.is_some())
}

/// Renews as the reference does, and reads Redis's clock before and after,
/// as a lock that logs how long its renewals take would; a clock that ran
/// backwards is an error worth reporting.
fn timed_extend<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let before = redis_now(con)?;
    let renewed = grader::reference::extend::extend(con, key, token, ttl)?;
    if redis_now(con)? < before {
        return Err(redis::RedisError::from((
            redis::ErrorKind::Client,
            "Redis's clock ran backwards during a renewal",
        )));
    }
    Ok(renewed)
}

/// Redis's `TIME`, as a duration since the epoch.
pub(super) fn redis_now<C: ConnectionLike>(con: &mut C) -> RedisResult<Duration> {
    let (secs, micros): (u64, u64) = redis::cmd("TIME").query(con)?;
    Ok(Duration::from_secs(secs) + Duration::from_micros(micros))
}

/// Acquires as the reference does, then waits (briefly) for as many replicas
/// as `INFO replication` lists to have the write.
fn replicated_acquire<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let taken = grader::reference::acquire::acquire(con, key, token, ttl)?;
    if taken {
        let info: String = redis::cmd("INFO").arg("replication").query(con)?;
        let replicas: u64 = info
            .lines()
            .find_map(|l| l.strip_prefix("connected_slaves:"))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0);
        let _acked: u64 = redis::cmd("WAIT").arg(replicas).arg(50).query(con)?;
    }
    Ok(taken)
}

/// Asks Redis for the TTL plus 1 ms, as php-lock does on purpose: Redis may
/// expire a key up to a millisecond late, and the lock rather holds on that
/// millisecond than lets a second holder in early by its own reckoning.
fn one_ms_more<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    grader::reference::acquire::acquire(con, key, token, ttl + Duration::from_millis(1))
}

/// Asks for 100 ms less than the TTL it was given.
fn hundred_ms_short<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let ttl = ttl.saturating_sub(Duration::from_millis(100));
    grader::reference::acquire::acquire(con, key, token, ttl)
}

/// Takes the lock with `SET … NX PX`, and when refused, releases with its own
/// token, as rslock and node-redlock do (on one node, a partial grant left
/// behind by a failed attempt): harmless, since the key holds someone else's
/// token, and a token is never used for two acquisitions.
fn cleaning_acquire<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let taken = grader::reference::acquire::acquire(con, key, token, ttl)?;
    if !taken {
        grader::reference::release::release(con, key, token)?;
    }
    Ok(taken)
}

/// `n` characters drawn uniformly from `alphabet`, by rejection from the
/// operating system's random bytes (no bias from a modulo).
fn random_text(alphabet: &[u8], n: usize) -> String {
    let mut out = String::with_capacity(n);
    let limit = 256 - 256 % alphabet.len();
    while out.len() < n {
        let mut byte = [0u8; 1];
        getrandom::fill(&mut byte).expect("the operating system's random source failed");
        if (byte[0] as usize) < limit {
            out.push(alphabet[byte[0] as usize % alphabet.len()] as char);
        }
    }
    out
}

/// 22 base-62 digits: about 131 random bits.
fn base62_token() -> String {
    random_text(
        b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
        22,
    )
}

/// 20 base-36 digits: about 103 random bits.
fn base36_token() -> String {
    random_text(b"0123456789abcdefghijklmnopqrstuvwxyz", 20)
}

/// `Math.random()` (a double of 52 random bits in [0, 1), as V8's
/// xorshift128+ makes it: the bits over 2^52), printed in base 36 as V8's
/// `Number.prototype.toString(36)` printed a fraction until 2017: times 36
/// in a double, the integer part a digit, until nothing is left; the digits
/// after `0.`.
fn math_random_base36() -> String {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).expect("the operating system's random source failed");
    let bits = u64::from_le_bytes(bytes) >> 12;
    let mut fraction = bits as f64 / (1u64 << 52) as f64;
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = String::new();
    while fraction > 0.0 {
        fraction *= 36.0;
        let digit = fraction.floor();
        out.push(digits[digit as usize] as char);
        fraction -= digit;
    }
    out
}
