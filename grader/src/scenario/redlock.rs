//! The Redlock stories of the debate, as data: what happens to the nodes at which second, and
//! what the two clients set out to do.
//!
//! Each is a [`Story`] on [`Topology::Nodes`], the one description the stories on one server and
//! a pair ([`super::all`]) have too, with its faults from the one vocabulary of
//! [`crate::story::fault`]; a new story here is one more entry. Clients A and B each want to add 1
//! to a counter, so each takes the lock (retrying every second while it is refused), reads the
//! counter, works, writes the counter + 1 and releases. What changes is what happens to the five
//! nodes on the way, and whether the writes carry fencing tokens. The nodes' faults of a second
//! happen at its start, before A and then B take their step; a client's freeze, after its step
//! (see [`Fault`]). A run of one is held to a correct Redlock's whole run
//! ([`crate::story::HeldTo::Reference`]).
//!
//! Nodes are numbered 0 to 4 here, as the grader's [`crate::nodes`] numbers them; a timeline and
//! the lines of a report call node `i` "node i+1", so that readers count from 1 to 5.

use crate::nodes::NODES;
use crate::run::redlock::TTL;
use crate::story::{Fault, Fencing, Plan, Story, Topology};

use Fault::*;

/// A Redlock story on the five nodes: A works 3 s, B does its job, nothing goes wrong unless
/// the entry says so.
fn redlock(
    name: &'static str,
    timeline: &'static str,
    title: &'static str,
    text: &'static str,
) -> Story {
    Story {
        name,
        timeline,
        title,
        text,
        topology: Topology::Nodes(NODES),
        ttl_s: TTL.as_secs(),
        fencing: Fencing::Off,
        clients: vec![Plan::job("A").working(3), Plan::job("B")],
        faults: Vec::new(),
        race: false,
        expected_counter: 1,
    }
}

/// A is frozen from t = 1 s to t = 15 s; B does its job.
fn paused_a(
    name: &'static str,
    timeline: &'static str,
    title: &'static str,
    text: &'static str,
) -> Story {
    Story {
        clients: vec![Plan::job("A"), Plan::job("B")],
        faults: vec![(
            1,
            Freeze {
                client: "A",
                until: 15,
            },
        )],
        ..redlock(name, timeline, title, text)
    }
}

/// The stories, as the book tells them.
pub fn all() -> Vec<Story> {
    vec![
        Story {
            faults: vec![
                (0, Pause(3)),
                (0, Pause(4)),
                (1, Resume(3)),
                (1, Resume(4)),
                (2, Jump(2, 10_000)),
            ],
            ..redlock(
                "clock_jump",
                "redlock-clock-jump",
                "Redlock: one node's clock jumps",
                "Kleppmann's first run. Nodes 4 and 5 cannot be reached at t = 0, so A takes the \
                 lock on nodes 1, 2 and 3, a majority. At t = 2 node 3's clock jumps 10 s ahead \
                 and A's key there expires early; B, retrying every second, now gets nodes 3, 4 \
                 and 5, a majority too. Both hold the lock, and both write.",
            )
        },
        Story {
            faults: vec![
                (0, Kill(3)),
                (0, Kill(4)),
                (1, Restart(3)),
                (1, Restart(4)),
                (2, Restart(2)),
            ],
            ..redlock(
                "restart_without_persistence",
                "redlock-restart",
                "Redlock: a node restarts without persistence",
                "Nodes 4 and 5 are down at t = 0, so A takes the lock on nodes 1, 2 and 3; they \
                 come back, empty, at t = 1. At t = 2 node 3 crashes and restarts at once; it \
                 wrote nothing to disk, so A's key on it is gone. B gets nodes 3, 4 and 5, a \
                 majority, while A still holds nodes 1 and 2 and believes it holds the lock.",
            )
        },
        Story {
            faults: vec![
                (0, Kill(3)),
                (0, Kill(4)),
                (1, Restart(3)),
                (1, Restart(4)),
                (2, RestartAfter(2, 10_000)),
            ],
            expected_counter: 2,
            ..redlock(
                "delayed_restart",
                "redlock-delayed-restart",
                "Redlock: a crashed node stays down for the TTL",
                "The same crash of node 3 at t = 2, with antirez's remedy: the node stays down for \
                 10 s, the longest TTL, before it restarts. B finds only nodes 4 and 5 free and is \
                 refused until A releases nodes 1 and 2 at t = 5; then B takes 1, 2, 4 and 5, four \
                 nodes of five, and the two jobs take turns.",
            )
        },
        paused_a(
            "pause_longer_than_validity",
            "redlock-pause",
            "Redlock: a pause longer than the validity",
            "All five nodes answer, and A takes the lock on every one, valid for 9.9 s. A reads \
             the counter and freezes from t = 1 s to t = 15 s. Its keys expire on every node at \
             t = 10 and B takes the lock. A wakes up still believing it holds the lock, and \
             writes: five nodes protect against a node failing, not against a paused client.",
        ),
        Story {
            fencing: Fencing::Writes,
            ..paused_a(
                "pause_longer_than_validity_fenced",
                "redlock-pause-fenced",
                "Redlock: a pause longer than the validity, with fencing",
                "The same pause, with fencing. Redlock's random tokens do not grow, so after each \
                 grant the client takes a fencing token from a counter on a separate Redis server, \
                 which stands in for a consensus service such as etcd (its revision) or ZooKeeper \
                 (its zxid): A gets 33, B gets 34. The storage refuses a write whose token is \
                 older than one it has seen, so A's late write is rejected instead of lost.",
            )
        },
    ]
}
