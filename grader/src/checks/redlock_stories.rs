//! The Redlock stories of the debate as checks: played with the learner's Redlock on five real
//! nodes, and held to a correct Redlock's run, second by second.
//!
//! Kleppmann's clock jump, a node restarted without persistence, antirez's delayed restart, a
//! client paused past its validity, and the same pause with fencing tokens: each is a
//! [`Story`] on [`crate::story::Topology::Nodes`] ([`crate::scenario::redlock`]), played by the one
//! engine ([`crate::run`]) like every story. One play serves both the grade and the book: the
//! book's `redlock-*` timelines are the reference's plays (`lock_catalogue::demos`), and a check
//! plays the learner's Redlock the same way and compares the seconds. Whatever a story shows about
//! Redlock itself (two clients each holding a majority is the algorithm's doing, not the
//! learner's), the learner's run must be the reference's: a Redlock story is held to
//! [`HeldTo::Reference`](crate::story::HeldTo::Reference), which [`judge`] applies.

use super::Ctx;
use super::scenarios::{halted, reference_run, scenario_check};
use crate::error::GradeError;
use crate::exercise::redlock::EXERCISE;
use crate::judge::story::{Told, redlock_same_as_reference};
use crate::lock::Lock;
use crate::report::{Report, Verdict};
use crate::run::Run;
use crate::story::Story;

/// Plays the Redlock story called `name` with the learner's Redlock (the rest of the lock the
/// reference's: the check grades the Redlock exercise alone), and holds it to a correct
/// Redlock's run.
pub(crate) fn check(ctx: &Ctx<'_>, name: &'static str) -> Result<Verdict, GradeError> {
    scenario_check(ctx, name, EXERCISE.lock_under_test(ctx.lock))
}

/// Holds `mine`, a run of a Redlock story with `lock`, to a correct Redlock's run of it: a call
/// that failed is told with the story so far, and a run that parts from the reference's names the
/// first step where it does.
pub(crate) fn judge(
    ctx: &Ctx<'_>,
    story: &Story,
    lock: Lock,
    mine: &Run,
) -> Result<Verdict, GradeError> {
    if let Some(halt) = &mine.halt {
        let so_far = format!("The story so far:\n{}", mine.lines.join("\n"));
        return Ok(halted(ctx, lock, halt, so_far));
    }
    let expected = reference_run(story)?;
    let ours = Told {
        timeline: &mine.timeline,
        lines: &mine.lines,
    };
    let theirs = Told {
        timeline: &expected.timeline,
        lines: &expected.lines,
    };
    let Some(v) = redlock_same_as_reference(&ours, &theirs) else {
        return Ok(Verdict::Pass);
    };
    let t = v.at_ms.unwrap_or_default() / 1000;
    let evidence = if mine.lines == expected.lines {
        // The same events, but a second that differs in what a client believes or a node
        // holds: the timelines show where.
        vec![
            format!("Your run:\n{}", mine.timeline.render(Some(t))),
            format!(
                "A correct Redlock's run:\n{}",
                expected.timeline.render(Some(t))
            ),
        ]
    } else {
        vec![
            format!("Your run:\n{}", mine.lines.join("\n")),
            format!("A correct Redlock's run:\n{}", expected.lines.join("\n")),
        ]
    };
    Ok(Verdict::Fail(Box::new(Report::broken(
        ctx.check, lock.name, v, evidence,
    ))))
}
