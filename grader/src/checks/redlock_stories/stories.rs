//! The Redlock stories of the debate, as data: what happens to the nodes at which second, and
//! what the two clients set out to do.
//!
//! Every story has the shape of the single-server scenarios ([`crate::scenario`]): clients A and B
//! each want to add 1 to a counter, so each takes the lock (retrying every second while it is
//! refused), reads the counter, works, writes the counter + 1 and releases. What changes is what
//! happens to the five nodes on the way, and whether the writes carry fencing tokens. The faults
//! of a second happen at its start, before A and then B take their step.
//!
//! Nodes are numbered 0 to 4 here, as the grader's [`crate::nodes`] numbers them; a timeline and
//! the lines of a report call node `i` "node i+1", so that readers count from 1 to 5.

use crate::scenario::Plan;

/// One thing done to a node at the start of a second. Nodes are numbered from 0.
#[derive(Clone, Copy, Debug)]
pub enum Fault {
    /// Node `i` is stopped (`SIGSTOP`): it answers nothing and its clock stands still.
    Pause(usize),
    /// Node `i` goes on (`SIGCONT`), and its clock catches up.
    Resume(usize),
    /// Node `i` is killed (`SIGKILL`) and stays down.
    Kill(usize),
    /// Node `i` is killed if it runs, and comes back empty after `ms` (at once with 0).
    Restart(usize, u64),
    /// Node `i`'s clock jumps `ms` ahead of the others'.
    Jump(usize, u64),
}

/// A story, by name.
pub struct Story {
    /// The name of its check, `redlock::NAME`.
    pub name: &'static str,
    /// The name of its timeline in the book (`book/timelines/NAME.json`).
    pub timeline: &'static str,
    /// A short title.
    pub title: &'static str,
    /// What happens, in plain words.
    pub story: &'static str,
    /// Whether each grant comes with a fencing token from a counter, checked by the storage.
    pub fencing: bool,
    /// What happens to the nodes, by second, in order.
    pub faults: &'static [(u64, Fault)],
    /// A's and B's jobs, in the order they act within a second.
    pub clients: &'static [Plan],
}

use Fault::*;

/// Redlock: one node's clock jumps.
pub const CLOCK_JUMP: Story = Story {
    name: "clock_jump",
    timeline: "redlock-clock-jump",
    title: "Redlock: one node's clock jumps",
    story: "Kleppmann's first run. Nodes 4 and 5 cannot be reached at t = 0, so A takes the \
            lock on nodes 1, 2 and 3, a majority. At t = 2 node 3's clock jumps 10 s ahead \
            and A's key there expires early; B, retrying every second, now gets nodes 3, 4 \
            and 5, a majority too. Both hold the lock, and both write.",
    fencing: false,
    faults: &[
        (0, Pause(3)),
        (0, Pause(4)),
        (1, Resume(3)),
        (1, Resume(4)),
        (2, Jump(2, 10_000)),
    ],
    clients: &[Plan::job("A").working(3), Plan::job("B")],
};

/// Redlock: a node restarts without persistence.
pub const RESTART_WITHOUT_PERSISTENCE: Story = Story {
    name: "restart_without_persistence",
    timeline: "redlock-restart",
    title: "Redlock: a node restarts without persistence",
    story: "Nodes 4 and 5 are down at t = 0, so A takes the lock on nodes 1, 2 and 3; they \
            come back, empty, at t = 1. At t = 2 node 3 crashes and restarts at once; it \
            wrote nothing to disk, so A's key on it is gone. B gets nodes 3, 4 and 5, a \
            majority, while A still holds nodes 1 and 2 and believes it holds the lock.",
    fencing: false,
    faults: &[
        (0, Kill(3)),
        (0, Kill(4)),
        (1, Restart(3, 0)),
        (1, Restart(4, 0)),
        (2, Restart(2, 0)),
    ],
    clients: &[Plan::job("A").working(3), Plan::job("B")],
};

/// Redlock: a crashed node stays down for the TTL.
pub const DELAYED_RESTART: Story = Story {
    name: "delayed_restart",
    timeline: "redlock-delayed-restart",
    title: "Redlock: a crashed node stays down for the TTL",
    story: "The same crash of node 3 at t = 2, with antirez's remedy: the node stays down for \
            10 s, the longest TTL, before it restarts. B finds only nodes 4 and 5 free and is \
            refused until A releases nodes 1 and 2 at t = 5; then B takes 1, 2, 4 and 5, four \
            nodes of five, and the two jobs take turns.",
    fencing: false,
    faults: &[
        (0, Kill(3)),
        (0, Kill(4)),
        (1, Restart(3, 0)),
        (1, Restart(4, 0)),
        (2, Restart(2, 10_000)),
    ],
    clients: &[Plan::job("A").working(3), Plan::job("B")],
};

/// Redlock: a pause longer than the validity.
pub const PAUSE_LONGER_THAN_VALIDITY: Story = Story {
    name: "pause_longer_than_validity",
    timeline: "redlock-pause",
    title: "Redlock: a pause longer than the validity",
    story: "All five nodes answer, and A takes the lock on every one, valid for 9.9 s. A reads \
            the counter and freezes from t = 1 s to t = 15 s. Its keys expire on every node at \
            t = 10 and B takes the lock. A wakes up still believing it holds the lock, and \
            writes: five nodes protect against a node failing, not against a paused client.",
    fencing: false,
    faults: &[],
    clients: &[Plan::job("A").paused(1, 15), Plan::job("B")],
};

/// Redlock: a pause longer than the validity, with fencing.
pub const PAUSE_LONGER_THAN_VALIDITY_FENCED: Story = Story {
    name: "pause_longer_than_validity_fenced",
    timeline: "redlock-pause-fenced",
    title: "Redlock: a pause longer than the validity, with fencing",
    story: "The same pause, with fencing. Redlock's random tokens do not grow, so after each \
            grant the client takes a fencing token from a counter on a separate Redis server, \
            which stands in for a consensus service such as etcd (its revision) or ZooKeeper \
            (its zxid): A gets 33, B gets 34. The storage refuses a write whose token is older than \
            one it has seen, so A's late write is rejected instead of lost.",
    fencing: true,
    faults: &[],
    clients: &[Plan::job("A").paused(1, 15), Plan::job("B")],
};

/// The stories, as the book tells them.
pub const STORIES: &[Story] = &[
    CLOCK_JUMP,
    RESTART_WITHOUT_PERSISTENCE,
    DELAYED_RESTART,
    PAUSE_LONGER_THAN_VALIDITY,
    PAUSE_LONGER_THAN_VALIDITY_FENCED,
];

/// The story called `name`.
pub fn story(name: &str) -> Option<&'static Story> {
    STORIES.iter().find(|s| s.name == name)
}
