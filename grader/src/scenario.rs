//! The course's stories: on one Redis server, those of replication and failover, and (in
//! [`redlock`]) those of Redlock's nodes.
//!
//! Clients A, B and C each want to add 1 to a counter in the storage: take the lock, read the
//! counter, work, write the counter + 1, release. Three jobs should leave the counter at 3. What
//! changes from one story to the next is the TTL, whether fencing tokens are used, and what goes
//! wrong on the way: a client freezes (a GC pause), its job outlasts the TTL, it crashes, or all
//! three arrive at the same instant.
//!
//! Most stories run on one Redis server. Those of replication and failover run the lock on a
//! primary and its replica ([`Topology::Replicated`], played on [`crate::replication`]) while the
//! storage stays on a server that does not fail over: the primary acknowledges a lock and dies
//! before its replica has it, and the replica is promoted without it.
//!
//! Each entry is a [`Story`], the one description every story of the course has, with its faults
//! from the one vocabulary of [`crate::story::fault`]; a new story here is one more entry, and a
//! Redlock story one in [`redlock`]. [`crate::run`] plays them all: each client does one step per
//! virtual second, in the order A, B, C; a client that finds the lock taken tries again the next
//! second.

pub mod redlock;

use crate::story::{Fault, Fencing, Plan, Story, Topology};

/// A GC pause of A from t = 1 s to t = 15 s over a 10 s TTL.
fn gc_pause(
    name: &'static str,
    title: &'static str,
    text: &'static str,
    fencing: Fencing,
) -> Story {
    Story {
        fencing,
        faults: vec![(
            1,
            Fault::Freeze {
                client: "A",
                until: 15,
            },
        )],
        expected_counter: 2,
        ..Story::single(name, title, text)
    }
}

/// A 40 s pause of A over a 30 s TTL.
fn long_pause(
    name: &'static str,
    title: &'static str,
    text: &'static str,
    fencing: Fencing,
    expected: i64,
) -> Story {
    Story {
        ttl_s: 30,
        fencing,
        faults: vec![(
            1,
            Fault::Freeze {
                client: "A",
                until: 41,
            },
        )],
        expected_counter: expected,
        ..Story::single(name, title, text)
    }
}

/// A story of failover: A's job spans the failover (it reads before, writes after), and the
/// faults come as `faults` says.
fn failover(
    name: &'static str,
    title: &'static str,
    text: &'static str,
    wait: bool,
    faults: Vec<(u64, Fault)>,
    expected: i64,
) -> Story {
    Story {
        topology: Topology::Replicated { wait },
        clients: vec![Plan::job("A").working(3), Plan::job("B"), Plan::job("C")],
        faults,
        expected_counter: expected,
        ..Story::single(name, title, text)
    }
}

/// Node 2 is cut off, then node 1 dies and node 2 takes its place, and node 1 comes back as
/// its replica.
fn cut_then_fail_over() -> Vec<(u64, Fault)> {
    vec![
        (0, Fault::CutOffReplica),
        (1, Fault::KillPrimary),
        (1, Fault::Promote),
        (2, Fault::Rejoin),
    ]
}

/// Every story on one server or a pair, in the order the book tells them.
pub fn all() -> Vec<Story> {
    vec![
        Story::single(
            "normal-run",
            "A normal run",
            "A, B and C each take the lock, read the counter, write it + 1 and release. \
             Nothing goes wrong: they take turns.",
        ),
        Story {
            race: true,
            ..Story::single(
                "race",
                "Three clients, one free lock, the same instant",
                "A, B and C try to take the free lock at the same moment; their commands reach \
                 Redis interleaved, one from each in turn. Exactly one may win.",
            )
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
        Story {
            fencing: Fencing::ReadsAndWrites,
            clients: vec![Plan::job("A"), Plan::job("B").working(6), Plan::job("C")],
            faults: vec![(
                1,
                Fault::Freeze {
                    client: "A",
                    until: 15,
                },
            )],
            expected_counter: 2,
            ..Story::single(
                "fenced-reads",
                "GC pause, with fenced reads",
                "A freezes as before; B's job is slow. The storage checks reads as well as writes, \
                 so B's read with token 34 already fences A off, before B writes anything.",
            )
        },
        Story {
            clients: vec![Plan::job("A").working(10), Plan::job("B"), Plan::job("C")],
            ..Story::single(
                "slow-job",
                "A job longer than the TTL",
                "No pause at all: A's job simply takes 12 s, from acquiring to releasing, and the TTL \
                 is 10 s. The lock expires under A while it still works.",
            )
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
        Story {
            ttl_s: 30,
            clients: vec![
                Plan::job("A").working(40).kept(),
                Plan::job("B"),
                Plan::job("C"),
            ],
            faults: vec![(
                21,
                Fault::Freeze {
                    client: "A",
                    until: 53,
                },
            )],
            expected_counter: 2,
            ..Story::single(
                "renewal-pause",
                "A renewal fails during a pause",
                "A's job is long, so a lease keeper renews its 30 s lock every 10 s, as Redisson's \
                 watchdog does. A freezes from t = 21 s to t = 53 s, keeper and all: its lock \
                 expires at t = 50 s and B takes it. When A wakes up, its keeper's first renewal \
                 fails, and it stops the job before its write.",
            )
        },
        Story {
            faults: vec![(2, Fault::Crash("A"))],
            expected_counter: 2,
            ..Story::single(
                "crashed-holder",
                "The holder crashes",
                "A takes the lock, reads the counter and crashes at t = 2 s, without releasing. \
                 Nobody deletes its lock: it frees itself when its 10 s TTL runs out.",
            )
        },
        failover(
            "failover-lost-lock",
            "A failover loses an acknowledged lock",
            "The lock lives on node 1, a primary, copied asynchronously to node 2, its replica. At \
             t = 0 node 2 is cut off, and A takes the lock: node 1 answers OK. At t = 1 node 1 is \
             killed before anyone has a copy of A's key, and node 2 is promoted without it; the \
             clients now talk to node 2, and B takes the lock that A still believes it holds.",
            false,
            cut_then_fail_over(),
            2,
        ),
        failover(
            "failover-wait",
            "A failover, with WAIT after every grant",
            "The same failover, but after taking the lock each client runs WAIT 1 (wait for one \
             replica's copy, 250 ms at most) and treats a lock that reached no replica as not \
             taken: it gives it back and tries again the next second.",
            true,
            cut_then_fail_over(),
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
            true,
            vec![
                (1, Fault::RestartReplicaEmpty),
                (1, Fault::KillPrimary),
                (1, Fault::Promote),
                (2, Fault::Rejoin),
            ],
            2,
        ),
    ]
}

/// The story called `name`, on one server, a pair or Redlock's nodes.
pub fn named(name: &str) -> Option<Story> {
    all()
        .into_iter()
        .chain(redlock::all())
        .find(|s| s.name == name)
}
