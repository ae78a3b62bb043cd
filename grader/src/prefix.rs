//! Key prefixes no other run can have.
//!
//! Many test processes may share one Redis: a class of learners on one server,
//! CI jobs in containers whose test processes all have pid 1. So the prefix of
//! a run's keys is not derived from anything a second run could also have (a
//! pid, a clock): it is a random run id, drawn from the operating system, and
//! *claimed* on the server with `SET … NX` before the first key is written.
//! Should two runs ever draw the same id, the second one's claim fails and it
//! draws again; should a run be killed, its claim outlives every key the run
//! may have left (they carry a safety TTL, [`SAFETY_TTL_MS`]), so
//! no later run can take the id while those keys still exist. While the run
//! lasts, a thread of its own keeps the claim alive.
//!
//! Every key of the course starts with the course prefix, `dlcourse:` unless
//! `GRADER_KEY_PREFIX` says otherwise, so that an instructor can give the
//! grader a Redis user limited to that prefix on a shared server.

use std::sync::OnceLock;
use std::time::Duration;

use redis::Connection;

use crate::error::GradeError;
use crate::server;

/// How long the grader's own keys survive a killed test process, in ms: every
/// key under a run's prefix carries it, so the prefix's claim is made to
/// outlive it.
pub const SAFETY_TTL_MS: u64 = 3_600_000;

/// The course prefix when `GRADER_KEY_PREFIX` is not set.
pub const DEFAULT_COURSE_PREFIX: &str = "dlcourse:";

/// How long a claim lasts without being renewed: longer than any key of the
/// run can live, so that a killed run's id stays taken while its keys exist.
const CLAIM_TTL_MS: u64 = SAFETY_TTL_MS + 600_000;

/// How often the claim is renewed while the run lasts.
const RENEW_EVERY: Duration = Duration::from_secs(300);

/// How many ids a run draws before it gives up (a second draw is already
/// as likely as two runs drawing the same 64 random bits).
const DRAWS: usize = 4;

/// The course prefix: `GRADER_KEY_PREFIX`, or [`DEFAULT_COURSE_PREFIX`].
pub fn course() -> &'static str {
    static COURSE: OnceLock<String> = OnceLock::new();
    COURSE.get_or_init(|| {
        std::env::var("GRADER_KEY_PREFIX")
            .ok()
            .filter(|p| !p.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_COURSE_PREFIX.to_owned())
    })
}

/// The claimed prefix of this run, `<course><run id>:`, claimed on the first
/// call. Every later call gets the same prefix (or the same error).
pub fn run() -> Result<&'static str, GradeError> {
    static RUN: OnceLock<Result<String, String>> = OnceLock::new();
    RUN.get_or_init(|| claim().map_err(|e| e.to_string()))
        .as_deref()
        .map_err(|e| GradeError::Claim(e.to_owned()))
}

/// The key that records the claim of run id `id`.
fn claim_key(id: &str) -> String {
    format!("{}{id}", course())
}

/// The run id in a run prefix: `4f1c…` for `dlcourse:4f1c…:`.
pub fn run_id(run_prefix: &str) -> &str {
    run_prefix
        .strip_prefix(course())
        .unwrap_or(run_prefix)
        .trim_end_matches(':')
}

/// Whether run id `id` is still claimed (its run lives, or died less than
/// `CLAIM_TTL_MS` ago).
pub fn is_claimed(con: &mut Connection, id: &str) -> Result<bool, GradeError> {
    Ok(redis::cmd("EXISTS").arg(claim_key(id)).query(con)?)
}

fn claim() -> Result<String, GradeError> {
    let mut con = server::shared()?.connect()?;
    for _ in 0..DRAWS {
        let id = fresh_id()?;
        let claimed: Option<String> = redis::cmd("SET")
            .arg(claim_key(&id))
            .arg(format!("pid {}", std::process::id()))
            .arg("NX")
            .arg("PX")
            .arg(CLAIM_TTL_MS)
            .query(&mut con)?;
        if claimed.is_some() {
            keep_alive(con, claim_key(&id));
            return Ok(format!("{}{id}:", course()));
        }
    }
    Err(GradeError::Claim(format!(
        "{DRAWS} random run ids in a row were taken on the server: is its random source broken?"
    )))
}

/// 64 random bits as 16 hex digits, from the operating system.
fn fresh_id() -> Result<String, GradeError> {
    crate::random::hex::<8>()
        .map_err(|e| GradeError::Claim(format!("the operating system's random source: {e}")))
}

/// Renews the claim on `con` every [`RENEW_EVERY`] for as long as the process
/// lives. A failed renewal is retried at the next turn: the claim lasts far
/// longer than one turn.
fn keep_alive(mut con: Connection, key: String) {
    let renew = move || {
        loop {
            std::thread::sleep(RENEW_EVERY);
            let _ = redis::cmd("PEXPIRE")
                .arg(&key)
                .arg(CLAIM_TTL_MS)
                .exec(&mut con);
        }
    };
    // Without the thread the claim still lasts over an hour; runs are shorter.
    let _ = std::thread::Builder::new()
        .name("run-id-claim".into())
        .spawn(renew);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_sixteen_hex_digits_and_differ() {
        let (a, b) = (fresh_id().unwrap(), fresh_id().unwrap());
        assert_eq!(a.len(), 16);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()), "{a}");
        assert_ne!(a, b);
    }

    #[test]
    fn the_run_id_is_read_back_from_its_prefix() {
        let prefix = format!("{}0123456789abcdef:", course());
        assert_eq!(run_id(&prefix), "0123456789abcdef");
    }
}
