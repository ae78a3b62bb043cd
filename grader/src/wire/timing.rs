//! The virtual clock's answers on the single server's wire: `TIME`, `PTTL`,
//! `TTL`, `PEXPIRETIME` and `EXPIRETIME` read on virtual time, the instants a
//! lock computed from that `TIME` put back on Redis's real clock, and the
//! judge's wall clock for a lock that computes an instant of its own (`PXAT`).
//!
//! Redis's own answers count real milliseconds, which drift with the grader's
//! own work, so the same history would read differently from run to run (and
//! a lock that reads its TTL would see real time pass).
//!
//! Two lines of time meet here. The lock reads the *virtual* line: `TIME` is a
//! fixed date plus virtual now. Redis keeps the *real* one: an absolute
//! expiry (`SET … PXAT`, `PEXPIREAT`, their second-counting twins, or an
//! instant handed to a script) is compared with its own wall clock. A lock that
//! computes `TIME + ttl` would otherwise hand Redis an instant months in the
//! past, and its key would be gone at once. So the wire moves each such
//! instant to the real line before it goes out ([`to_real_line`]): by the
//! distance between virtual now and an anchor, the real instant the command
//! is taken to run at, which is also the instant the clock reads its TTL
//! from. The TTL so read is the one the lock asked for, to the millisecond,
//! on every run; the real instants never reach the record, which shows the
//! command as the lock sent it.

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

    /// `PTTL`, `TTL`, `PEXPIRETIME` and `EXPIRETIME` of the command `args`,
    /// named `command` ([`crate::confine::name_of`]), answered on the virtual
    /// clock, for the keys it times; every other reply as Redis gave it.
    pub(super) fn in_virtual_time(
        &self,
        command: &str,
        args: &[Vec<u8>],
        reply: RedisResult<Value>,
    ) -> RedisResult<Value> {
        let Ok(Value::Int(real)) = reply else {
            return reply;
        };
        let (unit_ms, absolute) = match command {
            "PTTL" => (1, false),
            "TTL" => (1_000, false),
            "PEXPIRETIME" => (1, true),
            "EXPIRETIME" => (1_000, true),
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
            // As Redis answers EXPIRETIME: whole seconds, cut.
            Ok(Expiry::At(at)) if absolute => {
                Ok(Value::Int(((TIME_ORIGIN_MS + at) / unit_ms) as i64))
            }
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
    args.iter().skip(1).any(|a| {
        std::str::from_utf8(a)
            .ok()
            .and_then(|a| a.parse::<u64>().ok())
            .is_some_and(|n| {
                n.abs_diff(now_ms) < DAY_MS || n.abs_diff(now_ms / 1_000) < DAY_MS / 1_000
            })
    })
}

/// How far an instant on the virtual line may lie from virtual now to be
/// taken for one, in ms: a day, as for the wall clock's.
const DAY_MS: u64 = 86_400_000;

/// A command whose instants on the virtual line were moved to the real one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct OnRealLine {
    /// The command as it goes to Redis.
    pub(super) args: Vec<Vec<u8>>,
    /// The real instant, in ms, taken for virtual now: the command's TTLs are
    /// read from it.
    pub(super) anchor_ms: u64,
}

/// The command `args` (as admitted: keys in the namespace) with every instant
/// it carries on the virtual line moved to the real line, or `None` when it
/// carries none. `now_ms` is virtual now, `received_ms` the wall clock when
/// the command reached the wire.
///
/// An instant is a number where Redis reads one: after `PXAT` or `EXAT` in
/// `SET` and `GETEX`, the expiry of `PEXPIREAT` and `EXPIREAT`, and any of a
/// script's or a function's arguments (ARGV), in milliseconds or seconds,
/// within a day of virtual now. It moves by `anchor − virtual now`, where the
/// anchor is the wall clock when the command came; for an instant in seconds
/// the anchor is put off to the next real instant with virtual now's
/// millisecond within the second, so that the move is a whole number of
/// seconds and the TTL stays exact. An instant at or before virtual now is
/// in the past on both lines: it becomes the epoch's first millisecond (or
/// second), which Redis too takes for the past.
///
/// An ARGV instant a script stores as data and the lock reads back is a real
/// one: the wire cannot tell it from an expiry.
pub(super) fn to_real_line(args: &[Vec<u8>], now_ms: u64, received_ms: u64) -> Option<OnRealLine> {
    let virtual_ms = TIME_ORIGIN_MS + now_ms;
    let found: Vec<(usize, u64, Unit)> = instant_positions(args)
        .into_iter()
        .filter_map(|i| {
            let n = std::str::from_utf8(args.get(i)?)
                .ok()?
                .parse::<u64>()
                .ok()?;
            let unit = if n.abs_diff(virtual_ms) < DAY_MS {
                Unit::Millis
            } else if n.abs_diff(virtual_ms / 1_000) < DAY_MS / 1_000 {
                Unit::Seconds
            } else {
                return None;
            };
            Some((i, n, unit))
        })
        .collect();
    if found.is_empty() {
        return None;
    }
    let anchor_ms = if found.iter().any(|&(_, _, unit)| unit == Unit::Seconds) {
        // The first real instant from `received_ms` on whose millisecond
        // within the second is virtual now's.
        let phase = (virtual_ms % 1_000 + 1_000 - received_ms % 1_000) % 1_000;
        received_ms + phase
    } else {
        received_ms
    };
    let mut moved = args.to_vec();
    for (i, n, unit) in found {
        let real = match unit {
            Unit::Millis if n <= virtual_ms => 1,
            Unit::Millis => anchor_ms + (n - virtual_ms),
            Unit::Seconds if n * 1_000 <= virtual_ms => 1,
            Unit::Seconds => (anchor_ms + (n * 1_000 - virtual_ms)) / 1_000,
        };
        moved[i] = real.to_string().into_bytes();
    }
    Some(OnRealLine {
        args: moved,
        anchor_ms,
    })
}

/// The unit of an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Millis,
    Seconds,
}

/// Where the command `args` carries an instant Redis reads, or may (a
/// script's arguments).
fn instant_positions(args: &[Vec<u8>]) -> Vec<usize> {
    let after_option = |from: usize| -> Vec<usize> {
        (from..args.len())
            .filter(|&i| {
                args[i].eq_ignore_ascii_case(b"PXAT") || args[i].eq_ignore_ascii_case(b"EXAT")
            })
            .map(|i| i + 1)
            .collect()
    };
    match crate::confine::name_of(args).as_str() {
        // SET key value [options]: the value itself is no option.
        "SET" => after_option(3),
        "GETEX" => after_option(2),
        "PEXPIREAT" | "EXPIREAT" => vec![2],
        "EVAL" | "EVALSHA" | "EVAL_RO" | "EVALSHA_RO" | "FCALL" | "FCALL_RO" => {
            let keys = args
                .get(2)
                .and_then(|n| std::str::from_utf8(n).ok()?.parse::<usize>().ok())
                .unwrap_or(0);
            (3 + keys..args.len()).collect()
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<Vec<u8>> {
        line.split(' ').map(|a| a.as_bytes().to_vec()).collect()
    }

    fn moved(line: &str, now_ms: u64, received_ms: u64) -> Option<(String, u64)> {
        to_real_line(&args(line), now_ms, received_ms).map(|r| {
            let line: Vec<String> = r
                .args
                .iter()
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            (line.join(" "), r.anchor_ms)
        })
    }

    const REAL: u64 = 1_800_000_000_123;

    #[test]
    fn a_pxat_on_the_virtual_line_moves_by_the_anchor() {
        let at = TIME_ORIGIN_MS + 5_000 + 1_500;
        let line = format!("SET k v NX PXAT {at}");
        assert_eq!(
            moved(&line, 5_000, REAL),
            Some((format!("SET k v NX PXAT {}", REAL + 1_500), REAL))
        );
    }

    #[test]
    fn an_instant_in_seconds_keeps_the_ttl_exact() {
        // Virtual now is 250 ms into its second; the TTL asked is 1,750 ms.
        let now = 7_250;
        let secs = (TIME_ORIGIN_MS + 9_000) / 1_000;
        let (line, anchor) = moved(&format!("EXPIREAT k {secs}"), now, REAL).expect("moved");
        assert_eq!(anchor % 1_000, 250);
        assert!((REAL..REAL + 1_000).contains(&anchor));
        let real_s: u64 = line["EXPIREAT k ".len()..].parse().expect("a number");
        assert_eq!(real_s * 1_000 - anchor, 1_750);
    }

    #[test]
    fn a_script_s_arguments_move_but_not_its_keys() {
        let at = TIME_ORIGIN_MS + 10_000;
        let line = format!("EVALSHA abc 2 {at} k2 {at} token");
        assert_eq!(
            moved(&line, 0, REAL),
            Some((
                format!("EVALSHA abc 2 {at} k2 {} token", REAL + 10_000),
                REAL
            ))
        );
    }

    #[test]
    fn past_instants_stay_past_and_others_stay_put() {
        let now = 3_000;
        let past = TIME_ORIGIN_MS + 2_000;
        assert_eq!(
            moved(&format!("PEXPIREAT k {past}"), now, REAL),
            Some(("PEXPIREAT k 1".to_owned(), REAL))
        );
        // A wall-clock instant, a relative TTL and a value are no virtual instants.
        assert_eq!(moved(&format!("SET k v NX PXAT {REAL}"), now, REAL), None);
        assert_eq!(moved("SET k v NX PX 10000", now, REAL), None);
        assert_eq!(moved(&format!("SET k {past} NX PX 10000"), now, REAL), None);
    }
}
