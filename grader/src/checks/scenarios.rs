//! The checks that play one of the course's stories ([`crate::scenario`]) and hold the run to
//! what the story's policy says ([`Story::held_to`]): the rules, then a correct lock's run, second
//! by second; or, for Redlock's stories, a correct Redlock's whole run
//! ([`super::redlock_stories`]).
//!
//! The engine ([`crate::run`]) judges every call it makes with the same
//! judges as the direct checks ([`crate::judge`]); this module turns its
//! first broken rule, or the first second where it parts from the
//! reference lock's run, into a verdict.

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::Ctx;
use crate::error::GradeError;
use crate::lock::Lock;
use crate::reference::LOCK as REFERENCE;
use crate::report::{Report, Verdict};
use crate::run::{self, Halt, Run};
use crate::sandbox::Failure;
use crate::scenario;
use crate::story::{HeldTo, Story};
use crate::timeline::{Action, ActionKind, Second};
use crate::verdict::{Property, Violation};

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
    let (ours, theirs) = (
        mine.timeline.with_tokens_renumbered(),
        expected.with_tokens_renumbered(),
    );
    if let Some(t) = first_second_apart(&ours.seconds, &theirs.seconds) {
        let parting = ours
            .seconds
            .iter()
            .zip(&theirs.seconds)
            .find(|(a, _)| a.t == t)
            .and_then(|(a, b)| first_call_apart(a, b, ours.fencing));
        let what = match parting {
            Some(call) => {
                format!("from t = {t} s on, your run differs from a correct lock's run: {call}")
            }
            None => format!("from t = {t} s on, your run differs from a correct lock's run"),
        };
        let evidence = vec![
            format!("Your run:\n{}", mine.timeline.render(Some(t))),
            format!("A correct lock's run:\n{}", expected.render(Some(t))),
        ];
        let v = Violation::at(Property::SameAsReference, t * 1000, what);
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

/// The first second where two runs' `ours` and `theirs` differ, or where the shorter one ends.
pub(crate) fn first_second_apart(ours: &[Second], theirs: &[Second]) -> Option<u64> {
    ours.iter()
        .zip(theirs)
        .find(|(a, b)| a != b)
        .map(|(a, _)| a.t)
        .or_else(|| (ours.len() != theirs.len()).then(|| ours.len().min(theirs.len()) as u64))
}

/// The first call of the learner's code that went otherwise in the second `ours` than in a
/// correct lock's `theirs`, client by client in order: "first in C's acquire: yours "denied", a
/// correct lock's "acquired"". What the story does itself (a pause, a crash, a plain read) is
/// passed over; `None` when only what follows from a call differs (a belief, the counter).
fn first_call_apart(ours: &Second, theirs: &Second, fencing: bool) -> Option<String> {
    let said = |a: Option<&Action>| a.map_or("nothing".to_owned(), |a| format!("\"{}\"", a.text));
    for (client, mine) in &ours.clients {
        let Some(right) = theirs.clients.get(client) else {
            continue;
        };
        for i in 0..mine.actions.len().max(right.actions.len()) {
            let (a, b) = (mine.actions.get(i), right.actions.get(i));
            let same = a.map(|a| (a.kind, &a.text)) == b.map(|b| (b.kind, &b.text));
            let function = a.or(b).and_then(|x| function_of(x.kind, fencing));
            if let (false, Some(function)) = (same, function) {
                return Some(format!(
                    "first in {client}'s {function}: yours {}, a correct lock's {}",
                    said(a),
                    said(b)
                ));
            }
        }
    }
    None
}

/// The function of the learner's lock whose call an action records, if one did.
fn function_of(kind: ActionKind, fencing: bool) -> Option<&'static str> {
    Some(match kind {
        ActionKind::Acquired | ActionKind::Denied if fencing => "acquire_fenced",
        ActionKind::Acquired | ActionKind::Denied => "acquire",
        ActionKind::Released | ActionKind::ReleaseRefused | ActionKind::DeletedOther => "release",
        ActionKind::Renewed | ActionKind::LeaseLost => "keep_alive",
        ActionKind::Read | ActionKind::ReadRejected if fencing => "fenced_read",
        ActionKind::Wrote | ActionKind::WriteRejected if fencing => "fenced_write",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::{ClientSecond, State};

    /// A second in which each of `clients` did `actions`.
    fn second(clients: &[(&str, Vec<Action>)]) -> Second {
        Second {
            t: 4,
            clients: clients
                .iter()
                .map(|(name, actions)| {
                    let client = ClientSecond {
                        state: State::Waiting,
                        believes: false,
                        token: None,
                        actions: actions.clone(),
                    };
                    (name.to_string(), client)
                })
                .collect(),
            holder: None,
            ttl_left_s: None,
            counter: 0,
            highest_token: None,
            notes: Vec::new(),
            nodes: Default::default(),
        }
    }

    fn action(kind: ActionKind, text: &str) -> Action {
        Action::new(kind, text, false, false)
    }

    #[test]
    fn the_first_call_apart_is_named_with_both_answers() {
        let read = action(ActionKind::Read, "read 0");
        let ours = second(&[
            ("A", vec![read.clone()]),
            ("C", vec![action(ActionKind::Denied, "denied")]),
        ]);
        let theirs = second(&[
            ("A", vec![read]),
            ("C", vec![action(ActionKind::Acquired, "acquired")]),
        ]);
        assert_eq!(
            first_call_apart(&ours, &theirs, false).as_deref(),
            Some("first in C's acquire: yours \"denied\", a correct lock's \"acquired\"")
        );
        assert_eq!(
            first_call_apart(&ours, &theirs, true).as_deref(),
            Some("first in C's acquire_fenced: yours \"denied\", a correct lock's \"acquired\"")
        );
    }

    #[test]
    fn what_the_story_does_itself_is_passed_over() {
        let ours = second(&[(
            "A",
            vec![
                action(ActionKind::Paused, "paused"),
                action(ActionKind::Read, "read 1"),
            ],
        )]);
        let theirs = second(&[("A", vec![action(ActionKind::Read, "read 0")])]);
        assert_eq!(first_call_apart(&ours, &theirs, false), None);
        // A call that did not happen in one run is named too.
        let released = second(&[("A", vec![action(ActionKind::Released, "released")])]);
        assert_eq!(
            first_call_apart(&released, &second(&[("A", vec![])]), false).as_deref(),
            Some("first in A's release: yours \"released\", a correct lock's nothing")
        );
    }
}
