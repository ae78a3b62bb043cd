//! The checks that play one of the course's stories ([`crate::scenario`])
//! and hold the run to the rules, then to a correct lock's run, second by
//! second.
//!
//! The runner ([`crate::run`]) judges every call it makes with the same
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
use crate::run;
use crate::sandbox::Failure;
use crate::scenario;
use crate::timeline::Timeline;

/// Plays the scenario with `lock`, then holds the run to the rules and to the
/// reference lock's run.
pub fn scenario_check(
    ctx: &Ctx<'_>,
    name: &'static str,
    lock: Lock,
) -> Result<Verdict, GradeError> {
    let scenario = named(ctx, name)?;
    let mine = run::run(&scenario, &lock)?;
    let verdict = judge_scenario(ctx, &scenario, lock, &mine)?;
    // The player steps through a failed run second by second (`cargo course open`).
    let failed = matches!(verdict, Verdict::Fail(_));
    crate::recording::keep(ctx.check, failed.then_some(&mine.timeline));
    Ok(verdict)
}

/// The scenario `name` that the check of `ctx` plays.
pub(crate) fn named(ctx: &Ctx<'_>, name: &'static str) -> Result<crate::story::Story, GradeError> {
    scenario::named(name).ok_or(GradeError::NoSuchScenario {
        check: ctx.check,
        scenario: name,
    })
}

/// Holds a played run to the rules, then to the reference lock's run.
fn judge_scenario(
    ctx: &Ctx<'_>,
    scenario: &crate::story::Story,
    lock: Lock,
    mine: &run::Run,
) -> Result<Verdict, GradeError> {
    if let Some(halt) = &mine.halt {
        return Ok(match &halt.failure {
            Failure::NotStarted { message } => Verdict::NotStarted {
                function: halt.function,
                message: message.clone(),
            },
            failure => {
                let evidence = vec![mine.timeline.render(Some(halt.t))];
                Verdict::Fail(Box::new(Report::failed(
                    ctx.check,
                    lock.name,
                    halt.function,
                    failure.clone(),
                    evidence,
                )))
            }
        });
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
    static REFERENCE_RUNS: Mutex<BTreeMap<&'static str, Timeline>> = Mutex::new(BTreeMap::new());
    let expected = super::reference_play(&REFERENCE_RUNS, scenario.name, || {
        Ok(run::run(scenario, &REFERENCE)?.timeline)
    })?;
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
