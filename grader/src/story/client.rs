//! One client of a story, as an engine plays it: its plan and its faults, its connection, where
//! it is in its job, what it believes, and what it did this second, for the timeline.
//!
//! A client's faults ([`Fault::Freeze`], [`Fault::Crash`]) take effect here: a frozen client takes
//! no step, shows as paused, and sees none of its pause pass, so a client that reckons its lock's
//! validity (Redlock's) wakes up believing, as a process after a long garbage collection does; a
//! crashed one acts no more. A client believes it holds the lock from its grant until it releases,
//! the storage refuses it, its keeper finds the lease lost, or the validity it was granted has run
//! out by its own reckoning.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::{Fault, Plan};
use crate::timeline::{Action, ActionKind, State};
use crate::wire::Wire;

/// Where a client is in its job.
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

/// One client of a story.
pub(crate) struct Client {
    /// What it does.
    pub(crate) plan: Plan,
    /// `(from, until)`: frozen after its step at `from`, acting again at `until`.
    pause: Option<(u64, u64)>,
    /// The second it crashes.
    crash_at: Option<u64>,
    /// Its connection, on a story's one server or pair (`None` once it crashed or lost it).
    pub(crate) wire: Option<Wire>,
    /// Where it is in its job.
    pub(crate) step: Step,
    /// Whether it crashed.
    pub(crate) crashed: bool,
    /// Whether it believes it holds the lock.
    pub(crate) believes: bool,
    /// Its lock token, once drawn.
    pub(crate) token: Option<String>,
    /// Its fencing token, once granted.
    pub(crate) fence: Option<u64>,
    /// The counter value it read.
    pub(crate) read: i64,
    /// The second of its grant, for its keeper.
    pub(crate) granted_at: u64,
    /// When it was granted the lock (virtual ms), and for how long it was told the lock is
    /// valid, for a client that reckons it (Redlock's).
    pub(crate) valid: Option<(u64, u64)>,
    /// The lease keeper's books: the last renewal (since the grant), the flag it sets, and
    /// whether the job stopped.
    pub(crate) renewed_at: Duration,
    pub(crate) lost: Arc<AtomicBool>,
    pub(crate) stopped: bool,
    /// What it did this second.
    pub(crate) actions: Vec<Action>,
}

impl Client {
    /// A client that has not started its job, with the faults `faults` do to it.
    pub(crate) fn new(plan: Plan, faults: &[(u64, Fault)]) -> Client {
        let mut pause = None;
        let mut crash_at = None;
        for &(t, fault) in faults {
            match fault {
                Fault::Freeze { client, until } if client == plan.name => {
                    pause = pause.or(Some((t, until)));
                }
                Fault::Crash(client) if client == plan.name => crash_at = crash_at.or(Some(t)),
                _ => {}
            }
        }
        Client {
            plan,
            pause,
            crash_at,
            wire: None,
            step: Step::Acquire,
            crashed: false,
            believes: false,
            token: None,
            fence: None,
            read: 0,
            granted_at: 0,
            valid: None,
            renewed_at: Duration::ZERO,
            lost: Arc::new(AtomicBool::new(false)),
            stopped: false,
            actions: Vec::new(),
        }
    }

    /// Its name, `"A"`.
    pub(crate) fn name(&self) -> &'static str {
        self.plan.name
    }

    /// Records what it did this second.
    pub(crate) fn act(&mut self, kind: ActionKind, text: impl Into<String>) {
        self.act_unsafe(kind, text, false, false);
    }

    /// Records what it did this second, done on a lock it no longer held (`is_unsafe`) or
    /// refused by the storage (`rejected`).
    pub(crate) fn act_unsafe(
        &mut self,
        kind: ActionKind,
        text: impl Into<String>,
        is_unsafe: bool,
        rejected: bool,
    ) {
        self.actions
            .push(Action::new(kind, text, is_unsafe, rejected));
    }

    /// Whether its job is over: done, or crashed.
    pub(crate) fn finished(&self) -> bool {
        self.crashed || self.step == Step::Done
    }

    /// Whether it is frozen at second `t`, between its step at `from` and the one at `until`.
    pub(crate) fn paused_at(&self, t: u64) -> bool {
        self.pause
            .is_some_and(|(from, until)| t > from && t < until)
    }

    /// Whether it freezes after its step at second `t`.
    pub(crate) fn freezes_at(&self, t: u64) -> bool {
        self.pause.is_some_and(|(from, _)| from == t)
    }

    /// Whether it wakes up at second `t`.
    pub(crate) fn wakes_at(&self, t: u64) -> bool {
        self.pause.is_some_and(|(_, until)| until == t)
    }

    /// Whether it crashes at second `t`, in place of its step.
    pub(crate) fn crashes_at(&self, t: u64) -> bool {
        self.crash_at == Some(t)
    }

    /// Crashes: it believes nothing any more and its connection is gone.
    pub(crate) fn crash(&mut self) {
        self.crashed = true;
        self.believes = false;
        self.wire = None;
        self.act(ActionKind::Crashed, "crashed");
    }

    /// What second `t` shows of it.
    pub(crate) fn state(&self, t: u64) -> State {
        if self.crashed {
            return State::Crashed;
        }
        if self.paused_at(t) || self.freezes_at(t) {
            return State::Paused;
        }
        match self.step {
            Step::Done => State::Done,
            Step::Acquire => State::Waiting,
            _ => State::Working,
        }
    }

    /// The virtual time it saw pass since `since_ms`, at `now_ms`: a frozen client sees none of
    /// its pause.
    fn seen_ms(&self, since_ms: u64, now_ms: u64) -> u64 {
        let unseen = self.pause.map_or(0, |(from, until)| {
            let (a, b) = (from * 1000, until * 1000);
            now_ms.min(b).saturating_sub(since_ms.max(a))
        });
        now_ms.saturating_sub(since_ms).saturating_sub(unseen)
    }

    /// Stops believing once the validity it was granted has run out by its own reckoning.
    pub(crate) fn reckon(&mut self, now_ms: u64) {
        if let Some((at, validity)) = self.valid
            && self.believes
            && self.seen_ms(at, now_ms) >= validity
        {
            self.believes = false;
        }
    }
}
