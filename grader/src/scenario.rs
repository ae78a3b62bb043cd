//! The scenarios: small stories of three clients sharing one lock.
//!
//! Every scenario has the same shape. Clients A, B and C each want to add 1 to
//! a counter in the storage: take the lock, read the counter, work, write the
//! counter + 1, release. Three jobs should leave the counter at 3. What
//! changes from one scenario to the next is the TTL, whether fencing tokens
//! are used, and what goes wrong on the way: a client freezes (a GC pause), its
//! job outlasts the TTL, it crashes, or all three arrive at the same instant.
//!
//! Most stories run on one Redis server. Those of replication and failover run the lock on a
//! primary and its replica ([`Replicated`], played on [`crate::replication`]) while the storage
//! stays on a server that does not fail over: the primary acknowledges a lock and dies before
//! its replica has it, and the replica is promoted without it.
//!
//! A scenario only *describes*; [`crate::run`] plays it against Redis with a
//! given lock. Each client does one step per virtual second, in the order A,
//! B, C; a client that finds the lock taken tries again the next second.

/// How the clients use fencing tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fencing {
    /// Plain lock: `acquire`, then unchecked reads and writes of the counter.
    Off,
    /// `acquire_fenced`; writes carry the token and the storage checks it.
    Writes,
    /// As [`Fencing::Writes`], and reads are fenced too.
    ReadsAndWrites,
}

/// What one client does.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// `"A"`, `"B"` or `"C"`.
    pub name: &'static str,
    /// Seconds from reading the counter to writing it back.
    pub work_s: u64,
    /// `(from, until)`: after its step at second `from` the client freezes,
    /// and acts again at second `until`, unaware that time has passed.
    pub pause: Option<(u64, u64)>,
    /// The second at which the client crashes, never to act again.
    pub crash_at: Option<u64>,
    /// Whether a lease keeper ([`crate::lock::KeepAliveFn`]) renews its
    /// lock, ticking once a second while it works, and stops the job when a
    /// renewal fails.
    pub keeper: bool,
}

impl Plan {
    /// A client that does its job in the usual four steps.
    pub const fn job(name: &'static str) -> Plan {
        Plan {
            name,
            work_s: 1,
            pause: None,
            crash_at: None,
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

    /// The same client, frozen after its step at `from` until `until`.
    pub const fn paused(self, from: u64, until: u64) -> Plan {
        Plan {
            pause: Some((from, until)),
            ..self
        }
    }

    /// Whether the client is frozen at second `t`, between its step at `from` and the one at
    /// `until`, when it acts again.
    pub fn paused_at(&self, t: u64) -> bool {
        self.pause
            .is_some_and(|(from, until)| t > from && t < until)
    }

    /// Whether second `t` shows the client as paused: frozen, or freezing after its step.
    pub fn shown_paused_at(&self, t: u64) -> bool {
        self.paused_at(t) || self.pause.is_some_and(|(from, _)| t == from)
    }

    /// The same client, crashing at `at`.
    pub const fn crashing(self, at: u64) -> Plan {
        Plan {
            crash_at: Some(at),
            ..self
        }
    }
}

/// One story, ready to be played with any lock.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The scenario's name, e.g. `gc-pause`.
    pub name: &'static str,
    /// A short title.
    pub title: &'static str,
    /// What happens, in plain words.
    pub story: &'static str,
    /// The lock's TTL, in seconds.
    pub ttl_s: u64,
    /// How fencing tokens are used.
    pub fencing: Fencing,
    /// The clients, in the order they act within a second.
    pub clients: Vec<Plan>,
    /// Whether the clients' first attempts race each other, command by
    /// command, instead of coming one after the other.
    pub race: bool,
    /// Where the counter must end with a correct lock.
    pub expected_counter: i64,
    /// The primary and replica the lock runs on, for a story of failover; `None` for one
    /// server.
    pub replicated: Option<Replicated>,
}

/// What happens to a primary and its replica during a story.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
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

/// A story on a primary and its replica.
#[derive(Clone, Copy, Debug)]
pub struct Replicated {
    /// Whether each client, the course's code around the learner's acquire, runs `WAIT 1`
    /// after a grant and gives back a lock that reached no replica, to try again later.
    pub wait: bool,
    /// The faults, each at the start of its second, before the clients' steps.
    pub faults: &'static [(u64, Fault)],
}

/// How long a client's `WAIT` waits for a replica's acknowledgement, in real milliseconds:
/// the one place a story spends real time, since Redis's replication is real. A linked
/// replica on loopback answers in well under a millisecond; the margin is for a loaded
/// machine, and a cut-off replica costs each `WAIT` this long.
pub const WAIT_TIMEOUT_MS: u64 = 250;

/// The longest a scenario may run, in virtual seconds, before the grader
/// calls it stuck (a lock that never frees keeps the others waiting).
pub const MAX_SECONDS: u64 = 120;

fn abc(a: Plan) -> Vec<Plan> {
    vec![a, Plan::job("B"), Plan::job("C")]
}

fn gc_pause(
    name: &'static str,
    title: &'static str,
    story: &'static str,
    fencing: Fencing,
) -> Scenario {
    Scenario {
        name,
        title,
        story,
        ttl_s: 10,
        fencing,
        clients: abc(Plan::job("A").paused(1, 15)),
        race: false,
        expected_counter: 2,
        replicated: None,
    }
}

fn long_pause(
    name: &'static str,
    title: &'static str,
    story: &'static str,
    fencing: Fencing,
    expected: i64,
) -> Scenario {
    Scenario {
        name,
        title,
        story,
        ttl_s: 30,
        fencing,
        clients: abc(Plan::job("A").paused(1, 41)),
        race: false,
        expected_counter: expected,
        replicated: None,
    }
}

/// A story of failover: A's job spans the failover (it reads before, writes after), and the
/// faults come as `faults` says.
fn failover(
    name: &'static str,
    title: &'static str,
    story: &'static str,
    replicated: Replicated,
    expected: i64,
) -> Scenario {
    Scenario {
        name,
        title,
        story,
        ttl_s: 10,
        fencing: Fencing::Off,
        clients: abc(Plan::job("A").working(3)),
        race: false,
        expected_counter: expected,
        replicated: Some(replicated),
    }
}

/// Node 2 is cut off, then node 1 dies and node 2 takes its place, and node 1 comes back as
/// its replica.
const CUT_THEN_FAIL_OVER: &[(u64, Fault)] = &[
    (0, Fault::CutOffReplica),
    (1, Fault::KillPrimary),
    (1, Fault::Promote),
    (2, Fault::Rejoin),
];

/// Every scenario, in the order the book tells them.
pub fn all() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "normal-run",
            title: "A normal run",
            story: "A, B and C each take the lock, read the counter, write it + 1 and release. \
                    Nothing goes wrong: they take turns.",
            ttl_s: 10,
            fencing: Fencing::Off,
            clients: abc(Plan::job("A")),
            race: false,
            expected_counter: 3,
            replicated: None,
        },
        Scenario {
            name: "race",
            title: "Three clients, one free lock, the same instant",
            story: "A, B and C try to take the free lock at the same moment; their commands reach \
                    Redis interleaved, one from each in turn. Exactly one may win.",
            ttl_s: 10,
            fencing: Fencing::Off,
            clients: abc(Plan::job("A")),
            race: true,
            expected_counter: 3,
            replicated: None,
        },
        gc_pause(
            "gc-pause",
            "GC pause, no fencing",
            "A takes the lock with a 10 s TTL, reads the counter, and freezes from t = 1 s to t = 15 s \
             (a stop-the-world garbage collection). Its lock expires while it sleeps; B takes it. A \
             wakes up still believing it holds the lock, and writes.",
            Fencing::Off,
        ),
        gc_pause(
            "gc-pause-fenced",
            "GC pause, with fencing",
            "The same pause, but every grant comes with a fencing token (33, 34, 35) and the storage \
             refuses a write whose token is older than one it has already seen.",
            Fencing::Writes,
        ),
        Scenario {
            name: "fenced-reads",
            title: "GC pause, with fenced reads",
            story: "A freezes as before; B's job is slow. The storage checks reads as well as writes, \
                    so B's read with token 34 already fences A off, before B writes anything.",
            ttl_s: 10,
            fencing: Fencing::ReadsAndWrites,
            clients: vec![
                Plan::job("A").paused(1, 15),
                Plan::job("B").working(6),
                Plan::job("C"),
            ],
            race: false,
            expected_counter: 2,
            replicated: None,
        },
        Scenario {
            name: "slow-job",
            title: "A job longer than the TTL",
            story: "No pause at all: A's job simply takes 12 s, from acquiring to releasing, and the TTL \
                    is 10 s. The lock expires under A while it still works.",
            ttl_s: 10,
            fencing: Fencing::Off,
            clients: abc(Plan::job("A").working(10)),
            race: false,
            expected_counter: 3,
            replicated: None,
        },
        long_pause(
            "long-pause",
            "A 40 s pause over a 30 s TTL",
            "A holds a lock with a 30 s TTL and freezes for 40 s right after reading the counter. B and \
             C take the lock in turn and do their jobs. A wakes up and writes what it computed 40 s ago.",
            Fencing::Off,
            1,
        ),
        long_pause(
            "long-pause-fenced",
            "A 40 s pause over a 30 s TTL, with fencing",
            "The same 40 s pause, with fencing tokens checked by the storage.",
            Fencing::Writes,
            2,
        ),
        Scenario {
            name: "renewal-pause",
            title: "A renewal fails during a pause",
            story: "A's job is long, so a lease keeper renews its 30 s lock every 10 s, as Redisson's \
                    watchdog does. A freezes from t = 21 s to t = 53 s, keeper and all: its lock \
                    expires at t = 50 s and B takes it. When A wakes up, its keeper's first renewal \
                    fails, and it stops the job before its write.",
            ttl_s: 30,
            fencing: Fencing::Off,
            clients: abc(Plan::job("A").working(40).kept().paused(21, 53)),
            race: false,
            expected_counter: 2,
            replicated: None,
        },
        Scenario {
            name: "crashed-holder",
            title: "The holder crashes",
            story: "A takes the lock, reads the counter and crashes at t = 2 s, without releasing. Nobody \
                    deletes its lock: it frees itself when its 10 s TTL runs out.",
            ttl_s: 10,
            fencing: Fencing::Off,
            clients: abc(Plan::job("A").crashing(2)),
            race: false,
            expected_counter: 2,
            replicated: None,
        },
        failover(
            "failover-lost-lock",
            "A failover loses an acknowledged lock",
            "The lock lives on node 1, a primary, copied asynchronously to node 2, its replica. At \
             t = 0 node 2 is cut off, and A takes the lock: node 1 answers OK. At t = 1 node 1 is \
             killed before anyone has a copy of A's key, and node 2 is promoted without it; the \
             clients now talk to node 2, and B takes the lock that A still believes it holds.",
            Replicated {
                wait: false,
                faults: CUT_THEN_FAIL_OVER,
            },
            2,
        ),
        failover(
            "failover-wait",
            "A failover, with WAIT after every grant",
            "The same failover, but after taking the lock each client runs WAIT 1 (wait for one \
             replica's copy, 250 ms at most) and treats a lock that reached no replica as not \
             taken: it gives it back and tries again the next second.",
            Replicated {
                wait: true,
                faults: CUT_THEN_FAIL_OVER,
            },
            3,
        ),
        failover(
            "failover-wait-limit",
            "WAIT said 1, and the lock was lost anyway",
            "A takes the lock and WAIT 1 answers 1: node 2 has a copy. At t = 1 node 2 crashes and \
             comes back empty, as a replica without persistence does; before it has copied node 1 \
             again, node 1 is killed, and node 2 is promoted with nothing. B and C find the lock \
             free; their WAIT answers 0 until node 1 is back as node 2's replica, then 1: B \
             holds the lock that A still believes it holds.",
            Replicated {
                wait: true,
                faults: &[
                    (1, Fault::RestartReplicaEmpty),
                    (1, Fault::KillPrimary),
                    (1, Fault::Promote),
                    (2, Fault::Rejoin),
                ],
            },
            2,
        ),
    ]
}

/// The scenario called `name`.
pub fn named(name: &str) -> Option<Scenario> {
    all().into_iter().find(|s| s.name == name)
}
