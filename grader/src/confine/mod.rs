//! What the lock's code may send, and where it lands: its check's own
//! namespace, and nothing beyond it.
//!
//! Learner code talks to a real, possibly shared, Redis. A `FLUSHALL`, a
//! `KEYS *` followed by `DEL`, a `CONFIG SET` or a `SHUTDOWN` would reach other
//! runs' keys, other learners' checks, the server itself. No lock needs any of
//! them, and the [`Wire`] sends none: what a lock may send is listed once, in
//! [`commands::COMMANDS`] (commands on keys, scripts, functions, transactions,
//! and a few questions about the server, answered for the check), and a
//! command off the list gets an error reply, shows in the call's record, and
//! fails the check as a refusal, not as a broken rule ([`watched`]).
//!
//! Every key a listed command names is kept inside the check's namespace
//! ([`namespace`]), and every function inside a set of names of the check's
//! own ([`functions`]), so that a lock may name what keys it likes, and load
//! what libraries it likes, and reach no one else's. Inside a Lua script Redis
//! runs whatever the script calls: where the grader may create Redis users,
//! [`crate::acl`] holds scripts to the namespace too; where it may not, the
//! wire's own filter is all there is (see the README's section for
//! instructors).
//!
//! [`Wire`]: crate::wire::Wire

pub mod commands;
pub mod functions;
pub mod namespace;

use std::cell::RefCell;
use std::sync::{Arc, Mutex};

use crate::call::Step;
pub use commands::{COMMANDS, Shape, name_of};
pub use namespace::{Admitted, Namespace, admit};

/// A command the grader did not send, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The command's name, e.g. `FLUSHALL` or `SCRIPT|FLUSH`.
    pub command: String,
    /// Why, in words a learner can act on.
    pub why: String,
}

/// A command the grader refused during a check, with the record of the call
/// that sent it, up to that command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The command and why.
    pub refusal: Refusal,
    /// What the call sent up to it.
    pub record: Vec<Step>,
}

/// What a watched run gave, and the first command refused during it.
#[derive(Debug)]
pub struct Watched<T> {
    /// What the run returned.
    pub outcome: T,
    /// The first refused command, if the lock's code sent one.
    pub refused: Option<Refused>,
}

/// Redis's own refusal of a command to a confined user ([`crate::acl`]), as
/// text, if `reply` is one: a script that reached beyond its keys or its
/// commands (a pipeline's replies are searched too).
pub fn refused_by_redis(reply: &redis::RedisResult<redis::Value>) -> Option<String> {
    fn denial(code: &str, details: &str) -> Option<String> {
        let by_acl = code.eq_ignore_ascii_case("NOPERM")
            || details.contains("The user executing the script can't");
        by_acl.then(|| {
            format!("{code} {details}")
                .trim()
                .trim_end_matches('.')
                .to_owned()
        })
    }
    fn search(value: &redis::Value) -> Option<String> {
        match value {
            redis::Value::ServerError(e) => denial(e.code(), e.details().unwrap_or("")),
            redis::Value::Array(items) => items.iter().find_map(search),
            _ => None,
        }
    }
    match reply {
        Ok(value) => search(value),
        Err(e) => denial(e.code().unwrap_or(""), e.detail().unwrap_or("")),
    }
}

// ------------------------------------------------------------ the check's ledger

/// Refusals seen during one check, with the call's record up to each, and the
/// libraries its lock loaded, removed when the check ends.
#[derive(Debug)]
pub struct Ledger {
    /// The check's number in this process: its functions' names carry it.
    id: u64,
    entries: Mutex<Vec<Refused>>,
    libraries: Mutex<Vec<String>>,
}

impl Default for Ledger {
    fn default() -> Ledger {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        Ledger {
            id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            entries: Mutex::default(),
            libraries: Mutex::default(),
        }
    }
}

impl Ledger {
    /// The check's number in this process.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Notes a library the lock loaded (its name as Redis knows it).
    pub fn note_library(&self, name: String) {
        let mut libraries = self.libraries.lock().unwrap_or_else(|p| p.into_inner());
        if !libraries.contains(&name) {
            libraries.push(name);
        }
    }

    /// Deletes the libraries the lock loaded. Best effort: a library left
    /// behind holds only code, under names no other check calls.
    fn remove_libraries(&self) {
        let libraries =
            std::mem::take(&mut *self.libraries.lock().unwrap_or_else(|p| p.into_inner()));
        if libraries.is_empty() {
            return;
        }
        let Ok(mut con) = crate::server::shared().and_then(|s| s.connect()) else {
            return;
        };
        for name in libraries {
            let _ = redis::cmd("FUNCTION")
                .arg("DELETE")
                .arg(name)
                .exec(&mut con);
        }
    }

    /// Notes a refusal and the record of the call that made it.
    pub fn note(&self, refusal: Refusal, record: Vec<Step>) {
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Refused { refusal, record });
    }

    fn first(&self) -> Option<Refused> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.first().cloned()
    }
}

thread_local! {
    /// The ledger of the check running on this thread, which wires opened
    /// here report to.
    static CURRENT: RefCell<Option<Arc<Ledger>>> = const { RefCell::new(None) };
}

/// The ledger of the check running on this thread, if any.
pub fn current_ledger() -> Option<Arc<Ledger>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Runs `run`, the body of one check, with a ledger of its own that the wires
/// opened on this thread report refused commands to, and gives what it
/// returned with the first of them: the check's verdict is made above, from
/// both ([`crate::report::Verdict::of_watched`]), since code that swallows
/// the error reply must not pass with a `FLUSHALL` in its record.
pub fn watched<T>(run: impl FnOnce() -> T) -> Watched<T> {
    let ledger = Arc::new(Ledger::default());
    let outer = CURRENT.with(|c| c.replace(Some(Arc::clone(&ledger))));
    let outcome = run();
    CURRENT.with(|c| *c.borrow_mut() = outer);
    ledger.remove_libraries();
    Watched {
        outcome,
        refused: ledger.first(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_error_reply_of_redis_s_access_control_is_a_refusal() {
        let parsed = |resp: &[u8]| redis::parse_redis_value(resp);
        let denied =
            parsed(b"-NOPERM this user has no permissions to run the 'flushall' command\r\n");
        assert!(refused_by_redis(&denied).is_some_and(|d| d.contains("'flushall'")));
        let script =
            parsed(b"-ERR The user executing the script can't access at least one of the keys\r\n");
        assert!(refused_by_redis(&script).is_some());
        for other in [
            &b"$6\r\nNOPERM\r\n"[..],
            b"-ERR wrong number of arguments\r\n",
        ] {
            assert_eq!(refused_by_redis(&parsed(other)), None);
        }
    }
}
