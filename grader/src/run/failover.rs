//! A story on a primary and its replica: the pair the lock runs on, the faults of each second,
//! the course's `WAIT` after a grant, and each node as the timeline shows it.
//!
//! The faults are played before the clients' steps of their second, each as
//! [`crate::story::Fault::on_pair`] says. A promotion points the world at the new primary and
//! gives every client that still runs a new connection to it, as a client of Sentinel
//! reconnects after a failover. `WAIT` is the course's client code, not the learner's:
//! right after the learner's acquire says yes, on the same connection (`WAIT` counts the
//! replicas that have this connection's writes), and a lock that reached no replica is given
//! back with the learner's release, to be tried again the next second.

use std::collections::BTreeMap;
use std::sync::MutexGuard;

use super::{Ground, Runner};
use crate::error::GradeError;
use crate::replication::{NAMES, Pair};
use crate::story::client::Step;
use crate::story::engine::Stop;
use crate::story::{Fault, Topology, WAIT_TIMEOUT_MS};
use crate::timeline::{ActionKind, NodeHealth, NodeSecond, Note};
use crate::wire::Wire;
use crate::world::enter;

/// The grader's primary and replica, leased for a play, with whose token each node held when
/// last seen (what a stopped node shows).
pub(super) struct PairGround {
    pair: MutexGuard<'static, Pair>,
    holders: [Option<String>; 2],
}

impl PairGround {
    /// The pair, leased.
    pub(super) fn new(pair: MutexGuard<'static, Pair>) -> PairGround {
        PairGround {
            pair,
            holders: Default::default(),
        }
    }

    /// The nodes' names for the timeline.
    pub(super) fn names(&self) -> Vec<String> {
        NAMES.iter().map(|n| n.to_string()).collect()
    }
}

impl Runner {
    /// Does `fault` to the pair (its effect is [`crate::story::Fault::on_pair`]'s); returns
    /// what happened, in words. After a promotion the world and every client follow the new
    /// primary.
    pub(super) fn pair_fault(&mut self, fault: Fault) -> Result<Vec<Note>, GradeError> {
        let story = self.stage.story.name;
        let Ground::Pair(ground) = &mut self.ground else {
            return Err(GradeError::StoryDoesNotFit {
                story,
                what: format!("{fault:?} off a primary and its replica"),
            });
        };
        let effect = fault.on_pair(story, &mut ground.pair)?;
        if effect.promoted {
            enter(&self.world).fail_over(&ground.pair)?;
            self.reconnect()?;
        }
        Ok(effect.what.map(Note::fault).into_iter().collect())
    }

    /// Gives every client that still runs a connection to the new primary.
    fn reconnect(&mut self) -> Result<(), GradeError> {
        for c in &mut self.stage.clients {
            if c.wire.is_some() {
                c.wire = Some(Wire::open(&self.world)?);
            }
        }
        Ok(())
    }

    /// After client `i`'s acquire said yes, in a story with `WAIT`: asks how many replicas have
    /// the lock, and gives back a lock that reached none.
    pub(super) fn confirm(&mut self, i: usize) -> Result<(), Stop> {
        if self.stage.story.topology != (Topology::Replicated { wait: true }) {
            return Ok(());
        }
        let Some(mut wire) = self.stage.clients[i].wire.take() else {
            return Ok(());
        };
        // With no replica linked, none can acknowledge however long `WAIT` waits: Redis is
        // asked to answer at once, rather than after its time-out in real time.
        let none_linked = match &self.ground {
            Ground::Pair(ground) => !ground.pair.linked(),
            _ => false,
        };
        wire.begin_call();
        let acked = wire.wait_for_replicas(1, WAIT_TIMEOUT_MS, none_linked);
        self.record(i, "WAIT", Some(&wire));
        self.stage.clients[i].wire = Some(wire);
        let acked = acked.map_err(GradeError::from)?;
        let replicas = if acked == 1 { "replica" } else { "replicas" };
        retell(
            &mut self.stage.clients[i].actions,
            ActionKind::Acquired,
            format!("acquired; WAIT: {acked} {replicas}"),
        );
        if acked == 0 {
            self.release_key(i)?;
            let c = &mut self.stage.clients[i];
            retell(
                &mut c.actions,
                ActionKind::Released,
                "gave it back: no replica has it".into(),
            );
            c.step = Step::Acquire;
        }
        Ok(())
    }

    /// Each node of the pair at the end of the second: a running node is asked whose token it
    /// holds (a linked replica once it has caught up, so that the answer does not depend on how
    /// fast replication ran), a stopped one is shown as it was when last seen, a dead one empty.
    pub(super) fn pair_rows(&mut self) -> Result<BTreeMap<String, NodeSecond>, GradeError> {
        let mut rows = BTreeMap::new();
        let Ground::Pair(ground) = &self.ground else {
            return Ok(rows);
        };
        let pair = &ground.pair;
        let lock = enter(&self.world).keys.lock.clone();
        if pair.linked() {
            pair.in_step(pair.replica())?;
        }
        let mut seen = ground.holders.clone();
        for (i, name) in NAMES.iter().enumerate() {
            let (health, role) = pair.shown(i);
            let holder = match health {
                NodeHealth::Up => {
                    let value: Option<String> = redis::cmd("GET")
                        .arg(&lock)
                        .query(&mut pair.node(i).connect()?)?;
                    seen[i] = value.as_deref().map(|v| {
                        self.holder_of(Some(v)).map_or("?".to_string(), |h| {
                            self.stage.clients[h].name().to_string()
                        })
                    });
                    seen[i].clone()
                }
                NodeHealth::Paused => seen[i].clone(),
                NodeHealth::Down => None,
            };
            let row = NodeSecond {
                health,
                role,
                holder,
                clock_ahead_s: 0,
            };
            rows.insert(name.to_string(), row);
        }
        if let Ground::Pair(ground) = &mut self.ground {
            ground.holders = seen;
        }
        Ok(rows)
    }
}

/// Rewrites the text of the last action of `kind`: `WAIT`'s answer belongs to the grant, and a
/// release after it is a lock given back.
fn retell(actions: &mut [crate::timeline::Action], kind: ActionKind, text: String) {
    if let Some(action) = actions.iter_mut().rev().find(|a| a.kind == kind) {
        action.text = text;
    }
}
