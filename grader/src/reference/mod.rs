//! The reference solutions, one file per exercise.
//!
//! Each file here is the matching stub in `exercises/src/` with its `todo!()`
//! filled in, and can be copied over it as it is: `.ci/learner-path` does
//! exactly that to prove that a finished exercises crate passes every check.

pub mod acquire;
pub mod extend;
pub mod fencing;
pub mod keeper;
pub mod redlock;
pub mod release;
pub mod storage;
pub mod token;

use crate::lock::Lock;

/// The course's reference lock: `SET NX PX`, check-and-delete in Lua, the
/// fence counter in the same script as the `SET`, and a storage that checks
/// tokens in a script;
/// renewal compares the token and sets the new TTL in one script, and the
/// keeper renews at every third of the TTL.
pub const LOCK: Lock = Lock {
    name: "reference",
    new_token: token::new_token,
    acquire: acquire::acquire,
    release: release::release,
    extend: extend::extend,
    keep_alive: keeper::keep_alive,
    acquire_fenced: fencing::acquire_fenced,
    fenced_write: storage::fenced_write,
    fenced_read: storage::fenced_read,
    redlock_acquire: redlock::redlock_acquire,
    redlock_release: redlock::redlock_release,
};

/// The reference lock for a runner of its own: the same functions, at the
/// runner's connection type, for the grader's tests of the runner's path.
pub const RUNNER_LOCK: lock_runner::Lock = lock_runner::Lock {
    new_token: token::new_token,
    acquire: acquire::acquire,
    release: release::release,
    extend: extend::extend,
    keep_alive: keeper::keep_alive,
    acquire_fenced: fencing::acquire_fenced,
    fenced_write: storage::fenced_write,
    fenced_read: storage::fenced_read,
    redlock_acquire: redlock::redlock_acquire,
    redlock_release: redlock::redlock_release,
};
