//! The scenarios: small stories of three clients sharing one lock.
//!
//! Every scenario has the same shape. Clients A, B and C each want to add 1 to
//! a counter in the storage: take the lock, read the counter, work, write the
//! counter + 1, release. Three jobs should leave the counter at 3. What
//! changes from one scenario to the next is the TTL, whether fencing tokens
//! are used, and what goes wrong on the way: a client freezes (a GC pause), its
//! job outlasts the TTL, it crashes, or all three arrive at the same instant.
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
}

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
    }
}

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
        },
    ]
}

/// The scenario called `name`.
pub fn named(name: &str) -> Option<Scenario> {
    all().into_iter().find(|s| s.name == name)
}
