//! The grader's side of Redis in a history: setting the keys up as the
//! history starts, and reading them back after every step.

use std::sync::LazyLock;

use redis::Script;

use super::history::History;
use crate::error::GradeError;
use crate::model::{Baseline, Observed};
use crate::world::{SAFETY_TTL_MS, World};

/// Reads the lock key, the counter and the row in one round trip; a key of
/// the wrong type reads as `<hash>` and the like.
static OBSERVE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
local function read(command, key, field)
    local v
    if field then v = redis.pcall(command, key, field) else v = redis.pcall(command, key) end
    if type(v) == "table" and v.err then return "<" .. redis.call("TYPE", key).ok .. ">" end
    return v
end
return cjson.encode({
    read("GET", KEYS[1]), read("GET", KEYS[2]),
    read("HGET", KEYS[3], "value"), read("HGET", KEYS[3], "fence"),
})
"#,
    )
});

/// Sets the keys up as the history's start says; returns the expiries the
/// grader gave the counter and the row.
pub fn set_up(world: &mut World, h: &History) -> Result<Baseline, GradeError> {
    let keys = world.keys.clone();
    let mut pipe = redis::pipe();
    pipe.atomic();
    if let Some(n) = h.start.counter {
        pipe.cmd("SET")
            .arg(&keys.fence)
            .arg(n)
            .arg("PX")
            .arg(SAFETY_TTL_MS);
    }
    let mut fields: Vec<(&str, String)> = Vec::new();
    if let Some(v) = h.start.row_value {
        fields.push(("value", v.to_string()));
    }
    if let Some(f) = h.start.row_fence {
        fields.push(("fence", f.to_string()));
    }
    if !fields.is_empty() {
        pipe.cmd("HSET").arg(&keys.row).arg(&fields[..]);
        pipe.cmd("PEXPIRE").arg(&keys.row).arg(SAFETY_TTL_MS);
    }
    if let Some((client, ttl_ms)) = h.start.lock {
        pipe.cmd("SET")
            .arg(&keys.lock)
            .arg(&h.tokens[client])
            .arg("PX")
            .arg(ttl_ms);
    }
    let mut asked = vec![SAFETY_TTL_MS];
    asked.extend(h.start.lock.map(|(_, ttl_ms)| ttl_ms));
    world.timed(&asked, |con| Ok(pipe.exec(con)?))?;
    let [counter, row] = world.expiries([&keys.fence, &keys.row])?;
    Ok(Baseline { counter, row })
}

/// What Redis holds now.
pub fn observe(world: &mut World) -> Result<Observed, GradeError> {
    // The values as Redis holds them, then a look of the clock (which notes any TTL the last
    // command set) and the keys' virtual expiries: one round trip. (The read sets no TTL.)
    let keys = world.keys.clone();
    let (json, [lock_expiry, counter_expiry, row_expiry]): (String, _) = world.read_and_look(
        &OBSERVE,
        &[&keys.lock, &keys.fence, &keys.row],
        [&keys.lock, &keys.fence, &keys.row],
    )?;
    let values: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap_or_default();
    // A key name the lock wrote as a value is shown without the run's prefix,
    // so that the report reads the same on every run.
    let text = |i: usize| {
        values
            .get(i)
            .and_then(|v| v.as_str())
            .map(|v| keys.display(v))
    };
    Ok(Observed {
        lock: text(0),
        lock_expiry: Some(lock_expiry),
        counter: text(1),
        counter_expiry: Some(counter_expiry),
        row_value: text(2),
        row_fence: text(3),
        row_expiry: Some(row_expiry),
    })
}
