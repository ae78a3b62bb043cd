//! Stopping a script that a lock under test left running.
//!
//! Redis runs one script at a time, and nothing else while it runs: a Lua loop that never ends
//! (a learner's `while` waiting for a key that never comes, or a hostile one) holds its server,
//! and every check after it, until someone stops it. The grader gives up on such a call after
//! [`crate::sandbox::CALL_LIMIT`] of silence; then it asks the server, on a connection of its
//! own, to kill the script (`SCRIPT KILL`, and `FUNCTION KILL` for a Redis function). Redis
//! takes that request once the script has run for its busy time (`busy-reply-threshold`, 5 s
//! by default), so the request may wait a few seconds. A script that has written cannot be
//! killed (Redis would lose its atomicity): it is said so, and the server stays busy.

use std::time::Duration;

use super::connect_url;

/// How long the grader waits for the server to take the kill: its busy time and a margin.
const KILL_PATIENCE: Duration = Duration::from_secs(10);

/// What became of a script the grader tried to stop.
#[derive(Debug, PartialEq, Eq)]
pub enum Stopped {
    /// A script or function was running, and Redis killed it.
    Killed,
    /// Nothing was running (the call was stuck elsewhere).
    NothingRunning,
    /// The script wrote before it got stuck: Redis refuses to kill it.
    Unkillable,
    /// The grader could not ask (no connection, no permission, no answer in time).
    CouldNotAsk(String),
}

/// Stops whatever script or function runs on the server at `url` (see the module's doc).
pub fn stop_scripts(url: &str) -> Stopped {
    let mut con = match connect_url(url) {
        Ok(con) => con,
        Err(cause) => return Stopped::CouldNotAsk(cause),
    };
    if let Err(e) = con.set_read_timeout(Some(KILL_PATIENCE)) {
        return Stopped::CouldNotAsk(e.to_string());
    }
    // Each kill stops its own kind: `SCRIPT KILL` answers BUSY when a function runs, and
    // `FUNCTION KILL` when a script does.
    for kill in [["SCRIPT", "KILL"], ["FUNCTION", "KILL"]] {
        match redis::cmd(kill[0]).arg(kill[1]).exec(&mut con) {
            Ok(()) => return Stopped::Killed,
            Err(e) if matches!(e.code(), Some("NOTBUSY" | "BUSY")) => {}
            Err(e) if e.code() == Some("UNKILLABLE") => return Stopped::Unkillable,
            Err(e) => return Stopped::CouldNotAsk(e.to_string()),
        }
    }
    Stopped::NothingRunning
}
