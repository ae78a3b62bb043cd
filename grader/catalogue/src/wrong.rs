//! Locks with one classic mistake each.
//!
//! Every entry names the check that must fail on it and the rule that check
//! must report, so the grader's tests can hold it to that. The file is one
//! table, each entry with its lock's code beside it, and grows past 400 lines
//! with the catalogue: an entry is easier to read whole than split.

use std::time::Duration;

use redis::{ConnectionLike, RedisResult, Script};

use super::{redlock, unseen};
use grader::lock::Lock;
use grader::reference::LOCK as REFERENCE;
use grader::verdict::Property;

/// A wrong lock and how the grader must catch it.
#[derive(Clone, Copy, Debug)]
pub struct Wrong {
    /// The lock, the reference but for one function.
    pub lock: Lock,
    /// The check that must fail.
    pub fails: &'static str,
    /// The rule that check must report.
    pub breaks: Property,
}

/// Every wrong lock.
pub const ALL: &[Wrong] = &[
    Wrong {
        lock: Lock {
            name: "constant token",
            new_token: constant_token,
            ..REFERENCE
        },
        fails: "token::unique",
        breaks: Property::TokensUnique,
    },
    Wrong {
        lock: super::ported::BASE36_TOKENS,
        fails: "token::unguessable",
        breaks: Property::TokensUnguessable,
    },
    Wrong {
        lock: super::ported::FLOAT_DIGIT_TOKENS,
        fails: "token::unguessable",
        breaks: Property::TokensUnguessable,
    },
    Wrong {
        lock: Lock {
            name: "64-bit token",
            new_token: short_token,
            ..REFERENCE
        },
        fails: "token::unguessable",
        breaks: Property::TokensUnguessable,
    },
    Wrong {
        lock: Lock {
            name: "timestamp token",
            new_token: timestamp_token,
            ..REFERENCE
        },
        fails: "token::unguessable",
        breaks: Property::TokensUnguessable,
    },
    Wrong {
        lock: Lock {
            name: "SET without NX",
            acquire: set_without_nx,
            ..REFERENCE
        },
        fails: "acquire::refuses_a_held_lock",
        breaks: Property::AcquireRespectsHolder,
    },
    Wrong {
        lock: Lock {
            name: "no TTL",
            acquire: no_ttl,
            ..REFERENCE
        },
        fails: "acquire::takes_a_free_lock",
        breaks: Property::LockHasTtl,
    },
    Wrong {
        lock: Lock {
            name: "milliseconds given to EX",
            acquire: millis_as_ex,
            ..REFERENCE
        },
        fails: "acquire::sets_the_ttl_in_milliseconds",
        breaks: Property::LockHasTtl,
    },
    Wrong {
        lock: super::ported::SHORT_TTL,
        fails: "acquire::sets_the_ttl_in_milliseconds",
        breaks: Property::LockHasTtl,
    },
    Wrong {
        lock: super::ported::SHORT_PXAT,
        fails: "acquire::sets_the_ttl_in_milliseconds",
        breaks: Property::LockHasTtl,
    },
    Wrong {
        lock: super::ported::SHORT_TRANSACTION,
        fails: "acquire::sets_the_ttl_in_milliseconds",
        breaks: Property::LockHasTtl,
    },
    Wrong {
        lock: super::ported::SHORT_PIPELINED_TRANSACTION,
        fails: "acquire::sets_the_ttl_in_milliseconds",
        breaks: Property::LockHasTtl,
    },
    Wrong {
        lock: Lock {
            name: "TTL cut to whole seconds",
            acquire: whole_seconds,
            ..REFERENCE
        },
        fails: "acquire::sets_the_ttl_in_milliseconds",
        breaks: Property::LockHasTtl,
    },
    Wrong {
        lock: Lock {
            name: "seconds given to PX",
            acquire: seconds_as_px,
            ..REFERENCE
        },
        fails: "acquire::sets_the_ttl_in_milliseconds",
        breaks: Property::LockHasTtl,
    },
    Wrong {
        lock: Lock {
            name: "SET NX then EXPIRE",
            acquire: setnx_then_expire,
            ..REFERENCE
        },
        fails: "acquire::no_lock_without_ttl_after_a_crash",
        breaks: Property::NoImmortalLock,
    },
    Wrong {
        lock: Lock {
            name: "GET then SET",
            acquire: get_then_set,
            ..REFERENCE
        },
        fails: "acquire::one_winner_among_three",
        breaks: Property::OneWinner,
    },
    Wrong {
        lock: Lock {
            name: "TTL reset on a failed attempt",
            acquire: resets_ttl_when_denied,
            ..REFERENCE
        },
        fails: "acquire::refuses_a_held_lock",
        breaks: Property::AcquireLeavesHolderTtl,
    },
    Wrong {
        lock: Lock {
            name: "plain DEL release",
            release: plain_del,
            ..REFERENCE
        },
        fails: "release::leaves_another_holders_lock",
        breaks: Property::ReleaseSparesOthers,
    },
    Wrong {
        lock: super::ported::PLAIN_DEL_FUNCTION,
        fails: "release::leaves_another_holders_lock",
        breaks: Property::ReleaseSparesOthers,
    },
    Wrong {
        lock: Lock {
            name: "GET then DEL release",
            release: get_then_del,
            ..REFERENCE
        },
        fails: "release::never_deletes_a_lock_that_changed_hands",
        breaks: Property::ReleaseSparesOthers,
    },
    Wrong {
        lock: Lock {
            name: "release that always says yes",
            release: always_yes,
            ..REFERENCE
        },
        fails: "release::leaves_another_holders_lock",
        breaks: Property::ReleaseTellsTruth,
    },
    Wrong {
        lock: Lock {
            name: "SET NX then a separate INCR",
            acquire_fenced: set_then_incr,
            ..REFERENCE
        },
        fails: "fencing::lock_and_token_in_one_step",
        breaks: Property::TokensGrow,
    },
    Wrong {
        lock: Lock {
            name: "INCR then a separate SET NX",
            acquire_fenced: incr_then_set,
            ..REFERENCE
        },
        fails: "fencing::lock_and_token_in_one_step",
        breaks: Property::TokensGrow,
    },
    Wrong {
        lock: Lock {
            name: "fence checked against the value",
            fenced_write: compares_with_value,
            ..REFERENCE
        },
        fails: "storage::rejects_an_older_token",
        breaks: Property::StaleRequestsRejected,
    },
    Wrong {
        lock: Lock {
            name: "fence that refuses equal tokens",
            fenced_write: refuses_equal,
            ..REFERENCE
        },
        fails: "storage::accepts_newer_and_equal_tokens",
        breaks: Property::EqualTokensAccepted,
    },
    Wrong {
        lock: Lock {
            name: "storage that forgets the highest token",
            fenced_write: forgets_highest,
            ..REFERENCE
        },
        fails: "storage::remembers_the_highest_token",
        breaks: Property::StorageRemembersHighest,
    },
    Wrong {
        lock: Lock {
            name: "storage that checks, then writes",
            fenced_write: check_then_write,
            ..REFERENCE
        },
        fails: "storage::checks_and_writes_in_one_step",
        breaks: Property::StaleRequestsRejected,
    },
    Wrong {
        lock: Lock {
            name: "unfenced reads",
            fenced_read: unfenced_read,
            ..REFERENCE
        },
        fails: "storage::fences_reads",
        breaks: Property::StorageRemembersHighest,
    },
    // ---- Tokens with too few random bits, however they are printed: the
    // random-bit count of `token::unguessable` must fail each on every run.
    Wrong {
        lock: Lock {
            name: "32-bit token",
            new_token: token_32_bits,
            ..REFERENCE
        },
        fails: "token::unguessable",
        breaks: Property::TokensUnguessable,
    },
    Wrong {
        lock: Lock {
            name: "nanosecond clock token",
            new_token: nanosecond_token,
            ..REFERENCE
        },
        fails: "token::unguessable",
        breaks: Property::TokensUnguessable,
    },
    Wrong {
        lock: Lock {
            name: "seconds-and-nanoseconds token",
            new_token: seconds_nanos_token,
            ..REFERENCE
        },
        fails: "token::unguessable",
        breaks: Property::TokensUnguessable,
    },
    Wrong {
        lock: Lock {
            name: "counter token",
            new_token: counter_token,
            ..REFERENCE
        },
        fails: "token::unguessable",
        breaks: Property::TokensUnguessable,
    },
    Wrong {
        lock: Lock {
            name: "counter behind a random prefix",
            new_token: prefixed_counter_token,
            ..REFERENCE
        },
        fails: "token::unguessable",
        breaks: Property::TokensUnguessable,
    },
    Wrong {
        lock: Lock {
            name: "64 random bits printed twice",
            new_token: doubled_token,
            ..REFERENCE
        },
        fails: "token::unguessable",
        breaks: Property::TokensUnguessable,
    },
    Wrong {
        lock: Lock {
            name: "megabyte token",
            new_token: megabyte_token,
            ..REFERENCE
        },
        fails: "token::unguessable",
        breaks: Property::TokensUnguessable,
    },
    // Found by mutation testing (`catalogue::mutants`): before, the grader
    // crashed reading the row this storage writes, instead of failing it.
    Wrong {
        lock: Lock {
            name: "fence set to the name of the row",
            fenced_write: fence_set_to_row_name,
            ..REFERENCE
        },
        fails: "storage::accepts_newer_and_equal_tokens",
        breaks: Property::StorageRemembersHighest,
    },
    // ------------------------------------------------------------------
    // Mistakes only an explorer check catches (the code is in
    // `super::unseen`): each passes every check above but its explorer.
    Wrong {
        lock: Lock {
            name: "fence compared as a string",
            fenced_write: unseen::string_compare,
            ..REFERENCE
        },
        // As strings, "10" < "9": it takes 9 after 10, and refuses 10 after 9;
        // the explorer's seeds meet the second first (1000 after 999).
        fails: "storage::explored",
        breaks: Property::FreshTokensAccepted,
    },
    Wrong {
        lock: Lock {
            name: "read that assumes the row has a value",
            fenced_read: unseen::read_assumes_value,
            ..REFERENCE
        },
        // Such a row refuses every read, with the same token or a newer one;
        // the explorer meets the first.
        fails: "storage::explored",
        breaks: Property::EqualTokensAccepted,
    },
    Wrong {
        lock: Lock {
            name: "read that refuses a repeated token",
            fenced_read: unseen::read_refuses_repeat,
            ..REFERENCE
        },
        fails: "storage::explored",
        breaks: Property::EqualTokensAccepted,
    },
    Wrong {
        lock: Lock {
            name: "stale read that lowers the fence",
            fenced_read: unseen::read_lowers_fence,
            ..REFERENCE
        },
        fails: "storage::explored",
        breaks: Property::StorageRemembersHighest,
    },
    Wrong {
        lock: Lock {
            name: "row with a TTL",
            fenced_write: unseen::row_with_ttl,
            ..REFERENCE
        },
        fails: "storage::explored",
        breaks: Property::FencesNeverExpire,
    },
    Wrong {
        lock: Lock {
            name: "counter named after the lock",
            acquire_fenced: unseen::counter_named_after_lock,
            ..REFERENCE
        },
        // The other checks' worlds happen to name the counter this way; the
        // explorer's do not, and the lock counts on a counter of its own.
        fails: "fencing::explored",
        breaks: Property::TokensGrow,
    },
    Wrong {
        lock: Lock {
            name: "counter with a TTL",
            acquire_fenced: unseen::counter_with_ttl,
            ..REFERENCE
        },
        fails: "fencing::explored",
        breaks: Property::FencesNeverExpire,
    },
    Wrong {
        lock: Lock {
            name: "release that deletes and puts back",
            release: unseen::delete_and_put_back,
            ..REFERENCE
        },
        fails: "release::explored",
        breaks: Property::ReleaseSparesOthers,
    },
    Wrong {
        lock: Lock {
            name: "WATCH release that keeps its WATCH after an error",
            release: unseen::watch_left_after_an_error,
            ..REFERENCE
        },
        // Only a fault between the WATCH and the EXEC, then the same client's
        // next release, shows it.
        fails: "release::explored",
        breaks: Property::ReleaseFreesOwnLock,
    },
    Wrong {
        lock: Lock {
            name: "SET NX, then PEXPIRE every time",
            acquire: unseen::expire_every_time,
            ..REFERENCE
        },
        // A refused attempt refreshes the holder's TTL, and a fault between
        // its two commands leaves a lock without one; the explorer's seeds
        // meet the second first.
        fails: "acquire::explored",
        breaks: Property::NoImmortalLock,
    },
    Wrong {
        lock: Lock {
            name: "TTL truncated to a multiple of 100 ms",
            acquire: unseen::ttl_cut_to_100_ms,
            ..REFERENCE
        },
        // Only a TTL off the 100 ms grid (1,337 ms) shows it.
        fails: "acquire::explored",
        breaks: Property::LockHasTtl,
    },
    Wrong {
        lock: Lock {
            name: "Redlock with a quorum of 2",
            redlock_acquire: redlock::minority_quorum,
            ..REFERENCE
        },
        fails: "redlock::refuses_without_a_majority",
        breaks: Property::RedlockNeedsMajority,
    },
    Wrong {
        lock: Lock {
            name: "Redlock ignoring the time spent",
            redlock_acquire: redlock::ignores_time_spent,
            ..REFERENCE
        },
        fails: "redlock::counts_the_time_spent",
        breaks: Property::RedlockValidity,
    },
    Wrong {
        lock: Lock {
            name: "Redlock keeping a failed lock",
            redlock_acquire: redlock::no_release_on_failure,
            ..REFERENCE
        },
        fails: "redlock::refuses_without_a_majority",
        breaks: Property::RedlockReleasesOnFailure,
    },
    Wrong {
        lock: Lock {
            name: "Redlock without drift",
            redlock_acquire: redlock::no_drift_allowance,
            ..REFERENCE
        },
        fails: "redlock::takes_a_majority",
        breaks: Property::RedlockValidity,
    },
    Wrong {
        lock: Lock {
            name: "Redlock timed by one node",
            redlock_acquire: redlock::trusts_one_nodes_clock,
            ..REFERENCE
        },
        fails: "redlock::counts_the_time_spent",
        breaks: Property::RedlockValidity,
    },
    Wrong {
        lock: Lock {
            name: "Redlock releasing only where it heard OK",
            redlock_acquire: redlock::releases_only_where_it_heard_ok,
            ..REFERENCE
        },
        // Only a node whose OK was lost tells it apart: the explorer's faults make one.
        fails: "redlock::explored",
        breaks: Property::RedlockReleasesOnFailure,
    },
    Wrong {
        lock: Lock {
            name: "Redlock timed to its majority",
            redlock_acquire: redlock::validity_from_the_majority,
            ..REFERENCE
        },
        // Its validity is too long whenever a node after the majority costs
        // time; the explorer first meets a round that left nothing at all.
        fails: "redlock::explored",
        breaks: Property::RedlockNeedsMajority,
    },
    Wrong {
        lock: Lock {
            name: "Redlock returning an expired lock",
            redlock_acquire: redlock::returns_an_expired_lock,
            ..REFERENCE
        },
        fails: "redlock::explored",
        breaks: Property::RedlockNeedsMajority,
    },
    Wrong {
        lock: Lock {
            name: "Redlock that wants a tenth of its TTL left",
            redlock_acquire: redlock::wants_a_tenth_left,
            ..REFERENCE
        },
        // Its refusal's own release costs the time that, counted in, would excuse it: the
        // explorer judges a refusal by when the lock last read its clock.
        fails: "redlock::explored",
        breaks: Property::RedlockTakesMajority,
    },
    Wrong {
        lock: Lock {
            name: "Redlock wrapping past its TTL",
            redlock_acquire: redlock::wraps_past_the_ttl,
            ..REFERENCE
        },
        fails: "redlock::explored",
        breaks: Property::RedlockNeedsMajority,
    },
    Wrong {
        lock: Lock {
            name: "Redlock released with DEL",
            redlock_release: redlock::release_with_del,
            ..REFERENCE
        },
        fails: "redlock::release_spares_another_holder",
        breaks: Property::ReleaseSparesOthers,
    },
    Wrong {
        lock: Lock {
            name: "Redlock released with GET then DEL",
            redlock_release: redlock::release_get_then_del,
            ..REFERENCE
        },
        fails: "redlock::release_compares_and_deletes_in_one_step",
        breaks: Property::ReleaseSparesOthers,
    },
];

/// The same token every time: two clients then release each other's locks.
fn constant_token() -> String {
    "my-lock-token".into()
}

/// 8 random bytes: unique in practice, but only 64 bits to guess.
fn short_token() -> String {
    let mut bytes = [0u8; 8];
    let _ = getrandom::fill(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A clock reading plus a counter: "not as safe", say the Redis docs, since
/// it can be predicted.
fn timestamp_token() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let micros = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros());
    format!("{micros}-{}", N.fetch_add(1, Ordering::Relaxed))
}

/// Overwrites whoever holds the lock.
fn set_without_nx<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    redis::cmd("SET")
        .arg(key)
        .arg(token)
        .arg("PX")
        .arg(ttl.as_millis() as u64)
        .exec(con)?;
    Ok(true)
}

/// Never expires: a crashed holder blocks everyone for ever.
fn no_ttl<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    _ttl: Duration,
) -> RedisResult<bool> {
    let reply: Option<String> = redis::cmd("SET").arg(key).arg(token).arg("NX").query(con)?;
    Ok(reply.is_some())
}

/// EX counts seconds: 10 000 ms become 10 000 s.
fn millis_as_ex<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let reply: Option<String> = redis::cmd("SET")
        .arg(key)
        .arg(token)
        .arg("NX")
        .arg("EX")
        .arg(ttl.as_millis() as u64)
        .query(con)?;
    Ok(reply.is_some())
}

/// `as_secs()` drops the fraction: 1.5 s becomes 1 s.
fn whole_seconds<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let reply: Option<String> = redis::cmd("SET")
        .arg(key)
        .arg(token)
        .arg("NX")
        .arg("EX")
        .arg(ttl.as_secs())
        .query(con)?;
    Ok(reply.is_some())
}

/// Seconds where PX wants milliseconds: 1.5 s becomes 1 ms, and the lock is
/// gone before anyone can look at it.
fn seconds_as_px<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let reply: Option<String> = redis::cmd("SET")
        .arg(key)
        .arg(token)
        .arg("NX")
        .arg("PX")
        .arg(ttl.as_secs())
        .query(con)?;
    Ok(reply.is_some())
}

/// Two commands: a crash between them leaves a key without a TTL.
fn setnx_then_expire<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let taken: bool = redis::cmd("SETNX").arg(key).arg(token).query(con)?;
    if taken {
        redis::cmd("PEXPIRE")
            .arg(key)
            .arg(ttl.as_millis() as u64)
            .exec(con)?;
    }
    Ok(taken)
}

/// Check, then set: several clients can all see "free".
fn get_then_set<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let holder: Option<String> = redis::cmd("GET").arg(key).query(con)?;
    if holder.is_some() {
        return Ok(false);
    }
    redis::cmd("SET")
        .arg(key)
        .arg(token)
        .arg("PX")
        .arg(ttl.as_millis() as u64)
        .exec(con)?;
    Ok(true)
}

/// Refreshes the TTL even when someone else holds the lock: contenders keep a
/// dead holder's lock alive for ever.
fn resets_ttl_when_denied<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let reply: Option<String> = redis::cmd("SET")
        .arg(key)
        .arg(token)
        .arg("NX")
        .arg("PX")
        .arg(ttl.as_millis() as u64)
        .query(con)?;
    if reply.is_none() {
        redis::cmd("PEXPIRE")
            .arg(key)
            .arg(ttl.as_millis() as u64)
            .exec(con)?;
    }
    Ok(reply.is_some())
}

/// Deletes the key whoever holds it.
fn plain_del<C: ConnectionLike>(con: &mut C, key: &str, _token: &str) -> RedisResult<bool> {
    let deleted: i64 = redis::cmd("DEL").arg(key).query(con)?;
    Ok(deleted == 1)
}

/// Compares, then deletes, as two commands: the lock can change hands between them.
fn get_then_del<C: ConnectionLike>(con: &mut C, key: &str, token: &str) -> RedisResult<bool> {
    let holder: Option<String> = redis::cmd("GET").arg(key).query(con)?;
    if holder.as_deref() != Some(token) {
        return Ok(false);
    }
    let deleted: i64 = redis::cmd("DEL").arg(key).query(con)?;
    Ok(deleted == 1)
}

/// Safe, but reports success it did not have.
fn always_yes<C: ConnectionLike>(con: &mut C, key: &str, token: &str) -> RedisResult<bool> {
    grader::reference::release::release(con, key, token)?;
    Ok(true)
}

/// The lock, then the token, in two commands.
fn set_then_incr<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    fence: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<Option<u64>> {
    let reply: Option<String> = redis::cmd("SET")
        .arg(key)
        .arg(token)
        .arg("NX")
        .arg("PX")
        .arg(ttl.as_millis() as u64)
        .query(con)?;
    if reply.is_none() {
        return Ok(None);
    }
    Ok(Some(redis::cmd("INCR").arg(fence).query(con)?))
}

/// The token, then the lock, in two commands.
fn incr_then_set<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    fence: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<Option<u64>> {
    let fencing_token: u64 = redis::cmd("INCR").arg(fence).query(con)?;
    let reply: Option<String> = redis::cmd("SET")
        .arg(key)
        .arg(token)
        .arg("NX")
        .arg("PX")
        .arg(ttl.as_millis() as u64)
        .query(con)?;
    Ok(reply.map(|_| fencing_token))
}

/// Runs a storage write script (KEYS[1] the row, ARGV the token and the
/// value, 1 for accepted): the wrong storages differ only in their Lua.
fn write_with<C: ConnectionLike>(
    con: &mut C,
    source: &str,
    row: &str,
    token: u64,
    value: i64,
) -> RedisResult<bool> {
    let accepted: i64 = Script::new(source)
        .key(row)
        .arg(token)
        .arg(value)
        .invoke(con)?;
    Ok(accepted == 1)
}

/// Compares the token with the counter instead of the highest token.
fn compares_with_value<C: ConnectionLike>(
    con: &mut C,
    row: &str,
    token: u64,
    value: i64,
) -> RedisResult<bool> {
    let source = r#"
local current = tonumber(redis.call("HGET", KEYS[1], "value")) or 0
if tonumber(ARGV[1]) < current then return 0 end
redis.call("HSET", KEYS[1], "fence", ARGV[1], "value", ARGV[2])
return 1
"#;
    write_with(con, source, row, token, value)
}

/// `KEYS[1]` where `ARGV[1]` belongs: the fence field holds the row's name,
/// which no token is ever compared against again.
fn fence_set_to_row_name<C: ConnectionLike>(
    con: &mut C,
    row: &str,
    token: u64,
    value: i64,
) -> RedisResult<bool> {
    let source = r#"
local highest = tonumber(redis.call("HGET", KEYS[1], "fence")) or 0
if tonumber(ARGV[1]) < highest then return 0 end
redis.call("HSET", KEYS[1], "fence", KEYS[1], "value", ARGV[2])
return 1
"#;
    write_with(con, source, row, token, value)
}

/// `<=` where `<` belongs: the holder's second write is refused.
fn refuses_equal<C: ConnectionLike>(
    con: &mut C,
    row: &str,
    token: u64,
    value: i64,
) -> RedisResult<bool> {
    let source = r#"
local highest = tonumber(redis.call("HGET", KEYS[1], "fence")) or 0
if tonumber(ARGV[1]) <= highest then return 0 end
redis.call("HSET", KEYS[1], "fence", ARGV[1], "value", ARGV[2])
return 1
"#;
    write_with(con, source, row, token, value)
}

/// Checks the token but never stores it: every token passes.
fn forgets_highest<C: ConnectionLike>(
    con: &mut C,
    row: &str,
    token: u64,
    value: i64,
) -> RedisResult<bool> {
    let source = r#"
local highest = tonumber(redis.call("HGET", KEYS[1], "fence")) or 0
if tonumber(ARGV[1]) < highest then return 0 end
redis.call("HSET", KEYS[1], "value", ARGV[2])
return 1
"#;
    write_with(con, source, row, token, value)
}

/// Reads the highest token, compares in Rust, then writes: a newer write can
/// land in between and be overwritten.
fn check_then_write<C: ConnectionLike>(
    con: &mut C,
    row: &str,
    token: u64,
    value: i64,
) -> RedisResult<bool> {
    let highest: Option<u64> = redis::cmd("HGET").arg(row).arg("fence").query(con)?;
    if token < highest.unwrap_or(0) {
        return Ok(false);
    }
    redis::cmd("HSET")
        .arg(row)
        .arg("fence")
        .arg(token)
        .arg("value")
        .arg(value)
        .exec(con)?;
    Ok(true)
}

/// Reads without checking or remembering the token.
fn unfenced_read<C: ConnectionLike>(
    con: &mut C,
    row: &str,
    _token: u64,
) -> RedisResult<Option<i64>> {
    let value: Option<i64> = redis::cmd("HGET").arg(row).arg("value").query(con)?;
    Ok(Some(value.unwrap_or(0)))
}

// ---------------------------------------------------------------- weak tokens

/// `N` bytes from the OS random source; zeros if it fails, which these
/// wrong tokens can afford.
fn os_random<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    let _ = getrandom::fill(&mut bytes);
    bytes
}

/// The time since the Unix epoch (zero before it).
fn since_epoch() -> std::time::Duration {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
}

/// 4 random bytes: 4 billion tokens, tried in minutes.
fn token_32_bits() -> String {
    format!("{:08x}", u32::from_be_bytes(os_random::<4>()))
}

/// Nanoseconds since the epoch: anyone who knows roughly when the lock was
/// taken can try the few million values around it.
fn nanosecond_token() -> String {
    since_epoch().as_nanos().to_string()
}

/// Seconds, then nanoseconds, unpadded: the same clock in other digits.
fn seconds_nanos_token() -> String {
    let t = since_epoch();
    format!("{}{}", t.as_secs(), t.subsec_nanos())
}

/// A process-wide counter: the next token is the last one plus one.
fn counter_token() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed).to_string()
}

/// A random prefix drawn once per process, then a counter: one token gives
/// away every later one.
fn prefixed_counter_token() -> String {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};
    static PREFIX: OnceLock<u64> = OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let prefix = PREFIX.get_or_init(|| u64::from_be_bytes(os_random::<8>()));
    format!("{prefix:016x}-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// 32 hex digits, but the second half repeats the first: 64 random bits.
fn doubled_token() -> String {
    let r = u64::from_be_bytes(os_random::<8>());
    format!("{r:016x}{r:016x}")
}

/// 20 random bytes as hex, then a megabyte of zeros: too long to be a token.
fn megabyte_token() -> String {
    let hex: String = os_random::<20>()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    hex + &"0".repeat(1 << 20)
}
