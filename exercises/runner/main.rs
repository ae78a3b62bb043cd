//! The runner: your functions, built into a program of their own.
//!
//! The grader (the judge, built once) starts this program for each check,
//! calls your functions through it, and judges what they do; this program
//! only answers the calls. So whatever your code does (exit, abort, print),
//! every check ends with a verdict or fails, and what your code printed is
//! shown under its failed check. `tests/grade.rs` is what `cargo test -p
//! exercises` runs: it starts the judge with this runner.
//!
//! Don't edit this file: the grader's own tests check what it holds.

/// Your lock, function by function.
const YOURS: lock_runner::Lock = lock_runner::Lock {
    new_token: exercises::token::new_token,
    acquire: exercises::acquire::acquire,
    release: exercises::release::release,
    extend: exercises::extend::extend,
    keep_alive: exercises::keeper::keep_alive,
    acquire_fenced: exercises::fencing::acquire_fenced,
    fenced_write: exercises::storage::fenced_write,
    fenced_read: exercises::storage::fenced_read,
    redlock_acquire: exercises::redlock::redlock_acquire,
    redlock_release: exercises::redlock::redlock_release,
};

fn main() {
    lock_runner::main(YOURS)
}
