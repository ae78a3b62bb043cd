//! Running a learner's function without letting it take the grader down.
//!
//! Learner code is allowed to be unfinished or wrong: a `todo!()`, a panic, an
//! endless loop, a loop that hammers Redis. Each call therefore runs on a
//! thread of its own, with the [`Wire`] moved in and handed back at the end.
//! For the learner's lock that thread only waits on the learner's runner,
//! serving its commands ([`crate::remote`]); the runner's panics come back as
//! [`crate::remote::RemotePanic`] and are named here like any other.
//! The grader waits as long as the call makes progress, and at most
//! [`CALL_LIMIT`] after its last Redis command; a call that goes quiet for
//! longer is abandoned (its thread is left to spin until the test process
//! ends) and reported, and the other checks go on. A loop that keeps sending
//! commands is stopped by the command budget instead, however slow the
//! machine: so the same loop gets the same verdict on a loaded machine. Panics on these threads are caught
//! and kept out of the test output, so a stub reads "not started", not a
//! backtrace.
//!
//! redis-rs itself may end such a call in ways a learner does not expect: it
//! panics on some misuses of its API (an `.arg()` on a pipeline that has no
//! command yet), and it turns a reply into an error when the type the code
//! asked for cannot hold it (`nil` from an `EXEC` that a changed `WATCH`ed key
//! aborted, read into a tuple). Both are told as what they are, with the
//! reply or the call to look at, not as a bare panic or parse error.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use redis::RedisResult;

pub use crate::call::Failure;
use crate::wire::{COMMAND_BUDGET, OverBudget, Wire};

/// How long one call of the lock may go on in real time without sending a
/// Redis command. Redis answers in well under a millisecond here, and virtual
/// time costs nothing, so a call quiet for seconds is stuck.
pub const CALL_LIMIT: Duration = Duration::from_secs(3);

/// The name of the threads that run learner code.
const LEARNER_THREAD: &str = "lock-under-test";

// Worded here, beside the limits it names ([`CALL_LIMIT`], [`COMMAND_BUDGET`]), which this
// module enforces.
impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::NotStarted { message } => write!(f, "not started: {message}"),
            Failure::Panicked {
                message,
                location: Some(at),
            } => match in_redis_crate(at) {
                Some(at) => write!(
                    f,
                    "made redis-rs panic (at {at}, in redis-rs's code, not yours) on a call it \
                     made: {message}. redis-rs panics on some misuses of its API, such as an \
                     `.arg()` on a pipeline before any `.cmd()`: check the redis-rs call that \
                     leads there"
                ),
                None => write!(f, "panicked at {at}: {message}"),
            },
            Failure::Panicked {
                message,
                location: None,
            } => write!(f, "panicked: {message}"),
            Failure::TimedOut { commands } => write!(
                f,
                "did not return, and sent no Redis command for {} s (it had sent {commands} in all): an endless loop?",
                CALL_LIMIT.as_secs()
            ),
            Failure::TooManyCommands => write!(
                f,
                "sent more than {COMMAND_BUDGET} Redis commands in one call: a retry loop that never ends?"
            ),
            Failure::Error { message } => write!(f, "returned an error: {message}"),
        }
    }
}

/// Installs, once, the hook that keeps learner-thread panics quiet and
/// notes where they happened; panics elsewhere still print as usual.
fn quiet_learner_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| lock_runner::panics::quiet_on(LEARNER_THREAD));
}

/// Runs `f` on a thread of its own, within [`CALL_LIMIT`], catching panics.
///
/// This is for learner code that needs no connection, such as `new_token`.
pub fn isolated<T, F>(f: F) -> Result<T, Failure>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    watched(f, None)
}

/// Runs `f` like [`isolated`], but while `progress` (a count of commands
/// sent) keeps moving, the time limit starts again: only a call that is quiet
/// for [`CALL_LIMIT`] times out.
fn watched<T, F>(f: F, progress: Option<&AtomicUsize>) -> Result<T, Failure>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    quiet_learner_panics();
    let (done, result) = mpsc::sync_channel(1);
    let spawned = thread::Builder::new()
        .name(LEARNER_THREAD.into())
        .spawn(move || {
            let outcome = panic::catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
                let location = lock_runner::panics::take_location();
                panic_failure(payload, location)
            });
            let _ = done.send(outcome);
        });
    if let Err(e) = spawned {
        let message = format!("could not start a thread: {e}");
        return Err(Failure::Panicked {
            message,
            location: None,
        });
    }
    let sent = || progress.map_or(0, |count| count.load(Ordering::Relaxed));
    let mut seen = sent();
    loop {
        match result.recv_timeout(CALL_LIMIT) {
            Ok(outcome) => return outcome,
            Err(mpsc::RecvTimeoutError::Timeout) if sent() != seen => seen = sent(),
            Err(_) => return Err(Failure::TimedOut { commands: seen }),
        }
    }
}

/// Runs `f` on the lock's behalf with `wire`, like [`isolated`].
///
/// Returns the wire (unless the call panicked or was abandoned) and the
/// call's value or why there is none. Any intervention that the call did not
/// reach fires after it returns, still within the call's record.
pub fn call<T, F>(mut wire: Wire, f: F) -> (Option<Wire>, Result<T, Failure>)
where
    T: Send + 'static,
    F: FnOnce(&mut Wire) -> RedisResult<T> + Send + 'static,
{
    wire.begin_call();
    let sent = wire.sent_counter();
    let server = wire.server_url();
    let outcome = watched(
        move || {
            let value = f(&mut wire);
            wire.leave_turns();
            (wire, value)
        },
        Some(&*sent),
    );
    match outcome {
        Ok((mut wire, Ok(value))) => match wire.fire_if_pending() {
            Ok(()) => (Some(wire), Ok(value)),
            Err(e) => {
                let message = format!("grader problem, not yours: {e}");
                (Some(wire), Err(Failure::Error { message }))
            }
        },
        Ok((wire, Err(e))) => (
            Some(wire),
            Err(Failure::Error {
                message: describe_error(&e),
            }),
        ),
        Err(Failure::TimedOut { commands }) => {
            // The call may be stuck in a script that holds its server: stop it, so that the
            // checks after this one find the server free. The commands are counted as the
            // grader gave up: once the script is stopped, the call goes on, and its command
            // would be counted or not as the threads happen to run.
            if let Some(url) = server {
                crate::server::stop_scripts(&url);
            }
            (None, Err(Failure::TimedOut { commands }))
        }
        Err(failure) => (None, Err(failure)),
    }
}

/// A panic location inside the redis crate, shortened to the crate's own path
/// (`redis-1.8.1/src/pipeline.rs:382`); `None` for any other location.
fn in_redis_crate(location: &str) -> Option<&str> {
    let mut start = 0;
    for part in location.split('/') {
        let version = part.strip_prefix("redis-");
        if version.is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit())) {
            return Some(&location[start..]);
        }
        start += part.len() + 1;
    }
    None
}

/// An error the lock's code returned, with what lies behind those that
/// redis-rs words for its own readers: a reply the asked-for type cannot hold,
/// a transaction Redis refused as a whole, a server that did not answer.
fn describe_error(e: &redis::RedisError) -> String {
    let text = e.to_string();
    if text.contains("(value was nil)") {
        format!(
            "{text}: Redis answered nil, which the type your code asked redis-rs for cannot hold. \
             EXEC answers nil when a WATCHed key changed and the transaction was aborted (GET of \
             a missing key answers nil too): ask for an Option, e.g. `Option<(i64,)>`, and \
             handle None"
        )
    } else if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::ExecAbort) {
        format!(
            "{text}: Redis refused the whole transaction (EXECABORT) because it refused a \
             command in it when queued, so none of its commands ran"
        )
    } else if e.is_timeout() {
        // A paused or overloaded server, not the lock: say so, as the grader's own errors do.
        crate::server::explain(e)
    } else {
        text
    }
}

/// Classifies a panic: `todo!()` and `unimplemented!()` mean "not started".
fn panic_failure(payload: Box<dyn Any + Send>, location: Option<String>) -> Failure {
    if payload.is::<OverBudget>() {
        return Failure::TooManyCommands;
    }
    // A panic in the learner's runner, told by the runner: its own message and place.
    let (payload, location) = match payload.downcast::<crate::remote::RemotePanic>() {
        Ok(remote) => (
            Box::new(remote.message) as Box<dyn Any + Send>,
            remote.location,
        ),
        Err(payload) => (payload, location),
    };
    let message = lock_runner::panics::message(payload.as_ref());
    for prefix in ["not yet implemented", "not implemented"] {
        if let Some(rest) = message.strip_prefix(prefix) {
            let rest = rest.trim_start_matches(':').trim();
            let message = if rest.is_empty() {
                prefix.to_string()
            } else {
                rest.to_string()
            };
            return Failure::NotStarted { message };
        }
    }
    Failure::Panicked { message, location }
}
