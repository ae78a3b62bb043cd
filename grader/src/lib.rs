//! The grader of the course *Distributed Locks with Redis*.
//!
//! It decides, against a real Redis, whether a lock implementation is safe,
//! and when it is not, shows why. A lock is a table of functions, those of
//! every exercise ([`Lock`], [`exercise::EXERCISES`]); a check ([`checks::CHECKS`]) runs some of them in a small
//! world of Redis keys, on a virtual clock, watching every command they send;
//! a failed check prints a report a learner can act on.
//!
//! The pieces, from the bottom up:
//!
//! - [`server`] finds or starts Redis (`REDIS_URL`, a container, or a local
//!   `redis-server`);
//! - [`world`] gives each scenario its own keys, and [`clock`] runs their
//!   expiry on virtual time, so a 40 s pause costs nothing;
//! - [`prefix`] claims a key prefix no other run sharing the server can have;
//! - [`wire`] is the connection a lock talks through, and [`sandbox`] runs
//!   the lock's code so that a panic or an endless loop fails one check only;
//!   [`confine`] decides which commands and keys the wire lets through, and
//!   [`acl`] makes Redis itself hold scripts to the same keys;
//! - [`nodes`] starts five Redis nodes for Redlock and hurts them on purpose (pause, kill,
//!   restart, a clock jump, a late reply), each on a virtual clock of its own;
//! - [`replication`] holds a primary and its replica for the failover stories: a replica cut
//!   off, a primary killed, a replica promoted;
//! - [`stall`] tells a stalled machine apart from a broken lock;
//! - [`story`] is what every story of the course is: its topology, its clients' plans and its
//!   faults, from one vocabulary, and what a graded run of it is held to; [`scenario`] lists
//!   the stories (on one server, a pair, and Redlock's nodes), [`run`] is the one engine that
//!   plays any of them and records a [`timeline`], [`verdict`] names the rules a safe lock
//!   keeps, and [`judge`] judges each rule in one place, for every kind of check;
//! - [`probe`] steps in between two commands, at every boundary in turn;
//! - [`model`] says what each learner function must do, and [`explore`]
//!   plays histories drawn from a seed against it;
//! - [`exercise`] names the exercises once, in the order of the book's chapters;
//! - [`checks`] is the catalogue `cargo test -p exercises` runs, and
//!   [`report`] what a learner reads when one fails; [`token`] draws and
//!   reads the first exercise's tokens;
//! - [`sys`] makes the system calls the standard library does not offer (the
//!   crate's only `unsafe` code), and [`deadline`] runs a child until it ends
//!   or overruns, then kills all it started; [`random`] draws the run's ids;
//! - [`isolation`] runs untrusted code (a submission's build, the learner's runner) in a
//!   bubblewrap sandbox, with limits, leaving no process behind;
//! - [`harness`] runs each check in a process of its own, for
//!   `cargo test -p exercises`, so that every check ends with a verdict or
//!   fails, and [`remote`] is the learner's lock as the checks call it: its
//!   code runs in a program of its own, the runner (`grader/runner`), whose
//!   Redis commands come back through the check's wires;
//! - [`recording`] keeps a learner's failed scenario run for the book's player;
//! - [`reference`](mod@reference) holds the reference solutions.
//!
//! The locks the grader is tested against (wrong ones, correct variants,
//! ports of published libraries) and the book's timelines made with them are
//! a crate of their own, `lock-catalogue` (`grader/catalogue`), with the
//! `grade-lock` program that grades one of them: nothing a learner builds
//! holds them. `cargo course`, the learner's loop and the instructor's tools
//! over the same harness, is the crate `course` (`grader/course`); a
//! learner who only runs `cargo test -p exercises` builds the grader's own
//! judge (`src/bin/judge.rs`) instead.

pub mod acl;
pub mod call;
pub mod checks;
pub mod clock;
pub mod confine;
pub mod deadline;
pub mod error;
pub mod exercise;
pub mod explore;
pub mod folder;
pub mod harness;
pub mod isolation;
pub mod judge;
pub mod limits;
pub mod lock;
pub mod model;
pub mod nodes;
pub mod outcome;
pub mod prefix;
pub mod probe;
pub mod random;
pub mod recording;
pub mod reference;
pub mod remote;
pub mod replication;
pub mod report;
pub mod run;
pub mod sandbox;
pub mod scenario;
pub mod server;
pub mod stall;
pub mod story;
// The crate's one module of `unsafe` code: the system calls the standard
// library does not offer.
#[allow(unsafe_code)]
pub mod sys;
pub mod token;
pub mod verdict;
pub mod wire;
pub mod world;

pub use lock::Lock;
pub use lock_timeline as timeline;
pub use report::Verdict;
pub use wire::Wire;

/// The stub file that holds each learner function, for "not started" messages.
fn stub_file(function: &str) -> String {
    exercise::holding(function).map_or_else(
        || format!("the exercises (`{function}` is not in the grader's table of exercises)"),
        |e| e.stub(),
    )
}

/// Runs the check called `name` on `lock` in this process, and panics with a
/// report a learner can act on unless it passes: for a libtest `#[test]`.
/// `cargo test -p exercises` does not use it: its [`harness`] runs each check
/// in a process of its own, so that no exit or abort can pass for a verdict.
///
/// # Panics
///
/// When the check fails, when a function it needs is still a stub ("not
/// started"), when there is no such check, or when no Redis can be found.
pub fn grade(name: &str, lock: &Lock) {
    use harness::Outcome;
    let outcome = checks::named(name).map_or_else(
        || Outcome::no_such_check(name),
        |check| harness::outcome_of(check, lock),
    );
    match outcome {
        Outcome::Passed => {}
        Outcome::NotStarted { message } => fail(message),
        Outcome::Failed { report } => fail(report),
        Outcome::NotRun { reason } => fail(reason),
        Outcome::Crashed { cause } => fail(cause.to_string()),
    }
}

/// Fails the calling test with `message` and nothing else: the message goes
/// to the test's output, and the unwind skips the panic hook, so no
/// "panicked at grader/src/lib.rs" line or backtrace buries it.
fn fail(message: String) -> ! {
    println!("{message}");
    std::panic::resume_unwind(Box::new(message))
}
