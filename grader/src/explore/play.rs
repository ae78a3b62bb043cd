//! Playing one history against Redis and holding every step to the model.
//!
//! Each client talks through a [`Wire`] of its own; the function under test
//! runs in the sandbox, so a panic or a loop fails the history, not the
//! grader. A client that steps in does so with the reference's functions on
//! the grader's connection, between two commands of the call. After each
//! step the grader reads the lock key, the counter and the row (values, and
//! expiries from the clock) and asks the model whether any way the step may
//! go leads there: with a client stepping in, its calls may count as coming
//! before the call under test or after it, and with a crash, the call may
//! have taken effect or not. When none does, the step diverged.

use std::sync::{Arc, Mutex};

use super::calls::{run_call, run_touch, step_in_action};
use super::history::{Actor, Call, History, Step, StepIn, client_name, show_touch};
use super::observe::{observe, set_up};
use crate::error::GradeError;
use crate::lock::Lock;
use crate::model::{self, Answer, Baseline, Diff, Divergence, Expected, Op, State};
use crate::sandbox::Failure;
use crate::verdict::Violation;
use crate::wire::{Intervention, Step as Sent, Wire};
use crate::world::{SharedWorld, World, enter};

/// How a history ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// Every step went as the model allows.
    Pass,
    /// Step `step` went differently, breaking this rule.
    Diverged {
        /// The step's index.
        step: usize,
        /// The function whose call diverged.
        function: &'static str,
        /// The rule, as the exercise's judge names it.
        violation: Violation,
    },
    /// The function under test failed to return, at step `step`.
    Failed {
        /// The step's index.
        step: usize,
        /// The function.
        function: &'static str,
        /// How.
        failure: Failure,
    },
    /// The function under test is still a stub.
    NotStarted {
        /// The function.
        function: &'static str,
        /// The stub's message.
        message: String,
    },
}

/// A call a client made while stepping in, with its answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Done {
    /// The call as text.
    pub text: String,
    /// The model's operation for it.
    pub op: Op,
    /// What it returned (`None` for a move of time).
    pub answer: Option<Answer>,
}

/// What one step looked like, for the transcript.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Virtual time when the step began, in ms.
    pub t_ms: u64,
    /// The call as text (`A's release(lock, "tok-A")`), or the wait.
    pub text: String,
    /// Whether the call ran the function under test.
    pub yours: bool,
    /// The commands the caller sent, with the grader's move between them.
    pub sent: Vec<Sent>,
    /// What the client stepping in did, with the model's answers in the
    /// order the model tried first.
    pub moves: Vec<(Done, Option<Expected>)>,
    /// What the call returned (`None`: it crashed, or it is a wait).
    pub answer: Option<Answer>,
    /// What the model allows it to return, in the order tried first.
    pub expected: Option<Expected>,
    /// How Redis differs from the model, when the step diverged.
    pub diffs: Vec<Diff>,
    /// The branch of the model the call under test took, when the step
    /// went as the model says.
    pub branch: Option<&'static str>,
}

/// A played history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Played {
    /// Step by step, up to the end.
    pub records: Vec<Record>,
    /// How it ended.
    pub end: End,
}

/// Plays `h` with `lock` (already the lock under test for the exercise).
pub fn play(h: &History, lock: &Lock) -> Result<Played, GradeError> {
    let world = World::open_named(&h.lock, &h.fence, &h.row)?.shared();
    let baseline = set_up(&mut enter(&world), h)?;
    let mut model = super::generate::initial(h);
    let mut wires: Vec<Option<Wire>> = Vec::new();
    for _ in &h.tokens {
        wires.push(Some(Wire::open(&world)?));
    }
    let mut records = Vec::new();
    for (i, step) in h.steps.iter().enumerate() {
        let t_ms = enter(&world).now_ms();
        let (record, end) = match step {
            Step::Wait(ms) => {
                let to_ms = t_ms + ms;
                let text = format!("the clock moves to t = {}", crate::verdict::seconds(to_ms));
                let act = |w: &mut World| w.advance_to(to_ms).map(drop);
                graders_step(
                    &world,
                    h,
                    &mut model,
                    &baseline,
                    i,
                    text,
                    Op::AdvanceTo(to_ms),
                    act,
                )?
            }
            Step::Touch(touch) => {
                let text = show_touch(touch);
                let act = |w: &mut World| run_touch(w, *touch);
                graders_step(
                    &world,
                    h,
                    &mut model,
                    &baseline,
                    i,
                    text,
                    Op::Touch(*touch),
                    act,
                )?
            }
            Step::Call {
                client,
                token,
                call,
                step_in,
            } => {
                let wire = match wires[*client].take() {
                    Some(wire) => wire,
                    None => Wire::open(&world)?,
                };
                let (record, end, wire) = call_step(
                    &world,
                    h,
                    lock,
                    &mut model,
                    &baseline,
                    i,
                    (*client, token, *call),
                    step_in,
                    wire,
                )?;
                wires[*client] = wire;
                (record, end)
            }
        };
        records.push(Record { t_ms, ..record });
        if let Some(end) = end {
            return Ok(Played { records, end });
        }
    }
    Ok(Played {
        records,
        end: End::Pass,
    })
}

/// A step of the grader's own (time moving on, or something done to the
/// lock key): `act` does it, then Redis is held to the model after `op`.
#[allow(clippy::too_many_arguments)]
fn graders_step(
    world: &SharedWorld,
    h: &History,
    model: &mut State,
    baseline: &Baseline,
    i: usize,
    text: String,
    op: Op,
    act: impl FnOnce(&mut World) -> Result<(), GradeError>,
) -> Result<(Record, Option<End>), GradeError> {
    let observed = {
        let mut w = enter(world);
        act(&mut w)?;
        observe(&mut w)?
    };
    let before = model.clone();
    if let Some(branch) = model::apply(&before, &op, None).into_iter().next() {
        *model = branch.state;
    }
    let diffs = model::compare(&before, model, &observed, baseline, op.sets_a_ttl());
    let now_ms = model.now_ms;
    let end = (!diffs.is_empty()).then(|| {
        let calls = [text.clone()];
        let function = h.exercise_function();
        let d = Divergence {
            now_ms,
            caller: "nobody",
            token: None,
            fencing_token: None,
            function,
            calls: &calls,
            answers: &[None],
            ops: std::slice::from_ref(&op),
            under_test: 0,
            before: &before,
            after: model,
            crashed: false,
            sent: 0,
            diffs: &diffs,
        };
        End::Diverged {
            step: i,
            function,
            violation: super::judge(h.exercise, &d),
        }
    });
    let record = Record {
        t_ms: 0,
        text,
        yours: false,
        sent: vec![],
        moves: vec![],
        answer: None,
        expected: None,
        diffs,
        branch: None,
    };
    Ok((record, end))
}

#[allow(clippy::too_many_arguments)]
fn call_step(
    world: &SharedWorld,
    h: &History,
    lock: &Lock,
    model: &mut State,
    baseline: &Baseline,
    i: usize,
    (client, token, call): (usize, &str, Call),
    step_in: &Option<StepIn>,
    mut wire: Wire,
) -> Result<(Record, Option<End>, Option<Wire>), GradeError> {
    let log = Arc::new(Mutex::new(Vec::new()));
    if let Some(si) = step_in {
        let action = step_in_action(h, client, &si.actor, Arc::clone(&log));
        wire.intervene(Intervention::before(si.before, action));
    }
    let (keys, now_ms) = {
        let w = enter(world);
        (w.keys.clone(), w.now_ms())
    };
    let tick = (now_ms, model.keeper);
    let (back, outcome) = run_call(lock, &keys, token, call, tick, wire);
    let sent = back
        .as_ref()
        .map(|w| w.steps().to_vec())
        .unwrap_or_default();
    let crashed = back.as_ref().is_some_and(Wire::crashed);
    // A fault the grader armed, if it hit a command of the call.
    let hit = back.as_ref().and_then(Wire::fault_hit).cloned();
    // A cut connection is a closed one: the next call opens a fresh one, with
    // no WATCH or other state of the cut one left over.
    let cut = hit.as_ref().is_some_and(|h| h.fault.cuts());
    let wire = if crashed || cut { None } else { back };
    let function = call.function();
    let text = call.show_tick(h, (client, token), now_ms, model.keeper);
    let yours = h.exercise.tests(&call);
    let mut record = Record {
        t_ms: 0,
        text: text.clone(),
        yours,
        sent,
        moves: vec![],
        answer: None,
        expected: None,
        diffs: vec![],
        branch: None,
    };
    let answer = match outcome {
        Ok(answer) => Some(answer),
        Err(Failure::Error { .. }) if crashed => None,
        // After a fault, an error is what the call must return.
        Err(Failure::Error { .. }) if hit.is_some() => Some(Answer::Error),
        Err(Failure::NotStarted { message }) => {
            return Ok((record, Some(End::NotStarted { function, message }), wire));
        }
        Err(failure) => {
            return Ok((
                record,
                Some(End::Failed {
                    step: i,
                    function,
                    failure,
                }),
                wire,
            ));
        }
    };
    record.answer = answer.clone();
    let done = log.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let observed = observe(&mut enter(world))?;
    let op = call.op(token, now_ms);
    let op = match hit {
        Some(hit) => Op::Failed {
            op: Box::new(op),
            hit,
        },
        None => op,
    };
    let own = (text, op, answer);
    let sent_count = record
        .sent
        .iter()
        .filter(|s| matches!(s, Sent::Sent { .. }))
        .count();
    // A client that stepped in after the call's last command came after all
    // of the call's effects.
    let after_last = step_in
        .as_ref()
        .is_some_and(|si| sent_count > 0 && si.before >= sent_count);
    let orders = orders(own, &done, step_in, after_last);
    let before = model.clone();
    // When no way fits, the report compares with the way in which the other
    // client's answers fit best (what it saw is what happened at that
    // moment), among those one where the call's own answer fits, if any (so
    // that the rule a report names is the one the call broke whatever the
    // order, not an answer that only another order makes wrong), among those
    // one where the lock key holds what Redis holds, and among those the
    // first order tried.
    let mut first: Option<((usize, bool, bool), usize, Tried)> = None;
    for (o, (order, under_test)) in orders.iter().enumerate() {
        for tried in super::linearize::tried(&before, order, *under_test, &observed, baseline) {
            if tried.diffs.is_empty() {
                record.expected = tried.expected.get(tried.under_test).cloned().flatten();
                record.branch = tried.branches.get(tried.under_test).copied();
                record.moves = moves_with_expectations(&done, &tried, order);
                *model = tried.state;
                return Ok((record, None, wire));
            }
            let theirs = tried
                .diffs
                .iter()
                .filter(|d| matches!(d, Diff::Answer { op, .. } if *op != tried.under_test))
                .count();
            // An order without the call (a crash that took no effect) has
            // no answer of its own to fit.
            let own_fits = tried.under_test < order.len()
                && !tried
                    .diffs
                    .iter()
                    .any(|d| matches!(d, Diff::Answer { op, .. } if *op == tried.under_test));
            // The lock key's holder tells which way the call went (a faulted
            // call that ran or not); what is left to blame is then its TTL.
            let value_differs = tried
                .diffs
                .iter()
                .any(|d| matches!(d, Diff::LockValue { .. }));
            let fit = (theirs, !own_fits, value_differs);
            if first.as_ref().is_none_or(|(best, _, _)| fit < *best) {
                first = Some((fit, o, tried));
            }
        }
    }
    let Some((_, o, tried)) = first else {
        return Ok((record, None, wire));
    };
    let order = &orders[o].0;
    record.expected = tried.expected.get(tried.under_test).cloned().flatten();
    record.moves = moves_with_expectations(&done, &tried, order);
    record.diffs = tried.diffs.clone();
    let calls: Vec<String> = order.iter().map(|c| c.0.clone()).collect();
    let answers: Vec<Option<Answer>> = order.iter().map(|c| c.2.clone()).collect();
    let ops: Vec<Op> = order.iter().map(|c| c.1.clone()).collect();
    let d = Divergence {
        now_ms: enter(world).now_ms(),
        caller: client_name(client),
        token: Some(token),
        fencing_token: call.fencing_token(),
        function,
        calls: &calls,
        answers: &answers,
        ops: &ops,
        under_test: tried.under_test,
        before: &before,
        after: &tried.state,
        crashed,
        sent: record
            .sent
            .iter()
            .filter(|s| matches!(s, Sent::Sent { .. }))
            .count(),
        diffs: &tried.diffs,
    };
    let violation = super::judge(h.exercise, &d);
    Ok((
        record,
        Some(End::Diverged {
            step: i,
            function,
            violation,
        }),
        wire,
    ))
}

use super::linearize::{Linear, Tried};

/// The orders in which the model tries the step's calls, with the place of
/// the call under test; first the one a report compares with when none
/// fits: the client stepping in before the call, or the crashed call having
/// taken effect. `after_last`: the client stepped in after the call's last
/// command, so the call came first.
fn orders(
    own: Linear,
    done: &[Done],
    step_in: &Option<StepIn>,
    after_last: bool,
) -> Vec<(Vec<Linear>, usize)> {
    let theirs: Vec<Linear> = done
        .iter()
        .map(|d| (d.text.clone(), d.op.clone(), d.answer.clone()))
        .collect();
    match step_in.as_ref().map(|s| &s.actor) {
        Some(Actor::Crash) => vec![(vec![own], 0), (vec![], 0)],
        Some(Actor::Client { .. }) if !theirs.is_empty() => {
            // The call may take effect at any point of its own: before the
            // other client's moves, after them, or between two of them (say,
            // after the lock expired but before someone took it).
            let n = theirs.len();
            let mut positions = vec![n, 0];
            positions.extend(1..n);
            if after_last {
                positions = vec![0];
            }
            positions
                .into_iter()
                .map(|at| {
                    let mut order = theirs[..at].to_vec();
                    order.push(own.clone());
                    order.extend_from_slice(&theirs[at..]);
                    (order, at)
                })
                .collect()
        }
        _ => vec![(vec![own], 0)],
    }
}

/// The moves of the client stepping in, each with what the model expected
/// of it in the order tried.
fn moves_with_expectations(
    done: &[Done],
    tried: &Tried,
    order: &[Linear],
) -> Vec<(Done, Option<Expected>)> {
    done.iter()
        .map(|d| {
            let at = order.iter().position(|l| l.0 == d.text && l.1 == d.op);
            let expected = at.and_then(|k| tried.expected.get(k).cloned().flatten());
            (d.clone(), expected)
        })
        .collect()
}

impl History {
    /// The function a divergence outside any call is blamed on.
    pub fn exercise_function(&self) -> &'static str {
        self.exercise.row().functions[0]
    }
}
