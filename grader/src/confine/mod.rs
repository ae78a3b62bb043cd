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

use crate::error::GradeError;
use crate::lock::Lock;
use crate::report::{Report, Verdict};
use crate::wire::Step;
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
    entries: Mutex<Vec<(Refusal, Vec<Step>)>>,
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
            .push((refusal, record));
    }

    fn first(&self) -> Option<(Refusal, Vec<Step>)> {
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

/// Runs the check `check` on `lock`, and fails it if the lock's code sent a
/// command the grader refused, whatever the check itself concluded: code that
/// swallows the error reply must not pass with a `FLUSHALL` in its record.
pub fn watched(
    check: &str,
    lock: &Lock,
    run: impl FnOnce() -> Result<Verdict, GradeError>,
) -> Result<Verdict, GradeError> {
    let ledger = Arc::new(Ledger::default());
    let outer = CURRENT.with(|c| c.replace(Some(Arc::clone(&ledger))));
    let outcome = run();
    CURRENT.with(|c| *c.borrow_mut() = outer);
    ledger.remove_libraries();
    let verdict = outcome?;
    Ok(match ledger.first() {
        None => verdict,
        Some((refusal, record)) => Verdict::Fail(Box::new(refused(check, lock, &refusal, &record))),
    })
}

/// The report for a refused command.
fn refused(check: &str, lock: &Lock, refusal: &Refusal, record: &[Step]) -> Report {
    let mut evidence = String::from("What your code sent, up to the refused command:\n");
    crate::report::numbered(&mut evidence, record);
    Report::refused(
        check,
        lock.name,
        refusal.command.replace('|', " "),
        refusal.why.clone(),
        vec![evidence],
    )
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
