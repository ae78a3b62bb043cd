//! What a wire counts: the commands of the current call, against
//! [`COMMAND_BUDGET`], and which of them a record leaves out.
//!
//! Redis-rs retries a script it finds missing (`NOSCRIPT`, then `SCRIPT
//! LOAD`). Those two steps change nothing in the data, so they are neither
//! counted nor shown: a report reads the same whether the script was cached
//! or not, on the single server and on every node alike. Any other `SCRIPT`
//! command is shown like every command.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use redis::{RedisResult, Value};

use super::{COMMAND_BUDGET, OverBudget};
use crate::confine;

/// One wire's count of commands, and its memory of a missing script.
#[derive(Default)]
pub(super) struct Tally {
    /// Counted commands of the current call; shared so that a call that timed
    /// out can still say how many it sent.
    sent: Arc<AtomicUsize>,
    /// A `NOSCRIPT` reply came: the `SCRIPT LOAD` that follows is redis-rs's.
    reloading: bool,
}

impl Tally {
    /// The commands counted so far; stops the call (a panic with
    /// [`OverBudget`]) when it has sent its budget already.
    pub(super) fn check_budget(&self) -> usize {
        let sent = self.sent.load(Ordering::Relaxed);
        if sent >= COMMAND_BUDGET {
            std::panic::panic_any(OverBudget);
        }
        sent
    }

    /// Counts one more command.
    pub(super) fn count(&self) {
        self.sent.fetch_add(1, Ordering::Relaxed);
    }

    /// Starts the count of a new call.
    pub(super) fn reset(&self) {
        self.sent.store(0, Ordering::Relaxed);
    }

    /// The count, readable from elsewhere.
    pub(super) fn counter(&self) -> Arc<AtomicUsize> {
        Arc::clone(&self.sent)
    }

    /// Whether the command `args`, answered `reply`, is one of redis-rs's own
    /// script reloads, which no record shows.
    pub(super) fn hides(&mut self, args: &[Vec<u8>], reply: &RedisResult<Value>) -> bool {
        if matches!(reply, Ok(Value::ServerError(e)) if e.code() == "NOSCRIPT") {
            self.reloading = true;
            return true;
        }
        std::mem::take(&mut self.reloading) && confine::name_of(args) == "SCRIPT|LOAD"
    }
}
