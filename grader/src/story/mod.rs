//! A story, as data: what it runs on, what its clients set out to do, and what goes wrong when.
//!
//! Every story of the course has one shape. Clients (A, B, C…) each want to add 1 to a counter
//! in the storage: take the lock, read the counter, work, write the counter + 1, release. What
//! changes from one story to the next is written in one [`Story`]: the [`Topology`] the lock runs
//! on (one server, a primary and its replica, N nodes for Redlock), the TTL, whether fencing
//! tokens are used, each client's [`Plan`] (how long it works, whether a lease keeper renews its
//! lock), and the [`Fault`]s by second, from the one vocabulary of [`fault`]: a client frozen or
//! crashed, a node paused, killed, restarted or its clock jumped, a replica cut off, a primary
//! killed and its replica promoted.
//!
//! Where things go: a new story is one entry in a list of stories ([`crate::scenario::all`] for
//! one server and failover, [`crate::scenario::redlock`] for Redlock); a new fault is one variant
//! of [`Fault`], its effect written once in [`fault`]; a new topology is one variant of
//! [`Topology`], with what the lock runs on in the one engine ([`crate::run`]). A story only
//! *describes*: the engine plays every story through the one stepping loop of [`engine`], on its
//! [`engine::Stage`], with the clients of [`client`] and the recording of [`record`], one virtual
//! second at a time; what a check holds the run to is the story's policy, [`Story::held_to`].

pub(crate) mod client;
pub(crate) mod engine;
pub mod fault;
pub(crate) mod record;

pub use fault::Fault;

use crate::error::GradeError;
use crate::sandbox::Failure;

/// A learner function that failed during a story, which then stops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Halt {
    /// The second it happened.
    pub t: u64,
    /// The client whose call failed.
    pub client: String,
    /// The function, e.g. `release`.
    pub function: &'static str,
    /// How it failed.
    pub failure: Failure,
}

/// How the clients use fencing tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fencing {
    /// Plain lock: `acquire`, then unchecked reads and writes of the counter.
    Off,
    /// Every grant comes with a fencing token; writes carry it and the storage checks it.
    Writes,
    /// As [`Fencing::Writes`], and reads are fenced too.
    ReadsAndWrites,
}

/// What a story runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Topology {
    /// One Redis server holds the lock and the storage.
    Single,
    /// The lock lives on a primary and its replica ([`crate::replication`]); the storage stays
    /// on a server that does not fail over.
    Replicated {
        /// Whether each client, the course's code around the learner's acquire, runs `WAIT 1`
        /// after a grant and gives back a lock that reached no replica, to try again later.
        wait: bool,
    },
    /// Redlock on `N` independent nodes ([`crate::nodes`]), numbered from 0; the storage on the
    /// grader's own server.
    Nodes(usize),
}

/// What a graded run of a story is held to: the story's one judging policy, which the check that
/// plays it applies ([`crate::checks::scenarios`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeldTo {
    /// The rules, call by call: the engine has every call of the lock judged as it is made
    /// ([`crate::judge`]), the run must end at the story's [`Story::expected_counter`], and then
    /// match a correct lock's run, second by second.
    Rules,
    /// A correct lock's whole run, second by second, and nothing else: what the story shows (two
    /// clients each holding a majority of Redlock's nodes) is the algorithm's doing, not the
    /// learner's, so no rule of a single call is held against it; the learner's lock must do what
    /// a correct one does.
    Reference,
}

/// What one client does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// `"A"`, `"B"` or `"C"`: what the faults and the timeline call it.
    pub name: &'static str,
    /// Seconds from reading the counter to writing it back.
    pub work_s: u64,
    /// Whether a lease keeper ([`crate::lock::KeepAliveFn`]) renews its lock, ticking once a
    /// second while it works, and stops the job when a renewal fails.
    pub keeper: bool,
}

impl Plan {
    /// A client that does its job in the usual four steps.
    pub const fn job(name: &'static str) -> Plan {
        Plan {
            name,
            work_s: 1,
            keeper: false,
        }
    }

    /// The same client, with a lease keeper.
    pub const fn kept(self) -> Plan {
        Plan {
            keeper: true,
            ..self
        }
    }

    /// The same client, with a job that spends `work_s` seconds between read and write.
    pub const fn working(self, work_s: u64) -> Plan {
        Plan { work_s, ..self }
    }
}

/// One story, ready to be played with any lock.
#[derive(Clone, Debug)]
pub struct Story {
    /// The story's name, which its check is named after (`gc-pause`, `clock_jump`).
    pub name: &'static str,
    /// The name of its timeline in the book (`book/timelines/NAME.json`).
    pub timeline: &'static str,
    /// A short title.
    pub title: &'static str,
    /// What happens, in plain words.
    pub text: &'static str,
    /// What the lock runs on.
    pub topology: Topology,
    /// The lock's TTL, in seconds.
    pub ttl_s: u64,
    /// How fencing tokens are used.
    pub fencing: Fencing,
    /// The clients, in the order they act within a second.
    pub clients: Vec<Plan>,
    /// What goes wrong, by second, in order; [`Fault`] says when within its second each acts.
    pub faults: Vec<(u64, Fault)>,
    /// Whether the clients' first attempts race each other, command by command, instead of
    /// coming one after the other (one server only).
    pub race: bool,
    /// Where the counter ends in a correct lock's run: a run held to [`HeldTo::Rules`] must end
    /// there; one held to [`HeldTo::Reference`] is held to the reference's whole run, which ends
    /// there.
    pub expected_counter: i64,
}

impl Story {
    /// A story on one server, with a 10 s TTL, no fencing, A, B and C doing their jobs and
    /// nothing going wrong: the entries of a list change what their story changes.
    pub fn single(name: &'static str, title: &'static str, text: &'static str) -> Story {
        Story {
            name,
            timeline: name,
            title,
            text,
            topology: Topology::Single,
            ttl_s: 10,
            fencing: Fencing::Off,
            clients: vec![Plan::job("A"), Plan::job("B"), Plan::job("C")],
            faults: Vec::new(),
            race: false,
            expected_counter: 3,
        }
    }

    /// The faults due at second `t`, in the story's order.
    pub fn faults_at(&self, t: u64) -> impl Iterator<Item = Fault> + '_ {
        self.faults
            .iter()
            .filter(move |(at, _)| *at == t)
            .map(|(_, fault)| *fault)
    }

    /// What a graded run of the story is held to. A Redlock story is held to a correct Redlock's
    /// run ([`HeldTo::Reference`]): there the engine judges no single call, and the safety the
    /// story shows broken is Redlock's, not the learner's. Every other story is held to the rules.
    pub fn held_to(&self) -> HeldTo {
        match self.topology {
            Topology::Nodes(_) => HeldTo::Reference,
            Topology::Single | Topology::Replicated { .. } => HeldTo::Rules,
        }
    }

    /// Whether each grant comes with a fencing token.
    pub fn fenced(&self) -> bool {
        self.fencing != Fencing::Off
    }

    /// Checks that every fault fits the story: a client fault names one of its clients (frozen
    /// at most once), a node fault a node it has, a fault of a pair a story on a pair; and that a
    /// race is run on one server. An engine refuses a story that does not fit.
    pub fn fits(&self) -> Result<(), GradeError> {
        let misfit = |what: String| GradeError::StoryDoesNotFit {
            story: self.name,
            what,
        };
        if self.race && self.topology != Topology::Single {
            return Err(misfit("a race off a single server".into()));
        }
        for (t, fault) in &self.faults {
            if let Some(name) = fault.client() {
                if !self.clients.iter().any(|c| c.name == name) {
                    return Err(misfit(format!(
                        "{fault:?} at {t} s, to no client of its own"
                    )));
                }
                continue;
            }
            let fits = match (fault.node(), self.topology) {
                (Some(i), Topology::Nodes(n)) => i < n,
                (None, Topology::Replicated { .. }) => true,
                _ => false,
            };
            if !fits {
                return Err(misfit(format!("{fault:?} at {t} s on {:?}", self.topology)));
            }
        }
        for plan in &self.clients {
            let freezes = self
                .faults
                .iter()
                .filter(|(_, f)| matches!(f, Fault::Freeze { client, .. } if *client == plan.name))
                .count();
            if freezes > 1 {
                return Err(misfit(format!("{} frozen {freezes} times", plan.name)));
            }
        }
        Ok(())
    }
}

/// How long a client's `WAIT` waits for a replica's acknowledgement, in real milliseconds,
/// when a replica is linked: the one place a story may spend real time, since Redis's
/// replication is real. A linked replica on loopback answers in well under a millisecond; the
/// margin is for a loaded machine. With no replica linked, `WAIT` is answered at once (see
/// [`crate::wire::Wire::wait_for_replicas`]).
pub const WAIT_TIMEOUT_MS: u64 = 250;

/// The longest a story may run, in virtual seconds, before the grader calls it stuck (a lock
/// that never frees keeps the others waiting).
pub const MAX_SECONDS: u64 = 120;

#[cfg(test)]
mod tests {
    use super::*;

    fn every_story() -> Vec<Story> {
        let mut all = crate::scenario::all();
        all.extend(crate::scenario::redlock::all());
        all
    }

    #[test]
    fn every_story_of_the_course_fits_its_topology() {
        let stories = every_story();
        assert!(stories.len() >= 18, "{} stories", stories.len());
        for story in &stories {
            story
                .fits()
                .unwrap_or_else(|e| panic!("{}: {e}", story.name));
        }
    }

    #[test]
    fn every_story_has_a_name_and_a_timeline_of_its_own() {
        let stories = every_story();
        for (i, a) in stories.iter().enumerate() {
            for b in &stories[i + 1..] {
                assert_ne!(a.name, b.name);
                assert_ne!(a.timeline, b.timeline);
            }
        }
    }

    fn misfit(story: Story) -> String {
        match story.fits() {
            Err(GradeError::StoryDoesNotFit { what, .. }) => what,
            other => panic!("{}: {other:?}", story.name),
        }
    }

    #[test]
    fn a_fault_off_its_topology_does_not_fit() {
        let single = Story::single("s", "", "");
        let on_single = Story {
            faults: vec![(0, Fault::Pause(0))],
            ..single.clone()
        };
        assert!(misfit(on_single).contains("Pause(0)"));
        let pair_fault_on_nodes = Story {
            topology: Topology::Nodes(5),
            faults: vec![(1, Fault::Promote)],
            ..single.clone()
        };
        assert!(misfit(pair_fault_on_nodes).contains("Promote"));
        let past_the_nodes = Story {
            topology: Topology::Nodes(5),
            faults: vec![(1, Fault::Kill(5))],
            ..single.clone()
        };
        assert!(misfit(past_the_nodes).contains("Kill(5)"));
        let node_fault_on_pair = Story {
            topology: Topology::Replicated { wait: false },
            faults: vec![(1, Fault::Jump(0, 1000))],
            ..single.clone()
        };
        assert!(misfit(node_fault_on_pair).contains("Jump"));
        let race_on_nodes = Story {
            topology: Topology::Nodes(5),
            race: true,
            ..single.clone()
        };
        assert!(misfit(race_on_nodes).contains("race"));
    }

    #[test]
    fn a_client_fault_names_a_client_of_the_story_and_freezes_it_once() {
        let single = Story::single("s", "", "");
        let stranger = Story {
            faults: vec![(2, Fault::Crash("D"))],
            ..single.clone()
        };
        assert!(misfit(stranger).contains("no client"));
        let twice = Story {
            faults: vec![
                (
                    1,
                    Fault::Freeze {
                        client: "A",
                        until: 3,
                    },
                ),
                (
                    5,
                    Fault::Freeze {
                        client: "A",
                        until: 7,
                    },
                ),
            ],
            ..single.clone()
        };
        assert!(misfit(twice).contains("A frozen 2 times"));
        let fine = Story {
            faults: vec![
                (
                    1,
                    Fault::Freeze {
                        client: "A",
                        until: 3,
                    },
                ),
                (
                    5,
                    Fault::Freeze {
                        client: "B",
                        until: 7,
                    },
                ),
                (6, Fault::Crash("C")),
            ],
            ..single
        };
        assert!(fine.fits().is_ok());
    }

    #[test]
    fn the_faults_of_a_second_come_in_the_story_s_order() {
        let story = Story {
            topology: Topology::Replicated { wait: false },
            faults: vec![
                (1, Fault::KillPrimary),
                (2, Fault::Rejoin),
                (1, Fault::Promote),
            ],
            ..Story::single("s", "", "")
        };
        let at_1: Vec<Fault> = story.faults_at(1).collect();
        assert_eq!(at_1, [Fault::KillPrimary, Fault::Promote]);
        assert_eq!(story.faults_at(0).count(), 0);
    }
}
