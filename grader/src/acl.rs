//! Redis users that hold a learner's connection to its world's keys.
//!
//! The wire's own filter ([`crate::confine`]) sees the commands the lock's code
//! sends, not what a Lua script calls once Redis runs it. Redis's access
//! control lists do: a script runs with its caller's rights. So where the
//! grader may create users (on the servers it starts itself, and on any server
//! whose user has the right), every wire signs in as a user of its own that
//! may run only the commands of
//! [`crate::confine::COMMANDS`], only on the keys of its world's namespace,
//! and publish only on channels of it. The clock's books and every other key
//! are out of its reach, whatever a script tries. The users go when their world closes, and with them any connection
//! a call the grader gave up on still holds.
//!
//! The servers the grader starts for one run alone (Redlock's nodes, the
//! failover stories' pair) hold no one else's keys, but they run outside any
//! sandbox: a script there could reach the network (`MIGRATE`) or the whole
//! server. Their learner connections sign in as users of their own too,
//! made by the connection itself ([`confine_own`]).
//!
//! Where the grader may not (a `REDIS_URL` whose user lacks the `ACL` command),
//! it says so once and the wire's filter is all there is. A killed run cannot
//! remove its users; the next run removes those whose run's claim is gone
//! ([`crate::prefix`]).

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Mutex, Once};

use redis::Connection;

use crate::confine::COMMANDS;
use crate::error::GradeError;
use crate::{prefix, server};

/// Commands the grader sends itself, besides those it lets learner code send:
/// the server probe, the clock's scripts, the run's claim.
pub const GRADER_COMMANDS: &[&str] = &["INFO", "TIME", "FUNCTION|LIST", "FUNCTION|DELETE"];

/// Whether this process may create users: not yet known, yes, no.
static MAY_CREATE: AtomicU8 = AtomicU8::new(UNKNOWN);
const UNKNOWN: u8 = 0;
const YES: u8 = 1;
const NO: u8 = 2;

/// The connection the grader creates and removes users through.
static ADMIN: Mutex<Option<Connection>> = Mutex::new(None);

/// The users made for each world's wires, by the world's namespace, removed
/// when the world closes ([`world_closed`]).
static USERS: Mutex<BTreeMap<String, Vec<String>>> = Mutex::new(BTreeMap::new());

/// Signs `con` in as a new user limited to the keys and channels that start
/// with `namespace` (a world's) and to the commands learner code may send; the
/// user lives until the world closes, and its name carries the id of `run`, the
/// run's claimed prefix ([`prefix::run`]), so that a later run can tell a dead
/// run's users from a live one's. False when the grader may not create users
/// here.
pub fn confine(con: &mut Connection, run: &str, namespace: &str) -> Result<bool, GradeError> {
    if MAY_CREATE.load(Ordering::Relaxed) == NO {
        return Ok(false);
    }
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = format!(
        "{}{}-{}",
        user_prefix(),
        prefix::run_id(run),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let password = password()?;
    let created = admin(|admin| {
        redis::cmd("ACL")
            .arg("SETUSER")
            .arg(&name)
            .arg(rules(&password, namespace))
            .exec(admin)
    });
    match created {
        Ok(()) => {}
        // Several first wires may ask at once: each learns the same.
        Err(e) if MAY_CREATE.load(Ordering::Relaxed) != YES && not_allowed(&e) => {
            MAY_CREATE.store(NO, Ordering::Relaxed);
            say_once(&format!(
                "this Redis user may not create users ({e}): learner code is held to its keys by \
                 the grader's own filter only, and Lua scripts are not confined (see the README, \
                 \"Grading on a shared Redis\")"
            ));
            return Ok(false);
        }
        Err(e) => return Err(e),
    }
    let world = namespace.to_owned();
    USERS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(world)
        .or_default()
        .push(name.clone());
    if MAY_CREATE.swap(YES, Ordering::Relaxed) == UNKNOWN {
        remove_stale_users();
    }
    redis::cmd("AUTH").arg(&name).arg(&password).exec(con)?;
    Ok(true)
}

/// Signs `con`, a connection to a server the grader started for this run
/// alone (a Redlock node, a replicated pair's primary or replica), in as a
/// new user of that server that may run only the commands learner code may
/// send, on the keys and channels that start with `namespace` (`""`: all of
/// them). The connection itself, still the server's administrator's, makes
/// the user: these servers hold nothing else, and go with the run, their
/// users with them (a node restarted after a kill has none, and its next
/// connection makes its own).
pub fn confine_own(con: &mut Connection, namespace: &str) -> Result<(), GradeError> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = format!(
        "{}own-{}",
        user_prefix(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let password = password()?;
    redis::cmd("ACL")
        .arg("SETUSER")
        .arg(&name)
        .arg(rules(&password, namespace))
        .exec(con)?;
    redis::cmd("AUTH").arg(&name).arg(&password).exec(con)?;
    Ok(())
}

/// Removes the users made for the world of `namespace`, which also closes
/// every connection still signed in as one of them (a call the grader gave up
/// on). Best effort: a user left behind is removed by a later run.
pub fn world_closed(namespace: &str) {
    let users = USERS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(namespace)
        .unwrap_or_default();
    if !users.is_empty() {
        let _ = admin(|con| redis::cmd("ACL").arg("DELUSER").arg(&users).exec(con));
    }
}

/// Whether this process creates users for its wires (known after the first
/// wire opened).
pub fn confines_scripts() -> bool {
    MAY_CREATE.load(Ordering::Relaxed) == YES
}

/// The ACL rules of a user that may run the learner's commands on the keys
/// and channels of `namespace`.
fn rules(password: &str, namespace: &str) -> Vec<String> {
    let mut rules = vec![
        "reset".to_owned(),
        "on".to_owned(),
        format!(">{password}"),
        "resetchannels".to_owned(),
        format!("&{}*", glob_escaped(namespace)),
        format!("~{}*", glob_escaped(namespace)),
        "-@all".to_owned(),
    ];
    rules.extend(
        COMMANDS
            .iter()
            .map(|(name, _)| format!("+{}", name.to_ascii_lowercase())),
    );
    rules
}

/// The `ACL SETUSER` line for an instructor's shared server: a user limited
/// to the course prefix, with every command the grader and its tests need.
pub fn instructor_line(user: &str, course_prefix: &str) -> String {
    let mut commands: Vec<String> = COMMANDS
        .iter()
        .map(|(name, _)| *name)
        .chain(GRADER_COMMANDS.iter().copied())
        .map(|name| format!("+{}", name.to_ascii_lowercase()))
        .collect();
    commands.sort();
    commands.dedup();
    format!(
        "ACL SETUSER {user} on >CHANGE-THIS-PASSWORD resetchannels &{0}* ~{0}* -@all {1}",
        glob_escaped(course_prefix),
        commands.join(" ")
    )
}

/// `key` as an ACL pattern that matches it alone.
fn glob_escaped(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    for c in key.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The start of every user name this course creates: the course prefix with
/// anything but letters and digits turned into `-`.
fn user_prefix() -> String {
    prefix::course()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

fn password() -> Result<String, GradeError> {
    crate::random::hex::<16>()
        .map_err(|e| GradeError::Claim(format!("the operating system's random source: {e}")))
}

/// Whether Redis refused `ACL SETUSER` for want of the right (or of ACLs).
fn not_allowed(e: &GradeError) -> bool {
    let text = e.to_string().to_ascii_lowercase();
    text.contains("noperm") || text.contains("unknown command")
}

/// Runs `f` on the admin connection, opening it if needed and dropping it
/// after an I/O error so that the next call opens a fresh one.
fn admin<T>(f: impl FnOnce(&mut Connection) -> redis::RedisResult<T>) -> Result<T, GradeError> {
    let mut slot = ADMIN.lock().unwrap_or_else(|p| p.into_inner());
    let mut con = match slot.take() {
        Some(con) => con,
        None => server::shared()?.connect()?,
    };
    let outcome = f(&mut con);
    if !outcome.as_ref().is_err_and(|e| e.is_io_error()) {
        *slot = Some(con);
    }
    Ok(outcome?)
}

/// Removes users of this course left by runs whose claim is gone (killed runs).
fn remove_stale_users() {
    let mine = user_prefix();
    let Ok(users) = admin(|con| redis::cmd("ACL").arg("USERS").query::<Vec<String>>(con)) else {
        return;
    };
    for user in users {
        let Some(rest) = user.strip_prefix(&mine) else {
            continue;
        };
        let Some((id, _)) = rest.rsplit_once('-') else {
            continue;
        };
        let claimed = admin(|con| Ok(prefix::is_claimed(con, id).unwrap_or(true))).unwrap_or(true);
        if !claimed {
            let _ = admin(|con| redis::cmd("ACL").arg("DELUSER").arg(&user).exec(con));
        }
    }
}

/// A note on stderr, once per process, past the test harness's capture.
fn say_once(message: &str) {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = writeln!(std::io::stderr(), "grader: {message}");
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_users_keys_match_themselves_only() {
        assert_eq!(glob_escaped("a*b?[c]\\d"), "a\\*b\\?\\[c\\]\\\\d");
        let rules = rules("pw", "w:1:");
        assert!(rules.contains(&"~w:1:*".to_owned()), "{rules:?}");
        assert!(rules.contains(&"&w:1:*".to_owned()), "{rules:?}");
        assert!(rules.contains(&"+script|load".to_owned()), "{rules:?}");
        assert!(
            !rules.iter().any(|r| r == "+flushall" || r == "~*"),
            "{rules:?}"
        );
    }

    #[test]
    fn the_instructors_line_names_the_prefix_and_the_grader_s_own_commands() {
        let line = instructor_line("grader", "dlcourse:");
        assert!(line.starts_with("ACL SETUSER grader on >"), "{line}");
        assert!(line.contains(" &dlcourse:* ~dlcourse:* -@all "), "{line}");
        assert!(
            line.contains(" +info ") && line.contains(" +evalsha "),
            "{line}"
        );
    }
}
