//! Stepping in between two commands, at every possible place.
//!
//! A lock that does in two commands what must happen in one (GET then DEL,
//! SET NX then EXPIRE, SET NX then a separate INCR, a storage that checks in
//! Rust and writes afterwards) works almost always. It fails only when
//! something happens in the gap: the lock expires and another client takes it,
//! or the caller crashes. Waiting for that to happen by luck makes a flaky
//! test; a probe makes it happen on purpose, at every gap in turn.
//!
//! A probe first runs the call once untouched to count its commands `n`, then
//! runs it `n + 1` more times in fresh worlds, stepping in before command 0,
//! 1, …, n (n: after the last command, before the call returns). After each
//! run a judge looks at what the call returned and what Redis holds. The first
//! broken rule fails the check, with the call's trace showing where the
//! grader stepped in.
//!
//! A probe may make commands fail instead ([`StepIn::Faults`]): then each
//! command 0, 1, …, n − 1 in turn meets each [`Fault`] (an error reply, a
//! dropped connection, a lost or late reply), and the judge sees what the call
//! returned after it.

use crate::error::GradeError;
use crate::report::{Report, Verdict, trace};
use crate::sandbox::{self, Failure};
use crate::verdict::Violation;
use crate::wire::{Action, Fault, Fired, Hit, Intervention, Step, Wire};
use crate::world::{World, enter};

/// A call of the lock, ready to run on the caller's wire.
pub type Call<T> = Box<dyn FnOnce(&mut Wire) -> redis::RedisResult<T> + Send>;

/// Makes the call for a world (the call needs the world's key names).
pub type MakeCall<T> = Box<dyn Fn(&World) -> Call<T> + Send + Sync>;

/// One run of the call under probe, for the judge.
pub struct Attempt<'a, T> {
    /// What the call returned (`None`: the caller crashed, see [`Attempt::crashed`], or it
    /// returned an error after a fault, see [`Attempt::fault`]).
    pub value: Option<&'a T>,
    /// Whether the intervention made the caller crash.
    pub crashed: bool,
    /// What the fault the grader armed hit, if it hit a command.
    pub fault: Option<&'a Hit>,
    /// The world after the call, to look at.
    pub world: &'a mut World,
}

/// A call of the lock to probe, and how to judge each run.
pub struct Probe<T> {
    /// The check's name, for the report.
    pub check: &'static str,
    /// The lock's name, for the report.
    pub lock: &'static str,
    /// The function under probe, e.g. `release`.
    pub function: &'static str,
    /// Prepares a fresh world (e.g. A holds the lock).
    pub setup: fn(&mut World) -> Result<(), GradeError>,
    /// Makes the call, on the caller's wire, in a world with these keys.
    pub call: MakeCall<T>,
    /// What the grader does in the gap.
    pub step_in: StepIn,
    /// Looks at one run; `Some` is a broken rule.
    pub judge: fn(Attempt<'_, T>) -> Result<Option<Violation>, GradeError>,
}

/// What a probe does at each command boundary.
#[derive(Clone, Copy)]
pub enum StepIn {
    /// Runs this action (built fresh for each run) before command 0, 1, …, n.
    Act(fn() -> Action),
    /// Makes command 0, 1, …, n − 1 meet each [`Fault`] in turn.
    Faults,
}

impl<T: Send + 'static> Probe<T> {
    /// Runs the probe at every command boundary.
    pub fn run(&self) -> Result<Verdict, GradeError> {
        let (n, _) = match self.attempt(None)? {
            Ok(done) => done,
            Err(verdict) => return Ok(verdict),
        };
        let moves: Vec<(usize, Action)> = match self.step_in {
            StepIn::Act(action) => (0..=n).map(|k| (k, action())).collect(),
            StepIn::Faults => Fault::ALL
                .into_iter()
                .flat_map(|fault| (0..n).map(move |k| (k, fails(fault))))
                .collect(),
        };
        for step_in in moves {
            match self.attempt(Some(step_in))? {
                Ok((_, None)) => {}
                Ok((_, Some(report))) => return Ok(Verdict::Fail(Box::new(report))),
                Err(verdict) => return Ok(verdict),
            }
        }
        Ok(Verdict::Pass)
    }

    /// One run, with `action` before command `k` (or no step in at all).
    /// Returns the number of commands sent and a report if a rule broke; or
    /// the verdict if the lock's code failed.
    fn attempt(
        &self,
        step_in: Option<(usize, Action)>,
    ) -> Result<Result<(usize, Option<Report>), Verdict>, GradeError> {
        let world = World::open()?.shared();
        (self.setup)(&mut enter(&world))?;
        let mut wire = Wire::open(&world)?;
        if let Some((k, action)) = step_in {
            wire.intervene(Intervention::before(k, action));
        }
        let call = (self.call)(&enter(&world));
        let (wire, outcome) = sandbox::call(wire, call);
        let steps: Vec<Step> = wire
            .as_ref()
            .map(|w| w.steps().to_vec())
            .unwrap_or_default();
        let crashed = wire.as_ref().is_some_and(Wire::crashed);
        let fault = wire.as_ref().and_then(Wire::fault_hit).cloned();
        let sent = steps
            .iter()
            .filter(|s| matches!(s, Step::Sent { .. }))
            .count();
        let value = match outcome {
            Ok(v) => Some(v),
            // The crash the grader caused shows up as a connection error; after
            // a fault, an error is what the call must return.
            Err(Failure::Error { .. }) if crashed || fault.is_some() => None,
            Err(failure) => {
                let evidence = if steps.is_empty() {
                    vec![]
                } else {
                    vec![trace("A", self.function, &steps)]
                };
                return Ok(Err(match failure {
                    Failure::NotStarted { message } => Verdict::NotStarted {
                        function: self.function,
                        message,
                    },
                    failure => Verdict::Fail(Box::new(Report::failed(
                        self.check,
                        self.lock,
                        self.function,
                        failure,
                        evidence,
                    ))),
                }));
            }
        };
        let mut guard = enter(&world);
        let violation = (self.judge)(Attempt {
            value: value.as_ref(),
            crashed,
            fault: fault.as_ref(),
            world: &mut guard,
        })?;
        Ok(Ok((
            sent,
            violation.map(|v| {
                Report::broken(
                    self.check,
                    self.lock,
                    v,
                    vec![trace("A", self.function, &steps)],
                )
            }),
        )))
    }
}

/// The action that makes the next command meet `fault`.
fn fails(fault: Fault) -> Action {
    Box::new(move |_| Ok(Fired::Fault(fault)))
}
