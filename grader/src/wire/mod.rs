//! The connection a lock under test talks through.
//!
//! A [`Wire`] is a real Redis connection with the grader standing on it. It
//! forwards every command unchanged and, around each one:
//!
//! - records it with its reply, so a report can show what the lock sent;
//! - lets the virtual clock notice any TTL the command set;
//! - counts it, and stops a runaway loop after [`COMMAND_BUDGET`] commands;
//! - can act *between* two commands: an [`Intervention`] fires just before a
//!   chosen command, to expire the lock, let another client in, or make the
//!   caller crash so that it never sends the rest. Stepping in before command
//!   k is also what a reply to command k − 1 that arrives late looks like, and
//!   stepping in after the last command is a late reply to the call itself.
//!   Trying this at every command boundary is how a check catches a lock that
//!   does in two commands what must happen in one;
//! - can take turns with other wires ([`Turns`]) so that three clients racing
//!   for a lock interleave command by command, the same way on every run;
//! - keeps every key a command names inside its world's namespace, and every
//!   function inside its check's, and refuses, before it goes out, any command
//!   that acts beyond them ([`crate::confine`]); where the grader may create
//!   Redis users, the connection is also signed in as one limited to the
//!   namespace ([`crate::acl`]), which holds Lua scripts too;
//! - answers `TIME` itself, on the virtual clock.
//!
//! Redis-rs retries a script it finds missing (`NOSCRIPT`, then `SCRIPT LOAD`).
//! Those two steps change nothing in the data, so they are neither counted nor
//! shown: a report reads the same whether the script was cached or not. Any
//! other `SCRIPT` command is shown like every command.

mod intervention;
mod show;
mod turns;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use redis::{Connection, ConnectionLike, ErrorKind, RedisError, RedisResult, Value};

use crate::acl;
use crate::clock::Expiry;
use crate::confine::{self, Ledger, Namespace, Refusal, functions};
use crate::error::GradeError;
use crate::stall;
use crate::world::{SharedWorld, World, enter};
pub use intervention::{Action, Fired, Intervention};
use show::{pipeline_label, unpack_all};
pub(crate) use show::{show_arg, show_value, unpack};
pub use turns::Turns;

/// What the lock's code hears when it goes on after its check has ended
/// (a call that was abandoned for taking too long).
const CHECK_OVER: &str = "this check is over: the grader stopped waiting for this call";

/// How many commands one call of the lock may send before the grader decides
/// it is stuck in a loop.
pub const COMMAND_BUDGET: usize = 1_000;

/// The panic payload that stops a call which went over [`COMMAND_BUDGET`].
#[derive(Debug)]
pub struct OverBudget;

/// One line of a call's record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A command the lock sent, and what Redis answered, as text.
    Sent {
        /// The command, as text.
        command: String,
        /// Redis's answer, as text.
        reply: String,
    },
    /// Something the grader made happen between two commands.
    Intervened(String),
}

/// A watched connection to Redis, handed to the lock under test.
pub struct Wire {
    /// Which wire this is, for the runner's link to it ([`crate::remote`]).
    id: u64,
    inner: Connection,
    /// Weak, so that a call the grader abandoned (an endless loop) does not
    /// keep the world, and its keys in Redis, alive after the check.
    world: Weak<Mutex<World>>,
    steps: Vec<Step>,
    /// Counted commands of the current call; shared so that a call that timed
    /// out can still say how many it sent.
    sent: Arc<AtomicUsize>,
    crashed: bool,
    intervention: Option<Intervention>,
    turns: Option<(Arc<Turns>, usize)>,
    /// Where the keys and functions it names are kept.
    namespace: Namespace,
    /// Where refusals go: the ledger of the check that opened the wire.
    ledger: Option<Arc<Ledger>>,
    /// A `NOSCRIPT` reply came: the `SCRIPT LOAD` that follows is redis-rs's.
    reloading: bool,
    /// The lock's code opened a `MULTI` with a command of its own: until its
    /// `EXEC` or `DISCARD`, a `TIME` sent ahead would be queued with it.
    in_multi: bool,
    /// The real millisecond by Redis's clock that the last command not
    /// queued in a `MULTI` ran at (the `MULTI` itself, inside one).
    ran_at_ms: Option<crate::clock::RanAt>,
}

impl Wire {
    /// A wire for a new client of `world`.
    pub fn open(world: &SharedWorld) -> Result<Wire, GradeError> {
        let ledger = confine::current_ledger();
        let id = next_id();
        let (mut inner, keys, shared) = {
            let world = enter(world);
            let keys = world.keys.namespace().to_owned();
            (world.client_connection()?, keys, world.on_shared_server())
        };
        // One prefix for every function of the check, however many worlds it opens.
        let check = match &ledger {
            Some(ledger) => format!("c{}", ledger.id()),
            None => format!("w{id}"),
        };
        let run = crate::prefix::run()?;
        let namespace = Namespace::new(&keys, &functions::allowed(&format!("{run}{check}_")));
        // The grader's users live on the shared server; the nodes of a replicated pair are the
        // grader's own and hold nothing else, and there the filter alone holds the wire.
        if shared {
            acl::confine(&mut inner, namespace.keys())?;
        }
        Ok(Wire {
            id,
            inner,
            world: Arc::downgrade(world),
            steps: Vec::new(),
            sent: Arc::new(AtomicUsize::new(0)),
            crashed: false,
            intervention: None,
            turns: None,
            namespace,
            ledger,
            reloading: false,
            in_multi: false,
            ran_at_ms: None,
        })
    }

    /// Sends `WAIT replicas timeout_ms` for the course's own client code around a learner's
    /// call (never for learner code, whose commands the filter holds to the exercises' list),
    /// and records it as a step of the current call: how many replicas have every write this
    /// connection made.
    pub fn wait_for_replicas(&mut self, replicas: u64, timeout_ms: u64) -> RedisResult<u64> {
        let acked: u64 = redis::cmd("WAIT")
            .arg(replicas)
            .arg(timeout_ms)
            .query(&mut self.inner)?;
        self.steps.push(Step::Sent {
            command: format!("WAIT {replicas} {timeout_ms}"),
            reply: format!("(integer) {acked}"),
        });
        Ok(acked)
    }

    /// This wire's number, unique in the process: the runner's link to it is found by it.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Arms an intervention for the next call.
    pub fn intervene(&mut self, intervention: Intervention) {
        self.intervention = Some(intervention);
    }

    /// Makes this wire take turn `me` among `turns`.
    pub fn take_turns(&mut self, turns: Arc<Turns>, me: usize) {
        self.turns = Some((turns, me));
    }

    /// Leaves the turn-taking, if any (at the end of a call).
    pub fn leave_turns(&mut self) {
        if let Some((turns, me)) = self.turns.take() {
            turns.leave(me);
        }
    }

    /// Starts the record of a new call.
    pub fn begin_call(&mut self) {
        self.steps.clear();
        self.sent.store(0, Ordering::Relaxed);
    }

    /// The record of the current (or last) call.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// How many commands the current call has sent, readable from elsewhere.
    pub fn sent_counter(&self) -> Arc<AtomicUsize> {
        Arc::clone(&self.sent)
    }

    /// Whether an intervention made this client crash.
    pub fn crashed(&self) -> bool {
        self.crashed
    }

    /// Fires an intervention that the call did not reach (it sent fewer
    /// commands than `before`): it then happens after the call's last command.
    pub fn fire_if_pending(&mut self) -> Result<(), GradeError> {
        if self.intervention.as_ref().is_some_and(|i| !i.fired) {
            self.fire()?;
        }
        Ok(())
    }

    /// The world, unless its check has ended.
    fn world(&self) -> RedisResult<SharedWorld> {
        self.world
            .upgrade()
            .ok_or_else(|| RedisError::from(std::io::Error::other(CHECK_OVER)))
    }

    fn fire(&mut self) -> Result<(), GradeError> {
        let Some(world) = self.world.upgrade() else {
            return Ok(());
        };
        let Some(intervention) = self.intervention.as_mut() else {
            return Ok(());
        };
        intervention.fired = true;
        let mut world = enter(&world);
        let fired = (intervention.action)(&mut world)?;
        world.settle()?;
        match fired {
            Fired::Continue(what) => self.steps.push(Step::Intervened(what)),
            Fired::Crash(what) => {
                self.steps.push(Step::Intervened(what));
                self.crashed = true;
            }
        }
        Ok(())
    }

    /// Everything that happens before a command goes out. An error here is
    /// returned to the lock as if the connection had failed.
    fn before_command(&mut self) -> RedisResult<()> {
        let sent = self.sent.load(Ordering::Relaxed);
        if sent >= COMMAND_BUDGET {
            std::panic::panic_any(OverBudget);
        }
        if let Some((turns, me)) = &self.turns {
            turns.wait_for(*me);
        }
        if self
            .intervention
            .as_ref()
            .is_some_and(|i| !i.fired && i.before == sent)
        {
            self.fire().map_err(grader_trouble)?;
        }
        if self.crashed {
            return Err(RedisError::from(std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                "this client crashed: it sends nothing more",
            )));
        }
        Ok(())
    }

    /// Everything that happens after a reply came back to a command sent at
    /// `sent`.
    fn after_command(
        &mut self,
        packed: &[u8],
        reply: &RedisResult<Value>,
        sent: Instant,
    ) -> RedisResult<()> {
        let args = unpack(packed);
        if let Err(e) = reply
            && stall::is_interrupted(e)
        {
            stall::noticed();
        }
        if matches!(reply, Ok(Value::ServerError(e)) if e.code() == "NOSCRIPT") {
            self.reloading = true;
            return Ok(());
        }
        if std::mem::take(&mut self.reloading) && confine::name_of(&args) == "SCRIPT|LOAD" {
            return Ok(());
        }
        let by_redis = confine::refused_by_redis(reply).map(|denial| Refusal {
            command: confine::name_of(&args),
            why: format!(
                "its script reached beyond the check's namespace (a key it did not declare in \
                 KEYS, or a command no lock needs), and Redis refused it: {denial}"
            ),
        });
        let reply = match reply {
            Ok(value) => show_value(value),
            Err(e) => format!("(error) {e}"),
        };
        self.record(&args, reply, by_redis);
        enter(&self.world()?)
            .settle_after(sent, self.ran_at_ms)
            .map_err(grader_trouble)?;
        if let Some((turns, me)) = &self.turns {
            turns.pass(*me);
        }
        Ok(())
    }

    /// `text` with this world's key prefix taken out of the key names in it.
    fn without_prefix(&self, text: &str) -> String {
        match self.world.upgrade() {
            Some(world) => enter(&world).keys.display(text),
            None => text.to_owned(),
        }
    }

    /// Adds a command to the call's record and counts it; a refused one also
    /// goes to the check's ledger.
    fn record(&mut self, args: &[Vec<u8>], reply: String, refusal: Option<Refusal>) {
        let command = match self.world.upgrade() {
            Some(world) => {
                let world = enter(&world);
                args.iter()
                    .map(|a| show_arg(&world.keys.display(&String::from_utf8_lossy(a))))
                    .collect::<Vec<_>>()
                    .join(" ")
            }
            None => args
                .iter()
                .map(|a| show_arg(&String::from_utf8_lossy(a)))
                .collect::<Vec<_>>()
                .join(" "),
        };
        self.steps.push(Step::Sent { command, reply });
        self.sent.fetch_add(1, Ordering::Relaxed);
        if let (Some(refusal), Some(ledger)) = (refusal, &self.ledger) {
            ledger.note(refusal, self.steps.clone());
        }
    }

    /// Refuses the command(s) in `packed` without sending anything: the lock's
    /// code gets an error reply that says why, and the record shows it.
    fn refuse(&mut self, packed: &[u8], mut refusal: Refusal) -> RedisError {
        // Key names without the run's random prefix, so that the report (and
        // the error the lock may print) reads the same on every run.
        refusal.why = self.without_prefix(&refusal.why);
        let why = refusal.why.clone();
        // The record only marks it; the report's first lines say why.
        self.record(
            &unpack(packed),
            "(refused by the grader)".into(),
            Some(refusal),
        );
        if let Some((turns, me)) = &self.turns {
            turns.pass(*me);
        }
        RedisError::from((ErrorKind::Client, "refused by the grader", why))
    }

    /// `PTTL` and `TTL` answered on the virtual clock, for the keys it times:
    /// Redis's own answer counts real milliseconds, which drift with the
    /// grader's own work, so the same history would read differently from
    /// run to run (and a lock that reads its TTL would see real time pass).
    fn in_virtual_time(&self, packed: &[u8], reply: RedisResult<Value>) -> RedisResult<Value> {
        let Ok(Value::Int(real)) = reply else {
            return reply;
        };
        let args = unpack(packed);
        let unit_ms = match confine::name_of(&args).as_str() {
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

    /// The command(s) in `packed` as they go out, with the keys of the
    /// namespace they name noted in the world; or the first that may not go
    /// out, and why.
    fn admit(&self, packed: &[u8]) -> Result<Vec<confine::Admitted>, Refusal> {
        let admitted = unpack_all(packed)
            .iter()
            .map(|args| confine::admit(args, &self.namespace))
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(world) = self.world.upgrade() {
            enter(&world).note_named(admitted.iter().flat_map(|a| a.keys.iter().cloned()));
        }
        Ok(admitted)
    }

    /// Follows the lock's own `MULTI` … `EXEC` through the commands `sent`.
    fn follow_multi(&mut self, sent: &[Vec<Vec<u8>>]) {
        for args in sent {
            match confine::name_of(args).as_str() {
                "MULTI" => self.in_multi = true,
                "EXEC" | "DISCARD" => self.in_multi = false,
                _ => {}
            }
        }
    }

    /// `TIME` on the virtual clock: a fixed instant plus virtual now, so that
    /// a lock that times itself by Redis's clock reads the same on every run.
    fn virtual_time(&self) -> RedisResult<Value> {
        let now_ms = enter(&self.world()?).now_ms();
        let micros = (TIME_ORIGIN_MS + now_ms) * 1_000;
        Ok(Value::Array(vec![
            Value::BulkString((micros / 1_000_000).to_string().into_bytes()),
            Value::BulkString((micros % 1_000_000).to_string().into_bytes()),
        ]))
    }

    /// After a `FUNCTION LOAD` that Redis accepted: notes the library for
    /// removal when the check ends, and deletes it again, refusing the load,
    /// if it registered a function under a name outside the check's.
    fn loaded(&mut self, sent: &[Vec<u8>], reply: Value) -> RedisResult<Value> {
        let name = match &reply {
            Value::BulkString(name) => String::from_utf8_lossy(name).into_owned(),
            Value::SimpleString(name) => name.clone(),
            _ => return Ok(reply),
        };
        if let Some(ledger) = &self.ledger {
            ledger.note_library(name.clone());
        }
        let listed: Value = redis::cmd("FUNCTION")
            .arg("LIST")
            .arg("LIBRARYNAME")
            .arg(&name)
            .query(enter(&self.world()?).con())?;
        let prefix = self.namespace.functions();
        if let Some(outside) = functions::registered(&listed)
            .into_iter()
            .find(|f| !f.starts_with(prefix))
        {
            let _ = redis::cmd("FUNCTION")
                .arg("DELETE")
                .arg(&name)
                .exec(enter(&self.world()?).con());
            let refusal = Refusal {
                command: "FUNCTION|LOAD".into(),
                why: format!(
                    "its library registered `{outside}` around `redis.register_function`, under \
                     a name outside the check's own; the grader deleted the library again"
                ),
            };
            return Err(self.refuse(&pack(sent), refusal));
        }
        Ok(functions::reply_name(reply, prefix))
    }
}

/// The machine's wall clock, in ms since the epoch: the clock a lock reads
/// for `PXAT` (Redis, on this machine or in a container of it, keeps the same).
fn wall_clock_ms() -> u64 {
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
fn names_an_instant(args: &[Vec<u8>], now_ms: u64) -> bool {
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

/// Where the virtual clock's `TIME` starts: 2026-01-01 00:00:00 UTC.
const TIME_ORIGIN_MS: u64 = 1_767_225_600_000;

/// `args` packed as one RESP command.
fn pack(args: &[Vec<u8>]) -> Vec<u8> {
    let mut cmd = redis::Cmd::new();
    for arg in args {
        cmd.arg(arg.as_slice());
    }
    cmd.get_packed_command()
}

/// A number no other wire of this process has (node wires included).
pub(crate) fn next_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Turns a problem of the grader's into an error the lock sees (it can only
/// give up), while the message still says whose problem it is.
fn grader_trouble(e: GradeError) -> RedisError {
    RedisError::from(std::io::Error::other(format!(
        "grader problem, not yours: {e}"
    )))
}

impl Drop for Wire {
    /// A wire dropped in the middle of a call (its code panicked) must not
    /// keep the others waiting for its turn.
    fn drop(&mut self) {
        self.leave_turns();
        crate::remote::forget(self.id);
    }
}

impl ConnectionLike for Wire {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        let received_ms = wall_clock_ms();
        self.before_command()?;
        let admitted = match self.admit(cmd) {
            Ok(admitted) => admitted,
            Err(refusal) => return Err(self.refuse(cmd, refusal)),
        };
        let Some(one) = admitted.first() else {
            return self.inner.req_packed_command(cmd);
        };
        let sent = Instant::now();
        let reply = if one.answered_here {
            self.virtual_time()
        } else {
            let out = pack(&one.args);
            let reply = if self.in_multi {
                self.inner.req_packed_command(&out)
            } else {
                let (reply, ran_at) = crate::clock::sent_timed(&mut self.inner, &out);
                self.ran_at_ms = if names_an_instant(&one.args, received_ms) {
                    // The lock read its clock a little before: up to 5 ms earlier.
                    Some((received_ms.saturating_sub(5), received_ms))
                } else {
                    ran_at
                };
                reply
            };
            self.follow_multi(std::slice::from_ref(&one.args));
            self.in_virtual_time(&out, reply)
        };
        let reply = match reply {
            Ok(value) if confine::name_of(&one.args) == "FUNCTION|LOAD" => {
                self.loaded(&one.args, value)
            }
            reply => reply,
        };
        self.after_command(cmd, &reply, sent)?;
        reply
    }

    /// A pipeline is one step: the grader does not step in between its
    /// commands (in a `MULTI`/`EXEC` nobody can). One refused command keeps
    /// the whole pipeline from going out.
    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        self.before_command()?;
        let args: Vec<Vec<Vec<u8>>> = match self.admit(cmd) {
            Ok(admitted) => admitted.into_iter().map(|a| a.args).collect(),
            Err(refusal) => return Err(self.refuse(&pipeline_label(cmd), refusal)),
        };
        // A TIME in a pipeline goes to Redis: its answer is real time.
        let out: Vec<u8> = args.iter().flat_map(|a| pack(a)).collect();
        let sent = Instant::now();
        // Round trips of their own: a TIME inside the pipeline would shift its replies.
        let time = |inner: &mut Connection| {
            redis::cmd("TIME")
                .query::<Value>(inner)
                .ok()
                .and_then(crate::clock::time_ms)
        };
        let before = (!self.in_multi).then(|| time(&mut self.inner)).flatten();
        let replies = self.inner.req_packed_commands(&out, offset, count);
        self.follow_multi(&args);
        let after = (!self.in_multi).then(|| time(&mut self.inner)).flatten();
        self.ran_at_ms = before.zip(after);
        let shown = replies
            .as_ref()
            .map(|v| Value::Array(v.clone()))
            .map_err(|e| e.clone());
        self.after_command(&pipeline_label(cmd), &shown, sent)?;
        replies
    }

    fn get_db(&self) -> i64 {
        self.inner.get_db()
    }

    fn check_connection(&mut self) -> bool {
        self.inner.check_connection()
    }

    fn is_open(&self) -> bool {
        !self.crashed && self.inner.is_open()
    }
}
