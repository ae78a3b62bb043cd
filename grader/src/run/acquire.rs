//! Taking the lock on one server or a pair's primary: one client's acquire, or the race of all of
//! them at t = 0, each call judged by [`crate::judge::acquire`] and [`crate::judge::fencing`].

use std::time::Duration;

use super::Runner;
use crate::error::GradeError;
use crate::judge::Call;
use crate::judge::acquire::{self, Before, Grant, Key};
use crate::judge::fencing::{Against, tokens_grow};
use crate::lock::Lock;
use crate::sandbox::{self, Failure};
use crate::story::Fencing;
use crate::story::client::Step;
use crate::story::engine::{Engine, Stop};
use crate::timeline::ActionKind;
use crate::wire::{Turns, Wire};
use crate::world::enter;

impl Runner {
    /// Client `i` tries to take the lock: its acquire, judged, and in a story with `WAIT` the
    /// course's confirmation.
    pub(super) fn take(&mut self, i: usize) -> Result<(), Stop> {
        self.ensure_token(i)?;
        let value = enter(&self.world).lock_value()?;
        let before = self.before(i, value.as_deref());
        let outcome = self.call_acquire(i)?;
        let granted = outcome.is_some();
        self.judge_acquire(i, before, outcome)?;
        if granted {
            self.confirm(i)?;
        }
        Ok(())
    }

    /// Calls `acquire` (or `acquire_fenced`); returns the grant, if any.
    pub(super) fn call_acquire(&mut self, i: usize) -> Result<Grant, Stop> {
        let (keys, token, ttl, lock) = self.acquire_args(i);
        if self.stage.story.fencing == Fencing::Off {
            let granted = self.call(i, "acquire", move |w| {
                (lock.acquire)(w, &keys.lock, &token, ttl)
            })?;
            Ok(granted.then_some(None))
        } else {
            let fence = self.call(i, "acquire_fenced", move |w| {
                (lock.acquire_fenced)(w, &keys.lock, &keys.fence, &token, ttl)
            })?;
            Ok(fence.map(Some))
        }
    }

    pub(super) fn acquire_args(&self, i: usize) -> (crate::world::Keys, String, Duration, Lock) {
        let keys = enter(&self.world).keys.clone();
        (
            keys,
            self.stage.clients[i].token.clone().unwrap_or_default(),
            self.ttl(),
            self.lock,
        )
    }

    /// Who held the lock before client `i`'s acquire, for the judges,
    /// from the lock key's value then.
    pub(super) fn before(&self, i: usize, value: Option<&str>) -> Before<'static> {
        match (value, self.holder_of(value)) {
            (None, _) => Before::Free,
            (Some(_), Some(h)) if h != i => Before::HeldBy(self.stage.clients[h].name()),
            _ => Before::Unknown,
        }
    }

    /// The lock key's value, as the judges describe it to client `i`.
    fn key(&self, i: usize, before: Before<'_>, value: Option<&str>) -> Key {
        let Some(value) = value else {
            return Key::Missing;
        };
        match self.holder_of(Some(value)) {
            Some(h) if h == i => Key::Own,
            Some(h) if before == Before::HeldBy(self.stage.clients[h].name()) => Key::Holders,
            Some(h) => Key::Other(format!("{}'s token", self.stage.clients[h].name())),
            None => Key::Other("a value no client was given".into()),
        }
    }

    /// The function the scenario takes the lock with.
    fn acquire_function(&self) -> &'static str {
        if self.stage.story.fencing == Fencing::Off {
            "acquire"
        } else {
            "acquire_fenced"
        }
    }

    /// Records an acquisition by client `i` and judges it against what Redis
    /// holds; `before` is who held the lock before the call.
    pub(super) fn judge_acquire(
        &mut self,
        i: usize,
        before: Before<'static>,
        grant: Grant,
    ) -> Result<(), GradeError> {
        let ms = self.ms();
        let value = enter(&self.world).lock_value()?;
        let name = self.stage.clients[i].name();
        let call = Call::at(name, self.acquire_function(), ms);
        let key = self.key(i, before, value.as_deref());
        self.violations
            .extend(acquire::taking(&call, before, grant, &key));
        let Some(fence) = grant else {
            return self.act(i, ActionKind::Denied, "denied", false, false);
        };
        let expiry = enter(&self.world).lock_expiry()?;
        self.violations
            .extend(acquire::lock_has_ttl(&call, self.ttl(), ms, expiry));
        if let Some(f) = fence {
            let newest = self.grants.iter().filter_map(|&(c, f)| Some((f?, c))).max();
            if let Some((n, c)) = newest {
                let grant = format!("{}'s grant", self.stage.clients[c].name());
                self.violations
                    .extend(tokens_grow(&call, f, Against::EarlierGrant(&grant, n)));
            }
        }
        self.grants.push((i, fence));
        let c = &mut self.stage.clients[i];
        c.believes = true;
        c.fence = fence;
        c.step = Step::Read;
        c.granted_at = self.stage.t;
        let text = match fence {
            Some(f) => format!("acquired, token {f}"),
            None => "acquired".into(),
        };
        self.act(i, ActionKind::Acquired, text, false, false)
    }

    /// At t = 0 of a race: every client's first acquire at once, their
    /// commands taking turns.
    pub(super) fn race(&mut self) -> Result<(), Stop> {
        let racers: Vec<usize> = (0..self.stage.clients.len())
            .filter(|&i| self.stage.clients[i].step == Step::Acquire)
            .collect();
        for &i in &racers {
            self.ensure_token(i)?;
        }
        let turns = Turns::new(racers.len());
        let mut calls = Vec::new();
        for (turn, &i) in racers.iter().enumerate() {
            let (keys, token, ttl, lock) = self.acquire_args(i);
            let Some(mut wire) = self.stage.clients[i].wire.take() else {
                continue;
            };
            wire.take_turns(turns.clone(), turn);
            calls.push((i, wire, keys, token, ttl, lock));
        }
        let results: Vec<(usize, Option<Wire>, Result<bool, Failure>)> = std::thread::scope(|s| {
            let handles: Vec<_> = calls
                .into_iter()
                .map(|(i, wire, keys, token, ttl, lock)| {
                    s.spawn(move || {
                        let (wire, outcome) = sandbox::call(wire, move |w| {
                            (lock.acquire)(w, &keys.lock, &token, ttl)
                        });
                        (i, wire, outcome)
                    })
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        });
        let mut failed = None;
        let mut winners = Vec::new();
        for (i, wire, outcome) in results {
            self.record(i, "acquire", wire.as_ref());
            self.stage.clients[i].wire = wire;
            match outcome {
                Ok(true) => winners.push(i),
                Ok(false) => {}
                Err(f) => failed = failed.or(Some((i, f))),
            }
        }
        if let Some((i, failure)) = failed {
            return Err(self.halt(i, "acquire", failure));
        }
        let names: Vec<&str> = winners
            .iter()
            .map(|&w| self.stage.clients[w].name())
            .collect();
        self.violations
            .extend(acquire::one_winner("acquire", self.ms(), &names));
        let value = enter(&self.world).lock_value()?;
        let holder = self.holder_of(value.as_deref());
        for &i in &racers {
            let won = winners.contains(&i);
            // Judge each as if it had come alone: the winner took a free
            // lock, the others found it held by the winner.
            let before = match holder.filter(|&h| h != i) {
                _ if won => Before::Free,
                Some(h) => Before::HeldBy(self.stage.clients[h].name()),
                None if value.is_none() => Before::Free,
                None => Before::Unknown,
            };
            self.judge_acquire(i, before, won.then_some(None))?;
        }
        Ok(())
    }
}
