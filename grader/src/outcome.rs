//! What one check came to, as the harness records it.
//!
//! A check's process answers with an [`Outcome`] on its private channel, or it
//! does not answer at all. Silence is never a pass: a process that ends without
//! a verdict, that dies from a signal, that runs out of memory or out of time,
//! is a failed check whose [`Cause`] says in plain words what happened to it.
//! So the run's result is counted from verdicts received, one per check.
//!
//! Plain data, below the checks: the harness makes it from a check's verdict
//! ([`crate::harness`]), and the learner's runner from its own end.

use std::fmt;

use rustix::process::Signal;
use serde::{Deserialize, Serialize};

/// How one check ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    /// The check's process said: every rule held.
    Passed,
    /// A function the check needs still holds its `todo!()`.
    NotStarted {
        /// What to do, e.g. "not started: `acquire` in exercises/src/acquire.rs still says todo!(…)".
        message: String,
    },
    /// A rule broke, or the lock's code failed: the grader's report.
    Failed {
        /// The report, as a learner reads it.
        report: String,
    },
    /// The grader could not run the check (no Redis, no such check).
    NotRun {
        /// Why, with what to do about it.
        reason: String,
    },
    /// The check's process gave no usable verdict.
    Crashed {
        /// What happened to it.
        cause: Cause,
    },
}

impl Outcome {
    /// The outcome of asking for a check by a name that is none.
    pub fn no_such_check(name: &str) -> Outcome {
        Outcome::NotRun {
            reason: format!(
                "no check is called {name:?}; `cargo test -p exercises -- --list` lists them \
                 (each exercise's are in its descriptor, the grader's exercise/ folder)"
            ),
        }
    }

    /// Whether this is a pass.
    pub fn passed(&self) -> bool {
        matches!(self, Outcome::Passed)
    }
}

/// How a check's process ended, as the operating system tells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "end", rename_all = "snake_case")]
pub enum End {
    /// It exited with this status.
    Exited {
        /// The exit status.
        code: i32,
    },
    /// A signal ended it.
    Signaled {
        /// The signal's number.
        signal: i32,
    },
    /// It allocated past the harness's memory limit and was aborted for it.
    OutOfMemory {
        /// The limit, in MiB.
        limit_mib: u64,
    },
    /// It was still running at the harness's time limit, and was killed.
    TimedOut {
        /// The limit, in seconds.
        limit_secs: u64,
    },
}

/// Reads after "its process": "its process exited with status 3".
impl fmt::Display for End {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            End::Exited { code: 0 } => write!(
                f,
                "exited with status 0 (something called std::process::exit)"
            ),
            End::Exited { code } => write!(f, "exited with status {code}"),
            End::Signaled { signal } if signal == Signal::ABORT.as_raw() => write!(
                f,
                "was aborted (SIGABRT: std::process::abort(), or a panic while another \
                 panic was unwinding, such as a panic in a Drop)"
            ),
            End::Signaled { signal } if signal == Signal::KILL.as_raw() => write!(
                f,
                "was killed (SIGKILL), perhaps by the system's out-of-memory killer"
            ),
            End::Signaled { signal } => write!(f, "was killed by signal {}", signal_name(signal)),
            End::OutOfMemory { limit_mib } => write!(
                f,
                "ran out of memory (it asked for more than the {limit_mib} MiB a check may use)"
            ),
            End::TimedOut { limit_secs } => write!(
                f,
                "was still running after {limit_secs} s of real time, and was killed"
            ),
        }
    }
}

/// Why a check has no usable verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum Cause {
    /// The process ended before the check gave its verdict.
    NoVerdict {
        /// How it ended.
        end: End,
    },
    /// The check gave its verdict, but then its process ended abnormally.
    EndedAfterVerdict {
        /// How it ended.
        end: End,
    },
    /// The private channel carried something that is not one verdict.
    Unreadable {
        /// What was wrong with it.
        problem: String,
    },
    /// The process running the learner's code (the runner) ended during the
    /// check; the check's own process then sent this as its verdict.
    CodeEnded {
        /// How the runner ended.
        end: End,
    },
    /// The check's process could not be started.
    NotStarted {
        /// The operating system's error.
        error: String,
    },
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cause::NoVerdict { end } => write!(f, "the check gave no verdict: its process {end}"),
            Cause::EndedAfterVerdict { end } => {
                write!(f, "the check gave its verdict, but then its process {end}")
            }
            Cause::CodeEnded { end } => {
                write!(
                    f,
                    "the check gave no verdict: the process running your code {end}"
                )
            }
            Cause::Unreadable { problem } => {
                write!(f, "the check's process sent no readable verdict: {problem}")
            }
            Cause::NotStarted { error } => {
                write!(f, "the grader could not start the check's process: {error}")
            }
        }
    }
}

/// A signal's usual name, e.g. `SIGSEGV (signal 11)`.
fn signal_name(signal: i32) -> String {
    let name = match Signal::from_named_raw(signal) {
        Some(Signal::SEGV) => "SIGSEGV, an invalid memory access",
        Some(Signal::BUS) => "SIGBUS, an invalid memory access",
        Some(Signal::ILL) => "SIGILL, an illegal instruction",
        Some(Signal::FPE) => "SIGFPE, an arithmetic fault",
        Some(Signal::TERM) => "SIGTERM",
        Some(Signal::INT) => "SIGINT",
        Some(Signal::HUP) => "SIGHUP",
        Some(Signal::PIPE) => "SIGPIPE, a write to a closed pipe",
        Some(Signal::TRAP) => "SIGTRAP",
        Some(Signal::XCPU) => "SIGXCPU, the CPU-time limit",
        _ => return format!("{signal}"),
    };
    format!("{signal} ({name})")
}
