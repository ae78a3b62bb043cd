//! What the lock's code may send: the commands the exercises need, on the keys
//! a check hands over, and nothing else.
//!
//! Learner code talks to a real, possibly shared, Redis. A `FLUSHALL`, a
//! `KEYS *` followed by `DEL`, a `CONFIG SET` or a `SHUTDOWN` would reach other
//! runs' keys, other learners' checks, the server itself. So the [`Wire`]
//! holds every command up against [`COMMANDS`], the one list of what the
//! exercises need (string, hash, TTL and counter commands, scripts,
//! transactions), and against the keys its world handed over (the lock, the
//! fence counter, the row; for a script, the keys it declares in KEYS). A
//! command that fails either test is never sent: the lock's code gets an
//! error reply, the call's record shows the refusal, and the check fails with
//! a report that names the command and says why ([`watched`]).
//!
//! Inside a Lua script Redis runs whatever the script calls. Where the grader
//! may create Redis users, [`crate::acl`] confines scripts for real; where it
//! may not, this filter is all there is (see the README's section for
//! instructors).
//!
//! [`Wire`]: crate::wire::Wire

use std::cell::RefCell;
use std::sync::{Arc, Mutex};

use crate::error::GradeError;
use crate::lock::Lock;
use crate::report::{Report, Verdict};
use crate::verdict::{Property, Violation};
use crate::wire::Step;

/// Which arguments of a command are key names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyArgs {
    /// None.
    None,
    /// The first argument.
    First,
    /// Every argument.
    All,
    /// Every other argument, from the first (`MSET k v k v`).
    Pairs,
    /// A script's KEYS: a count, then that many names (`EVAL script n k…`).
    Script,
}

/// Every command the lock's code may send, with where its keys are: the
/// exercises' needs, and nothing that reaches beyond a check's keys. A
/// subcommand is written `SCRIPT|LOAD`, as Redis ACLs write it.
pub const COMMANDS: &[(&str, KeyArgs)] = &[
    // Strings and counters.
    ("GET", KeyArgs::First),
    ("SET", KeyArgs::First),
    ("SETNX", KeyArgs::First),
    ("SETEX", KeyArgs::First),
    ("PSETEX", KeyArgs::First),
    ("GETSET", KeyArgs::First),
    ("GETDEL", KeyArgs::First),
    ("GETEX", KeyArgs::First),
    ("MGET", KeyArgs::All),
    ("MSET", KeyArgs::Pairs),
    ("MSETNX", KeyArgs::Pairs),
    ("APPEND", KeyArgs::First),
    ("STRLEN", KeyArgs::First),
    ("INCR", KeyArgs::First),
    ("INCRBY", KeyArgs::First),
    ("INCRBYFLOAT", KeyArgs::First),
    ("DECR", KeyArgs::First),
    ("DECRBY", KeyArgs::First),
    // Keys and their TTLs.
    ("DEL", KeyArgs::All),
    ("UNLINK", KeyArgs::All),
    ("EXISTS", KeyArgs::All),
    ("TYPE", KeyArgs::First),
    ("EXPIRE", KeyArgs::First),
    ("PEXPIRE", KeyArgs::First),
    ("EXPIREAT", KeyArgs::First),
    ("PEXPIREAT", KeyArgs::First),
    ("TTL", KeyArgs::First),
    ("PTTL", KeyArgs::First),
    ("EXPIRETIME", KeyArgs::First),
    ("PEXPIRETIME", KeyArgs::First),
    ("PERSIST", KeyArgs::First),
    // Hashes (the storage row).
    ("HSET", KeyArgs::First),
    ("HSETNX", KeyArgs::First),
    ("HMSET", KeyArgs::First),
    ("HGET", KeyArgs::First),
    ("HMGET", KeyArgs::First),
    ("HGETALL", KeyArgs::First),
    ("HDEL", KeyArgs::First),
    ("HEXISTS", KeyArgs::First),
    ("HINCRBY", KeyArgs::First),
    ("HINCRBYFLOAT", KeyArgs::First),
    ("HKEYS", KeyArgs::First),
    ("HVALS", KeyArgs::First),
    ("HLEN", KeyArgs::First),
    ("HSTRLEN", KeyArgs::First),
    // Scripts: their keys are their KEYS; loading is what redis-rs does on NOSCRIPT.
    ("EVAL", KeyArgs::Script),
    ("EVALSHA", KeyArgs::Script),
    ("EVAL_RO", KeyArgs::Script),
    ("EVALSHA_RO", KeyArgs::Script),
    ("SCRIPT|LOAD", KeyArgs::None),
    ("SCRIPT|EXISTS", KeyArgs::None),
    // Transactions.
    ("WATCH", KeyArgs::All),
    ("UNWATCH", KeyArgs::None),
    ("MULTI", KeyArgs::None),
    ("EXEC", KeyArgs::None),
    ("DISCARD", KeyArgs::None),
    // The connection itself.
    ("PING", KeyArgs::None),
    ("ECHO", KeyArgs::None),
];

/// Commands with subcommands: their name is `NAME|SUBCOMMAND`.
const WITH_SUBCOMMANDS: &[&str] = &[
    "SCRIPT", "CLIENT", "CONFIG", "ACL", "FUNCTION", "OBJECT", "MEMORY", "DEBUG", "CLUSTER",
    "COMMAND", "XINFO", "MODULE", "SLOWLOG", "LATENCY",
];

/// A command the grader did not send, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The command's name, e.g. `FLUSHALL` or `SCRIPT|FLUSH`.
    pub command: String,
    /// Why, in words a learner can act on.
    pub why: String,
}

/// The command's name as [`COMMANDS`] writes it: upper case, with its
/// subcommand for those that have one.
pub fn name_of(args: &[Vec<u8>]) -> String {
    let name = args
        .first()
        .map(|a| String::from_utf8_lossy(a).to_ascii_uppercase())
        .unwrap_or_default();
    match args.get(1) {
        Some(sub) if WITH_SUBCOMMANDS.contains(&name.as_str()) => {
            format!(
                "{name}|{}",
                String::from_utf8_lossy(sub).to_ascii_uppercase()
            )
        }
        _ => name,
    }
}

/// Whether `args` may go out on a wire whose world handed over `handed`.
pub fn judge(args: &[Vec<u8>], handed: &[String]) -> Result<(), Refusal> {
    let command = name_of(args);
    let refuse = |why: String| Refusal {
        command: command.clone(),
        why,
    };
    let Some(&(_, keys)) = COMMANDS.iter().find(|(name, _)| *name == command) else {
        return Err(refuse(format!(
            "{} is not among the commands the exercises need; the grader lets through only \
             those, on the keys a check hands over",
            command.replace('|', " ")
        )));
    };
    let rest = args.get(1..).unwrap_or_default();
    let named: Vec<&Vec<u8>> = match keys {
        KeyArgs::None => vec![],
        KeyArgs::First => rest.iter().take(1).collect(),
        KeyArgs::All => rest.iter().collect(),
        KeyArgs::Pairs => rest.iter().step_by(2).collect(),
        KeyArgs::Script => {
            let count = rest
                .get(1)
                .and_then(|n| std::str::from_utf8(n).ok()?.parse::<usize>().ok());
            match count {
                // Redis itself rejects a bad count; nothing can reach a key.
                None => vec![],
                Some(n) => rest.iter().skip(2).take(n).collect(),
            }
        }
    };
    for key in named {
        let key = String::from_utf8_lossy(key);
        if !handed.iter().any(|h| *h == key) {
            let whose = if keys == KeyArgs::Script {
                "the script's KEYS name"
            } else {
                "it names"
            };
            return Err(refuse(format!(
                "{whose} `{key}`, a key this check did not hand over (only the lock, the fence \
                 counter and the row are yours)"
            )));
        }
    }
    Ok(())
}

/// Redis's own refusal of a command to a confined user ([`crate::acl`]), as
/// text, if `reply` is one: a script that reached beyond its keys or its
/// commands (a pipeline's replies are searched too).
pub fn refused_by_redis(reply: &redis::RedisResult<redis::Value>) -> Option<String> {
    fn denial(code: &str, details: &str) -> Option<String> {
        let by_acl = code.eq_ignore_ascii_case("NOPERM")
            || details.contains("The user executing the script can't");
        by_acl.then(|| {
            format!("{code} {details}")
                .trim()
                .trim_end_matches('.')
                .to_owned()
        })
    }
    fn search(value: &redis::Value) -> Option<String> {
        match value {
            redis::Value::ServerError(e) => denial(e.code(), e.details().unwrap_or("")),
            redis::Value::Array(items) => items.iter().find_map(search),
            _ => None,
        }
    }
    match reply {
        Ok(value) => search(value),
        Err(e) => denial(e.code().unwrap_or(""), e.detail().unwrap_or("")),
    }
}

// ------------------------------------------------------------ the check's ledger

/// Refusals seen during one check, with the call's record up to each.
#[derive(Default, Debug)]
pub struct Ledger {
    entries: Mutex<Vec<(Refusal, Vec<Step>)>>,
}

impl Ledger {
    /// Notes a refusal and the record of the call that made it.
    pub fn note(&self, refusal: Refusal, record: Vec<Step>) {
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((refusal, record));
    }

    fn first(&self) -> Option<(Refusal, Vec<Step>)> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.first().cloned()
    }
}

thread_local! {
    /// The ledger of the check running on this thread, which wires opened
    /// here report to.
    static CURRENT: RefCell<Option<Arc<Ledger>>> = const { RefCell::new(None) };
}

/// The ledger of the check running on this thread, if any.
pub fn current_ledger() -> Option<Arc<Ledger>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Runs the check `check` on `lock`, and fails it if the lock's code sent a
/// command the grader refused, whatever the check itself concluded: code that
/// swallows the error reply must not pass with a `FLUSHALL` in its record.
pub fn watched(
    check: &str,
    lock: &Lock,
    run: impl FnOnce() -> Result<Verdict, GradeError>,
) -> Result<Verdict, GradeError> {
    let ledger = Arc::new(Ledger::default());
    let outer = CURRENT.with(|c| c.replace(Some(Arc::clone(&ledger))));
    let outcome = run();
    CURRENT.with(|c| *c.borrow_mut() = outer);
    let verdict = outcome?;
    Ok(match ledger.first() {
        None => verdict,
        Some((refusal, record)) => Verdict::Fail(Box::new(refused(check, lock, &refusal, &record))),
    })
}

/// The report for a refused command.
fn refused(check: &str, lock: &Lock, refusal: &Refusal, record: &[Step]) -> Report {
    let shown = refusal.command.replace('|', " ");
    let violation = Violation::anytime(
        Property::KeepsToItsKeys,
        format!(
            "your code sent {shown}, which the grader refused: {}",
            refusal.why
        ),
    );
    let mut evidence = String::from("What your code sent, up to the refused command:\n");
    let mut n = 0;
    for step in record {
        match step {
            Step::Sent { command, reply } => {
                n += 1;
                evidence.push_str(&format!("  {n}. {command} → {reply}\n"));
            }
            Step::Intervened(what) => evidence.push_str(&format!("  ⚡ {what}\n")),
        }
    }
    Report::broken(check, lock.name, violation, vec![evidence])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<Vec<u8>> {
        line.split(' ').map(|a| a.as_bytes().to_vec()).collect()
    }

    fn handed() -> Vec<String> {
        vec!["w:lock".into(), "w:fence".into(), "w:row".into()]
    }

    #[test]
    fn the_exercises_commands_on_handed_keys_go_through() {
        for line in [
            "SET w:lock t NX PX 10000",
            "get w:lock",
            "EVALSHA abc 2 w:lock w:fence t 10000",
            "EVAL return 0",
            "MULTI",
            "SCRIPT LOAD x",
            "HSET w:row value 1 fence 33",
            "MSET w:lock a w:row b",
        ] {
            assert_eq!(judge(&args(line), &handed()), Ok(()), "{line}");
        }
    }

    #[test]
    fn other_commands_and_other_keys_are_refused_with_a_reason() {
        for (line, command, why) in [
            ("FLUSHALL", "FLUSHALL", "not among the commands"),
            ("keys *", "KEYS", "not among the commands"),
            ("SCRIPT FLUSH", "SCRIPT|FLUSH", "SCRIPT FLUSH is not among"),
            ("CLIENT KILL 1", "CLIENT|KILL", "not among the commands"),
            (
                "DEL w:lock other",
                "DEL",
                "`other`, a key this check did not hand over",
            ),
            ("EVAL s 1 other", "EVAL", "the script's KEYS name `other`"),
            ("MSET w:lock a other b", "MSET", "`other`"),
        ] {
            let refusal = judge(&args(line), &handed()).expect_err(line);
            assert_eq!(refusal.command, command, "{line}");
            assert!(refusal.why.contains(why), "{line}: {}", refusal.why);
        }
    }

    #[test]
    fn only_an_error_reply_of_redis_s_access_control_is_a_refusal() {
        let parsed = |resp: &[u8]| redis::parse_redis_value(resp);
        let denied =
            parsed(b"-NOPERM this user has no permissions to run the 'flushall' command\r\n");
        assert!(refused_by_redis(&denied).is_some_and(|d| d.contains("'flushall'")));
        let script =
            parsed(b"-ERR The user executing the script can't access at least one of the keys\r\n");
        assert!(refused_by_redis(&script).is_some());
        for other in [
            &b"$6\r\nNOPERM\r\n"[..],
            b"-ERR wrong number of arguments\r\n",
        ] {
            assert_eq!(refused_by_redis(&parsed(other)), None);
        }
    }

    #[test]
    fn every_listed_command_has_a_place_for_its_keys_and_is_named_once() {
        let mut names: Vec<&str> = COMMANDS.iter().map(|(n, _)| *n).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), COMMANDS.len());
    }
}
