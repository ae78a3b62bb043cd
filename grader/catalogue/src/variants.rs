//! Correct locks written differently from the reference.
//!
//! The grader judges behaviour, not code: each of these sends other commands
//! than the reference, and every one must pass every check.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redis::{
    Commands, ConnectionLike, ExistenceCheck, RedisResult, Script, SetExpiry, SetOptions, Value,
};

use grader::lock::Lock;
use grader::reference::LOCK as REFERENCE;

/// Every correct variant.
pub const ALL: &[Lock] = &[
    Lock {
        name: "Redlock in milliseconds, EVAL release",
        redlock_acquire: super::redlock::in_milliseconds,
        redlock_release: super::redlock::eval_release,
        ..REFERENCE
    },
    Lock {
        name: "Redlock with 1 % of the TTL rounded up",
        redlock_acquire: super::redlock::drift_rounded_up,
        ..REFERENCE
    },
    Lock {
        name: "SetOptions, base64 tokens",
        new_token: base64_token,
        acquire: with_set_options,
        ..REFERENCE
    },
    Lock {
        name: "PX before NX, UUID tokens",
        new_token: uuid_token,
        acquire: px_before_nx,
        ..REFERENCE
    },
    Lock {
        name: "PXAT",
        acquire: with_pxat,
        ..REFERENCE
    },
    Lock {
        name: "EVAL, nil-or-OK release",
        release: eval_release,
        ..REFERENCE
    },
    Lock {
        name: "WATCH/MULTI release",
        release: watch_release,
        ..REFERENCE
    },
    Lock {
        name: "INCR before SET in one script",
        acquire_fenced: incr_first,
        ..REFERENCE
    },
    Lock {
        name: "string verdicts from the storage",
        fenced_write: worded_write,
        fenced_read: worded_read,
        ..REFERENCE
    },
    Lock {
        name: "WATCH/MULTI storage",
        fenced_write: optimistic_write,
        ..REFERENCE
    },
    // ---- Tokens of 122 or more random bits in other encodings: the
    // random-bit count of `token::unguessable` must pass each on every run.
    Lock {
        name: "unpadded hex tokens",
        new_token: unpadded_hex_token,
        ..REFERENCE
    },
    Lock {
        name: "uppercase hex tokens",
        new_token: uppercase_hex_token,
        ..REFERENCE
    },
    Lock {
        name: "decimal u128 tokens",
        new_token: decimal_u128_token,
        ..REFERENCE
    },
    Lock {
        name: "decimal 20-byte tokens",
        new_token: decimal_20_byte_token,
        ..REFERENCE
    },
    Lock {
        name: "padded standard base64 tokens",
        new_token: padded_base64_token,
        ..REFERENCE
    },
    Lock {
        name: "simple UUID tokens",
        new_token: simple_uuid_token,
        ..REFERENCE
    },
    Lock {
        name: "prefixed hex tokens",
        new_token: prefixed_hex_token,
        ..REFERENCE
    },
];

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    // As in the reference: a broken OS random source must not pass silently.
    getrandom::fill(&mut bytes).expect("the operating system's random source failed");
    bytes
}

/// 16 random bytes in URL-safe base64, without padding (22 characters).
fn base64_token() -> String {
    base64(
        &random_bytes::<16>(),
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
        false,
    )
}

/// `bytes` in base64 with `alphabet`, padded with `=` to a multiple of 4
/// characters if `pad`.
fn base64(bytes: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
    let mut bits: u32 = 0;
    let mut held = 0;
    let mut out = String::new();
    for &b in bytes {
        bits = (bits << 8) | b as u32;
        held += 8;
        while held >= 6 {
            held -= 6;
            out.push(alphabet[((bits >> held) & 63) as usize] as char);
        }
    }
    if held > 0 {
        out.push(alphabet[((bits << (6 - held)) & 63) as usize] as char);
    }
    while pad && !out.len().is_multiple_of(4) {
        out.push('=');
    }
    out
}

/// A UUID version 4: 122 random bits.
fn uuid_token() -> String {
    let mut b = random_bytes::<16>();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// redis-rs's typed options, through the `Commands` trait.
fn with_set_options<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let options = SetOptions::default()
        .conditional_set(ExistenceCheck::NX)
        .with_expiration(SetExpiry::PX(ttl.as_millis() as u64));
    let reply: Option<String> = con.set_options(key, token, options)?;
    Ok(reply.is_some())
}

/// The options in the other order.
fn px_before_nx<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let reply: Value = redis::cmd("SET")
        .arg(key)
        .arg(token)
        .arg("PX")
        .arg(ttl.as_millis() as u64)
        .arg("NX")
        .query(con)?;
    Ok(reply == Value::Okay)
}

/// An absolute expiry from the local clock.
fn with_pxat<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let until = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        + ttl;
    let reply: Option<String> = redis::cmd("SET")
        .arg(key)
        .arg(token)
        .arg("NX")
        .arg("PXAT")
        .arg(until.as_millis() as u64)
        .query(con)?;
    Ok(reply.is_some())
}

/// EVAL with the script text each time, answering "OK" or nil.
fn eval_release<C: ConnectionLike>(con: &mut C, key: &str, token: &str) -> RedisResult<bool> {
    let script = r#"if redis.call("get", KEYS[1]) == ARGV[1] then redis.call("del", KEYS[1]); return "OK" end return nil"#;
    let reply: Option<String> = redis::cmd("EVAL")
        .arg(script)
        .arg(1)
        .arg(key)
        .arg(token)
        .query(con)?;
    Ok(reply.is_some())
}

/// Optimistic: WATCH the key, check it, delete it in a transaction that
/// Redis aborts if the key changed since the WATCH: the release of
/// [`super::unseen::watch_left_after_an_error`], which after a failed command
/// leaves no WATCH behind here (the connection's next transaction would
/// abort for it).
fn watch_release<C: ConnectionLike>(con: &mut C, key: &str, token: &str) -> RedisResult<bool> {
    let checked = super::unseen::watch_left_after_an_error(con, key, token);
    if checked.is_err() {
        // The error is what the caller hears; a connection gone takes its WATCH with it.
        let _ = redis::cmd("UNWATCH").exec(con);
    }
    checked
}

/// The counter first, then the lock, in one script: a denied attempt uses up
/// a number, but numbers still only grow.
fn incr_first<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    fence: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<Option<u64>> {
    let script = Script::new(
        r#"
local t = redis.call("INCR", KEYS[2])
if redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2], "NX") then return t end
return nil
"#,
    );
    script
        .key(key)
        .key(fence)
        .arg(token)
        .arg(ttl.as_millis() as u64)
        .invoke(con)
}

/// Answers "accepted" or "stale".
fn worded_write<C: ConnectionLike>(
    con: &mut C,
    row: &str,
    token: u64,
    value: i64,
) -> RedisResult<bool> {
    let script = Script::new(
        r#"
local seen = redis.call("HGET", KEYS[1], "fence")
if seen and tonumber(seen) > tonumber(ARGV[1]) then return "stale" end
redis.call("HSET", KEYS[1], "fence", ARGV[1], "value", ARGV[2])
return "accepted"
"#,
    );
    let verdict: String = script.key(row).arg(token).arg(value).invoke(con)?;
    Ok(verdict == "accepted")
}

/// Answers `{ "ok", value }` or `{ "stale" }`.
fn worded_read<C: ConnectionLike>(con: &mut C, row: &str, token: u64) -> RedisResult<Option<i64>> {
    let script = Script::new(
        r#"
local seen = redis.call("HGET", KEYS[1], "fence")
if seen and tonumber(seen) > tonumber(ARGV[1]) then return { "stale" } end
redis.call("HSET", KEYS[1], "fence", ARGV[1])
return { "ok", redis.call("HGET", KEYS[1], "value") or "0" }
"#,
    );
    let reply: Vec<String> = script.key(row).arg(token).invoke(con)?;
    Ok(match reply.as_slice() {
        [ok, value] if ok == "ok" => value.parse().ok(),
        _ => None,
    })
}

/// WATCH the row, check the token, write in a transaction; try again if the
/// row changed in between.
fn optimistic_write<C: ConnectionLike>(
    con: &mut C,
    row: &str,
    token: u64,
    value: i64,
) -> RedisResult<bool> {
    for _ in 0..10 {
        redis::cmd("WATCH").arg(row).exec(con)?;
        let highest: Option<u64> = redis::cmd("HGET").arg(row).arg("fence").query(con)?;
        if token < highest.unwrap_or(0) {
            redis::cmd("UNWATCH").exec(con)?;
            return Ok(false);
        }
        // EXEC answers nil when the row changed since the WATCH.
        let done: Option<Vec<Value>> = redis::pipe()
            .atomic()
            .hset_multiple(row, &[("fence", token as i64), ("value", value)])
            .query(con)?;
        if done.is_some() {
            return Ok(true);
        }
    }
    Err(redis::RedisError::from(std::io::Error::other(
        "the row kept changing",
    )))
}

// ---------------------------------------------------------------- tokens

/// 16 random bytes as one number.
fn random_u128() -> u128 {
    u128::from_be_bytes(random_bytes::<16>())
}

/// 128 random bits as hex without leading zeros: 32 digits or fewer.
fn unpadded_hex_token() -> String {
    format!("{:x}", random_u128())
}

/// 128 random bits as 32 uppercase hex digits.
fn uppercase_hex_token() -> String {
    format!("{:032X}", random_u128())
}

/// 128 random bits in decimal: up to 39 digits.
fn decimal_u128_token() -> String {
    random_u128().to_string()
}

/// 20 random bytes as one big decimal number: up to 49 digits.
fn decimal_20_byte_token() -> String {
    let mut n = random_bytes::<20>();
    let mut digits = Vec::new();
    // Long division by ten, most significant byte first, until nothing is left.
    while n.iter().any(|&b| b != 0) {
        let mut rest = 0u32;
        for b in n.iter_mut() {
            let v = (rest << 8) | *b as u32;
            *b = (v / 10) as u8;
            rest = v % 10;
        }
        digits.push(char::from(b'0' + rest as u8));
    }
    if digits.is_empty() {
        digits.push('0');
    }
    digits.iter().rev().collect()
}

/// 20 random bytes in standard base64 with padding (28 characters).
fn padded_base64_token() -> String {
    base64(
        &random_bytes::<20>(),
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
        true,
    )
}

/// A UUID version 4 without hyphens (32 hex digits).
fn simple_uuid_token() -> String {
    uuid_token().replace('-', "")
}

/// A fixed prefix, then 16 random bytes as hex.
fn prefixed_hex_token() -> String {
    let hex: String = random_bytes::<16>()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("lock-{hex}")
}
