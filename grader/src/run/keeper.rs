//! A client's lease keeper during a story on one server or a pair (Redlock's nodes play none).
//!
//! A client whose plan has a keeper ticks it once a second while it works,
//! just before its step, with the seconds since its grant: the keeper
//! decides whether to renew, and sets `lost` when a renewal fails. A job
//! told it lost its lease stops there: it neither writes nor releases. A
//! frozen client ticks nothing, keeper included, which is the point of the
//! scenario.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::Runner;
use crate::story::client::Step;
use crate::story::engine::Stop;
use crate::timeline::ActionKind;

impl Runner {
    /// Client `i`'s keeper tick at this second, if it has a keeper and works.
    pub(super) fn keep(&mut self, i: usize) -> Result<(), Stop> {
        let c = &self.stage.clients[i];
        let working = matches!(c.step, Step::Read | Step::Write { .. } | Step::Release);
        if !c.plan.keeper || !working || c.lost.load(Ordering::SeqCst) {
            return Ok(());
        }
        let now = Duration::from_secs(self.stage.t.saturating_sub(c.granted_at));
        let (mut renewed_at, lost) = (c.renewed_at, Arc::clone(&c.lost));
        let (keys, token, ttl, lock) = self.acquire_args(i);
        let renewed_at = self.call(i, "keep_alive", move |w| {
            // The scenario plays the whole lock: its keeper renews with its own extend.
            let renew = lock.extend;
            (lock.keep_alive)(
                w,
                renew,
                &keys.lock,
                &token,
                ttl,
                now,
                &mut renewed_at,
                &lost,
            )?;
            Ok(renewed_at)
        })?;
        let holds = self.holds(i)?;
        let c = &mut self.stage.clients[i];
        let renewed = renewed_at != c.renewed_at;
        c.renewed_at = renewed_at;
        if c.lost.load(Ordering::SeqCst) {
            c.believes = false;
            c.stopped = true;
            c.step = Step::Done;
            let text = "renewal failed: job stopped";
            self.act(i, ActionKind::LeaseLost, text, false, false)?;
        } else if renewed {
            // A keeper that ignores its renewal's answer moves its clock all the same: say
            // what is true of the key, not what the keeper believes.
            let text = if holds {
                format!("renewed for {} s", ttl.as_secs())
            } else {
                "not renewed: the key is not its own".to_owned()
            };
            self.act(i, ActionKind::Renewed, text, !holds, false)?;
        }
        Ok(())
    }
}
