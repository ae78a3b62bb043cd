//! Releasing the lock on one server or a pair's primary, judged by [`crate::judge::release`].

use super::Runner;
use crate::judge::Call;
use crate::judge::release::{Held, releasing};
use crate::story::client::Step;
use crate::story::engine::Stop;
use crate::timeline::ActionKind;
use crate::world::enter;

impl Runner {
    /// Client `i` releases the lock key, whoever holds it now.
    pub(super) fn release_key(&mut self, i: usize) -> Result<(), Stop> {
        let before_value = enter(&self.world).lock_value()?;
        let before = self.holder_of(before_value.as_deref());
        let (keys, token, _, lock) = self.acquire_args(i);
        let deleted = self.call(i, "release", move |w| (lock.release)(w, &keys.lock, &token))?;
        let after = enter(&self.world).lock_value()?;
        let name = self.stage.clients[i].name();
        let held = match (before_value.as_deref(), before) {
            (None, _) => Held::Nobody,
            (Some(_), Some(h)) if h == i => Held::ByCaller,
            (Some(_), Some(h)) => Held::By(self.stage.clients[h].name()),
            (Some(_), None) => Held::By("another client"),
        };
        let call = Call::at(name, "release", self.ms());
        self.violations.extend(releasing(
            &call,
            held,
            before_value.as_deref(),
            after.as_deref(),
            deleted,
        ));
        let (kind, text, is_unsafe) = match held {
            Held::ByCaller if after.is_some() => (
                ActionKind::ReleaseRefused,
                "release left its lock in place".to_string(),
                false,
            ),
            Held::ByCaller => (ActionKind::Released, "released".to_string(), false),
            Held::By(other) if after != before_value => (
                ActionKind::DeletedOther,
                format!("deleted {other}'s lock"),
                true,
            ),
            Held::By(_) => (
                ActionKind::ReleaseRefused,
                "release refused: not its lock".to_string(),
                false,
            ),
            Held::Nobody => (
                ActionKind::ReleaseRefused,
                "release: its lock was already gone".to_string(),
                false,
            ),
        };
        let c = &mut self.stage.clients[i];
        c.believes = false;
        c.step = Step::Done;
        Ok(self.act(i, kind, text, is_unsafe, false)?)
    }
}
