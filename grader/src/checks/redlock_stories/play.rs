//! Playing a Redlock story second by second, with a given Redlock, on five real nodes.
//!
//! The player is the [`Engine`] of N nodes, played by the one stepping loop of
//! [`crate::story::engine`] that plays the single-server runner ([`crate::run`]) too: at the
//! start of a second the nodes' clocks move to it (keys run out), the story's faults for that
//! second happen (as [`Fault::on_nodes`] says), then A and B each take one step of their job
//! through the Redlock under test, and [`super::record`] looks at the nodes and the storage to
//! write the second down, beside the commands each call sent (to each node, and to the storage)
//! for the book's message diagram. Every
//! event also gives a line of text (when, what, and each node's holder), which a failure report
//! shows, since the text table of a timeline draws no nodes.
//!
//! The storage (the counter row, and in the fenced story the counter that hands out fencing
//! tokens) lives on the grader's single Redis server, in a [`World`] of its own, as in the
//! single-server stories: the nodes are there to be hurt, the storage is not, and one more
//! process would only stand for the same server. The fenced writes go through the reference's
//! storage, which the storage exercise checks; the learner's code under test here is Redlock alone.

use std::time::Duration;

use super::record::{Snapshot, list};
use super::stories::{TOKENS, playable};
use crate::checks::redlock::{acquire, release};
use crate::error::GradeError;
use crate::lock::Lock;
use crate::nodes::cluster::{Cluster, SharedCluster, enter};
use crate::reference::LOCK as REFERENCE;
use crate::story::client::{Client, Step};
use crate::story::engine::{self, Ended, Engine, Stop};
use crate::story::{Fault, Halt, Story, record};
use crate::timeline::{ActionKind, Lane, Message, Note, Second, Timeline};
use crate::verdict::seconds;
use crate::wire::Wire;
use crate::world::{SharedWorld, World};

/// A played story.
#[derive(Clone)]
pub struct Played {
    /// A line per event: `t = …  what happened  nodes: …`.
    pub lines: Vec<String>,
    /// The run, second by second, for the book and for the comparison with a correct Redlock.
    pub timeline: Timeline,
    /// The call of learner code that failed, if one did (the run stops there).
    pub halt: Option<Halt>,
}

/// One play of a story.
pub(super) struct Player<'a> {
    pub(super) story: &'a Story,
    lock: &'a Lock,
    pub(super) cluster: SharedCluster,
    pub(super) world: SharedWorld,
    storage: Wire,
    pub(super) clients: Vec<Client>,
    pub(super) t: u64,
    lines: Vec<String>,
    /// The clients' commands and replies, for the book's message diagram.
    pub(super) messages: Vec<Message>,
    /// How many of the cluster's recorded commands are in `messages` already.
    pub(super) heard: usize,
    /// The nodes as last seen: a paused node keeps what it held when it stopped.
    pub(super) seen: Snapshot,
}

/// Plays `story` with `lock`'s Redlock, on fresh nodes and a fresh storage row.
pub fn play(story: &Story, lock: &Lock) -> Result<Played, GradeError> {
    playable(story)?;
    let cluster = Cluster::open()?.shared();
    let world = World::open()?.shared();
    let storage = Wire::open(&world)?;
    let clients = story
        .clients
        .iter()
        .zip(TOKENS)
        .map(|(plan, token)| {
            let mut client = Client::new(*plan, &story.faults);
            client.token = Some(token.to_owned());
            client
        })
        .collect();
    let mut player = Player {
        story,
        lock,
        seen: Snapshot::empty(),
        cluster,
        world,
        storage,
        clients,
        t: 0,
        lines: Vec::new(),
        messages: Vec::new(),
        heard: 0,
    };
    player.seen = player.snapshot()?;
    // A story stuck after `MAX_SECONDS` ends there: it is held to the reference's run, which
    // is not stuck.
    let Ended { seconds, halt, .. } = engine::play(&mut player)?;
    let timeline = player.timeline(seconds, lock.name)?;
    Ok(Played {
        lines: player.lines,
        timeline,
        halt,
    })
}

impl Engine for Player<'_> {
    fn story(&self) -> &Story {
        self.story
    }

    fn second(&self) -> u64 {
        self.t
    }

    fn next_second(&mut self) {
        self.t += 1;
    }

    fn clients(&self) -> &[Client] {
        &self.clients
    }

    fn client(&mut self, i: usize) -> &mut Client {
        &mut self.clients[i]
    }

    fn tick(&mut self) -> Result<Vec<Note>, GradeError> {
        self.tick_nodes()
    }

    fn fault(&mut self, fault: Fault) -> Result<Vec<Note>, GradeError> {
        self.node_fault(fault)
    }

    fn observe(&mut self, notes: Vec<Note>) -> Result<Second, GradeError> {
        self.look(notes)
    }

    fn event(&mut self, i: usize, kind: ActionKind, text: String) -> Result<(), GradeError> {
        self.event_unsafe(i, kind, text, false, false)
    }

    fn acquire(&mut self, i: usize) -> Result<(), Stop> {
        Player::acquire(self, i)
    }

    fn read(&mut self, i: usize) -> Result<(), Stop> {
        Ok(Player::read(self, i)?)
    }

    fn write(&mut self, i: usize) -> Result<(), Stop> {
        Ok(Player::write(self, i)?)
    }

    fn release(&mut self, i: usize) -> Result<(), Stop> {
        Player::release(self, i)
    }
}

impl Player<'_> {
    /// Moves the nodes' clocks to the start of this second; returns what time did to them.
    fn tick_nodes(&mut self) -> Result<Vec<Note>, GradeError> {
        {
            let mut c = enter(&self.cluster);
            let target = self.t * 1000;
            let now = c.now_ms();
            c.advance(target.saturating_sub(now));
        }
        let before = self.seen.clone();
        let after = self.snapshot()?;
        let notes = before.changes(&after, false);
        for note in &notes {
            self.line(&note.text, &after);
        }
        self.seen = after;
        Ok(notes)
    }

    /// Does `fault` to its node (its effect is [`Fault::on_nodes`]'s); returns what happened,
    /// in words.
    fn node_fault(&mut self, fault: Fault) -> Result<Vec<Note>, GradeError> {
        let before = self.seen.clone();
        let was_down = fault.node().is_some_and(|i| before.is_down(i));
        let effect = fault.on_nodes(self.story.name, &mut enter(&self.cluster), was_down)?;
        let (what, lost) = (effect.what, effect.lost);
        let after = self.snapshot()?;
        let notes: Vec<Note> = what
            .map(Note::fault)
            .into_iter()
            .chain(before.changes(&after, lost))
            .collect();
        for note in &notes {
            self.line(&note.text, &after);
        }
        self.seen = after;
        Ok(notes)
    }

    /// Client `i` tries to take the lock on the nodes, and takes a fencing token with it in a
    /// fenced story.
    fn acquire(&mut self, i: usize) -> Result<(), Stop> {
        let token = self.clients[i].token.clone().unwrap_or_default();
        let ttl = Duration::from_secs(self.story.ttl_s);
        let got = acquire(&self.cluster, self.lock, &token, ttl)?;
        self.hear(i);
        let validity = match got.value {
            Ok(validity) => validity,
            Err(failure) => return Err(self.halt(i, "redlock_acquire", failure)),
        };
        let Some(validity) = validity else {
            let text = "denied: no majority of the nodes";
            return Ok(self.event(i, ActionKind::Denied, text.into())?);
        };
        let on = self.snapshot()?.nodes_of(&token);
        let mut text = format!(
            "acquired the lock on {}, {}",
            list(&on),
            valid_for(validity)
        );
        if self.story.fenced() {
            let fence = self.next_fence(i)?;
            self.clients[i].fence = Some(fence);
            text.push_str(&format!("; fencing token {fence}"));
        }
        let now = enter(&self.cluster).now_ms();
        let c = &mut self.clients[i];
        c.valid = Some((now, validity.as_millis() as u64));
        c.believes = true;
        c.step = Step::Read;
        Ok(self.event(i, ActionKind::Acquired, text)?)
    }

    /// Client `i`'s next token of the fencing counter: `INCR` on the grader's server, which
    /// stands in for a consensus service's revision (the diagram draws it on the storage's lane,
    /// that server's).
    fn next_fence(&mut self, i: usize) -> Result<u64, GradeError> {
        let fence: u64 = {
            let mut world = crate::world::enter(&self.world);
            let key = world.keys.fence.clone();
            redis::cmd("INCR").arg(key).query(world.con())?
        };
        let reply = format!("(integer) {fence}");
        let incr = record::message(
            &self.clients,
            i,
            self.t,
            Lane::Storage,
            ("INCR lock:fence", &reply),
            true,
        );
        self.messages.push(incr);
        Ok(fence)
    }

    fn read(&mut self, i: usize) -> Result<(), GradeError> {
        let holds = self.holds(i)?;
        let value = crate::world::enter(&self.world).read_counter()?;
        let read = record::plain_read(&self.clients, i, self.t, value);
        self.messages.push(read);
        let c = &mut self.clients[i];
        c.read = value;
        c.step = Step::Write {
            at: self.t + c.plan.work_s,
        };
        self.event_unsafe(i, ActionKind::Read, format!("read {value}"), !holds, false)
    }

    fn write(&mut self, i: usize) -> Result<(), GradeError> {
        let holds = self.holds(i)?;
        let value = self.clients[i].read + 1;
        self.clients[i].step = Step::Release;
        let Some(fence) = self.clients[i].fence else {
            crate::world::enter(&self.world).write_counter(value)?;
            let wrote = record::plain_write(&self.clients, i, self.t, value);
            self.messages.push(wrote);
            return self.event_unsafe(
                i,
                ActionKind::Wrote,
                format!("wrote {value}"),
                !holds,
                false,
            );
        };
        let row = crate::world::enter(&self.world).keys.row.clone();
        self.storage.begin_call();
        let accepted = (REFERENCE.fenced_write)(&mut self.storage, &row, fence, value)?;
        let sent = record::sent(
            &self.clients,
            i,
            self.t,
            Lane::Storage,
            self.storage.steps(),
        );
        self.messages.extend(sent);
        if accepted {
            return self.event_unsafe(
                i,
                ActionKind::Wrote,
                format!("wrote {value}"),
                !holds,
                false,
            );
        }
        // The storage refused: the client knows its job failed, and goes on to release.
        let highest = crate::world::enter(&self.world).row()?.fence;
        self.clients[i].believes = false;
        let text = format!("write rejected: {fence} < {highest}");
        self.event_unsafe(i, ActionKind::WriteRejected, text, !holds, true)
    }

    fn release(&mut self, i: usize) -> Result<(), Stop> {
        let token = self.clients[i].token.clone().unwrap_or_default();
        let had = self.seen.nodes_of(&token);
        let released = release(&self.cluster, self.lock, &token)?;
        self.hear(i);
        if let Err(failure) = released {
            return Err(self.halt(i, "redlock_release", failure));
        }
        let still = self.snapshot()?.nodes_of(&token);
        let freed: Vec<usize> = had.into_iter().filter(|n| !still.contains(n)).collect();
        let c = &mut self.clients[i];
        c.believes = false;
        c.step = Step::Done;
        if freed.is_empty() {
            let text = "found its key on no node: nothing to release";
            self.event(i, ActionKind::ReleaseRefused, text.into())?;
        } else {
            let text = format!("released the lock on {}", list(&freed));
            self.event(i, ActionKind::Released, text)?;
        }
        Ok(())
    }

    /// Whether client `i` is the one a majority of the nodes hold.
    fn holds(&mut self, i: usize) -> Result<bool, GradeError> {
        let snapshot = self.snapshot()?;
        let token = self.clients[i].token.as_deref();
        Ok(token.is_some() && snapshot.majority() == token)
    }

    /// Client `i` did something: the action for the timeline, and a line for the report.
    fn event_unsafe(
        &mut self,
        i: usize,
        kind: ActionKind,
        text: impl Into<String>,
        is_unsafe: bool,
        rejected: bool,
    ) -> Result<(), GradeError> {
        let text = text.into();
        let after = self.snapshot()?;
        let c = &mut self.clients[i];
        let mark = if is_unsafe { "  ✗" } else { "" };
        let what = format!("{} {text}{mark}", c.name());
        c.act_unsafe(kind, text, is_unsafe, rejected);
        self.line(&what, &after);
        self.seen = after;
        Ok(())
    }

    /// A line of the report: when, what, and each node's holder.
    fn line(&mut self, what: &str, nodes: &Snapshot) {
        let at = enter(&self.cluster).now_ms();
        let marks = nodes.marks(&self.clients);
        self.lines.push(format!(
            "t = {:>7}  {what:<68}  nodes: {marks}",
            seconds(at)
        ));
    }
}

/// "valid for 9.9 s": to a tenth of a second, as correct Redlocks agree only to a rounding of
/// 1 % of the TTL, which the checks of `redlock.rs` hold to the millisecond.
fn valid_for(validity: Duration) -> String {
    let tenths = (validity.as_millis() + 50) / 100;
    format!("valid for {}.{} s", tenths / 10, tenths % 10)
}
