//! Locks the grader is tested against: wrong ones and correct ones.
//!
//! A grader is only as good as the mistakes it catches and the correct code it
//! lets through. [`wrong`] holds locks with one classic mistake each, taken
//! from real projects' bug trackers, each paired with the check that must
//! catch it and the rule it must name; [`unseen`] holds the code of those
//! only an explorer check catches. [`variants`] holds correct locks
//! written differently from the reference, which must pass every check.
//! [`renewal`] holds both kinds for the `extend` and `keeper` exercises
//! (renewing the lock and keeping a lease).
//! [`misbehaving`] holds code that does not even return properly (panics,
//! loops), which must be reported per check without stopping the rest.
//! [`mutants`] holds the reference with one Lua script changed, which some
//! check must fail unless the change makes no difference.
//! [`redlock`] holds the Redlocks with one mistake each that [`wrong`] lists.
//! [`swallowed`] holds functions that turn a failed command into an answer,
//! which the grader's faults catch.
//! [`ported`] holds correct locks in the style of published libraries (Redis
//! functions, second keys, `TIME`, `WAIT`), which must pass every check;
//! `timed` holds the code of those that set their expiry a way of their own
//! (an instant from Redis's clock), and of their wrong twins.
//! [`demos`] lists the timelines the book shows, some of them played with a
//! wrong lock of this catalogue.
//!
//! This crate is the grader's test data, apart from the grader itself: the
//! judge a learner builds (`cargo test -p exercises`, `cargo course`) holds
//! none of it. Its `grade-lock` program grades one of its locks through the
//! harness, as a learner's lock is graded.

mod keepers;
pub mod misbehaving;
pub mod mutants;
pub mod ported;
pub mod redlock;
pub mod renewal;
pub mod swallowed;
mod timed;
pub mod unseen;
pub mod variants;
pub mod wrong;

pub mod demos;

/// Every wrong lock of the catalogue, each with the check that must fail on it: [`wrong`]'s,
/// [`renewal`]'s and [`swallowed`]'s.
pub fn every_wrong() -> impl Iterator<Item = &'static wrong::Wrong> {
    wrong::ALL
        .iter()
        .chain(renewal::WRONG)
        .chain(swallowed::WRONG)
}
