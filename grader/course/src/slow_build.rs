//! A build that lasts, told. A grading's build is a moment after a save and
//! over a minute the first time ([`crate::grade::FIRST_BUILD`]); a screen
//! waiting on it should say which wait it is, but only when it lasts, so that
//! an ordinary save does not flash a word past.

use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread;
use std::time::Duration;

/// How long a build may take before it is told: one after a save takes a few
/// seconds.
pub const SLOW_BUILD: Duration = Duration::from_secs(5);

/// Starts watching one build: if nothing comes on the returned sender within
/// `after` ([`SLOW_BUILD`]), calls `tell(true)`, and then `tell(false)` once
/// something comes or the sender is dropped (the build failed).
pub fn watch(after: Duration, tell: impl Fn(bool) + Send + 'static) -> Sender<()> {
    let (built, waiting) = mpsc::channel::<()>();
    thread::spawn(move || {
        if waiting.recv_timeout(after) == Err(RecvTimeoutError::Timeout) {
            tell(true);
            let _ = waiting.recv();
            tell(false);
        }
    });
    built
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `watch` told, in order, for a build that ends after `lasts`.
    fn told(lasts: Duration) -> Vec<bool> {
        let (tx, rx) = mpsc::channel();
        let built = watch(Duration::from_millis(100), move |b| {
            let _ = tx.send(b);
        });
        thread::sleep(lasts);
        let _ = built.send(());
        drop(built);
        rx.iter().collect()
    }

    #[test]
    fn a_quick_build_is_not_told_and_a_slow_one_is_told_twice() {
        assert_eq!(told(Duration::ZERO), Vec::<bool>::new());
        assert_eq!(told(Duration::from_secs(1)), vec![true, false]);
    }
}
