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
use super::scenarios::{first_second_apart, halted, reference_run, scenario_check};
use crate::error::GradeError;
use crate::exercise::redlock::EXERCISE;
use crate::lock::Lock;
use crate::report::{Report, Verdict};
use crate::run::Run;
use crate::story::Story;
use crate::timeline::{Second, Timeline};
use crate::verdict::{Property, Violation};

/// Plays the Redlock story called `name` with the learner's Redlock (the rest of the lock the
/// reference's: the check grades the Redlock exercise alone), and holds it to a correct
/// Redlock's run.
pub(crate) fn check(ctx: &Ctx<'_>, name: &'static str) -> Result<Verdict, GradeError> {
    scenario_check(ctx, name, EXERCISE.lock_under_test(ctx.lock))
}

/// What every correct Redlock's run shares, second by second: everything but how long the
/// majority has left. That depends on the order in which a Redlock asks the nodes (one that asks
/// the two paused nodes first sets its keys 100 ms later), which the algorithm leaves free.
fn shared(timeline: &Timeline) -> Vec<Second> {
    timeline
        .seconds
        .iter()
        .map(|second| Second {
            ttl_left_s: None,
            ..second.clone()
        })
        .collect()
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
    let (ours, theirs) = (shared(&mine.timeline), shared(&expected.timeline));
    let Some(t) = first_second_apart(&ours, &theirs) else {
        return Ok(Verdict::Pass);
    };
    // The first line where the runs part names the event, in words both runs use.
    let step = mine
        .lines
        .iter()
        .zip(&expected.lines)
        .position(|(a, b)| a != b)
        .unwrap_or(mine.lines.len().min(expected.lines.len()));
    // «t = 1 s B denied: no majority of the nodes» (nodes A A A · ·)
    let said = |lines: &[String]| {
        let Some(line) = lines.get(step) else {
            return "nothing more".to_owned();
        };
        let (event, nodes) = line.rsplit_once("nodes: ").unwrap_or((line, ""));
        let event = event.split_whitespace().collect::<Vec<_>>().join(" ");
        format!("«{event}» (nodes {nodes})")
    };
    let same_events = mine.lines == expected.lines;
    let what = if same_events {
        // The same events, but a second that differs in what a client believes or a node
        // holds: the timelines show where.
        format!(
            "your Redlock's run tells the same events as a correct Redlock's, but from t = {t} s \
             on what the clients believe or the nodes hold differs (the timelines below)"
        )
    } else {
        format!(
            "your Redlock's run parts from a correct Redlock's at step {} of the story: yours \
             says {}, a correct one says {}",
            step + 1,
            said(&mine.lines),
            said(&expected.lines)
        )
    };
    let evidence = if same_events {
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
    let v = Violation::at(Property::RedlockSameAsReference, t * 1000, what);
    Ok(Verdict::Fail(Box::new(Report::broken(
        ctx.check, lock.name, v, evidence,
    ))))
}
