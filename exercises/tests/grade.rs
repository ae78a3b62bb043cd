//! Grades your lock: one test per check, exercise by exercise.
//!
//! `cargo test -p exercises` runs them all; `cargo test -p exercises release::`
//! runs one exercise's. Each check tests one exercise's functions, with the
//! course's reference solution standing in for the others, so you can work
//! through the files in order. The `scenarios::` checks at the end play the
//! course's stories with your whole lock.
//!
//! This program holds none of your code: it starts the grader's judge (built
//! once, beside it) with your runner (`runner/main.rs`, which cargo builds for
//! this test), and the judge runs every check in a process of its own.
//!
//! Don't edit this file: the grader's own tests check what it holds.

fn main() {
    lock_runner::launch(env!("CARGO_BIN_EXE_runner"))
}
