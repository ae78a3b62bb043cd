//! Grades your lock: one test per check, exercise by exercise.
//!
//! `cargo test -p exercises` runs them all; `cargo test -p exercises release::`
//! runs one exercise's. Each check tests one exercise's functions, with the
//! course's reference solution standing in for the others, so you can work
//! through the files in order. The `scenarios::` checks at the end play the
//! course's stories with your whole lock.
//!
//! This file builds your functions into a small program, the runner, and
//! nothing else of the grader: the grader (the judge, built once) starts it for
//! each check, calls your functions through it, and judges what they do. So
//! whatever your code does (exit, abort, print), every check ends with a
//! verdict or fails, and what your code printed is shown under its failed
//! check.
//!
//! Don't edit this file: the grader's own tests check what it holds.

/// Your lock, function by function.
const YOURS: lock_runner::Lock = lock_runner::Lock {
    new_token: exercises::token::new_token,
    acquire: exercises::acquire::acquire,
    release: exercises::release::release,
    acquire_fenced: exercises::fencing::acquire_fenced,
    fenced_write: exercises::storage::fenced_write,
    fenced_read: exercises::storage::fenced_read,
    extend: exercises::extend::extend,
    keep_alive: exercises::keeper::keep_alive,
    redlock_acquire: exercises::redlock::redlock_acquire,
    redlock_release: exercises::redlock::redlock_release,
};

fn main() {
    lock_runner::main(YOURS)
}
