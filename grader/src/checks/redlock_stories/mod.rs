//! The Redlock stories of the debate, played with the learner's Redlock on five real nodes, and
//! held to a correct Redlock's run, second by second.
//!
//! Kleppmann's clock jump, a node restarted without persistence, antirez's delayed restart, a
//! client paused past its validity, and the same pause with fencing tokens: each is a
//! [`crate::story::Story`] on [`crate::story::Topology::Nodes`], faults and two clients' jobs
//! ([`stories`]), played on a fresh [`crate::nodes::Cluster`] on virtual time ([`play`], with
//! the clients of [`crate::story::client`] and each fault's effect from
//! [`crate::story::Fault::on_nodes`]) and recorded as a timeline with its nodes ([`record`], the
//! clients' seconds and the run by [`crate::story::record`]). One play
//! serves both the grade and the book: the book's `redlock-*` timelines are the reference's plays
//! (`lock_catalogue::demos`), and a check plays the learner's Redlock the same way and compares the
//! seconds. Whatever a story shows about Redlock itself (two clients each holding a majority is
//! the algorithm's doing, not the learner's), the learner's run must be the reference's.

mod play;
mod record;
pub mod stories;

pub use play::{Played, play};
pub use stories::{all, story};

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::Ctx;
use crate::error::GradeError;
use crate::reference::LOCK as REFERENCE;
use crate::report::{Report, Verdict};
use crate::sandbox::Failure;
use crate::story::Story;
use crate::verdict::{Property, Violation};

/// Plays the story called `name` with the learner's Redlock and with the reference, and
/// compares them.
pub(crate) fn check(ctx: &Ctx<'_>, name: &'static str) -> Result<Verdict, GradeError> {
    let story = stories::story(name).ok_or(GradeError::NoSuchScenario {
        check: ctx.check,
        scenario: name,
    })?;
    let mine = play(&story, ctx.lock)?;
    let verdict = judge(ctx, &story, &mine)?;
    // The player steps through a failed run beside the book's (`cargo course open`).
    let failed = matches!(verdict, Verdict::Fail(_));
    crate::recording::keep(ctx.check, failed.then_some(&mine.timeline));
    Ok(verdict)
}

/// What every correct Redlock's run shares, second by second: everything but how long the
/// majority has left. That depends on the order in which a Redlock asks the nodes (one that asks
/// the two paused nodes first sets its keys 100 ms later), which the algorithm leaves free.
fn shared(timeline: &crate::timeline::Timeline) -> Vec<crate::timeline::Second> {
    timeline
        .seconds
        .iter()
        .map(|second| crate::timeline::Second {
            ttl_left_s: None,
            ..second.clone()
        })
        .collect()
}

fn judge(ctx: &Ctx<'_>, story: &Story, mine: &Played) -> Result<Verdict, GradeError> {
    if let Some(halt) = &mine.halt {
        return Ok(match &halt.failure {
            Failure::NotStarted { message } => Verdict::NotStarted {
                function: halt.function,
                message: message.clone(),
            },
            failure => Verdict::Fail(Box::new(Report::failed(
                ctx.check,
                ctx.lock.name,
                halt.function,
                failure.clone(),
                vec![format!("The story so far:\n{}", mine.lines.join("\n"))],
            ))),
        });
    }
    static REFERENCE_PLAYS: Mutex<BTreeMap<&'static str, Played>> = Mutex::new(BTreeMap::new());
    let expected = super::reference_play(&REFERENCE_PLAYS, story.name, || play(story, &REFERENCE))?;
    let (ours, theirs) = (shared(&mine.timeline), shared(&expected.timeline));
    let differs = ours
        .iter()
        .zip(&theirs)
        .find(|(a, b)| a != b)
        .map(|(a, _)| a.t)
        .or_else(|| (ours.len() != theirs.len()).then(|| ours.len().min(theirs.len()) as u64));
    let Some(t) = differs else {
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
        ctx.check,
        ctx.lock.name,
        v,
        evidence,
    ))))
}
