//! A check's namespace: every key learner code names is made one of its own.
//!
//! Learner code may name any key it likes: the lock it was handed, a key
//! derived from it (`lock:signal`), one of a fixed name. The wire keeps every
//! one inside the world's namespace, the prefix its lock, counter and row
//! share: a name that starts with it is left alone, any other gets it put in
//! front. So a lock that names a second key works as it would on a Redis of
//! its own, and a `DEL` of someone else's key deletes only a key of the
//! namespace that happens to end with that name. Functions are kept apart
//! the same way, by a prefix of the check's own ([`super::functions`]).

use super::Refusal;
use super::commands::{Shape, name_of, shape_of};
use super::functions;

/// How long a `WAIT` may wait, in real milliseconds: the course's replicas
/// answer well within it, and a check must not hang on a server that has none.
pub const WAIT_LIMIT_MS: u64 = 100;

/// Where one wire's keys and functions live.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Namespace {
    /// The world's key prefix.
    keys: String,
    /// The check's prefix for library and function names.
    functions: String,
}

/// A command as the wire sends it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Admitted {
    /// The arguments to send: keys inside the namespace, names of functions
    /// the check's own.
    pub args: Vec<Vec<u8>>,
    /// The keys it names, as sent.
    pub keys: Vec<String>,
    /// The wire answers it itself, on the virtual clock (`TIME`).
    pub answered_here: bool,
}

impl Namespace {
    /// The namespace of keys starting with `keys`, and of functions and
    /// libraries starting with `functions` (letters, digits and `_` only).
    pub fn new(keys: &str, functions: &str) -> Namespace {
        Namespace {
            keys: keys.to_owned(),
            functions: functions.to_owned(),
        }
    }

    /// The key prefix.
    pub fn keys(&self) -> &str {
        &self.keys
    }

    /// The prefix of the check's functions and libraries.
    pub fn functions(&self) -> &str {
        &self.functions
    }

    /// `name` as a key of the namespace.
    pub fn key(&self, name: &[u8]) -> Vec<u8> {
        if name.starts_with(self.keys.as_bytes()) {
            name.to_vec()
        } else {
            [self.keys.as_bytes(), name].concat()
        }
    }

    /// `name` as a function of the check.
    fn function(&self, name: &[u8]) -> Vec<u8> {
        [self.functions.as_bytes(), name].concat()
    }
}

/// The command `args` as the wire sends it, or why it does not.
pub fn admit(args: &[Vec<u8>], ns: &Namespace) -> Result<Admitted, Refusal> {
    let command = name_of(args);
    let refuse = |why: String| Refusal {
        command: command.clone(),
        why,
    };
    let Some(shape) = shape_of(&command) else {
        return Err(refuse(format!(
            "{} acts beyond a lock's own keys (on the whole server, other clients or other \
             databases) or waits in real time, which no lock needs; a lock may send commands on \
             keys, scripts, functions, transactions, and TIME, INFO replication and WAIT",
            command.replace('|', " ")
        )));
    };
    let mut out = args.to_vec();
    let key_at: Vec<usize> = match shape {
        Shape::None | Shape::Time | Shape::Info | Shape::Wait | Shape::Library => vec![],
        Shape::First => (1..out.len().min(2)).collect(),
        Shape::All => (1..out.len()).collect(),
        Shape::Pairs => (1..out.len()).step_by(2).collect(),
        Shape::Script | Shape::Function => {
            let count = out
                .get(2)
                .and_then(|n| std::str::from_utf8(n).ok()?.parse::<usize>().ok());
            // Redis itself rejects a bad count; no key is reached.
            count.map_or(vec![], |n| (3..out.len().min(3 + n)).collect())
        }
    };
    match shape {
        Shape::Function => {
            if let Some(name) = out.get_mut(1) {
                *name = ns.function(name);
            }
        }
        Shape::Library => {
            let code = out.last_mut().filter(|_| args.len() > 2);
            if let Some(code) = code {
                *code = functions::library(code, ns.functions()).map_err(refuse)?;
            }
        }
        Shape::Info => {
            let replication = |a: &Vec<u8>| a.eq_ignore_ascii_case(b"replication");
            if args.len() < 2 || !args[1..].iter().all(replication) {
                return Err(refuse(
                    "INFO reports on the whole server; a lock may ask for `INFO replication` \
                     only"
                        .into(),
                ));
            }
        }
        Shape::Wait => {
            if let Some(timeout) = out.get_mut(2) {
                let asked = std::str::from_utf8(timeout)
                    .ok()
                    .and_then(|t| t.parse::<u64>().ok());
                if let Some(asked) = asked {
                    let held = if asked == 0 {
                        WAIT_LIMIT_MS
                    } else {
                        asked.min(WAIT_LIMIT_MS)
                    };
                    *timeout = held.to_string().into_bytes();
                }
            }
        }
        _ => {}
    }
    let mut keys = Vec::with_capacity(key_at.len());
    for i in key_at {
        out[i] = ns.key(&out[i]);
        keys.push(String::from_utf8_lossy(&out[i]).into_owned());
    }
    Ok(Admitted {
        args: out,
        keys,
        answered_here: shape == Shape::Time,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<Vec<u8>> {
        line.split(' ').map(|a| a.as_bytes().to_vec()).collect()
    }

    fn ns() -> Namespace {
        Namespace::new("w:", "fn_7_")
    }

    fn sent(line: &str) -> String {
        let admitted = admit(&args(line), &ns()).expect(line);
        admitted
            .args
            .iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn keys_of_the_namespace_go_as_they_are_and_others_are_brought_into_it() {
        for (line, out) in [
            ("SET w:lock t NX PX 10000", "SET w:lock t NX PX 10000"),
            ("DEL w:lock other", "DEL w:lock w:other"),
            (
                "EVALSHA abc 2 w:lock lock-signal:w:lock t",
                "EVALSHA abc 2 w:lock w:lock-signal:w:lock t",
            ),
            ("EVAL return 0", "EVAL return 0"),
            ("MSET w:lock a row b", "MSET w:lock a w:row b"),
            ("PUBLISH channel 1", "PUBLISH w:channel 1"),
            ("FCALL unlock 1 w:lock t", "FCALL fn_7_unlock 1 w:lock t"),
            ("MULTI", "MULTI"),
            ("WAIT 1 0", "WAIT 1 100"),
            ("WAIT 1 20", "WAIT 1 20"),
            ("info REPLICATION", "info REPLICATION"),
        ] {
            assert_eq!(sent(line), out, "{line}");
        }
        let named = admit(&args("DEL w:lock other"), &ns()).expect("admitted");
        assert_eq!(named.keys, ["w:lock", "w:other"]);
        assert!(admit(&args("TIME"), &ns()).expect("TIME").answered_here);
    }

    #[test]
    fn what_reaches_beyond_the_namespace_is_refused_with_a_reason() {
        for (line, command) in [
            ("FLUSHALL", "FLUSHALL"),
            ("keys *", "KEYS"),
            ("SCAN 0", "SCAN"),
            ("SCRIPT FLUSH", "SCRIPT|FLUSH"),
            ("FUNCTION FLUSH", "FUNCTION|FLUSH"),
            ("CLIENT KILL 1", "CLIENT|KILL"),
            ("SELECT 1", "SELECT"),
            ("INFO", "INFO"),
            ("INFO keyspace", "INFO"),
        ] {
            let refusal = admit(&args(line), &ns()).expect_err(line);
            assert_eq!(refusal.command, command, "{line}");
            assert!(!refusal.why.is_empty(), "{line}");
        }
    }
}
