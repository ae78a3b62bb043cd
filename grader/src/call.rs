//! What one call of the lock left behind, as data: the lines of its record
//! ([`Step`]) and, when it returned no value, how it failed ([`Failure`]).
//!
//! The wire writes the record and the sandbox names the failure; reports read
//! both. Kept apart from either so that a report, and the ledger of refused
//! commands, depend on these types alone, not on
//! the machinery that makes them.

/// One line of a call's record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A command the lock sent, and what Redis answered, as text.
    Sent {
        /// The command, as text.
        command: String,
        /// Redis's answer, as text.
        reply: String,
    },
    /// Something the grader made happen between two commands.
    Intervened(String),
}

/// How a call of the lock failed to return a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The function still holds its `todo!()`.
    NotStarted {
        /// The stub's message.
        message: String,
    },
    /// The function panicked.
    Panicked {
        /// The panic message.
        message: String,
        /// Where, as `file:line`, when known.
        location: Option<String>,
    },
    /// The function sent no command and did not return for the sandbox's `CALL_LIMIT`.
    TimedOut {
        /// How many commands it had sent by then.
        commands: usize,
    },
    /// The function sent more than the wire's `COMMAND_BUDGET` commands in one call.
    TooManyCommands,
    /// The function returned an error.
    Error {
        /// The error, as text.
        message: String,
    },
}
