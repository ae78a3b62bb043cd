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
//! every command a client sends, [`Clock::settle_after`] looks for TTLs that
//! command set and notes their virtual expiry to the millisecond: the wire
//! reads Redis's `TIME` in the same round trip, just before the command, so
//! the look knows the real instant the command ran at, whatever real time
//! passed until the look. A TTL is so read as asked, or at most a millisecond
//! over (when Redis's clock ticked between the two); a judge of TTLs allows
//! [`SLACK_MS`] for it and for the millisecond a lock may add on purpose.
//!
//! Real time still passes between two steps, and a stopped process (Ctrl-Z),
//! a starved CPU or a paused server can make it pass for seconds. Every move
//! of virtual time re-anchors each timed key's real expiry to its virtual
//! one, and a key with less than [`FLOOR_MS`] of virtual time left gets that
//! floor in real time: a key a few milliseconds from its virtual expiry would
//! otherwise run out in real time during the very next command, before
//! virtual time reached it. Only a move of virtual time ends a timed key, so
//! the floor is never seen (`PTTL` on the wire answers on virtual time).
//!
//! The floor is not added to every key. The look tells a TTL a command set by
//! a real expiry that changed, and a key re-anchored at its virtual TTL plus a
//! constant would read unchanged after a command that set that very TTL (a
//! lock's renewal) in the same millisecond. The floor's odd value is one no
//! lock asks for.
//!
//! A look that finds real time ran further than the clock can absorb (a timed
//! key whose real expiry came before its virtual one, or a TTL read back long
//! after it was set) fails with [`GradeError::Stalled`], and the check is run
//! again ([`crate::stall`]).
//! (A look cannot re-anchor keys itself: that would touch keys a client may
//! be `WATCH`ing.)

use std::sync::LazyLock;
use std::time::{Duration, Instant};

use redis::{Connection, RedisResult, Script};

use crate::error::GradeError;
use crate::stall;

/// TTLs are measured to this many milliseconds.
pub const RESOLUTION_MS: u64 = 1;

/// How far over the TTL asked for a key's TTL may read and still be the one
/// asked for: Redis's own expiry may come a millisecond late, which some
/// locks make up for by asking a millisecond more (php-lock), and the clock's
/// reading may be a millisecond over (see above). Such a key also expires when
/// the one asked for would: the clock lets a key go once virtual time is
/// within this of its expiry, and the models do the same.
pub const SLACK_MS: u64 = 2;

/// How far under the TTL asked for a key's TTL may read and still be the one
/// asked for: a lock that computes an absolute expiry from its own clock
/// (`PXAT now + ttl`) reads that much short when its clock ticked before
/// Redis ran the command.
pub const SHORT_SLACK_MS: u64 = 1;

/// Whether a TTL read as `got_ms` is the one asked for, `asked_ms`.
pub fn as_asked(asked_ms: u64, got_ms: u64) -> bool {
    (asked_ms.saturating_sub(SHORT_SLACK_MS)..=asked_ms + SLACK_MS).contains(&got_ms)
}

/// The resolution of a TTL read at the look rather than from the instant its
/// command ran (the grader's own commands): rounded up to a multiple of this,
/// which absorbs the real milliseconds until the look. The grader's own TTLs
/// are multiples of it. A lock's own transaction is read to the millisecond:
/// its `EXEC`, sent alone or at the end of a pipeline, carries the clock's
/// reads ([`TimedFrame::send_exec`]).
const LOOK_RESOLUTION_MS: u64 = 250;

/// The least real TTL a timed key gets at a move of virtual time, in ms,
/// however little of its virtual TTL is left: the real time the steps until
/// the next move may take before such a key runs out early, which is then a
/// stall. Above a look's 250 ms resolution, so that every early loss of a
/// re-anchored key is seen; and a number no lock's TTL is (see above).
pub const FLOOR_MS: u64 = 337;

/// How much real time may pass between a command whose real instant the wire
/// could not read (a pipeline that ends a `MULTI` the lock opened with a
/// command of its own, and goes on past its `EXEC`) and the clock's look at
/// it, in ms.
const ABSORBED_MS: u64 = 250;

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
/// the last look (a client set or removed a TTL). It writes nothing but the
/// clock's own hash: touching a timed key here would abort a client's
/// `WATCH`, as no real Redis does between two of its commands.
///
/// KEYS[1] is the clock's hash, KEYS[2..] the timed keys;
/// ARGV[1] is virtual now, ARGV[2] the resolution, ARGV[3] and ARGV[4] the
/// real instants just before and just after the command ran (-1: unknown,
/// take now), ARGV[5] the likeliest real instant between them (-1: none,
/// [`Sighting::likely`]), all in milliseconds; ARGV[6..] the TTLs the
/// command may have asked for (the numbers it carried, [`Sighting::asked`]).
/// Between the two instants, the TTL the command set is any of a few
/// milliseconds' range: one it asked for is taken when the range holds it,
/// else the roundest of them (a multiple of 1000, 500, 250 or 100
/// ms), else the one from the likeliest instant, else the longest; so that a
/// TTL reads exactly, odd or round, even when Redis was held up between the
/// two instants.
/// Returns `{ fresh, overrun, gap, real… }`: how many keys got a new TTL, how
/// many had a real expiry that came before the clock said it would (real time
/// ran ahead of virtual time), the real milliseconds since the last look, and
/// each timed key's real expiry as the books now hold it.
static SETTLE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
local now_virtual = tonumber(ARGV[1])
local resolution = tonumber(ARGV[2])
local time = redis.call("TIME")
local now_real = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local before, after = tonumber(ARGV[3]), tonumber(ARGV[4])
if before < 0 then before, after = now_real, now_real end
local likely = tonumber(ARGV[5])
local asked = {}
for i = 6, #ARGV do table.insert(asked, tonumber(ARGV[i])) end
local function roundest(lo, hi, real)
    for _, a in ipairs(asked) do
        if a >= lo and a <= hi then return a end
    end
    for _, m in ipairs({1000, 500, 250, 100}) do
        local c = hi - (hi % m)
        if c >= lo then return c end
    end
    if likely >= 0 then return math.min(math.max(real - likely, lo), hi) end
    return hi
end
local last = tonumber(redis.call("HGET", KEYS[1], "|last") or now_real)
redis.call("HSET", KEYS[1], "|last", tostring(now_real))
local fresh, overrun, reals = 0, 0, {}
for i = 2, #KEYS do
    local key = KEYS[i]
    local real = redis.call("PEXPIRETIME", key)
    local noted = tonumber(redis.call("HGET", KEYS[1], key .. "|real") or "-2")
    if real ~= noted then
        local noted_left = tonumber(redis.call("HGET", KEYS[1], key .. "|left") or "0")
        if noted >= 0 and noted <= now_real and noted_left >= resolution then
            -- The expiry noted has passed in real time: Redis may have removed
            -- the key before its virtual time. (A TTL shorter than the
            -- resolution was bound to run out between two looks.)
            overrun = overrun + 1
        end
        local virtual, left = real, 0
        if real >= 0 then
            left = math.max(roundest(real - after, real - before, real), 0)
            virtual = now_virtual + math.ceil(left / resolution) * resolution
            fresh = fresh + 1
        end
        redis.call("HSET", KEYS[1], key .. "|real", tostring(real), key .. "|virtual", tostring(virtual),
            key .. "|left", tostring(left))
    end
    table.insert(reals, real)
end
local result = { fresh, overrun, now_real - last }
for _, real in ipairs(reals) do table.insert(result, real) end
return result
"#,
    )
});

/// Moves virtual time to ARGV[1]: deletes the timed keys whose virtual expiry
/// has come, or is no more than ARGV[2] ([`SLACK_MS`]) away, so that a TTL
/// read that much over the one asked for expires when the one asked for
/// would; and re-anchors the others so that their real TTL again equals
/// their virtual one, or ARGV[3] ([`FLOOR_MS`]) if that is longer. The books
/// note that real TTL as the key's `left`: once it has passed in real time,
/// the key's loss is a stall, however short its virtual TTL was. Returns the
/// names of the keys that expired.
static ADVANCE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
local now_virtual = tonumber(ARGV[1])
local slack = tonumber(ARGV[2])
local floor = tonumber(ARGV[3])
local time = redis.call("TIME")
local now_real = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local expired = {}
redis.call("HSET", KEYS[1], "|last", tostring(now_real))
for i = 2, #KEYS do
    local key = KEYS[i]
    local virtual = tonumber(redis.call("HGET", KEYS[1], key .. "|virtual") or "-2")
    if virtual >= 0 and redis.call("PEXPIRETIME", key) >= 0 then
        if virtual <= now_virtual + slack then
            -- Its time has come: the key is gone, as Redis would have it.
            redis.call("DEL", key)
            table.insert(expired, key)
            redis.call("HSET", KEYS[1], key .. "|real", "-2", key .. "|virtual", "-2")
        else
            local left = math.max(virtual - now_virtual, floor)
            local real = now_real + left
            redis.call("PEXPIREAT", key, real)
            redis.call("HSET", KEYS[1], key .. "|real", tostring(real), key .. "|left", tostring(left))
        end
    end
end
return expired
"#,
    )
});

/// The real milliseconds, by Redis's clock, just before and just after a
/// command ran.
pub type RanAt = (u64, u64);

/// What a client command's own round trip told the clock: when it ran, and
/// where the timed keys' expiries stood just after.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sighting {
    /// When the command ran, by Redis's clock, if both `TIME`s answered.
    pub ran_at: Option<RanAt>,
    /// Each timed key's real expiry (`PEXPIRETIME`, in the clock's order)
    /// just after the command ran, if every one answered.
    pub expiries: Option<Vec<i64>>,
    /// The TTLs, in ms, the command may have asked for: the numbers it
    /// carried ([`asked_in`]). A TTL read between the two instants of
    /// [`Sighting::ran_at`] is one of these when it can be.
    pub asked: Vec<u64>,
    /// The likeliest of the instants of [`Sighting::ran_at`], when one is
    /// likelier than the others: a TTL neither asked for nor round is read
    /// from it.
    pub likely: Option<u64>,
}

/// How many numbers of a command the clock takes for TTLs it may have asked for.
const MAX_ASKED: usize = 16;

/// The TTLs, in ms, that the commands `args` may ask for: each number they
/// carry up to a day, taken as milliseconds and as seconds (`EX`, `EXPIRE`);
/// at most [`MAX_ASKED`] of them.
pub fn asked_in<'a>(commands: impl IntoIterator<Item = &'a [Vec<u8>]>) -> Vec<u64> {
    const DAY_MS: u64 = 86_400_000;
    commands
        .into_iter()
        .flat_map(|args| args.iter().skip(1))
        .filter_map(|a| std::str::from_utf8(a).ok()?.parse::<u64>().ok())
        .filter(|&n| (1..=DAY_MS).contains(&n))
        .flat_map(|n| [Some(n), (n <= DAY_MS / 1_000).then_some(n * 1_000)])
        .flatten()
        .take(MAX_ASKED)
        .collect()
}

/// The commands put around a client command, packed once for a connection
/// whose timed keys do not change: the leading `TIME`, and the trailing `TIME`
/// with a `PEXPIRETIME` of each timed key. [`TimedFrame::send`] sends the one
/// command between them, in one round trip, so that Redis runs them back to
/// back: the reply, and what the clock needs to know of it ([`Sighting`]).
/// Reading the expiries here spares the clock a look of its own after a
/// command that set no TTL, most commands.
#[derive(Clone, Debug)]
pub struct TimedFrame {
    time: Vec<u8>,
    tail: Vec<u8>,
    /// How many replies the framed request gets: the command's and the frame's.
    replies: usize,
}

impl TimedFrame {
    /// The frame for the `timed` keys, in the clock's order.
    pub fn new(timed: &[String]) -> TimedFrame {
        let time = redis::cmd("TIME").get_packed_command();
        let mut tail = time.clone();
        for key in timed {
            tail.extend(redis::cmd("PEXPIRETIME").arg(key).get_packed_command());
        }
        TimedFrame {
            time,
            tail,
            replies: 3 + timed.len(),
        }
    }

    /// Sends the command `packed` on `con`, in this frame.
    pub fn send(
        &self,
        con: &mut Connection,
        packed: &[u8],
    ) -> (RedisResult<redis::Value>, Sighting) {
        let mut all = Vec::with_capacity(self.time.len() + packed.len() + self.tail.len());
        all.extend_from_slice(&self.time);
        all.extend_from_slice(packed);
        all.extend_from_slice(&self.tail);
        let expected = self.replies;
        match redis::ConnectionLike::req_packed_commands(con, &all, 0, expected) {
            Ok(replies) if replies.len() == expected => {
                let mut replies = replies.into_iter();
                let before = replies.next().and_then(time_ms);
                let reply = replies.next().unwrap_or(redis::Value::Nil);
                let after = replies.next().and_then(time_ms);
                let expiries = replies
                    .map(|r| match r {
                        redis::Value::Int(at) => Some(at),
                        _ => None,
                    })
                    .collect();
                let sighting = Sighting {
                    ran_at: before.zip(after),
                    expiries,
                    ..Sighting::default()
                };
                (Ok(reply), sighting)
            }
            Ok(mut replies) => (
                Ok(replies.pop().unwrap_or(redis::Value::Nil)),
                Sighting::default(),
            ),
            Err(e) => (Err(e), Sighting::default()),
        }
    }
}

impl TimedFrame {
    /// Sends the end of the lock's own transaction on `con`: `queued`, the
    /// packed commands the lock sends with its `EXEC` in one pipeline
    /// (`queued_count` of them, none if it sent its `EXEC` alone), then the
    /// frame's trailing commands, queued in the transaction too, then the
    /// lock's `exec`. Redis runs the trailing commands last in the
    /// transaction, right after the lock's own, and EXEC's reply carries their
    /// answers at its end, which are taken off, as are their `QUEUED`s, before
    /// the lock sees the replies: one for each of its commands. A transaction
    /// has no instant before its commands apart from its own: it ran within
    /// the trailing `TIME`'s millisecond or the one before, and a TTL it set
    /// reads as asked when the caller names what it asked
    /// ([`Sighting::asked`]), else a millisecond off at worst. A transaction
    /// Redis aborted (nil, or an error) ran nothing, and the reply is Redis's
    /// own.
    pub fn send_exec(
        &self,
        con: &mut Connection,
        queued: &[u8],
        queued_count: usize,
        exec: &[u8],
    ) -> (RedisResult<Vec<redis::Value>>, Sighting) {
        let mut all = Vec::with_capacity(queued.len() + self.tail.len() + exec.len());
        all.extend_from_slice(queued);
        all.extend_from_slice(&self.tail);
        all.extend_from_slice(exec);
        // The frame's trailing commands: the lock's command and the leading TIME are not in it.
        let tail = self.replies - 2;
        let expected = queued_count + tail + 1;
        let mut replies = match redis::ConnectionLike::req_packed_commands(con, &all, 0, expected) {
            Ok(replies) if replies.len() == expected => replies,
            Ok(replies) => return (Ok(replies), Sighting::default()),
            Err(e) => return (Err(e), Sighting::default()),
        };
        let exec_reply = replies.pop().unwrap_or(redis::Value::Nil);
        // The frame's QUEUEDs go; the lock's stay.
        replies.truncate(queued_count);
        let (exec_reply, sighting) = match exec_reply {
            redis::Value::Array(mut values) if values.len() >= tail => {
                let mut trailing = values.split_off(values.len() - tail).into_iter();
                let at = trailing.next().and_then(time_ms);
                let expiries = trailing
                    .map(|r| match r {
                        redis::Value::Int(at) => Some(at),
                        _ => None,
                    })
                    .collect();
                // Redis ran the transaction's commands before the `TIME` that
                // ends it, within its millisecond or the one before.
                let sighting = Sighting {
                    ran_at: at.map(|at| (at.saturating_sub(1), at)),
                    expiries,
                    ..Sighting::default()
                };
                (redis::Value::Array(values), sighting)
            }
            reply => (reply, Sighting::default()),
        };
        replies.push(exec_reply);
        (Ok(replies), sighting)
    }
}

/// Redis's clock, in ms, read in a round trip of its own on `con`; `None`
/// if `TIME` did not answer.
pub fn read_time(con: &mut Connection) -> Option<u64> {
    redis::cmd("TIME")
        .query::<redis::Value>(con)
        .ok()
        .and_then(time_ms)
}

/// A `TIME` reply in milliseconds.
pub fn time_ms(reply: redis::Value) -> Option<u64> {
    redis::from_redis_value::<(u64, u64)>(reply)
        .ok()
        .map(|(secs, micros)| secs * 1_000 + micros / 1_000)
}

/// The virtual clock of one scenario.
#[derive(Debug)]
pub struct Clock {
    /// Virtual now, in milliseconds since the scenario started.
    now_ms: u64,
    /// KEYS for the scripts: the clock's own hash, then the timed keys.
    keys: Vec<String>,
    /// The timed keys' real expiries as the books held them after the last
    /// look, when no move of time has changed them since: a client command
    /// after which they read the same set no TTL, and needs no look.
    seen: Option<Vec<i64>>,
}

impl Clock {
    /// A clock at virtual 0 that keeps its books in `book` and runs the
    /// expiry of `timed` keys.
    pub fn new(book: String, timed: &[String]) -> Clock {
        let mut keys = vec![book];
        keys.extend(timed.iter().cloned());
        Clock {
            now_ms: 0,
            keys,
            seen: None,
        }
    }

    /// The keys whose expiry this clock runs, in its order.
    pub fn timed(&self) -> &[String] {
        &self.keys[1..]
    }

    /// Forgets what the last look saw: the books may have changed without
    /// the clock (the server it looks at changed, a failover).
    pub fn forget_seen(&mut self) {
        self.seen = None;
    }

    /// Virtual now, in milliseconds.
    pub fn now_ms(&self) -> u64 {
        self.now_ms
    }

    /// Notes TTLs set since the last call; run after the grader's own
    /// commands.
    pub fn settle(&mut self, con: &mut Connection) -> Result<(), GradeError> {
        self.look(con, None, &Sighting::default())
    }

    /// Like [`Clock::settle`], after a client command sent at `sent` that ran
    /// as `sighting` says: a TTL that command set is read as it was when the
    /// command ran, if the wire could read when that was. Otherwise it is read
    /// at the look, which holds only while less than [`ABSORBED_MS`] has
    /// passed since the command was sent. When the timed keys' expiries read
    /// just after the command are those the last look left in the books, the
    /// command changed none of them and the look would note nothing: it is
    /// skipped.
    pub fn settle_after(
        &mut self,
        con: &mut Connection,
        sent: Instant,
        sighting: &Sighting,
    ) -> Result<(), GradeError> {
        if sighting.expiries.is_some() && sighting.expiries == self.seen {
            return Ok(());
        }
        self.look(con, Some(sent), sighting)
    }

    fn look(
        &mut self,
        con: &mut Connection,
        sent: Option<Instant>,
        sighting: &Sighting,
    ) -> Result<(), GradeError> {
        self.seen = None;
        let looked: Vec<i64> = with_scripts(con, &[&SETTLE], |con| {
            self.look_command(sighting).query(con)
        })?;
        self.noted(&looked, sent, sighting.ran_at)
    }

    /// The look as one command (`EVALSHA` of the clock's script), to send on
    /// its own or in a pipeline, for a command seen as `sighting` (or none:
    /// the default); [`Clock::noted`] reads its answer.
    fn look_command(&self, sighting: &Sighting) -> redis::Cmd {
        let ran_at_ms = sighting.ran_at;
        let (before, after) = ran_at_ms.map_or((-1, -1), |(b, a)| (b as i64, a as i64));
        let resolution = match ran_at_ms {
            Some(_) => RESOLUTION_MS,
            None => LOOK_RESOLUTION_MS,
        };
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg(SETTLE.get_hash())
            .arg(self.keys.len())
            .arg(&self.keys)
            .arg(self.now_ms)
            .arg(resolution)
            .arg(before)
            .arg(after)
            .arg(sighting.likely.map_or(-1, |at| at as i64))
            .arg(&sighting.asked);
        cmd
    }

    /// What a look answered: the timed keys' real expiries it saw, and a stall
    /// if real time ran further than the clock absorbs.
    fn noted(
        &mut self,
        looked: &[i64],
        sent: Option<Instant>,
        ran_at_ms: Option<RanAt>,
    ) -> Result<(), GradeError> {
        let [fresh, overrun, gap, ref reals @ ..] = looked[..] else {
            return Err(redis::RedisError::from((
                redis::ErrorKind::UnexpectedReturnType,
                "the clock's look answered fewer than three numbers",
            ))
            .into());
        };
        if reals.len() == self.timed().len() {
            self.seen = Some(reals.to_vec());
        }
        if overrun > 0 {
            return Err(stall::stalled(format!(
                "{} of real time passed between two steps, and a timed key's real expiry came \
                 before its virtual one",
                stall::shown(Duration::from_millis(gap.max(0) as u64))
            )));
        }
        let late = sent
            .filter(|_| ran_at_ms.is_none())
            .map(|at| at.elapsed())
            .unwrap_or_default();
        if fresh > 0 && late > Duration::from_millis(ABSORBED_MS) {
            return Err(stall::stalled(format!(
                "{} of real time passed between a command that set a TTL and the clock's look at \
                 it, more than the {ABSORBED_MS} ms it absorbs",
                stall::shown(late)
            )));
        }
        Ok(())
    }

    /// Runs `read`, a script of the grader's own that sets no TTL, on `keys`,
    /// then looks ([`Clock::settle`]) and reads the virtual expiries of
    /// `timed` (as [`Clock::expiries`]), all in one round trip: what an
    /// observation between two steps needs. A server that has forgotten the
    /// scripts (restarted, promoted) is given them and asked again; every
    /// part is safe to repeat.
    pub fn read_and_look<T: redis::FromRedisValue>(
        &mut self,
        con: &mut Connection,
        read: &Script,
        keys: &[&str],
        timed: &[&str],
    ) -> Result<(T, Vec<Expiry>), GradeError> {
        self.seen = None;
        let fields: Vec<String> = timed.iter().map(|key| format!("{key}|virtual")).collect();
        let (value, looked, virtual_ms) = with_scripts(con, &[read, &SETTLE], |con| {
            let mut pipe = redis::pipe();
            pipe.cmd("EVALSHA")
                .arg(read.get_hash())
                .arg(keys.len())
                .arg(keys);
            pipe.add_command(self.look_command(&Sighting::default()));
            pipe.cmd("HMGET").arg(&self.keys[0]).arg(&fields);
            pipe.query::<(T, Vec<i64>, Vec<Option<i64>>)>(con)
        })?;
        self.noted(&looked, None, None)?;
        Ok((value, virtual_ms.into_iter().map(expiry_of).collect()))
    }

    /// Moves virtual time forward to `t_ms` (never back) and returns the timed
    /// keys that expired on the way.
    pub fn advance_to(
        &mut self,
        con: &mut Connection,
        t_ms: u64,
    ) -> Result<Vec<String>, GradeError> {
        // A client command may have set a TTL that nobody has looked at yet.
        self.settle(con)?;
        // The move re-anchors and deletes timed keys: the next look reads them afresh.
        self.seen = None;
        self.now_ms = self.now_ms.max(t_ms);
        let mut call = ADVANCE.prepare_invoke();
        for key in &self.keys {
            call.key(key);
        }
        Ok(call
            .arg(self.now_ms)
            .arg(SLACK_MS)
            .arg(FLOOR_MS)
            .invoke(con)?)
    }

    /// The virtual expiry of a timed key, as of the last settle.
    pub fn expiry(&self, con: &mut Connection, key: &str) -> RedisResult<Expiry> {
        let virtual_ms: Option<i64> = redis::cmd("HGET")
            .arg(&self.keys[0])
            .arg(format!("{key}|virtual"))
            .query(con)?;
        Ok(expiry_of(virtual_ms))
    }

    /// The virtual expiries of timed keys, in their order, as of the last
    /// settle: one round trip for all of them.
    pub fn expiries(&self, con: &mut Connection, keys: &[&str]) -> RedisResult<Vec<Expiry>> {
        let fields: Vec<String> = keys.iter().map(|key| format!("{key}|virtual")).collect();
        let virtual_ms: Vec<Option<i64>> = redis::cmd("HMGET")
            .arg(&self.keys[0])
            .arg(&fields)
            .query(con)?;
        Ok(virtual_ms.into_iter().map(expiry_of).collect())
    }
}

/// `ask`, which sends `scripts` by their hash (`EVALSHA`, alone or in a pipeline); when the
/// server does not hold one of them (restarted, promoted, flushed), it is given them all and
/// `ask` is sent again, as `Script::invoke` does for one script alone. `ask` must be safe to repeat.
fn with_scripts<T>(
    con: &mut Connection,
    scripts: &[&Script],
    mut ask: impl FnMut(&mut Connection) -> RedisResult<T>,
) -> RedisResult<T> {
    match ask(con) {
        Err(e) if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) => {
            for script in scripts {
                script.load(con)?;
            }
            ask(con)
        }
        answer => answer,
    }
}

/// A virtual expiry as the books write it: missing (or -2), -1 for none, else the instant.
fn expiry_of(virtual_ms: Option<i64>) -> Expiry {
    match virtual_ms {
        None | Some(-2) => Expiry::Missing,
        Some(v) if v < 0 => Expiry::Never,
        Some(v) => Expiry::At(v as u64),
    }
}
