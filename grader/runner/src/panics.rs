//! Panics of the learner's functions: kept quiet, and noted where they happened.
//!
//! Both programs call learner functions on threads of their own: the runner
//! its calls, the judge the catalogue's locks in the grader's own tests. A
//! panic there is an answer to report, not a crash to print, so a hook keeps
//! the panics of threads with a given name off standard error and notes their
//! place; panics elsewhere print as usual.

use std::any::Any;
use std::cell::RefCell;
use std::panic;
use std::thread;

thread_local! {
    /// Where the last panic on this thread happened, noted by the hook.
    static LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs a hook that keeps panics on threads named `name` quiet and notes
/// where they happened (call it once per name).
pub fn quiet_on(name: &'static str) {
    let previous = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if thread::current().name() == Some(name) {
            let at = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()));
            LOCATION.with(|slot| *slot.borrow_mut() = at);
        } else {
            previous(info);
        }
    }));
}

/// Where the last quiet panic on this thread happened, as `file:line`, once.
pub fn take_location() -> Option<String> {
    LOCATION.with(|slot| slot.borrow_mut().take())
}

/// A panic's message, whatever its payload holds.
pub fn message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic without a message".into())
}
