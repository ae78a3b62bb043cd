//! Virtual time, kept by Redis itself.
//!
//! A scenario such as "A pauses for 40 s over a 30 s TTL" must not take 40 s,
//! and must end the same way on every run, however loaded the machine. So the
//! grader never waits: it *moves the expiry* of the scenario's timed keys. When
//! virtual time advances by `d`, every timed key's expiry is brought `d`
//! closer, inside one Lua script; a key whose virtual expiry has come is
//! deleted there and then. Everything else stays real: `SET … NX` in Redis
//! decides who wins, and Redis holds the TTLs the clients set.
//!
//! The clock keeps its books in a hash of its own (one per scenario). After
//! every command a client sends, [`Clock::settle`] looks for TTLs that command
//! set and notes their virtual expiry, rounded up to [`RESOLUTION_MS`] to
//! absorb the few real milliseconds between the command and the look. Between
//! two steps of a scenario real time still passes, so a key's remaining
//! virtual TTL should stay well above what one step can take (scenarios move in
//! whole seconds).

use std::sync::LazyLock;

use redis::{Connection, RedisResult, Script};

/// TTLs are measured to this many milliseconds: a TTL is rounded up to a
/// multiple of it. The course's TTLs are all multiples of it (10 s, 30 s,
/// 1.5 s), and the few real milliseconds between a command and the look at
/// it, even a stall of up to this long on a loaded machine, are absorbed.
pub const RESOLUTION_MS: u64 = 250;

/// What the clock knows about one key's expiry, in virtual milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expiry {
    /// The key does not exist.
    Missing,
    /// The key exists and never expires.
    Never,
    /// The key expires at this virtual instant.
    At(u64),
}

/// Notes the virtual expiry of every timed key whose real expiry changed since
/// the last look (a client set or removed a TTL).
///
/// KEYS[1] is the clock's hash, KEYS[2..] the timed keys;
/// ARGV[1] is virtual now, ARGV[2] the resolution, both in milliseconds.
static SETTLE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
local now_virtual = tonumber(ARGV[1])
local resolution = tonumber(ARGV[2])
local time = redis.call("TIME")
local now_real = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
for i = 2, #KEYS do
    local key = KEYS[i]
    local real = redis.call("PEXPIRETIME", key)
    if tostring(real) ~= redis.call("HGET", KEYS[1], key .. "|real") then
        local virtual = real
        if real >= 0 then
            local left = math.max(real - now_real, 0)
            virtual = now_virtual + math.ceil(left / resolution) * resolution
        end
        redis.call("HSET", KEYS[1], key .. "|real", tostring(real), key .. "|virtual", tostring(virtual))
    end
end
return 0
"#,
    )
});

/// Moves virtual time to ARGV[1]: deletes the timed keys whose virtual expiry
/// has come, and re-anchors the others so that their real TTL again equals
/// their virtual one. Returns the names of the keys that expired.
static ADVANCE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
local now_virtual = tonumber(ARGV[1])
local time = redis.call("TIME")
local now_real = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local expired = {}
for i = 2, #KEYS do
    local key = KEYS[i]
    local virtual = tonumber(redis.call("HGET", KEYS[1], key .. "|virtual") or "-2")
    if virtual >= 0 and redis.call("PEXPIRETIME", key) >= 0 then
        if virtual <= now_virtual then
            -- Its time has come: the key is gone, as Redis would have it.
            redis.call("DEL", key)
            table.insert(expired, key)
            redis.call("HSET", KEYS[1], key .. "|real", "-2", key .. "|virtual", "-2")
        else
            local real = now_real + (virtual - now_virtual)
            redis.call("PEXPIREAT", key, real)
            redis.call("HSET", KEYS[1], key .. "|real", tostring(real))
        end
    end
end
return expired
"#,
    )
});

/// The virtual clock of one scenario.
#[derive(Debug)]
pub struct Clock {
    /// Virtual now, in milliseconds since the scenario started.
    now_ms: u64,
    /// KEYS for the scripts: the clock's own hash, then the timed keys.
    keys: Vec<String>,
}

impl Clock {
    /// A clock at virtual 0 that keeps its books in `book` and runs the
    /// expiry of `timed` keys.
    pub fn new(book: String, timed: &[String]) -> Clock {
        let mut keys = vec![book];
        keys.extend(timed.iter().cloned());
        Clock { now_ms: 0, keys }
    }

    /// Virtual now, in milliseconds.
    pub fn now_ms(&self) -> u64 {
        self.now_ms
    }

    /// Notes TTLs set since the last call; run after every client command.
    pub fn settle(&self, con: &mut Connection) -> RedisResult<()> {
        let mut call = SETTLE.prepare_invoke();
        for key in &self.keys {
            call.key(key);
        }
        call.arg(self.now_ms)
            .arg(RESOLUTION_MS)
            .invoke::<i64>(con)?;
        Ok(())
    }

    /// Moves virtual time forward to `t_ms` (never back) and returns the timed
    /// keys that expired on the way.
    pub fn advance_to(&mut self, con: &mut Connection, t_ms: u64) -> RedisResult<Vec<String>> {
        // A client command may have set a TTL that nobody has looked at yet.
        self.settle(con)?;
        self.now_ms = self.now_ms.max(t_ms);
        let mut call = ADVANCE.prepare_invoke();
        for key in &self.keys {
            call.key(key);
        }
        call.arg(self.now_ms).invoke(con)
    }

    /// The virtual expiry of a timed key, as of the last settle.
    pub fn expiry(&self, con: &mut Connection, key: &str) -> RedisResult<Expiry> {
        let virtual_ms: Option<i64> = redis::cmd("HGET")
            .arg(&self.keys[0])
            .arg(format!("{key}|virtual"))
            .query(con)?;
        Ok(match virtual_ms {
            None | Some(-2) => Expiry::Missing,
            Some(v) if v < 0 => Expiry::Never,
            Some(v) => Expiry::At(v as u64),
        })
    }
}
