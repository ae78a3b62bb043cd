//! The stories of the book, played with the learner's whole lock: the group
//! of checks that comes after the exercises, with no file of its own.

use crate::checks::Check;
use crate::checks::scenarios::scenario_check;
use crate::exercise::points::STORY;

/// The group's name, the prefix of its checks (`scenarios::race`).
pub const NAME: &str = "scenarios";

/// Its checks, in the order they are reported.
pub const CHECKS: &[Check] = &[
    Check {
        name: "scenarios::normal_run",
        shows: "three jobs, counter 3",
        points: STORY,
        run: |c| scenario_check(c, "normal-run", *c.lock),
    },
    Check {
        name: "scenarios::race",
        shows: "three clients at the same instant",
        points: STORY,
        run: |c| scenario_check(c, "race", *c.lock),
    },
    Check {
        name: "scenarios::gc_pause",
        shows: "A freezes past its TTL; no fencing",
        points: STORY,
        run: |c| scenario_check(c, "gc-pause", *c.lock),
    },
    Check {
        name: "scenarios::gc_pause_fenced",
        shows: "the same pause with fencing: A's write rejected",
        points: STORY,
        run: |c| scenario_check(c, "gc-pause-fenced", *c.lock),
    },
    Check {
        name: "scenarios::fenced_reads",
        shows: "B's fenced read fences A off",
        points: STORY,
        run: |c| scenario_check(c, "fenced-reads", *c.lock),
    },
    Check {
        name: "scenarios::slow_job",
        shows: "a 12 s job over a 10 s TTL",
        points: STORY,
        run: |c| scenario_check(c, "slow-job", *c.lock),
    },
    Check {
        name: "scenarios::long_pause",
        shows: "a 40 s pause over a 30 s TTL",
        points: STORY,
        run: |c| scenario_check(c, "long-pause", *c.lock),
    },
    Check {
        name: "scenarios::long_pause_fenced",
        shows: "the 40 s pause with fencing",
        points: STORY,
        run: |c| scenario_check(c, "long-pause-fenced", *c.lock),
    },
    Check {
        name: "scenarios::crashed_holder",
        shows: "the holder crashes; its lock frees itself",
        points: STORY,
        run: |c| scenario_check(c, "crashed-holder", *c.lock),
    },
    Check {
        name: "scenarios::failover_lost_lock",
        shows: "the primary dies before its replica has A's lock: B gets it too",
        points: STORY,
        run: |c| scenario_check(c, "failover-lost-lock", *c.lock),
    },
    Check {
        name: "scenarios::failover_wait",
        shows: "WAIT after each grant: a lock no replica has is given back",
        points: STORY,
        run: |c| scenario_check(c, "failover-wait", *c.lock),
    },
];
