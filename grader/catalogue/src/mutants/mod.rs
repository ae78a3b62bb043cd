//! The reference lock made wrong in one small way, judged by every check.
//!
//! A grader that passes the reference proves little on its own: the checks
//! must also fail when the reference is made wrong in any small way. The Rust
//! of the reference is mutated by `cargo mutants` (see `.ci/mutants`); its
//! Lua scripts, which `cargo mutants` never looks into, are mutated here
//! ([`lua`]), and so are the fixed answers that `cargo mutants` cannot write
//! for functions returning `RedisResult` ([`fixed`]). Each Lua mutant is the
//! reference lock with one script replaced. A mutant is caught when a check
//! of [`grader::checks::CHECKS`] fails on it; one that no check fails is
//! either equivalent to the reference (it behaves the same in every state
//! the exercise allows: [`EQUIVALENT`] says why) or a hole in the grader.
//!
//! The scripts are read from the reference's own source files, so a mutant
//! is always one change away from the text a learner is shown.

pub mod fixed;
pub mod lua;

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use redis::{RedisResult, Script};

use grader::checks::CHECKS;
use grader::error::GradeError;
use grader::lock::Lock;
use grader::reference::LOCK as REFERENCE;
use grader::report::Verdict;
use grader::verdict::Property;
use grader::wire::Wire;
use lua::Mutation;

/// A Lua script of the reference lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scripted {
    /// `CHECK_AND_DELETE`, in `release`.
    Release,
    /// `ACQUIRE_FENCED`, in `acquire_fenced`.
    AcquireFenced,
    /// `FENCED_WRITE`, in `fenced_write`.
    FencedWrite,
    /// `FENCED_READ`, in `fenced_read`.
    FencedRead,
}

impl Scripted {
    /// Every script of the reference lock.
    pub const ALL: [Scripted; 4] = [
        Scripted::Release,
        Scripted::AcquireFenced,
        Scripted::FencedWrite,
        Scripted::FencedRead,
    ];

    /// The function that runs the script, e.g. `release`.
    pub fn function(self) -> &'static str {
        match self {
            Scripted::Release => "release",
            Scripted::AcquireFenced => "acquire_fenced",
            Scripted::FencedWrite => "fenced_write",
            Scripted::FencedRead => "fenced_read",
        }
    }

    /// The exercise of the script's function, as the checks name it.
    pub fn exercise(self) -> &'static str {
        match self {
            Scripted::Release => "release",
            Scripted::AcquireFenced => "fencing",
            Scripted::FencedWrite | Scripted::FencedRead => "storage",
        }
    }

    /// The script's constant in the reference, e.g. `CHECK_AND_DELETE`.
    pub fn constant(self) -> &'static str {
        match self {
            Scripted::Release => "CHECK_AND_DELETE",
            Scripted::AcquireFenced => "ACQUIRE_FENCED",
            Scripted::FencedWrite => "FENCED_WRITE",
            Scripted::FencedRead => "FENCED_READ",
        }
    }

    /// The reference's source of the script, read from its file.
    pub fn source(self) -> Option<&'static str> {
        let file = match self {
            Scripted::Release => include_str!("../../../src/reference/release.rs"),
            Scripted::AcquireFenced => include_str!("../../../src/reference/fencing.rs"),
            Scripted::FencedWrite | Scripted::FencedRead => {
                include_str!("../../../src/reference/storage.rs")
            }
        };
        let opening = format!("const {}: &str = r#\"", self.constant());
        let start = file.find(&opening)? + opening.len();
        let length = file[start..].find("\"#;")?;
        Some(&file[start..start + length])
    }

    /// The reference lock with this script's function running `ACTIVE`.
    fn lock(self) -> Lock {
        match self {
            Scripted::Release => Lock {
                release: mutated_release,
                ..REFERENCE
            },
            Scripted::AcquireFenced => Lock {
                acquire_fenced: mutated_acquire_fenced,
                ..REFERENCE
            },
            Scripted::FencedWrite => Lock {
                fenced_write: mutated_fenced_write,
                ..REFERENCE
            },
            Scripted::FencedRead => Lock {
                fenced_read: mutated_fenced_read,
                ..REFERENCE
            },
        }
    }
}

/// One mutant: a script of the reference with one change.
#[derive(Clone, Debug)]
pub struct Mutant {
    /// The script changed.
    pub script: Scripted,
    /// The change.
    pub mutation: Mutation,
}

impl Mutant {
    /// A short name that stays the same from run to run, e.g.
    /// `release:2:negate comparison:1`: script, line, operator and the
    /// number of that operator on that line.
    pub fn id(&self) -> String {
        let nth = all_of(self.script)
            .iter()
            .filter(|m| m.line == self.mutation.line && m.operator == self.mutation.operator)
            .position(|m| m.source == self.mutation.source)
            .map_or(0, |i| i + 1);
        format!(
            "{}:{}:{}:{nth}",
            self.script.function(),
            self.mutation.line,
            self.mutation.operator
        )
    }

    /// Runs the checks on the reference lock with this mutant in place: see
    /// [`judge`].
    pub fn judge(&self) -> Result<Judged, GradeError> {
        judge(self.script, &self.mutation.source)
    }
}

/// Runs the checks on the reference lock with `script` replaced by `source`,
/// until one fails: see [`judge_lock`].
pub fn judge(script: Scripted, source: &str) -> Result<Judged, GradeError> {
    let _turn = TURN.lock().unwrap_or_else(PoisonError::into_inner);
    *active() = source.to_string();
    let lock = Lock {
        name: "mutant of the reference",
        ..script.lock()
    };
    judge_lock(&lock, script.exercise())
}

/// Runs the checks on `lock` until one fails: first those of `exercise`
/// (e.g. `release`, the exercise of the function that differs), then the
/// others, each group in the order of the table. Any check would do; its
/// own exercise's checks are simply the likeliest to fail, and the quickest
/// way to a verdict.
pub fn judge_lock(lock: &Lock, exercise: &str) -> Result<Judged, GradeError> {
    let own = |name: &str| name.split("::").next() == Some(exercise);
    let ordered = CHECKS
        .iter()
        .filter(|c| own(c.name))
        .chain(CHECKS.iter().filter(|c| !own(c.name)));
    for check in ordered {
        if let Verdict::Fail(report) = check.run(lock)? {
            return Ok(Judged::Caught {
                check: check.name,
                breaks: report.property(),
            });
        }
    }
    Ok(Judged::Survived)
}

/// What the checks made of a mutant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judged {
    /// The first check, in the table's order, that failed on it, and the rule
    /// it reported (none for a failure that is not a broken rule, such as an
    /// error from Redis).
    Caught {
        /// The check's name.
        check: &'static str,
        /// The rule its report names.
        breaks: Option<Property>,
    },
    /// Every check passed.
    Survived,
}

/// Mutants that behave like the reference in every state the exercises
/// allow, by [`Mutant::id`], each with the reason.
pub const EQUIVALENT: &[(&str, &str)] = &[];

/// The reason `mutant` is listed as equivalent, if it is.
pub fn equivalent(mutant: &Mutant) -> Option<&'static str> {
    let id = mutant.id();
    EQUIVALENT
        .iter()
        .find(|(listed, _)| *listed == id)
        .map(|(_, reason)| *reason)
}

/// Every mutant of every script of the reference, script by script.
pub fn all() -> Vec<Mutant> {
    Scripted::ALL
        .into_iter()
        .flat_map(|script| {
            all_of(script)
                .into_iter()
                .map(move |mutation| Mutant { script, mutation })
        })
        .collect()
}

/// Every mutation of one script (none when its source cannot be found).
fn all_of(script: Scripted) -> Vec<Mutation> {
    script.source().map(lua::mutations).unwrap_or_default()
}

/// One mutant judged at a time: they share [`ACTIVE`].
static TURN: Mutex<()> = Mutex::new(());

/// The script the mutated function runs.
static ACTIVE: Mutex<String> = Mutex::new(String::new());

fn active() -> MutexGuard<'static, String> {
    ACTIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

// The reference's functions with the script taken from `ACTIVE`: the same
// keys, arguments and reading of the reply as in `grader/src/reference/`.

fn mutated_release(con: &mut Wire, key: &str, token: &str) -> RedisResult<bool> {
    let source = active().clone();
    let deleted: i64 = Script::new(&source).key(key).arg(token).invoke(con)?;
    Ok(deleted == 1)
}

fn mutated_acquire_fenced(
    con: &mut Wire,
    key: &str,
    fence_key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<Option<u64>> {
    let source = active().clone();
    Script::new(&source)
        .key(key)
        .key(fence_key)
        .arg(token)
        .arg(ttl.as_millis() as u64)
        .invoke(con)
}

fn mutated_fenced_write(con: &mut Wire, row: &str, token: u64, value: i64) -> RedisResult<bool> {
    let source = active().clone();
    let accepted: i64 = Script::new(&source)
        .key(row)
        .arg(token)
        .arg(value)
        .invoke(con)?;
    Ok(accepted == 1)
}

fn mutated_fenced_read(con: &mut Wire, row: &str, token: u64) -> RedisResult<Option<i64>> {
    let source = active().clone();
    Script::new(&source).key(row).arg(token).invoke(con)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_script_is_found_in_the_reference() {
        for script in Scripted::ALL {
            let source = script.source().unwrap_or_default();
            assert!(source.contains("redis.call"), "{script:?}: {source:?}");
        }
    }

    #[test]
    fn every_operator_of_the_mutator_is_used_and_ids_are_distinct() {
        let all = all();
        for operator in [
            "negate comparison",
            "move comparison by one",
            "drop redis.call",
            "swap index",
            "swap KEYS and ARGV",
            "drop or 0",
            "change command option",
            "drop tonumber",
            "change returned value",
        ] {
            assert!(
                all.iter().any(|m| m.mutation.operator == operator),
                "{operator}"
            );
        }
        let mut ids: Vec<String> = all.iter().map(Mutant::id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), all.len());
    }

    #[test]
    fn every_listed_equivalent_is_a_mutant() {
        let ids: Vec<String> = all().iter().map(Mutant::id).collect();
        for (id, _) in EQUIVALENT {
            assert!(ids.iter().any(|i| i == id), "no mutant {id}");
        }
    }
}
