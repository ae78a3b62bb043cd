//! What can stop the grader itself (as opposed to a learner's lock failing a
//! check): no Redis to run against, a Redis command of the grader's own that
//! failed, or a machine that stalled under the check. Each ends a check with a
//! message saying what to do.

use crate::server::ServerError;

/// A problem of the grader's, not of the lock under test.
#[derive(Debug, thiserror::Error)]
pub enum GradeError {
    /// No Redis could be found or started.
    #[error(transparent)]
    Server(#[from] ServerError),
    /// A command the grader sent to observe or set up a scenario failed.
    #[error("the grader's own Redis command failed: {}", crate::server::explain(.0))]
    Redis(redis::RedisError),
    /// The run could not claim a key prefix of its own on the server.
    #[error(
        "the grader could not claim a key prefix of its own: {0} \
         (its Redis user needs SET and PEXPIRE on keys under GRADER_KEY_PREFIX, default dlcourse:)"
    )]
    Claim(String),
    /// Real time jumped under the check (a stopped process, a starved CPU), so
    /// the virtual clock cannot vouch for what Redis did meanwhile.
    #[error("the machine stalled ({0}): not a verdict on your lock; run again")]
    Stalled(String),
    /// The storage row holds something other than a whole number. The lock's
    /// storage put it there, so [`crate::checks::Check::run`] turns this into
    /// a failed check ([`crate::judge::storage::row_not_a_number`]), not a crash.
    #[error("the storage row's `{field}` field holds {held:?}, which is not a whole number")]
    RowNotANumber {
        /// `value` or `fence`.
        field: &'static str,
        /// What it held.
        held: String,
    },
    /// A check plays a scenario the grader's catalogue does not hold: a
    /// mistake in the grader, which the reference lock's tests catch first.
    #[error("check {check} plays the scenario {scenario:?}, which the grader's catalogue lacks")]
    NoSuchScenario {
        /// The check.
        check: &'static str,
        /// The scenario it names.
        scenario: &'static str,
    },
    /// A story does something its topology has not (a node's fault in a story on one server,
    /// a client it does not have): a mistake in the grader's catalogue of stories.
    #[error("the story {story:?} has {what}, which does not fit it")]
    StoryDoesNotFit {
        /// The story.
        story: &'static str,
        /// What does not fit.
        what: String,
    },
    /// An environment variable that steers the grader holds something it cannot read.
    #[error("{var} must be a number, in decimal or as 0x… hex, not {value:?}: fix or unset it")]
    Setting {
        /// The variable, e.g. `GRADER_SEED`.
        var: &'static str,
        /// What it held.
        value: String,
    },
}

impl From<redis::RedisError> for GradeError {
    /// An interrupted system call on a grader's connection is what a process
    /// stopped and continued (Ctrl-Z, `fg`) sees on a socket with a timeout:
    /// a stall, which [`crate::stall`] answers by running the check again.
    fn from(e: redis::RedisError) -> GradeError {
        if crate::stall::is_interrupted(&e) {
            crate::stall::noticed();
            GradeError::Stalled(format!("a system call was interrupted: {e}"))
        } else {
            GradeError::Redis(e)
        }
    }
}
