//! A client of a scenario: its plan, its connection, where it is in its
//! job, and what it did this second, for the timeline.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::scenario::Plan;
use crate::timeline::{Action, ActionKind, State};
use crate::wire::Wire;

/// Where a client is in its job (the Redlock stories' clients go through the same steps).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Trying to take the lock.
    Acquire,
    /// Holding it: reading the counter.
    Read,
    Write {
        /// The second the job is done and the write due.
        at: u64,
    },
    /// Done writing: releasing the lock.
    Release,
    /// Finished.
    Done,
}

/// One client of the scenario, as the runner plays it.
pub(super) struct Client {
    /// What it does, and when it pauses or crashes.
    pub(super) plan: Plan,
    /// Its connection (`None` once it crashed or lost it).
    pub(super) wire: Option<Wire>,
    /// Where it is in its job.
    pub(super) step: Step,
    /// Whether it crashed.
    pub(super) crashed: bool,
    /// Whether it believes it holds the lock.
    pub(super) believes: bool,
    /// Its lock token, once drawn.
    pub(super) token: Option<String>,
    /// Its fencing token, once granted.
    pub(super) fence: Option<u64>,
    /// The counter value it read.
    pub(super) read: i64,
    /// What it did this second.
    pub(super) actions: Vec<Action>,
    /// The lease keeper's books: the second of the grant, the last renewal
    /// (since the grant), the flag it sets, and whether the job stopped.
    pub(super) granted_at: u64,
    pub(super) renewed_at: Duration,
    pub(super) lost: Arc<AtomicBool>,
    pub(super) stopped: bool,
}

impl Client {
    pub(super) fn name(&self) -> &'static str {
        self.plan.name
    }

    pub(super) fn act(&mut self, kind: ActionKind, text: impl Into<String>) {
        self.actions.push(Action::new(kind, text, false, false));
    }

    pub(super) fn act_unsafe(
        &mut self,
        kind: ActionKind,
        text: impl Into<String>,
        is_unsafe: bool,
        rejected: bool,
    ) {
        self.actions
            .push(Action::new(kind, text, is_unsafe, rejected));
    }

    pub(super) fn finished(&self) -> bool {
        self.crashed || self.step == Step::Done
    }

    pub(super) fn paused_at(&self, t: u64) -> bool {
        self.plan.paused_at(t)
    }

    pub(super) fn state(&self, t: u64) -> State {
        if self.crashed {
            State::Crashed
        } else {
            shown_state(&self.plan, self.step, t)
        }
    }
}

/// What second `t` shows of a client with `plan` at `step`, crashes aside.
pub(crate) fn shown_state(plan: &crate::scenario::Plan, step: Step, t: u64) -> State {
    if plan.shown_paused_at(t) {
        return State::Paused;
    }
    match step {
        Step::Done => State::Done,
        Step::Acquire => State::Waiting,
        _ => State::Working,
    }
}
