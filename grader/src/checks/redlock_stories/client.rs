//! One client of a Redlock story: where it is in its job, and what it believes.
//!
//! A client believes it holds the lock from its grant until the validity Redlock returned has run
//! out by its own reckoning, or until it releases. Its reckoning is the time it saw pass: a frozen
//! client sees none of its pause, so it wakes up believing, as a process after a long garbage
//! collection does. The storage refusing its write is the one thing that tells it otherwise.

pub(super) use crate::run::Step;
use crate::scenario::Plan;
use crate::timeline::{Action, ActionKind};

/// One client of a story, and what it knows.
pub(super) struct Client {
    pub(super) plan: Plan,
    pub(super) token: &'static str,
    pub(super) step: Step,
    pub(super) believes: bool,
    /// Its fencing token, in the fenced story, from its grant on.
    pub(super) fence: Option<u64>,
    pub(super) read: i64,
    /// When it was granted the lock (virtual ms), and for how long Redlock said it is valid.
    pub(super) granted: Option<(u64, u64)>,
    pub(super) actions: Vec<Action>,
}

impl Client {
    /// A client that has not started its job, with `token` for Redlock.
    pub(super) fn new(plan: Plan, token: &'static str) -> Client {
        Client {
            plan,
            token,
            step: Step::Acquire,
            believes: false,
            fence: None,
            read: 0,
            granted: None,
            actions: Vec::new(),
        }
    }

    pub(super) fn name(&self) -> &'static str {
        self.plan.name
    }

    pub(super) fn act(
        &mut self,
        kind: ActionKind,
        text: impl Into<String>,
        is_unsafe: bool,
        rejected: bool,
    ) {
        self.actions
            .push(Action::new(kind, text, is_unsafe, rejected));
    }

    /// Frozen between the step at `from` and the one at `until`.
    pub(super) fn paused_at(&self, t: u64) -> bool {
        self.plan.paused_at(t)
    }

    /// The virtual time the client saw pass since `since_ms`, at `now_ms`: a frozen client sees
    /// none of its pause.
    fn seen_ms(&self, since_ms: u64, now_ms: u64) -> u64 {
        let unseen = self.plan.pause.map_or(0, |(from, until)| {
            let (a, b) = (from * 1000, until * 1000);
            now_ms.min(b).saturating_sub(since_ms.max(a))
        });
        now_ms.saturating_sub(since_ms).saturating_sub(unseen)
    }

    /// Stops believing once the validity has run out by the client's own reckoning.
    pub(super) fn reckon(&mut self, now_ms: u64) {
        if let Some((at, validity)) = self.granted
            && self.believes
            && self.seen_ms(at, now_ms) >= validity
        {
            self.believes = false;
        }
    }
}
