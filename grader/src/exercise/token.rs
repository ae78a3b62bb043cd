//! Tokens: a value of its own for every acquisition, drawn from the operating system's random source.
//!
//! The exercise's descriptor: its functions, the chapter that explains it,
//! and its checks with their points. Everything else that lists the
//! exercises (the harness, the points, the layout tests, `cargo course`,
//! `.ci/learner-path`) reads it from [`super::EXERCISES`].

use super::{Exercise, chapter};
use crate::checks::Check;
use crate::exercise::points::DIRECT;
use crate::lock::Lock;

/// The exercise.
pub const EXERCISE: Exercise = Exercise {
    name: "token",
    functions: &["new_token"],
    chapter: &chapter::SINGLE_INSTANCE,
    says_on_failure: &[],
    take,
    checks: &[
        Check {
            name: "token::unique",
            shows: "a thousand tokens are a thousand different tokens",
            points: DIRECT,
            run: crate::checks::token::unique,
        },
        Check {
            name: "token::unguessable",
            shows: "tokens carry 120 random bits or more",
            points: DIRECT,
            run: crate::checks::token::unguessable,
        },
    ],
};

/// Puts this exercise's functions of `from` into `into`.
fn take(from: &Lock, into: &mut Lock) {
    into.new_token = from.new_token;
}
