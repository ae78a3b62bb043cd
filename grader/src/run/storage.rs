//! The job's read and write, the same on every ground: plain when fencing is off (the grader
//! makes them for the client), else through the lock's storage, each fenced call judged by
//! [`crate::judge::storage`]. The storage is the grader's own server, whatever the lock runs on.

use super::Runner;
use crate::error::GradeError;
use crate::judge::Call;
use crate::judge::storage::{Kept, Seen, answered, keeps_value, remembers_highest};
use crate::story::Fencing;
use crate::story::client::Step;
use crate::story::engine::Stop;
use crate::story::record;
use crate::timeline::ActionKind;
use crate::world::{Row, enter};

impl Runner {
    /// Client `i` reads the counter.
    pub(super) fn read(&mut self, i: usize) -> Result<(), Stop> {
        let holds = self.holds(i)?;
        let value = match (self.stage.story.fencing, self.stage.clients[i].fence) {
            (Fencing::ReadsAndWrites, Some(fence)) => {
                let (row, lock) = (enter(&self.world).keys.row.clone(), self.lock);
                let before = enter(&self.world).row()?;
                let read = self.call(i, "fenced_read", move |w| {
                    (lock.fenced_read)(w, &row, fence)
                })?;
                self.judge_storage(i, "fenced_read", fence, &before, Answer::Read(read))?;
                if read.is_none() {
                    self.storage_refused(i, holds, ActionKind::ReadRejected, "read")?;
                }
                read
            }
            _ => {
                let v = enter(&self.world).read_counter()?;
                let read = record::plain_read(&self.stage.clients, i, self.stage.t, v);
                self.messages.push(read);
                Some(v)
            }
        };
        let Some(v) = value else {
            return Ok(());
        };
        let c = &mut self.stage.clients[i];
        c.read = v;
        c.step = Step::Write {
            at: self.stage.t + c.plan.work_s,
        };
        Ok(self.act(i, ActionKind::Read, format!("read {v}"), !holds, false)?)
    }

    /// Client `i` writes the counter it read, plus one.
    pub(super) fn write(&mut self, i: usize) -> Result<(), Stop> {
        let holds = self.holds(i)?;
        let value = self.stage.clients[i].read + 1;
        let accepted = match (self.stage.story.fencing, self.stage.clients[i].fence) {
            (Fencing::Off, _) | (_, None) => {
                enter(&self.world).write_counter(value)?;
                let wrote = record::plain_write(&self.stage.clients, i, self.stage.t, value);
                self.messages.push(wrote);
                true
            }
            (_, Some(fence)) => {
                let (row, lock) = (enter(&self.world).keys.row.clone(), self.lock);
                let before = enter(&self.world).row()?;
                let ok = self.call(i, "fenced_write", move |w| {
                    (lock.fenced_write)(w, &row, fence, value)
                })?;
                let answer = Answer::Write {
                    value,
                    accepted: ok,
                };
                self.judge_storage(i, "fenced_write", fence, &before, answer)?;
                if !ok {
                    self.storage_refused(i, holds, ActionKind::WriteRejected, "write")?;
                }
                ok
            }
        };
        self.stage.clients[i].step = Step::Release;
        if accepted {
            self.act(
                i,
                ActionKind::Wrote,
                format!("wrote {value}"),
                !holds,
                false,
            )?;
        }
        Ok(())
    }

    /// Judges client `i`'s fenced request with fencing token `token`: its
    /// answer against the newest grant, and the row it left against the row
    /// before (`before`).
    fn judge_storage(
        &mut self,
        i: usize,
        function: &'static str,
        token: u64,
        before: &Row,
        answer: Answer,
    ) -> Result<(), GradeError> {
        let after = enter(&self.world).row()?;
        let call = Call::at(self.stage.clients[i].name(), function, self.ms());
        let newest = self.grants.iter().filter_map(|(_, f)| *f).max();
        let accepted = answer.accepted();
        let highest = if accepted {
            before.fence.max(token)
        } else {
            before.fence
        };
        let kept = match answer {
            Answer::Write {
                value,
                accepted: true,
            } => Kept::Written {
                value,
                row: after.value,
            },
            Answer::Read(Some(got)) => Kept::Read {
                got,
                row: after.value,
            },
            _ => Kept::Refused {
                before: before.value,
                row: after.value,
            },
        };
        let violation = newest
            .and_then(|n| answered(&call, token, accepted, Seen::Granted(n)))
            .or_else(|| keeps_value(&call, token, kept))
            .or_else(|| remembers_highest(&call, token, after.fence, highest));
        self.violations.extend(violation);
        Ok(())
    }

    /// The storage refused client `i`'s fenced request: it knows its job
    /// failed, and moves on to release.
    fn storage_refused(
        &mut self,
        i: usize,
        holds: bool,
        kind: ActionKind,
        what: &str,
    ) -> Result<(), GradeError> {
        let highest = enter(&self.world).row()?.fence;
        let c = &mut self.stage.clients[i];
        let fence = c.fence.unwrap_or(0);
        c.believes = false;
        c.step = Step::Release;
        let text = format!("{what} rejected: {fence} < {highest}");
        self.act(i, kind, text, !holds, true)
    }
}

/// What a fenced request answered.
#[derive(Clone, Copy)]
enum Answer {
    /// A read: the value, or `None` when refused.
    Read(Option<i64>),
    /// A write of `value`, accepted or not.
    Write { value: i64, accepted: bool },
}

impl Answer {
    fn accepted(self) -> bool {
        match self {
            Answer::Read(read) => read.is_some(),
            Answer::Write { accepted, .. } => accepted,
        }
    }
}
