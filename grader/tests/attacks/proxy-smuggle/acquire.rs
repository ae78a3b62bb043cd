//! Attack: a command smuggled past the judge's proxy in a request it does not
//! read.
//!
//! Learner code hands its connection packed requests of its own making
//! (`req_packed_command`), and the judge's proxy takes each one apart to
//! decide what goes out. This `acquire` is a correct one (`SET key token NX PX
//! ttl`) that first sends `FLUSHALL` as an inline command, `FLUSHALL\r\n`,
//! which Redis reads as well as RESP but which is no RESP array for the
//! proxy to take apart, and swallows whatever comes back.
//!
//! A lock that sends `FLUSHALL` fails its check as a refusal, whatever it
//! does with the error; and what goes out is what the proxy read, or nothing.
//! A sound proxy refuses a request it cannot read: every check of this
//! `acquire` fails as a refusal (the honest grade of a lock that sends
//! FLUSHALL: 0 passes). If Redis answered the command itself, that is shown
//! as evidence.

#[path = "atk_kit.rs"]
mod kit;

use std::time::Duration;

use redis::{ConnectionLike, RedisResult};

pub fn acquire<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let inline = con.req_packed_command(b"FLUSHALL\r\n");
    let shown: String = format!("{inline:?}").chars().take(160).collect();
    if !shown.contains("refused by the grader") {
        kit::evidence("proxy-smuggle", &format!("an inline FLUSHALL reached Redis: {shown}"));
    }
    let reply: Option<String> = redis::cmd("SET")
        .arg(key)
        .arg(token)
        .arg("NX")
        .arg("PX")
        .arg(ttl.as_millis() as u64)
        .query(con)?;
    Ok(reply.is_some())
}
