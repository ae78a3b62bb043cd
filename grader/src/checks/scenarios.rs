//! The checks that play one of the course's stories ([`crate::scenario`]) and hold the run to
//! what the story's policy says ([`Story::held_to`]): the rules, then a correct lock's run, second
//! by second; or, for Redlock's stories, a correct Redlock's whole run
//! ([`super::redlock_stories`]).
//!
//! The engine ([`crate::run`]) judges every call it makes with the same
//! judges as the direct checks ([`crate::judge`]), and [`crate::judge::story`]
//! holds the run to the reference lock's; this module turns the first broken
//! rule into a verdict, with the timelines that show it.

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::Ctx;
use crate::error::GradeError;
use crate::judge::story::same_as_reference;
use crate::lock::Lock;
use crate::reference::LOCK as REFERENCE;
use crate::report::{Report, Verdict};
use crate::run::{self, Halt, Run};
use crate::sandbox::Failure;
use crate::scenario;
use crate::story::{HeldTo, Story};

/// Plays the story called `name` with `lock`, then holds the run to what the story's policy
/// says.
pub fn scenario_check(
    ctx: &Ctx<'_>,
    name: &'static str,
    lock: Lock,
) -> Result<Verdict, GradeError> {
    let story = named(ctx, name)?;
    let mine = run::run(&story, &lock)?;
    let verdict = match story.held_to() {
        HeldTo::Rules => judge_scenario(ctx, &story, lock, &mine)?,
        HeldTo::Reference => super::redlock_stories::judge(ctx, &story, lock, &mine)?,
    };
    // The player steps through a failed run second by second (`cargo course open`).
    let failed = matches!(verdict, Verdict::Fail(_));
    crate::recording::keep(ctx.check, failed.then_some(&mine.timeline));
    Ok(verdict)
}

/// A correct lock's run of `story`, played once a process.
pub(crate) fn reference_run(story: &Story) -> Result<Run, GradeError> {
    static REFERENCE_RUNS: Mutex<BTreeMap<&'static str, Run>> = Mutex::new(BTreeMap::new());
    super::reference_play(&REFERENCE_RUNS, story.name, || run::run(story, &REFERENCE))
}

/// The scenario `name` that the check of `ctx` plays.
pub(crate) fn named(ctx: &Ctx<'_>, name: &'static str) -> Result<Story, GradeError> {
    scenario::named(name).ok_or(GradeError::NoSuchScenario {
        check: ctx.check,
        scenario: name,
    })
}

/// Holds a played run to the rules, then to the reference lock's run ([`HeldTo::Rules`]).
fn judge_scenario(
    ctx: &Ctx<'_>,
    scenario: &Story,
    lock: Lock,
    mine: &Run,
) -> Result<Verdict, GradeError> {
    if let Some(halt) = &mine.halt {
        return Ok(halted(ctx, lock, halt, mine.timeline.render(Some(halt.t))));
    }
    if let Some(v) = mine.violations.first() {
        let evidence = vec![mine.timeline.render(v.at_ms.map(|ms| ms / 1000))];
        return Ok(Verdict::Fail(Box::new(Report::broken(
            ctx.check,
            lock.name,
            v.clone(),
            evidence,
        ))));
    }
    let expected = reference_run(scenario)?.timeline;
    let violation = same_as_reference(
        &mine.timeline.with_tokens_renumbered(),
        &expected.with_tokens_renumbered(),
    );
    if let Some(v) = violation {
        let t = v.at_ms.unwrap_or_default() / 1000;
        let evidence = vec![
            format!("Your run:\n{}", mine.timeline.render(Some(t))),
            format!("A correct lock's run:\n{}", expected.render(Some(t))),
        ];
        return Ok(Verdict::Fail(Box::new(Report::broken(
            ctx.check, lock.name, v, evidence,
        ))));
    }
    Ok(Verdict::Pass)
}

/// The verdict on a run that a failed call of `lock` stopped: "not started" for a stub, else the
/// failure, with `evidence`, the run so far.
pub(crate) fn halted(ctx: &Ctx<'_>, lock: Lock, halt: &Halt, evidence: String) -> Verdict {
    match &halt.failure {
        Failure::NotStarted { message } => Verdict::NotStarted {
            function: halt.function,
            message: message.clone(),
        },
        failure => Verdict::Fail(Box::new(Report::failed(
            ctx.check,
            lock.name,
            halt.function,
            failure.clone(),
            vec![evidence],
        ))),
    }
}
