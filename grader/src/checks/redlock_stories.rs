//! The Redlock stories of the debate, played with the learner's Redlock on five real nodes.
//!
//! Kleppmann's clock jump, a node restarted without persistence, antirez's delayed restart, and
//! a client paused past its validity: each is a list of [`Act`]s, faults and calls, played on a
//! fresh [`Cluster`]. After every act a line records the virtual time when it ended, what the
//! call returned, and which token each node holds. A correct Redlock writes the same lines on every run; the
//! learner's must write the same lines as the reference, whatever the story shows about Redlock
//! itself (two clients holding a majority at once is the algorithm's doing, not the learner's).

use super::Ctx;
use super::redlock::{TOKEN_A, TOKEN_B, TTL, acquire, release};
use crate::error::GradeError;
use crate::lock::Lock;
use crate::nodes::Health;
use crate::nodes::cluster::{Cluster, SharedCluster, enter};
use crate::reference::LOCK as REFERENCE;
use crate::report::{Report, Verdict};
use crate::sandbox::Failure;
use crate::verdict::{Property, Violation, seconds};

/// One step of a story.
#[derive(Clone, Copy, Debug)]
pub enum Act {
    /// Client A (`true`) or B (`false`) runs `redlock_acquire` with the course's TTL.
    Acquire(bool),
    /// Client A or B runs `redlock_release`.
    Release(bool),
    /// Node `i` is stopped (`SIGSTOP`).
    Pause(usize),
    /// Node `i` goes on (`SIGCONT`).
    Resume(usize),
    /// Node `i` is killed (`SIGKILL`) and stays down.
    Kill(usize),
    /// Node `i` is killed if it runs, and comes back empty after `ms`.
    Restart(usize, u64),
    /// Node `i`'s clock jumps `ms` ahead.
    Jump(usize, u64),
    /// Everyone waits `ms` (a client's pause, seen from outside).
    Wait(u64),
}

/// A story, by name.
pub struct Story {
    /// The name the check uses.
    pub name: &'static str,
    /// What happens, in order.
    pub acts: &'static [Act],
}

use Act::*;

/// The stories, as the book tells them.
pub const STORIES: &[Story] = &[
    Story {
        name: "clock_jump",
        // A cannot reach nodes 3 and 4, takes 0, 1, 2; node 2's clock jumps past the TTL.
        acts: &[
            Pause(3),
            Pause(4),
            Acquire(true),
            Resume(3),
            Resume(4),
            Jump(2, 10_000),
            Acquire(false),
        ],
    },
    Story {
        name: "restart_without_persistence",
        // A takes 0, 1, 2 while 3 and 4 are down; node 2 restarts empty at once.
        acts: &[
            Kill(3),
            Kill(4),
            Acquire(true),
            Restart(3, 0),
            Restart(4, 0),
            Restart(2, 0),
            Acquire(false),
        ],
    },
    Story {
        name: "delayed_restart",
        // The same, but node 2 stays down for the longest TTL before it comes back.
        acts: &[
            Kill(3),
            Kill(4),
            Acquire(true),
            Restart(3, 0),
            Restart(4, 0),
            Restart(2, 10_000),
            Acquire(false),
            Wait(10_000),
            Acquire(false),
        ],
    },
    Story {
        name: "pause_longer_than_validity",
        // A holds every node, then stops for 15 s: its validity ends, B takes the lock.
        acts: &[Acquire(true), Wait(15_000), Acquire(false), Release(false)],
    },
];

/// The story called `name`.
pub fn story(name: &str) -> Option<&'static Story> {
    STORIES.iter().find(|s| s.name == name)
}

/// A played story: a line per act, or the call that failed.
pub struct Played {
    /// `t = …: what happened · nodes`.
    pub lines: Vec<String>,
    /// The function that failed, and how, if one did.
    pub halt: Option<(&'static str, Failure)>,
}

/// Plays `story` with `lock`'s Redlock.
pub fn play(story: &Story, lock: &Lock) -> Result<Played, GradeError> {
    let c = Cluster::open()?.shared();
    let mut lines = Vec::new();
    for act in story.acts {
        let what = match *act {
            Acquire(a) => {
                let (who, token) = client(a);
                let got = acquire(&c, lock, token, TTL)?;
                match got.value {
                    // To a tenth of a second: the checks of `redlock.rs` hold the validity to
                    // the millisecond, with the slack a rounding of 1 % of the TTL needs.
                    Ok(Some(v)) => {
                        let tenths = (v.as_millis() + 50) / 100;
                        let (s, tenth) = (tenths / 10, tenths % 10);
                        format!("{who} acquires: granted, valid for {s}.{tenth} s")
                    }
                    Ok(None) => format!("{who} acquires: refused"),
                    Err(f) => return Ok(halted(lines, "redlock_acquire", f)),
                }
            }
            Release(a) => {
                let (who, token) = client(a);
                match release(&c, lock, token)? {
                    Ok(n) => format!("{who} releases: freed {n} nodes"),
                    Err(f) => return Ok(halted(lines, "redlock_release", f)),
                }
            }
            Pause(i) => {
                enter(&c).pause(i)?;
                format!("node {i} is paused")
            }
            Resume(i) => {
                enter(&c).resume(i)?;
                format!("node {i} resumes")
            }
            Kill(i) => {
                enter(&c).kill(i);
                format!("node {i} is killed")
            }
            Restart(i, 0) => {
                enter(&c).restart_after(i, 0)?;
                format!("node {i} restarts, empty")
            }
            Restart(i, ms) => {
                enter(&c).restart_after(i, ms)?;
                format!("node {i} is killed and stays down for {}", seconds(ms))
            }
            Jump(i, ms) => {
                enter(&c).jump(i, ms)?;
                format!("node {i}'s clock jumps {} ahead", seconds(ms))
            }
            Wait(ms) => {
                enter(&c).advance(ms);
                format!("{} pass", seconds(ms))
            }
        };
        let shown = nodes(&c)?;
        let at = enter(&c).now_ms();
        lines.push(format!("t = {:>7}  {what:<44} nodes: {shown}", seconds(at)));
    }
    Ok(Played { lines, halt: None })
}

fn halted(lines: Vec<String>, function: &'static str, failure: Failure) -> Played {
    Played {
        lines,
        halt: Some((function, failure)),
    }
}

fn client(a: bool) -> (&'static str, &'static str) {
    if a { ("A", TOKEN_A) } else { ("B", TOKEN_B) }
}

/// Each node's holder: `A`, `B`, `·` free, `‖` paused, `✗` down.
fn nodes(c: &SharedCluster) -> Result<String, GradeError> {
    let mut cluster = enter(c);
    let mut shown = Vec::new();
    for i in 0..cluster.len() {
        // The look first: it brings a node whose restart has come back up.
        let holder = cluster.holder(i)?;
        let mark = match cluster.health(i) {
            Health::Paused => "‖".to_owned(),
            Health::Down => "✗".to_owned(),
            Health::Up => match holder.as_deref() {
                Some(TOKEN_A) => "A".to_owned(),
                Some(TOKEN_B) => "B".to_owned(),
                Some(_) => "?".to_owned(),
                None => "·".to_owned(),
            },
        };
        shown.push(mark);
    }
    Ok(shown.join(" "))
}

/// Plays the story `name` with the learner's Redlock and with the reference, line by line.
pub(super) fn check(ctx: &Ctx<'_>, name: &str) -> Result<Verdict, GradeError> {
    let Some(story) = story(name) else {
        unreachable!(
            "check {} names the story {name}, which is not written",
            ctx.check
        )
    };
    let mine = play(story, ctx.lock)?;
    if let Some((function, failure)) = mine.halt {
        return Ok(match failure {
            Failure::NotStarted { message } => Verdict::NotStarted { function, message },
            failure => Verdict::Fail(Box::new(Report::failed(
                ctx.check,
                ctx.lock.name,
                function,
                failure,
                vec![mine.lines.join("\n")],
            ))),
        });
    }
    let expected = play(story, &REFERENCE)?;
    let differs = mine
        .lines
        .iter()
        .zip(&expected.lines)
        .position(|(a, b)| a != b);
    let Some(step) = differs else {
        return Ok(Verdict::Pass);
    };
    let what = format!(
        "at step {} of the story, your Redlock's run differs from a correct Redlock's",
        step + 1
    );
    let evidence = vec![
        format!("Your run:\n{}", mine.lines.join("\n")),
        format!("A correct Redlock's run:\n{}", expected.lines.join("\n")),
    ];
    let v = Violation::anytime(Property::RedlockSameAsReference, what);
    Ok(Verdict::Fail(Box::new(Report::broken(
        ctx.check,
        ctx.lock.name,
        v,
        evidence,
    ))))
}
