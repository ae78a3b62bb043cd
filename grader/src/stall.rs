//! Stalls told apart from bugs.
//!
//! The grader's verdicts stand on virtual time, but Redis keeps real time: if
//! the machine stops for a while in the middle of a check (Ctrl-Z then `fg`, a
//! CPU throttled to a few percent, a paused container), a key can expire for
//! real before its virtual time, and a correct lock would be blamed for what
//! the machine did. The clock notices such a jump ([`crate::clock`]), and so
//! does a grader connection whose system call the stop interrupted; both end
//! up here. A check during which a stall was noticed proves nothing either
//! way, so [`rerun`] runs it again, a few times; a check that stalls every
//! time ends with [`GradeError::Stalled`], which says so and asks for another
//! run, never with a verdict on the lock.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use redis::RedisError;

use crate::error::GradeError;

/// How many times a check is run before a stall every time is reported.
pub const ATTEMPTS: usize = 4;

/// Stalls noticed so far in this process.
static NOTICED: AtomicU64 = AtomicU64::new(0);

/// What the last stall looked like, for the message.
static LAST: Mutex<String> = Mutex::new(String::new());

/// Notes a stall: every check running now will be run again.
pub fn noticed() {
    NOTICED.fetch_add(1, Ordering::SeqCst);
}

/// Notes a stall described by `what` and returns the error that reports it.
pub fn stalled(what: String) -> GradeError {
    *LAST.lock().unwrap_or_else(|p| p.into_inner()) = what.clone();
    noticed();
    GradeError::Stalled(what)
}

/// Whether `e` is an interrupted system call (`EINTR`), which a socket with a
/// timeout returns after its process was stopped and continued.
pub fn is_interrupted(e: &RedisError) -> bool {
    // redis-rs keeps the I/O error's kind to itself; its text still says it.
    let interrupted = std::io::Error::from(std::io::ErrorKind::Interrupted).to_string();
    let text = e.to_string();
    e.is_io_error()
        && (text.contains(&interrupted)
            || text.contains(&format!(
                "(os error {})",
                rustix::io::Errno::INTR.raw_os_error()
            )))
}

/// A duration as a report shows it: `340 ms`, `2.1 s`.
pub fn shown(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// Runs `check` until it runs once without a stall noticed anywhere in the
/// process meanwhile, at most [`ATTEMPTS`] times. A stall elsewhere in the
/// process counts too: a stopped machine stops every check at once.
pub fn rerun<T>(mut check: impl FnMut() -> Result<T, GradeError>) -> Result<T, GradeError> {
    for _ in 0..ATTEMPTS {
        let before = NOTICED.load(Ordering::SeqCst);
        let outcome = check();
        if NOTICED.load(Ordering::SeqCst) == before {
            return outcome;
        }
    }
    let last = LAST.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let what = if last.is_empty() {
        "a system call was interrupted".to_owned()
    } else {
        last
    };
    Err(GradeError::Stalled(format!(
        "{what}; the same in {ATTEMPTS} runs of the check"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_that_stalls_once_is_run_again_and_its_second_outcome_counts() {
        let mut runs = 0;
        let outcome = rerun(|| {
            runs += 1;
            if runs == 1 {
                return Err(stalled("test".into()));
            }
            Ok(runs)
        });
        // Another test's stall may cost one more run, never a verdict.
        assert!(outcome.unwrap() >= 2);
    }

    #[test]
    fn an_interrupted_system_call_is_told_from_other_errors() {
        let eintr = RedisError::from(std::io::Error::from(rustix::io::Errno::INTR));
        assert!(is_interrupted(&eintr), "{eintr}");
        let other = RedisError::from(std::io::Error::from(std::io::ErrorKind::TimedOut));
        assert!(!is_interrupted(&other), "{other}");
    }

    #[test]
    fn a_check_that_always_stalls_says_so_and_gives_no_verdict() {
        let outcome: Result<(), _> = rerun(|| Err(stalled("a 2.0 s gap".into())));
        let message = outcome.unwrap_err().to_string();
        assert!(
            message.starts_with("the machine stalled (")
                && message.ends_with("not a verdict on your lock; run again"),
            "{message}"
        );
    }
}
