//! What the lock's code hands the wire, read whole before anything goes out.
//!
//! Learner code may pack its requests itself (`req_packed_command`,
//! `req_packed_commands`), so a request is whatever bytes it chose: an inline
//! command (`FLUSHALL\r\n`, which Redis reads as well as RESP), a command cut
//! short, two commands where one was announced, a pipeline that asks for
//! fewer replies than it has commands. Sent on as they came, such bytes would
//! reach Redis without the filter having read them, and a reply left unread
//! on the connection would answer the grader's next question in place of its
//! own. So the wire reads each request exactly ([`super::show::unpack_exact`])
//! and sends on only the commands it read, re-packed; a request it cannot
//! read, or whose replies would not match its commands, is refused like a
//! command off the list.

use super::show::unpack_exact;
use crate::confine::Refusal;

/// The one command in `packed` (a request that expects one reply), or why the
/// wire does not send it.
pub(super) fn one(packed: &[u8]) -> Result<Vec<Vec<u8>>, Refusal> {
    match commands(packed)?.as_mut_slice() {
        [one] => Ok(std::mem::take(one)),
        several => Err(unreadable(&format!(
            "it holds {} commands where one was sent",
            several.len()
        ))),
    }
}

/// The commands of a pipeline that expects `count` replies after skipping
/// `offset` (redis-rs's own pipelines: `0, n` for n commands, `n + 1, 1`
/// for a transaction of n between `MULTI` and `EXEC`), or why the wire does
/// not send it.
pub(super) fn pipeline(
    packed: &[u8],
    offset: usize,
    count: usize,
) -> Result<Vec<Vec<Vec<u8>>>, Refusal> {
    let commands = commands(packed)?;
    if offset.checked_add(count) != Some(commands.len()) {
        return Err(unreadable(&format!(
            "it holds {} commands but asks for {} replies",
            commands.len(),
            offset.saturating_add(count)
        )));
    }
    Ok(commands)
}

/// The commands of `packed`, each with a name, or why it cannot be read.
fn commands(packed: &[u8]) -> Result<Vec<Vec<Vec<u8>>>, Refusal> {
    match unpack_exact(packed) {
        Some(commands) if !commands.is_empty() && commands.iter().all(|c| !c.is_empty()) => {
            Ok(commands)
        }
        _ => Err(unreadable(
            "it is not made of whole commands in RESP, the protocol redis-rs writes (an inline \
             command, or bytes cut short or left over)",
        )),
    }
}

fn unreadable(what: &str) -> Refusal {
    Refusal {
        command: "a request the grader could not read".to_owned(),
        why: format!(
            "the grader sends on only what it has read, and {what}: pack commands with \
             redis::cmd or redis::pipe"
        ),
    }
}

/// How the record shows a request it could not read: its first bytes, as text.
pub(super) fn label(packed: &[u8]) -> Vec<u8> {
    let start: String = String::from_utf8_lossy(&packed[..packed.len().min(48)])
        .escape_debug()
        .collect();
    let text = format!("[unread request] {start}");
    redis::cmd(&text).get_packed_command()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_goes_on_only_as_the_commands_it_is_read_as() {
        let set = redis::cmd("SET").arg("k").arg("v").get_packed_command();
        assert_eq!(one(&set).expect("one command")[0], b"SET");
        let two = [set.clone(), set.clone()].concat();
        assert!(one(&two).is_err());
        assert!(one(b"FLUSHALL\r\n").is_err());
        assert!(one(b"*0\r\n").is_err());
        assert!(one(b"").is_err());
        let transaction = redis::pipe()
            .atomic()
            .cmd("DEL")
            .arg("k")
            .get_packed_pipeline();
        assert_eq!(pipeline(&transaction, 2, 1).map(|c| c.len()), Ok(3));
        assert_eq!(pipeline(&two, 0, 2).map(|c| c.len()), Ok(2));
        for (offset, count) in [(0, 1), (0, 3), (usize::MAX, 2)] {
            assert!(pipeline(&two, offset, count).is_err(), "{offset} {count}");
        }
    }
}
