//! What can stop the grader itself (as opposed to a learner's lock failing a
//! check): no Redis to run against, or a Redis command of the grader's own that
//! failed. Both end a check with a message saying what to do.

use crate::server::ServerError;

/// A problem of the grader's, not of the lock under test.
#[derive(Debug, thiserror::Error)]
pub enum GradeError {
    /// No Redis could be found or started.
    #[error(transparent)]
    Server(#[from] ServerError),
    /// A command the grader sent to observe or set up a scenario failed.
    #[error("the grader's own Redis command failed: {0}")]
    Redis(#[from] redis::RedisError),
    /// An environment variable that steers the grader holds something it cannot read.
    #[error("{var} must be a number, in decimal or as 0x… hex, not {value:?}: fix or unset it")]
    Setting {
        /// The variable, e.g. `GRADER_SEED`.
        var: &'static str,
        /// What it held.
        value: String,
    },
}
