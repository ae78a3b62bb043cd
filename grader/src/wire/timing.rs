//! The virtual clock's answers on the single server's wire: `TIME`, `PTTL`
//! and `TTL` read on virtual time, and the judge's wall clock for a lock that
//! computes an instant of its own (`PXAT`).
//!
//! Redis's own answers count real milliseconds, which drift with the grader's
//! own work, so the same history would read differently from run to run (and
//! a lock that reads its TTL would see real time pass).

use redis::{RedisResult, Value};

use super::world::OnWorld;
use crate::clock::Expiry;
use crate::world::enter;

/// Where the virtual clock's `TIME` starts: 2026-01-01 00:00:00 UTC.
const TIME_ORIGIN_MS: u64 = 1_767_225_600_000;

impl OnWorld {
    /// `TIME` on the virtual clock: a fixed instant plus virtual now, so that
    /// a lock that times itself by Redis's clock reads the same on every run.
    pub(super) fn virtual_time(&self) -> RedisResult<Value> {
        let now_ms = enter(&self.world()?).now_ms();
        let micros = (TIME_ORIGIN_MS + now_ms) * 1_000;
        Ok(Value::Array(vec![
            Value::BulkString((micros / 1_000_000).to_string().into_bytes()),
            Value::BulkString((micros % 1_000_000).to_string().into_bytes()),
        ]))
    }

    /// `PTTL` and `TTL` of the command `args`, named `command`
    /// ([`crate::confine::name_of`]), answered on the virtual clock, for the
    /// keys it times; every other reply as Redis gave it.
    pub(super) fn in_virtual_time(
        &self,
        command: &str,
        args: &[Vec<u8>],
        reply: RedisResult<Value>,
    ) -> RedisResult<Value> {
        let Ok(Value::Int(real)) = reply else {
            return reply;
        };
        let unit_ms = match command {
            "PTTL" => 1,
            "TTL" => 1_000,
            _ => return Ok(Value::Int(real)),
        };
        let (Some(key), Some(world)) = (args.get(1), self.world.upgrade()) else {
            return Ok(Value::Int(real));
        };
        if real < 0 {
            return Ok(Value::Int(real));
        }
        let mut world = enter(&world);
        match world.expiry(&String::from_utf8_lossy(key)) {
            Ok(Expiry::At(at)) => {
                let left = at.saturating_sub(world.now_ms());
                // Rounded as Redis rounds TTL: to the nearest second.
                Ok(Value::Int(((left + unit_ms / 2) / unit_ms) as i64))
            }
            _ => Ok(Value::Int(real)),
        }
    }
}

/// The machine's wall clock, in ms since the epoch: the clock a lock reads
/// for `PXAT` (Redis, on this machine or in a container of it, keeps the same).
pub(super) fn wall_clock_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Whether `args` carry an instant of the wall clock (within a day of
/// `now_ms`, in ms or s): an expiry the lock computed from its own clock
/// (`PXAT`, `PEXPIREAT`, or a script's ARGV). Its TTL is then read from when
/// the command reached the grader (or up to 5 ms before, when the lock read
/// its clock), not from when Redis ran it, so that the grader's own work in
/// between is not charged to the lock.
pub(super) fn names_an_instant(args: &[Vec<u8>], now_ms: u64) -> bool {
    const DAY_MS: u64 = 86_400_000;
    args.iter().skip(1).any(|a| {
        std::str::from_utf8(a)
            .ok()
            .and_then(|a| a.parse::<u64>().ok())
            .is_some_and(|n| {
                n.abs_diff(now_ms) < DAY_MS || n.abs_diff(now_ms / 1_000) < DAY_MS / 1_000
            })
    })
}
