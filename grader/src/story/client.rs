//! One client of a story, as the engine plays it: its plan and its faults, its connection, where
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
    /// Its connection to the lock's server, or on Redlock's nodes to the storage (`None` once it
    /// crashed or lost it).
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

    /// Records what it did this second, done on a lock it no longer held (`is_unsafe`) or
    /// refused by the storage (`rejected`).
    pub(crate) fn act(
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

#[cfg(test)]
mod tests {
    use super::*;

    fn a(faults: &[(u64, Fault)]) -> Client {
        Client::new(Plan::job("A"), faults)
    }

    #[test]
    fn a_frozen_client_acts_after_its_step_at_from_and_again_at_until() {
        let c = a(&[
            (
                1,
                Fault::Freeze {
                    client: "A",
                    until: 4,
                },
            ),
            // Another client's fault is not A's.
            (0, Fault::Crash("B")),
        ]);
        let paused: Vec<u64> = (0..6).filter(|&t| c.paused_at(t)).collect();
        assert_eq!(paused, [2, 3]);
        assert!(c.freezes_at(1) && !c.freezes_at(2));
        assert!(c.wakes_at(4) && !c.wakes_at(3));
        let shown: Vec<u64> = (0..6).filter(|&t| c.state(t) == State::Paused).collect();
        assert_eq!(shown, [1, 2, 3]);
        assert!(!(0..6).any(|t| c.crashes_at(t)));
    }

    #[test]
    fn a_crashed_client_is_finished_and_believes_nothing() {
        let mut c = a(&[(2, Fault::Crash("A"))]);
        assert!(c.crashes_at(2) && !c.crashes_at(1));
        c.believes = true;
        c.crash();
        assert!(c.finished() && !c.believes);
        assert_eq!(c.state(3), State::Crashed);
    }

    #[test]
    fn a_frozen_client_sees_none_of_its_pause_when_it_reckons_a_validity() {
        let freeze = Fault::Freeze {
            client: "A",
            until: 15,
        };
        let mut c = a(&[(1, freeze)]);
        c.believes = true;
        // Granted at 0.1 s for 9.9 s: by its own reckoning, at 15.5 s only 1.4 s have passed.
        c.valid = Some((100, 9_900));
        c.reckon(15_500);
        assert!(c.believes);
        // 0.9 s before the pause and 9 s after it: the validity is spent.
        c.reckon(24_000);
        assert!(!c.believes);
        let mut awake = a(&[]);
        awake.believes = true;
        awake.valid = Some((100, 9_900));
        awake.reckon(9_999);
        assert!(awake.believes);
        awake.reckon(10_000);
        assert!(!awake.believes);
    }
}
