//! The wire's place on the single server: one client of a world.
//!
//! A world is one scenario's keys and clock on the server that holds the lock
//! ([`crate::world`]). On it the wire keeps the lock's commands inside the
//! world's namespace ([`super::confined`]), takes turns with the world's other
//! clients ([`Turns`]), fires the check's [`Intervention`] at its boundary,
//! answers `TIME` and `PTTL` on the virtual clock and moves the instants a
//! lock computed from that `TIME` to the real one ([`super::timing`]), and
//! records each call as a list of [`Step`]s of its own.

use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use redis::{Connection, ConnectionLike, RedisError, RedisResult, Value};

use super::fault::{Faults, Stopped};
use super::show::{pipeline_label, show_value, unpack};
use super::tally::Tally;
use super::{Fired, Intervention, Step, Turns, grader_trouble};
use crate::acl;
use crate::clock::{RanAt, Sighting, TimedFrame};
use crate::confine::{self, Ledger, Namespace, Refusal, functions};
use crate::error::GradeError;
use crate::stall;
use crate::world::{SharedWorld, World, enter};

/// How long before a command reached the wire its lock most likely read its
/// own clock, when the command carries an instant of the wall clock, in ms:
/// the middle of what the clock's slack admits either way
/// ([`crate::clock::as_asked`]: a millisecond short to two over), so that a
/// TTL asked for reads as asked whether the lock read its clock at once or up
/// to 3 ms before the command came.
const LIKELY_LEAD_MS: u64 = 2;

/// What the lock's code hears when it goes on after its check has ended
/// (a call that was abandoned for taking too long).
const CHECK_OVER: &str = "this check is over: the grader stopped waiting for this call";

/// A client of one world.
pub(super) struct OnWorld {
    pub(super) inner: Connection,
    /// Weak, so that a call the grader abandoned (an endless loop) does not
    /// keep the world, and its keys in Redis, alive after the check.
    pub(super) world: Weak<Mutex<World>>,
    pub(super) steps: Vec<Step>,
    pub(super) crashed: bool,
    pub(super) intervention: Option<Intervention>,
    /// The fault an intervention armed for this call, and what it hit.
    pub(super) faults: Faults,
    pub(super) turns: Option<(Arc<Turns>, usize)>,
    /// Where the keys and functions it names are kept.
    pub(super) namespace: Namespace,
    /// Where refusals go: the ledger of the check that opened the wire.
    pub(super) ledger: Option<Arc<Ledger>>,
    /// The lock's code opened a `MULTI` with a command of its own: until its
    /// `EXEC` or `DISCARD`, a `TIME` sent ahead would be queued with it.
    in_multi: bool,
    /// In the lock's `MULTI`: the anchor of the first instant a queued
    /// command carried to the real line ([`super::timing::to_real_line`]),
    /// and virtual now when it was queued.
    multi_moved: Option<(u64, u64)>,
    /// In the lock's `MULTI`: the TTLs its queued commands may ask for
    /// ([`crate::clock::asked_in`]).
    multi_asked: Vec<u64>,
    /// The real millisecond by Redis's clock that the last command not
    /// queued in a `MULTI` ran at (the `MULTI` itself, inside one).
    ran_at_ms: Option<RanAt>,
    /// The world's keys on the virtual clock, read back after each command:
    /// the commands around each one, packed once.
    frame: TimedFrame,
}

impl OnWorld {
    /// A new client of `world`; `id` names its functions when no check's
    /// ledger does.
    pub(super) fn open(world: &SharedWorld, id: u64) -> Result<OnWorld, GradeError> {
        let ledger = confine::current_ledger();
        let (mut inner, keys, shared, timed) = {
            let world = enter(world);
            let keys = world.keys.namespace().to_owned();
            let timed = world.timed_keys().to_vec();
            (
                world.client_connection()?,
                keys,
                world.on_shared_server(),
                timed,
            )
        };
        // One prefix for every function of the check, however many worlds it opens.
        let check = match &ledger {
            Some(ledger) => format!("c{}", ledger.id()),
            None => format!("w{id}"),
        };
        let run = crate::prefix::run()?;
        let namespace = Namespace::new(&keys, &functions::allowed(&format!("{run}{check}_")));
        // The grader's users live on the shared server; the nodes of a replicated pair are the
        // grader's own and hold nothing else, where the connection makes its user itself.
        if shared {
            acl::confine(&mut inner, run, namespace.keys())?;
        } else {
            acl::confine_own(&mut inner, namespace.keys())?;
        }
        Ok(OnWorld {
            inner,
            world: Arc::downgrade(world),
            steps: Vec::new(),
            crashed: false,
            intervention: None,
            faults: Faults::default(),
            turns: None,
            namespace,
            ledger,
            in_multi: false,
            multi_moved: None,
            multi_asked: Vec::new(),
            ran_at_ms: None,
            frame: TimedFrame::new(&timed),
        })
    }

    /// The world, unless its check has ended.
    pub(super) fn world(&self) -> RedisResult<SharedWorld> {
        self.world
            .upgrade()
            .ok_or_else(|| RedisError::from(std::io::Error::other(CHECK_OVER)))
    }

    /// Runs the armed intervention now, with the world locked.
    pub(super) fn fire(&mut self) -> Result<(), GradeError> {
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
            Fired::Fault(fault) => self.faults.arm(fault),
        }
        Ok(())
    }

    /// Everything that happens before a command goes out. An error here is
    /// returned to the lock as if the connection had failed.
    fn before_command(&mut self, tally: &Tally) -> RedisResult<()> {
        let sent = tally.check_budget();
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

    /// Everything that happens after a reply came back to the command `args`
    /// sent at `sent`, whose round trip told the clock `sighting`; whether the
    /// record shows the command.
    fn after_command(
        &mut self,
        tally: &mut Tally,
        args: &[Vec<u8>],
        reply: &RedisResult<Value>,
        sent: Instant,
        sighting: &Sighting,
    ) -> RedisResult<bool> {
        if let Err(e) = reply
            && stall::is_interrupted(e)
        {
            stall::noticed();
        }
        if tally.hides(args, reply) {
            return Ok(false);
        }
        let by_redis = confine::refused_by_redis(reply).map(|denial| Refusal {
            command: confine::name_of(args),
            why: format!(
                "its script reached beyond the check's namespace (a key it did not declare in \
                 KEYS, or a command no lock needs), and Redis refused it: {denial}"
            ),
        });
        let reply = match reply {
            Ok(value) => show_value(value),
            Err(e) => format!("(error) {e}"),
        };
        self.record(tally, args, reply, by_redis);
        enter(&self.world()?)
            .settle_after(sent, sighting)
            .map_err(grader_trouble)?;
        if let Some((turns, me)) = &self.turns {
            turns.pass(*me);
        }
        Ok(true)
    }

    /// The command(s) in `packed`, stopped by a fault before they went out:
    /// recorded with what the fault shows, and the error the lock's code gets.
    fn stopped(&mut self, tally: &mut Tally, packed: &[u8], stopped: Stopped) -> RedisError {
        self.record(tally, &unpack(packed), stopped.shown, None);
        if let Some((turns, me)) = &self.turns {
            turns.pass(*me);
        }
        stopped.error
    }

    /// After a command the record shows came back: the error the lock's code
    /// gets instead, when an armed fault takes its reply (the record's line
    /// then says so).
    fn reply_taken(&mut self, name: &str) -> Option<RedisError> {
        let Some(Step::Sent { reply, .. }) = self.steps.last_mut() else {
            return None;
        };
        let stopped = self.faults.after_reply(name, None, reply)?;
        *reply = stopped.shown;
        Some(stopped.error)
    }

    /// `text` with this world's key prefix taken out of the key names in it.
    pub(super) fn without_prefix(&self, text: &str) -> String {
        match self.world.upgrade() {
            Some(world) => enter(&world).keys.display(text),
            None => text.to_owned(),
        }
    }

    /// Adds a command to the call's record and counts it; a refused one also
    /// goes to the check's ledger.
    pub(super) fn record(
        &mut self,
        tally: &mut Tally,
        args: &[Vec<u8>],
        reply: String,
        refusal: Option<Refusal>,
    ) {
        let command = match self.world.upgrade() {
            Some(world) => {
                let world = enter(&world);
                super::shown(args, |a| world.keys.display(a))
            }
            None => super::shown(args, str::to_owned),
        };
        self.steps.push(Step::Sent { command, reply });
        tally.count();
        if let (Some(refusal), Some(ledger)) = (refusal, &self.ledger) {
            ledger.note(refusal, self.steps.clone());
        }
    }

    /// When the lock's own transaction ran, its `EXEC` sent at virtual `now_ms`: from the
    /// anchor an instant queued in it went to the real line from (`anchor_ms` in the pipeline
    /// that ends it, or one queued earlier, when virtual time may have moved since), else as
    /// the trailing `TIME` inside it saw (`seen`).
    fn exec_ran_at(
        &self,
        now_ms: u64,
        anchor_ms: Option<u64>,
        seen: Option<(u64, u64)>,
    ) -> Option<(u64, u64)> {
        match (self.multi_moved, anchor_ms) {
            (Some((anchor_ms, queued_ms)), _) => {
                let at = anchor_ms + now_ms.saturating_sub(queued_ms);
                Some((at, at))
            }
            (None, Some(anchor_ms)) => Some((anchor_ms, anchor_ms)),
            (None, None) => seen,
        }
    }

    /// Follows the lock's own `MULTI` … `EXEC` through the commands `sent`.
    fn follow_multi<'a>(&mut self, sent: impl IntoIterator<Item = &'a Vec<Vec<u8>>>) {
        for args in sent {
            self.follow_named(&confine::name_of(args));
        }
    }

    /// Follows the lock's own `MULTI` … `EXEC` through one command, by its name.
    fn follow_named(&mut self, command: &str) {
        match command {
            "MULTI" => self.in_multi = true,
            "EXEC" | "DISCARD" => {
                self.in_multi = false;
                self.multi_moved = None;
                self.multi_asked.clear();
            }
            _ => {}
        }
    }

    /// One command of the lock's code, through the wire.
    pub(super) fn one(&mut self, tally: &mut Tally, cmd: &[u8]) -> RedisResult<Value> {
        let received_ms = super::timing::wall_clock_ms();
        self.before_command(tally)?;
        // Read whole, once: the filter reads it, and the record shows it as sent.
        let sent_args = match super::request::one(cmd) {
            Ok(args) => args,
            Err(refusal) => return Err(self.refuse(tally, &super::request::label(cmd), refusal)),
        };
        let one = match self.admit_one(&sent_args) {
            Ok(admitted) => admitted,
            Err(refusal) => return Err(self.refuse(tally, cmd, refusal)),
        };
        let command = confine::name_of(&one.args);
        let name = command.replace('|', " ");
        if let Some(stopped) = self.faults.before_send(&name, None) {
            return Err(self.stopped(tally, cmd, stopped));
        }
        let sent = Instant::now();
        let mut sighting = Sighting::default();
        let reply = if one.answered_here {
            sighting.ran_at = self.ran_at_ms;
            self.virtual_time()
        } else {
            let now_ms = enter(&self.world()?).now_ms();
            let real_line = super::timing::to_real_line(&one.args, now_ms, received_ms);
            let out = super::show::pack(real_line.as_ref().map_or(&one.args, |r| &r.args));
            let opens_multi = command == "MULTI";
            let reply = if self.in_multi && command == "EXEC" {
                // The clock's reads go inside the transaction, at its end.
                let (replies, seen) = self.frame.send_exec(&mut self.inner, &[], 0, &out);
                self.ran_at_ms = self.exec_ran_at(now_ms, None, seen.ran_at);
                sighting.expiries = seen.expiries;
                sighting.asked = std::mem::take(&mut self.multi_asked);
                replies.map(|mut r| r.pop().unwrap_or(Value::Nil))
            } else if self.in_multi || opens_multi {
                // Anything sent behind it would be queued in the transaction.
                if opens_multi {
                    self.ran_at_ms = None;
                }
                if self.in_multi {
                    if let Some(moved) = &real_line {
                        self.multi_moved.get_or_insert((moved.anchor_ms, now_ms));
                    }
                    // What it may ask for, read when the transaction runs.
                    let asked = crate::clock::asked_in([one.args.as_slice()]);
                    self.multi_asked.extend(asked);
                }
                self.inner.req_packed_command(&out)
            } else {
                let (reply, seen) = self.frame.send(&mut self.inner, &out);
                self.ran_at_ms = if let Some(moved) = &real_line {
                    // Its instants were put on the real line from this anchor.
                    Some((moved.anchor_ms, moved.anchor_ms))
                } else if super::timing::names_an_instant(&one.args, received_ms) {
                    // The lock read its clock a little before: up to 5 ms earlier, most
                    // likely within 2 ms (a round TTL reads exactly anywhere in the 5).
                    sighting.likely = Some(received_ms.saturating_sub(LIKELY_LEAD_MS));
                    Some((received_ms.saturating_sub(5), received_ms))
                } else {
                    seen.ran_at
                };
                sighting.expiries = seen.expiries;
                sighting.asked = crate::clock::asked_in([one.args.as_slice()]);
                reply
            };
            sighting.ran_at = self.ran_at_ms;
            self.follow_named(&command);
            self.in_virtual_time(&command, &one.args, reply)
        };
        let reply = match reply {
            Ok(value) if command == "FUNCTION|LOAD" => self.loaded(tally, &one.args, value),
            reply => reply,
        };
        if self.after_command(tally, &sent_args, &reply, sent, &sighting)?
            && let Some(error) = self.reply_taken(&name)
        {
            return Err(error);
        }
        reply
    }

    /// A pipeline is one step: the grader does not step in between its
    /// commands (in a `MULTI`/`EXEC` nobody can). One refused command keeps
    /// the whole pipeline from going out.
    pub(super) fn pipeline(
        &mut self,
        tally: &mut Tally,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        let received_ms = super::timing::wall_clock_ms();
        self.before_command(tally)?;
        let commands = match super::request::pipeline(cmd, offset, count) {
            Ok(commands) => commands,
            Err(refusal) => return Err(self.refuse(tally, &super::request::label(cmd), refusal)),
        };
        let args: Vec<Vec<Vec<u8>>> = match self.admit_unpacked(&commands) {
            Ok(admitted) => admitted.into_iter().map(|a| a.args).collect(),
            Err(refusal) => return Err(self.refuse(tally, &pipeline_label(cmd), refusal)),
        };
        let label = pipeline_label(cmd);
        let name = super::fault::pipeline_name(&args);
        if let Some(stopped) = self.faults.before_send(&name, None) {
            return Err(self.stopped(tally, &label, stopped));
        }
        // A TIME in a pipeline goes to Redis: its answer is real time.
        let now_ms = enter(&self.world()?).now_ms();
        let mut anchor_ms = None;
        let packed: Vec<Vec<u8>> = args
            .iter()
            .map(
                |a| match super::timing::to_real_line(a, now_ms, received_ms) {
                    Some(moved) => {
                        anchor_ms.get_or_insert(moved.anchor_ms);
                        super::show::pack(&moved.args)
                    }
                    None => super::show::pack(a),
                },
            )
            .collect();
        let sent = Instant::now();
        let mut sighting = Sighting {
            asked: crate::clock::asked_in(args.iter().map(Vec::as_slice)),
            ..Sighting::default()
        };
        // (All its replies asked for: a caller that skips some asks redis-rs to turn an error
        // among them into an aborted transaction, which the plain path below keeps.)
        let ending = packed
            .split_last()
            .filter(|_| offset == 0 && self.in_multi && ends_the_transaction(&args));
        let replies = if let Some((last, queued)) = ending {
            // It ends the lock's own transaction: the clock's reads go inside it, before its
            // EXEC, as for an EXEC sent alone.
            let (replies, seen) =
                self.frame
                    .send_exec(&mut self.inner, &queued.concat(), queued.len(), last);
            self.ran_at_ms = self.exec_ran_at(now_ms, anchor_ms, seen.ran_at);
            sighting.expiries = seen.expiries;
            sighting.asked.append(&mut self.multi_asked);
            self.follow_multi(&args);
            replies.map(|all| all.into_iter().take(count).collect())
        } else {
            // Round trips of their own: a TIME inside the pipeline would shift its replies.
            let time = crate::clock::read_time;
            let before = (!self.in_multi).then(|| time(&mut self.inner)).flatten();
            let replies = self
                .inner
                .req_packed_commands(&packed.concat(), offset, count);
            self.follow_multi(&args);
            let after = (!self.in_multi).then(|| time(&mut self.inner)).flatten();
            // Instants put on the real line are read from their anchor, as for one command.
            self.ran_at_ms = match anchor_ms {
                Some(anchor) if !self.in_multi => Some((anchor, anchor)),
                _ => before.zip(after),
            };
            if self.in_multi {
                // Queued in a transaction still open: read when its EXEC runs.
                self.multi_asked.extend(sighting.asked.iter().copied());
                if let Some(anchor) = anchor_ms {
                    self.multi_moved.get_or_insert((anchor, now_ms));
                }
            }
            replies
        };
        let shown = replies
            .as_ref()
            .map(|v| Value::Array(v.clone()))
            .map_err(|e| e.clone());
        sighting.ran_at = self.ran_at_ms;
        if self.after_command(tally, &unpack(&label), &shown, sent, &sighting)?
            && let Some(error) = self.reply_taken(&name)
        {
            return Err(error);
        }
        replies
    }

    /// Sends `WAIT replicas timeout_ms` for the course's own client code (see
    /// [`super::Wire::wait_for_replicas`]); `WAIT 0 0` when `none_linked`.
    pub(super) fn wait_for_replicas(
        &mut self,
        replicas: u64,
        timeout_ms: u64,
        none_linked: bool,
    ) -> RedisResult<u64> {
        let (asked, patience) = if none_linked {
            (0, 0)
        } else {
            (replicas, timeout_ms)
        };
        let acked: u64 = redis::cmd("WAIT")
            .arg(asked)
            .arg(patience)
            .query(&mut self.inner)?;
        self.steps.push(Step::Sent {
            command: format!("WAIT {replicas} {timeout_ms}"),
            reply: format!("(integer) {acked}"),
        });
        Ok(acked)
    }

    /// Leaves the turn-taking, if any (at the end of a call).
    pub(super) fn leave_turns(&mut self) {
        if let Some((turns, me)) = self.turns.take() {
            turns.leave(me);
        }
    }
}

/// Whether a pipeline sent inside the lock's own transaction ends it: its last command is the
/// transaction's `EXEC`, and none before it ends or opens one.
fn ends_the_transaction(args: &[Vec<Vec<u8>>]) -> bool {
    let Some((last, before)) = args.split_last() else {
        return false;
    };
    confine::name_of(last) == "EXEC"
        && before
            .iter()
            .all(|a| !matches!(confine::name_of(a).as_str(), "EXEC" | "DISCARD" | "MULTI"))
}
