//! The commands learner code may send, and where each one's keys are.
//!
//! The list is what correct locks use: the course's exercises, and the
//! published libraries (redsync, node-redlock, redis-py, python-redis-lock,
//! Redisson, rslock, bsm/redislock), whose scripts also touch lists, sets,
//! sorted sets, string ranges and publish to a channel of their own. What is
//! left out reaches the server as a whole (`FLUSHALL`, `KEYS`, `SCAN`,
//! `CONFIG`, `CLIENT`, `SELECT`, `SHUTDOWN`, `SCRIPT FLUSH`, `FUNCTION FLUSH`,
//! every `INFO` section but replication) or blocks in real time (`BLPOP`),
//! which the virtual clock cannot follow.

/// How the wire treats a command's arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// No key.
    None,
    /// The first argument is a key (or, for `PUBLISH`, a channel).
    First,
    /// Every argument is a key.
    All,
    /// Every other argument, from the first (`MSET k v k v`).
    Pairs,
    /// A script's KEYS: a count, then that many names (`EVAL script n k…`).
    Script,
    /// A function's name, then KEYS as for a script (`FCALL f n k…`).
    Function,
    /// A library's code, last (`FUNCTION LOAD [REPLACE] code`).
    Library,
    /// Answered by the wire on the virtual clock.
    Time,
    /// Only `INFO replication`.
    Info,
    /// `WAIT replicas timeout`, its timeout held short.
    Wait,
}

/// Every command learner code may send, with the shape of its arguments. A
/// subcommand is written `SCRIPT|LOAD`, as Redis ACLs write it; every name is
/// one Redis 7.0 knows, since the grader's users are made of this list.
pub const COMMANDS: &[(&str, Shape)] = &[
    // Strings and counters.
    ("GET", Shape::First),
    ("SET", Shape::First),
    ("SETNX", Shape::First),
    ("SETEX", Shape::First),
    ("PSETEX", Shape::First),
    ("GETSET", Shape::First),
    ("GETDEL", Shape::First),
    ("GETEX", Shape::First),
    ("GETRANGE", Shape::First),
    ("SETRANGE", Shape::First),
    ("MGET", Shape::All),
    ("MSET", Shape::Pairs),
    ("MSETNX", Shape::Pairs),
    ("APPEND", Shape::First),
    ("STRLEN", Shape::First),
    ("INCR", Shape::First),
    ("INCRBY", Shape::First),
    ("INCRBYFLOAT", Shape::First),
    ("DECR", Shape::First),
    ("DECRBY", Shape::First),
    // Keys and their TTLs.
    ("DEL", Shape::All),
    ("UNLINK", Shape::All),
    ("EXISTS", Shape::All),
    ("TOUCH", Shape::All),
    ("RENAME", Shape::All),
    ("RENAMENX", Shape::All),
    ("TYPE", Shape::First),
    ("EXPIRE", Shape::First),
    ("PEXPIRE", Shape::First),
    ("EXPIREAT", Shape::First),
    ("PEXPIREAT", Shape::First),
    ("TTL", Shape::First),
    ("PTTL", Shape::First),
    ("EXPIRETIME", Shape::First),
    ("PEXPIRETIME", Shape::First),
    ("PERSIST", Shape::First),
    // Hashes (the storage row; Redisson's locks).
    ("HSET", Shape::First),
    ("HSETNX", Shape::First),
    ("HMSET", Shape::First),
    ("HGET", Shape::First),
    ("HMGET", Shape::First),
    ("HGETALL", Shape::First),
    ("HDEL", Shape::First),
    ("HEXISTS", Shape::First),
    ("HINCRBY", Shape::First),
    ("HINCRBYFLOAT", Shape::First),
    ("HKEYS", Shape::First),
    ("HVALS", Shape::First),
    ("HLEN", Shape::First),
    ("HSTRLEN", Shape::First),
    // Lists (python-redis-lock's signal, Redisson's fair lock's queue).
    ("LPUSH", Shape::First),
    ("RPUSH", Shape::First),
    ("LPUSHX", Shape::First),
    ("RPUSHX", Shape::First),
    ("LPOP", Shape::First),
    ("RPOP", Shape::First),
    ("LLEN", Shape::First),
    ("LRANGE", Shape::First),
    ("LINDEX", Shape::First),
    ("LREM", Shape::First),
    ("LTRIM", Shape::First),
    ("LSET", Shape::First),
    ("LPOS", Shape::First),
    ("RPOPLPUSH", Shape::All),
    // Sets and sorted sets (waiters and their deadlines).
    ("SADD", Shape::First),
    ("SREM", Shape::First),
    ("SISMEMBER", Shape::First),
    ("SMISMEMBER", Shape::First),
    ("SMEMBERS", Shape::First),
    ("SCARD", Shape::First),
    ("ZADD", Shape::First),
    ("ZREM", Shape::First),
    ("ZSCORE", Shape::First),
    ("ZINCRBY", Shape::First),
    ("ZCARD", Shape::First),
    ("ZCOUNT", Shape::First),
    ("ZRANK", Shape::First),
    ("ZRANGE", Shape::First),
    ("ZRANGEBYSCORE", Shape::First),
    ("ZREMRANGEBYSCORE", Shape::First),
    ("ZREMRANGEBYRANK", Shape::First),
    // A release's wake-up call, on a channel of the namespace (Redisson).
    ("PUBLISH", Shape::First),
    ("SPUBLISH", Shape::First),
    // Scripts: their keys are their KEYS; loading is what redis-rs does on NOSCRIPT.
    ("EVAL", Shape::Script),
    ("EVALSHA", Shape::Script),
    ("EVAL_RO", Shape::Script),
    ("EVALSHA_RO", Shape::Script),
    ("SCRIPT|LOAD", Shape::None),
    ("SCRIPT|EXISTS", Shape::None),
    // Functions, in libraries named for the check ([`super::functions`]).
    ("FUNCTION|LOAD", Shape::Library),
    ("FCALL", Shape::Function),
    ("FCALL_RO", Shape::Function),
    // Transactions.
    ("WATCH", Shape::All),
    ("UNWATCH", Shape::None),
    ("MULTI", Shape::None),
    ("EXEC", Shape::None),
    ("DISCARD", Shape::None),
    // Questions about the server a lock may ask, answered for the check.
    ("TIME", Shape::Time),
    ("INFO", Shape::Info),
    ("WAIT", Shape::Wait),
    // The connection itself.
    ("PING", Shape::None),
    ("ECHO", Shape::None),
];

/// Commands with subcommands: their name is `NAME|SUBCOMMAND`.
const WITH_SUBCOMMANDS: &[&str] = &[
    "SCRIPT", "CLIENT", "CONFIG", "ACL", "FUNCTION", "OBJECT", "MEMORY", "DEBUG", "CLUSTER",
    "COMMAND", "XINFO", "MODULE", "SLOWLOG", "LATENCY",
];

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

/// The shape of a command learner code may send, or `None` for one it may not.
pub fn shape_of(command: &str) -> Option<Shape> {
    COMMANDS
        .iter()
        .find(|(name, _)| *name == command)
        .map(|&(_, shape)| shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_command_is_named_once() {
        let mut names: Vec<&str> = COMMANDS.iter().map(|(n, _)| *n).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), COMMANDS.len());
    }
}
