//! The one vocabulary of what goes wrong in a story, and what each fault does.
//!
//! A [`Fault`] is done to a client (frozen, crashed), to a node of N (paused, resumed, killed,
//! restarted empty at once or after a delay, its clock jumped), or to a primary and its replica
//! (the replica cut off or restarted empty, the primary killed, the replica promoted, the other
//! node back as a replica). A story lists its faults by second ([`super::Story::faults`]); this
//! file says, once for each variant, what it does: [`Fault::on_nodes`] to the nodes of a
//! [`Cluster`], [`Fault::on_pair`] to a [`Pair`], and a client's faults are read by its
//! [`super::client::Client`], which stops acting while frozen and for good once crashed.
//!
//! A new fault is a variant here, with its effect in the one `match` of its topology (and the
//! topology it fits, in [`Fault::node`] and [`super::Story::fits`]).

use crate::error::GradeError;
use crate::nodes::Cluster;
use crate::replication::{NAMES, Pair};
use crate::verdict::seconds;

/// One thing that goes wrong in a story. A fault to a node or a pair happens at the start of its
/// second, before the clients' steps; a client's, where its variant says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The client freezes after its step of this second (a stop-the-world garbage collection)
    /// and acts again at second `until`, unaware that time has passed: its keeper ticks nothing
    /// meanwhile, and its reckoning of a lock's validity sees none of the pause.
    Freeze {
        /// The client, by name.
        client: &'static str,
        /// The second it acts again.
        until: u64,
    },
    /// The client crashes in place of its step of this second, never to act again, without
    /// releasing.
    Crash(&'static str),
    /// Node `i` is stopped (`SIGSTOP`): it answers nothing and its clock stands still.
    Pause(usize),
    /// Node `i` goes on (`SIGCONT`), and its clock catches up.
    Resume(usize),
    /// Node `i` is killed (`SIGKILL`) and stays down.
    Kill(usize),
    /// Node `i` is killed if it runs and comes back at once, empty (no persistence); a node that
    /// was down only comes back.
    Restart(usize),
    /// Node `i` is killed if it runs and comes back empty after `ms` (antirez's delayed restart).
    RestartAfter(usize, u64),
    /// Node `i`'s clock jumps `ms` ahead of the others'.
    Jump(usize, u64),
    /// The replica stops and the primary drops its link: what the primary acknowledges from
    /// then on reaches no replica.
    CutOffReplica,
    /// The primary is killed, with whatever it had not passed on.
    KillPrimary,
    /// The replica crashes and comes back empty (no persistence), not yet copying the primary.
    RestartReplicaEmpty,
    /// The replica becomes the primary, and the clients are pointed at it, as Sentinel does.
    Promote,
    /// The node that is not the primary comes back, empty, as the new primary's replica.
    Rejoin,
}

/// What a fault did to a topology.
#[derive(Debug, Default)]
pub(crate) struct Effect {
    /// What happened, in words; `None` when the look at the nodes after it says all.
    pub(crate) what: Option<String>,
    /// Whether keys went with it (a kill): the keys a look finds gone are lost, not expired.
    pub(crate) lost: bool,
    /// Whether the clients must now follow a new primary.
    pub(crate) promoted: bool,
}

impl Effect {
    fn told(what: String) -> Effect {
        Effect {
            what: Some(what),
            ..Effect::default()
        }
    }

    fn losing(what: String) -> Effect {
        Effect {
            lost: true,
            ..Effect::told(what)
        }
    }
}

impl Fault {
    /// The client a client's fault is done to.
    pub fn client(self) -> Option<&'static str> {
        match self {
            Fault::Freeze { client, .. } | Fault::Crash(client) => Some(client),
            _ => None,
        }
    }

    /// The node a node's fault is done to (numbered from 0).
    pub fn node(self) -> Option<usize> {
        match self {
            Fault::Pause(i)
            | Fault::Resume(i)
            | Fault::Kill(i)
            | Fault::Restart(i)
            | Fault::RestartAfter(i, _)
            | Fault::Jump(i, _) => Some(i),
            _ => None,
        }
    }

    /// The fault's effect on the nodes of `c`, in a play of `story`; `was_down` says whether
    /// its node was down before.
    pub(crate) fn on_nodes(
        self,
        story: &'static str,
        c: &mut Cluster,
        was_down: bool,
    ) -> Result<Effect, GradeError> {
        let name = node_name;
        Ok(match self {
            Fault::Pause(i) => {
                c.pause(i)?;
                Effect::told(format!("{} is paused: it answers nothing", name(i)))
            }
            Fault::Resume(i) => {
                c.resume(i)?;
                Effect::told(format!("{} resumes", name(i)))
            }
            Fault::Kill(i) => {
                c.kill(i);
                Effect::losing(format!("{} is killed", name(i)))
            }
            // A node that was down only comes back: the look after says so.
            Fault::Restart(i) | Fault::RestartAfter(i, _) if was_down => {
                c.restart_after(i, self.delay_ms())?;
                Effect::default()
            }
            Fault::Restart(i) => {
                c.restart_after(i, 0)?;
                Effect::losing(format!("{} is killed and restarts at once, empty", name(i)))
            }
            Fault::RestartAfter(i, ms) => {
                c.restart_after(i, ms)?;
                Effect::losing(format!(
                    "{} is killed and stays down for {}, the longest TTL",
                    name(i),
                    seconds(ms)
                ))
            }
            Fault::Jump(i, ms) => {
                c.jump(i, ms)?;
                Effect::told(format!("{}'s clock jumps {} ahead", name(i), seconds(ms)))
            }
            _ => return Err(self.off_topology(story, "N nodes")),
        })
    }

    /// The fault's effect on a primary and its replica, in a play of `story`.
    pub(crate) fn on_pair(
        self,
        story: &'static str,
        pair: &mut Pair,
    ) -> Result<Effect, GradeError> {
        let (primary, replica) = (NAMES[pair.primary()], NAMES[pair.replica()]);
        Ok(match self {
            Fault::CutOffReplica => {
                pair.cut_off_replica()?;
                Effect::told(format!(
                    "{replica} cut off: stopped, and {primary} dropped its link"
                ))
            }
            Fault::KillPrimary => {
                pair.kill_primary();
                Effect::told(format!("{primary} (primary) killed"))
            }
            Fault::RestartReplicaEmpty => {
                pair.restart_replica_empty()?;
                Effect::told(format!(
                    "{replica} restarted empty, not yet copying {primary}"
                ))
            }
            Fault::Promote => {
                pair.promote()?;
                Effect {
                    promoted: true,
                    ..Effect::told(format!("{replica} promoted; the clients follow it"))
                }
            }
            Fault::Rejoin => {
                pair.rejoin()?;
                Effect::told(format!("{replica} back, empty, as {primary}'s replica"))
            }
            _ => return Err(self.off_topology(story, "a primary and its replica")),
        })
    }

    /// How long a restart keeps its node down, in ms.
    fn delay_ms(self) -> u64 {
        match self {
            Fault::RestartAfter(_, ms) => ms,
            _ => 0,
        }
    }

    /// A fault played on a topology it does not fit, which [`super::Story::fits`] prevents.
    fn off_topology(self, story: &'static str, topology: &str) -> GradeError {
        GradeError::StoryDoesNotFit {
            story,
            what: format!("{self:?} on {topology}"),
        }
    }
}

/// The name readers know node `i` by: node 0 of the grader is "node 1", as readers count nodes
/// from 1 (the same names as [`NAMES`] for a pair).
pub(crate) fn node_name(i: usize) -> String {
    format!("node {}", i + 1)
}
