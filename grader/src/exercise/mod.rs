//! The course's exercises, each described once.
//!
//! An exercise is a file of stubs in the learner's crate, its reference
//! solution, the functions it asks for, the chapter that explains it and its
//! checks with their points: one descriptor, in a file of its own here
//! (`token.rs`, `acquire.rs`, …), collected in [`EXERCISES`]. Everything
//! else that needs to know the exercises reads this table: the harness's
//! list of checks ([`crate::checks::CHECKS`]), the points
//! ([`crate::exercise::points`]), the stub a "not started" message points at,
//! the layout tests that keep stubs, solutions and the learner's runner in
//! step, `cargo course reset`, the script that puts the solutions in the
//! stubs' place (`.ci/learner-path`, through the `exercise-table` binary),
//! and the explorer's choice of functions.
//!
//! Adding an exercise is a stub, a solution, a descriptor here and its row
//! in [`EXERCISES`]; its checks' code goes into [`crate::checks`], and the
//! layout tests say what else is missing (the learner's runner, the lock's
//! table of functions).

pub mod chapter;
pub mod points;

pub(crate) mod acquire;
pub(crate) mod extend;
pub(crate) mod fencing;
pub(crate) mod keeper;
pub(crate) mod redlock;
pub(crate) mod release;
pub mod scenarios;
pub(crate) mod storage;
mod token;

pub use chapter::{Chapter, SERVED_BOOK};

use crate::checks::Check;
use crate::lock::Lock;

/// One exercise: a file of stubs in the learner's crate, its solution, the
/// functions it asks for, the chapter that explains it, and its checks.
#[derive(Clone, Copy)]
pub struct Exercise {
    /// Its name, which is also the prefix of its checks (`acquire` for
    /// `acquire::takes_a_free_lock`) and its file's stem.
    pub name: &'static str,
    /// The learner functions it holds, as [`crate::Lock`] names them.
    pub functions: &'static [&'static str],
    /// The book chapter that explains it.
    pub chapter: &'static Chapter,
    /// What its doc text says its functions answer when one of their commands fails, word for
    /// word: the sentences its checks that make commands fail quote in their reports (from
    /// [`crate::judge`]), which a layout test finds in its stub and its solution.
    pub says_on_failure: &'static [&'static str],
    /// Its checks, in the order they are reported.
    pub checks: &'static [Check],
    /// Copies its functions from one lock into another: what
    /// [`Exercise::lock_under_test`] is made with.
    take: fn(from: &Lock, into: &mut Lock),
}

impl std::fmt::Debug for Exercise {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exercise {} ({})", self.number(), self.name)
    }
}

impl PartialEq for Exercise {
    /// Exercises are told apart by their names, which the table's test keeps unique.
    fn eq(&self, other: &Exercise) -> bool {
        self.name == other.name
    }
}

impl Eq for Exercise {}

/// Every exercise, in the order a learner works through them, which is the
/// book's order of their chapters (a test holds it to `book/src/SUMMARY.md`).
/// This list is the one place that order is written: an exercise's number is
/// its place here.
pub const EXERCISES: &[Exercise] = &[
    token::EXERCISE,
    acquire::EXERCISE,
    release::EXERCISE,
    extend::EXERCISE,
    keeper::EXERCISE,
    fencing::EXERCISE,
    storage::EXERCISE,
    redlock::EXERCISE,
];

impl Exercise {
    /// Its place in the course, from 1: its place in [`EXERCISES`], the only
    /// list a descriptor is in (0 would be a descriptor outside it).
    pub fn number(&self) -> usize {
        EXERCISES
            .iter()
            .position(|e| e.name == self.name)
            .map_or(0, |i| i + 1)
    }

    /// The learner's file of stubs, from the repository's root.
    pub fn stub(&self) -> String {
        format!("exercises/src/{}.rs", self.name)
    }

    /// The reference solution's file, from the repository's root.
    pub fn solution(&self) -> String {
        format!("grader/src/reference/{}.rs", self.name)
    }

    /// `lock`'s functions for this exercise, the reference's for the others:
    /// what a check of this exercise plays, so that it grades this exercise
    /// alone.
    pub fn lock_under_test(&self, lock: &Lock) -> Lock {
        let mut only = Lock {
            name: lock.name,
            ..crate::reference::LOCK
        };
        (self.take)(lock, &mut only);
        only
    }
}

/// The group of checks that plays the book's stories with the whole lock: it
/// comes after the exercises, and has no file of its own.
pub const SCENARIOS: &str = scenarios::NAME;

/// The exercise a check belongs to (or [`SCENARIOS`]): `acquire` for
/// `acquire::explored`.
pub fn of_check(check: &str) -> &str {
    check.split("::").next().unwrap_or(check)
}

/// The file the learner edits for `exercise`, if it is one.
pub fn file_of(exercise: &str) -> Option<String> {
    named(exercise).map(Exercise::stub)
}

/// The book chapter to read with `exercise` (the scenarios: the chapter of
/// the stories they play, as the rule they keep names it).
pub fn chapter_of(exercise: &str) -> &'static Chapter {
    named(exercise).map_or_else(
        || crate::verdict::Property::SameAsReference.row().chapter,
        |e| e.chapter,
    )
}

/// The exercises' names in order, as a sentence lists them: `token, acquire, …
/// and redlock`.
pub fn names() -> String {
    let names: Vec<&str> = EXERCISES.iter().map(|e| e.name).collect();
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The exercise called `name` (a check's prefix).
pub fn named(name: &str) -> Option<&'static Exercise> {
    EXERCISES.iter().find(|e| e.name == name)
}

/// The exercise that holds the learner function `function`.
pub fn holding(function: &str) -> Option<&'static Exercise> {
    EXERCISES.iter().find(|e| e.functions.contains(&function))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_chapter_has_its_page_in_the_served_book() {
        assert_eq!(
            chapter_of("release").line(),
            "2, Releasing: check, then delete, in one step — http://localhost:3000/releasing.html \
             (offline: book/src/releasing.md)"
        );
        assert_eq!(chapter_of(SCENARIOS).page(), "timeout.html");
        for e in EXERCISES {
            assert!(chapter::ALL.contains(&e.chapter), "{}", e.name);
        }
        for rule in crate::verdict::Property::ALL {
            assert!(chapter::ALL.contains(&rule.row().chapter), "{rule:?}");
        }
    }

    #[test]
    fn names_numbers_and_functions_are_each_used_once() {
        for (i, e) in EXERCISES.iter().enumerate() {
            assert_eq!(e.number(), i + 1, "{}", e.name);
            assert_eq!(named(e.name), Some(e));
            assert!(!e.functions.is_empty(), "{} holds no function", e.name);
            for f in e.functions {
                assert_eq!(holding(f), Some(e), "{f} is listed twice");
            }
        }
    }
}
