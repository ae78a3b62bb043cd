//! The reference with one function replaced by a fixed answer.
//!
//! `cargo mutants` replaces a function's body with a value of its return
//! type, as in `Ok(true)` for a `Result<bool, _>`. It does not see through
//! the `RedisResult<T>` alias that every learner function returns, so for
//! these functions it writes only `RedisResult::new(…)` and the like, which
//! do not compile. These are the mutants it would have made: each function
//! answers one fixed value, for every call, and sends nothing to Redis.

use grader::lock::Lock;
use grader::reference::LOCK as REFERENCE;

/// A fixed-answer mutant: the reference but for one function.
const fn mutant(lock: Lock) -> Lock {
    Lock {
        name: "mutant of the reference",
        ..lock
    }
}

/// The exercise of a fixed-answer mutant's function, from its name: the
/// checks of that exercise are the first to judge it.
pub fn exercise(name: &str) -> &'static str {
    match name.split(' ').next() {
        Some("acquire") => "acquire",
        Some("release") => "release",
        Some("acquire_fenced") => "fencing",
        _ => "storage",
    }
}

/// Every fixed-answer mutant: what it replaces, and the lock.
pub const ALL: &[(&str, Lock)] = &[
    (
        "acquire -> Ok(true)",
        mutant(Lock {
            acquire: |_, _, _, _| Ok(true),
            ..REFERENCE
        }),
    ),
    (
        "acquire -> Ok(false)",
        mutant(Lock {
            acquire: |_, _, _, _| Ok(false),
            ..REFERENCE
        }),
    ),
    (
        "release -> Ok(true)",
        mutant(Lock {
            release: |_, _, _| Ok(true),
            ..REFERENCE
        }),
    ),
    (
        "release -> Ok(false)",
        mutant(Lock {
            release: |_, _, _| Ok(false),
            ..REFERENCE
        }),
    ),
    (
        "acquire_fenced -> Ok(None)",
        mutant(Lock {
            acquire_fenced: |_, _, _, _, _| Ok(None),
            ..REFERENCE
        }),
    ),
    (
        "acquire_fenced -> Ok(Some(0))",
        mutant(Lock {
            acquire_fenced: |_, _, _, _, _| Ok(Some(0)),
            ..REFERENCE
        }),
    ),
    (
        "acquire_fenced -> Ok(Some(1))",
        mutant(Lock {
            acquire_fenced: |_, _, _, _, _| Ok(Some(1)),
            ..REFERENCE
        }),
    ),
    (
        "fenced_write -> Ok(true)",
        mutant(Lock {
            fenced_write: |_, _, _, _| Ok(true),
            ..REFERENCE
        }),
    ),
    (
        "fenced_write -> Ok(false)",
        mutant(Lock {
            fenced_write: |_, _, _, _| Ok(false),
            ..REFERENCE
        }),
    ),
    (
        "fenced_read -> Ok(None)",
        mutant(Lock {
            fenced_read: |_, _, _| Ok(None),
            ..REFERENCE
        }),
    ),
    (
        "fenced_read -> Ok(Some(0))",
        mutant(Lock {
            fenced_read: |_, _, _| Ok(Some(0)),
            ..REFERENCE
        }),
    ),
    (
        "fenced_read -> Ok(Some(1))",
        mutant(Lock {
            fenced_read: |_, _, _| Ok(Some(1)),
            ..REFERENCE
        }),
    ),
    (
        "fenced_read -> Ok(Some(-1))",
        mutant(Lock {
            fenced_read: |_, _, _| Ok(Some(-1)),
            ..REFERENCE
        }),
    ),
];
