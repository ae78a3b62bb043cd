//! A story on Redlock's nodes: the nodes the lock runs on, their clock and faults, and the calls of
//! a Redlock on them.
//!
//! At the start of a second the nodes' clocks move to it (keys run out), and the story's faults
//! for that second happen (as [`Fault::on_nodes`] says); a look at the nodes after each
//! ([`Snapshot`]) tells what they did to the keys. A client takes the lock with the lock's
//! `redlock_acquire` on every node, on the nodes' own virtual clock, which the call moves on (a
//! paused node costs its time-out), takes a fencing token after a grant in a fenced story, and
//! gives the lock back with `redlock_release`; the commands each call sent to each node go to the
//! message diagram. The holder of a second is the client a majority of the nodes hold; a node's
//! row, what it holds, whether it runs, and how far its clock runs ahead.
//!
//! The clients' Redlock tokens are fixed ([`TOKENS`]), so that a run's lines are the same on
//! every run. The storage (the counter row, and in a fenced story the counter that hands out
//! fencing tokens) lives on the grader's single Redis server, as in the stories on one server:
//! the nodes are there to be hurt, the storage is not, and one more process would only stand for
//! the same server.

use std::time::Duration;

use super::Runner;
use super::record::Holding;
use super::redlock::{TOKEN_A, TOKEN_B, acquire, release};
use super::snapshot::{Snapshot, list, owner};
use crate::error::GradeError;
use crate::nodes::NODES;
use crate::nodes::cluster::{Cluster, SharedCluster, enter};
use crate::nodes::record::Sent;
use crate::story::client::{Client, Step};
use crate::story::engine::{Engine, Stop};
use crate::story::fault::node_name;
use crate::story::{Fault, Fencing, Story, Topology, record};
use crate::timeline::{ActionKind, Lane, Note};

/// The clients' Redlock tokens, A's then B's.
pub(super) const TOKENS: [&str; 2] = [TOKEN_A, TOKEN_B];

/// The grader's nodes, opened for a play, as last seen.
pub(super) struct NodesGround {
    cluster: SharedCluster,
    /// The nodes as last seen: a paused node keeps what it held when it stopped.
    seen: Snapshot,
    /// How many of the cluster's recorded commands are in the run's messages already.
    heard: usize,
}

impl NodesGround {
    /// Fresh nodes for `story`, which must be one the engine plays on nodes ([`plays`]), and
    /// each of `clients` given its Redlock token.
    pub(super) fn open(story: &Story, clients: &mut [Client]) -> Result<NodesGround, GradeError> {
        plays(story)?;
        for (client, token) in clients.iter_mut().zip(TOKENS) {
            client.token = Some(token.to_owned());
        }
        let mut nodes = NodesGround {
            cluster: Cluster::open()?.shared(),
            seen: Snapshot::empty(),
            heard: 0,
        };
        nodes.look_again()?;
        Ok(nodes)
    }

    /// The nodes' clock, in virtual ms.
    pub(super) fn now_ms(&self) -> u64 {
        enter(&self.cluster).now_ms()
    }

    /// One look at every node now; the nodes as last seen stay as they were.
    pub(super) fn snapshot(&self) -> Result<Snapshot, GradeError> {
        Snapshot::take(&mut enter(&self.cluster), &self.seen)
    }

    /// Looks at every node now, and keeps what it saw as the nodes last seen.
    pub(super) fn look_again(&mut self) -> Result<(), GradeError> {
        self.seen = self.snapshot()?;
        Ok(())
    }

    /// Each node's holder as last seen, for a line of a report: `A A B · ‖`.
    pub(super) fn marks(&self, clients: &[Client]) -> String {
        self.seen.marks(clients)
    }

    /// Moves the nodes' clocks to the start of second `t`; returns what time did to them.
    pub(super) fn tick(&mut self, t: u64) -> Result<Vec<Note>, GradeError> {
        {
            let mut c = enter(&self.cluster);
            let now = c.now_ms();
            c.advance((t * 1000).saturating_sub(now));
        }
        let before = self.seen.clone();
        self.look_again()?;
        Ok(before.changes(&self.seen, false))
    }

    /// Does `fault` to its node in a play of `story` (its effect is [`Fault::on_nodes`]'s);
    /// returns what happened, in words.
    pub(super) fn fault(
        &mut self,
        story: &'static str,
        fault: Fault,
    ) -> Result<Vec<Note>, GradeError> {
        let before = self.seen.clone();
        let was_down = fault.node().is_some_and(|i| before.is_down(i));
        let effect = fault.on_nodes(story, &mut enter(&self.cluster), was_down)?;
        self.look_again()?;
        Ok(effect
            .what
            .map(Note::fault)
            .into_iter()
            .chain(before.changes(&self.seen, effect.lost))
            .collect())
    }

    /// Who holds the lock at `now_ms`, the end of a second: the client a majority of the nodes
    /// hold, for as long as that majority lasts, with each node's row.
    pub(super) fn holding(&mut self, now_ms: u64) -> Result<Holding, GradeError> {
        self.look_again()?;
        let majority = self.seen.majority();
        Ok(Holding {
            holder: majority.map(|t| owner(t).to_owned()),
            ttl_left_s: majority.and_then(|token| self.seen.majority_left_s(token, now_ms)),
            nodes: self.seen.rows(),
        })
    }

    /// The commands the cluster recorded since the last time it was asked.
    fn news(&mut self) -> Vec<Sent> {
        let sent: Vec<Sent> = enter(&self.cluster)
            .sent()
            .skip(self.heard)
            .cloned()
            .collect();
        self.heard += sent.len();
        sent
    }

    /// The nodes' names for the timeline, as readers count them (from 1).
    pub(super) fn names(&self) -> Vec<String> {
        (0..NODES).map(node_name).collect()
    }
}

/// Checks that `story` fits and is one the engine plays on nodes: on the grader's nodes, with no
/// more clients than there are tokens, no lease keeper and no fenced reads, which only a lock on
/// one server plays.
pub(super) fn plays(story: &Story) -> Result<(), GradeError> {
    story.fits()?;
    let misfit = |what: String| {
        Err(GradeError::StoryDoesNotFit {
            story: story.name,
            what,
        })
    };
    if story.topology != Topology::Nodes(NODES) {
        return misfit(format!(
            "{:?}, which is not the grader's nodes",
            story.topology
        ));
    }
    if story.clients.len() > TOKENS.len() || story.clients.iter().any(|c| c.keeper) {
        return misfit("more clients than two, or a keeper, on Redlock's nodes".into());
    }
    if story.fencing == Fencing::ReadsAndWrites {
        return misfit("fenced reads on Redlock's nodes".into());
    }
    Ok(())
}

impl Runner {
    /// The nodes the story runs on, which only a story on nodes has.
    fn nodes(&mut self) -> Result<&mut NodesGround, GradeError> {
        match &mut self.ground {
            super::Ground::Nodes(nodes) => Ok(nodes),
            _ => Err(GradeError::StoryDoesNotFit {
                story: self.stage.story.name,
                what: "a Redlock's call off Redlock's nodes".into(),
            }),
        }
    }

    /// Client `i` tries to take the lock on a majority of the nodes, and takes a fencing token
    /// with it in a fenced story.
    pub(super) fn take_majority(&mut self, i: usize) -> Result<(), Stop> {
        let token = self.stage.clients[i].token.clone().unwrap_or_default();
        let ttl = Duration::from_secs(self.stage.story.ttl_s);
        let cluster = self.nodes()?.cluster.clone();
        let got = acquire(&cluster, &self.lock, &token, ttl)?;
        self.hear(i)?;
        let validity = match got.value {
            Ok(validity) => validity,
            Err(failure) => return Err(self.halt(i, "redlock_acquire", failure)),
        };
        let Some(validity) = validity else {
            let text = "denied: no majority of the nodes";
            return Ok(self.act(i, ActionKind::Denied, text, false, false)?);
        };
        let on = self.nodes()?.snapshot()?.nodes_of(&token);
        let mut text = format!(
            "acquired the lock on {}, {}",
            list(&on),
            valid_for(validity)
        );
        let fence = match self.stage.story.fenced() {
            true => Some(self.next_fence(i)?),
            false => None,
        };
        if let Some(fence) = fence {
            text.push_str(&format!("; fencing token {fence}"));
        }
        let now = self.nodes()?.now_ms();
        self.grants.push((i, fence));
        let t = self.stage.t;
        let c = &mut self.stage.clients[i];
        c.fence = fence;
        c.valid = Some((now, validity.as_millis() as u64));
        c.believes = true;
        c.step = Step::Read;
        c.granted_at = t;
        Ok(self.act(i, ActionKind::Acquired, text, false, false)?)
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
            &self.stage.clients,
            i,
            self.stage.t,
            Lane::Storage,
            ("INCR lock:fence", &reply),
            true,
        );
        self.messages.push(incr);
        Ok(fence)
    }

    /// Client `i` releases the lock on every node.
    pub(super) fn release_majority(&mut self, i: usize) -> Result<(), Stop> {
        let token = self.stage.clients[i].token.clone().unwrap_or_default();
        let had = self.nodes()?.seen.nodes_of(&token);
        let cluster = self.nodes()?.cluster.clone();
        let released = release(&cluster, &self.lock, &token)?;
        self.hear(i)?;
        if let Err(failure) = released {
            return Err(self.halt(i, "redlock_release", failure));
        }
        let still = self.nodes()?.snapshot()?.nodes_of(&token);
        let freed: Vec<usize> = had.into_iter().filter(|n| !still.contains(n)).collect();
        let c = &mut self.stage.clients[i];
        c.believes = false;
        c.step = Step::Done;
        let (kind, text) = if freed.is_empty() {
            let text = "found its key on no node: nothing to release".to_owned();
            (ActionKind::ReleaseRefused, text)
        } else {
            let text = format!("released the lock on {}", list(&freed));
            (ActionKind::Released, text)
        };
        Ok(self.act(i, kind, text, false, false)?)
    }

    /// Keeps the commands client `i`'s last call sent to the nodes, each in its node's lane, for
    /// the message diagram: what the cluster recorded since the last call, with its tokens by
    /// owner, and a paused or down node's silence as no answer.
    fn hear(&mut self, i: usize) -> Result<(), GradeError> {
        let sent = self.nodes()?.news();
        for Sent {
            node,
            command,
            answer,
        } in sent
        {
            let (to, reply) = (Lane::Node(node_name(node)), answer.shown());
            let message = record::message(
                &self.stage.clients,
                i,
                self.stage.t,
                to,
                (&command, &reply),
                answer.answered(),
            );
            self.messages.push(message);
        }
        Ok(())
    }
}

/// "valid for 9.9 s": to a tenth of a second, as correct Redlocks agree only to a rounding of
/// 1 % of the TTL, which the checks of `redlock.rs` hold to the millisecond.
fn valid_for(validity: Duration) -> String {
    let tenths = (validity.as_millis() + 50) / 100;
    format!("valid for {}.{} s", tenths / 10, tenths % 10)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{self, redlock};
    use crate::story::Plan;

    fn refused(story: Story) -> String {
        match plays(&story) {
            Err(GradeError::StoryDoesNotFit { what, .. }) => what,
            other => panic!("{}: {other:?}", story.name),
        }
    }

    #[test]
    fn every_redlock_story_is_one_the_engine_plays_on_nodes() {
        for story in redlock::all() {
            plays(&story).unwrap_or_else(|e| panic!("{}: {e}", story.name));
        }
    }

    #[test]
    fn the_engine_refuses_on_nodes_what_only_one_server_plays() {
        let base = || scenario::named("clock_jump").expect("the clock-jump story");
        let kept = Story {
            clients: vec![Plan::job("A").kept(), Plan::job("B")],
            ..base()
        };
        assert!(refused(kept).contains("keeper"));
        let three = Story {
            clients: vec![Plan::job("A"), Plan::job("B"), Plan::job("C")],
            ..base()
        };
        assert!(refused(three).contains("more clients"));
        let reads = Story {
            fencing: Fencing::ReadsAndWrites,
            ..base()
        };
        assert!(refused(reads).contains("fenced reads"));
        let single = Story {
            topology: Topology::Single,
            faults: Vec::new(),
            ..base()
        };
        assert!(refused(single).contains("Single"));
        let off = Story {
            faults: vec![(0, Fault::Promote)],
            ..base()
        };
        assert!(refused(off).contains("Promote"));
    }
}
