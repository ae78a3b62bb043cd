//! Checks that judge behaviour over inputs the grader chooses, not cases it
//! lists.
//!
//! A check written for one mistake catches that mistake; the next learner
//! writes another. An explorer check instead draws histories from a seed
//! ([`generate`]): two to four clients calling the exercise's functions on
//! keys with unrelated names, counters and rows starting anywhere, waits
//! across every expiry, crashes, and other clients stepping in between two
//! commands. It plays each ([`play`]) and holds every step to the exercise's
//! model ([`crate::model`]). The first step that no correct lock could have
//! produced fails the check: the history is cut down to the shortest that
//! still fails the same way ([`shrink`]) and printed as a transcript beside
//! the model's expectation, with the seed and the command that replays it
//! ([`transcript`]).
//!
//! The lease keeper's histories (module `keeper`) are one lease instead: A's
//! keeper ticking at odd times while the key expires, changes hands, is
//! deleted or holds a value of the wrong type between two ticks; the step
//! the model holds is the tick, with what it left in `renewed_at` and `lost`.
//!
//! Each check explores a fixed list of seeds, the same on every run and
//! machine, so the same code always gets the same verdict.
//! `GRADER_EXPLORE=1000` explores the first 1000 seeds of each check
//! instead of [`DEFAULT_HISTORIES`]; `GRADER_SEED=0x…` replays one.

mod calls;
pub mod coverage;
pub mod generate;
pub mod history;
mod keeper;
pub mod linearize;
mod observe;
pub mod play;
pub mod rng;
pub mod shrink;
pub mod transcript;

pub use coverage::Coverage;
pub use history::Subject;

use crate::error::GradeError;
use crate::lock::Lock;
use crate::model::{self, Divergence};
use crate::report::{Report, Verdict};
use crate::verdict::Violation;
use play::End;

/// How many histories each explorer check plays by default.
pub const DEFAULT_HISTORIES: u64 = 40;

/// Set to a number of histories to explore more (or fewer) seeds.
pub const EXPLORE_VAR: &str = "GRADER_EXPLORE";

/// Set to one seed (`0x1f…` or decimal) to replay that history alone.
pub const SEED_VAR: &str = "GRADER_SEED";

/// The rule a divergent step of `exercise` broke, as its model's judge
/// names it.
pub fn judge(exercise: Subject, d: &Divergence<'_>) -> Violation {
    if let Some(v) = model::faulted::judge(d) {
        return v;
    }
    match exercise {
        Subject::Acquire => model::acquire::judge(d),
        Subject::Release => model::release::judge(d),
        Subject::Fencing => model::fencing::judge(d),
        Subject::Storage => model::storage::judge(d),
        Subject::Extend => model::extend::judge(d),
        Subject::Keeper => model::keeper::judge(d),
    }
}

/// The seeds check `check` explores: `GRADER_SEED` alone when set, else the
/// first `GRADER_EXPLORE` (default [`DEFAULT_HISTORIES`]) of the check's own
/// endless list.
pub fn seeds(check: &str) -> Result<Vec<u64>, GradeError> {
    if let Ok(text) = std::env::var(SEED_VAR) {
        return Ok(vec![parse_number(SEED_VAR, &text)?]);
    }
    let count = match std::env::var(EXPLORE_VAR) {
        Ok(text) => parse_number(EXPLORE_VAR, &text)?,
        Err(_) => DEFAULT_HISTORIES,
    };
    Ok(seed_list(check, count))
}

/// The first `count` seeds of `check`'s list.
pub fn seed_list(check: &str, count: u64) -> Vec<u64> {
    // FNV-1a of the check's name: every check has a list of its own.
    let base = check.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    });
    let mut rng = rng::Rng::new(base);
    (0..count).map(|_| rng.next_u64()).collect()
}

fn parse_number(var: &'static str, text: &str) -> Result<u64, GradeError> {
    let text = text.trim();
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.map_err(|_| GradeError::Setting {
        var,
        value: text.to_string(),
    })
}

/// Explores `exercise` with `lock` over the seeds [`seeds`] gives.
pub fn check(check: &str, lock: &Lock, exercise: Subject) -> Result<Verdict, GradeError> {
    explore(check, lock, exercise, &seeds(check)?)
}

/// Explores `exercise` with `lock` over `seeds`; the first failing history,
/// shrunk, is the verdict.
pub fn explore(
    check: &str,
    lock: &Lock,
    exercise: Subject,
    seeds: &[u64],
) -> Result<Verdict, GradeError> {
    Ok(explore_covered(check, lock, exercise, seeds)?.0)
}

/// [`explore`], with the branches of the model that the calls under test
/// reached in the histories played.
pub fn explore_covered(
    check: &str,
    lock: &Lock,
    exercise: Subject,
    seeds: &[u64],
) -> Result<(Verdict, Coverage), GradeError> {
    let lock = exercise.lock_under_test(lock);
    let mut coverage = Coverage::new(check, branches(exercise));
    let histories = seeds
        .iter()
        .flat_map(|&seed| generate::histories(exercise, seed));
    coverage.histories = seeds.len() as u64;
    for h in histories {
        let played = play::play(&h, &lock)?;
        for branch in played
            .records
            .iter()
            .filter(|r| r.yours)
            .filter_map(|r| r.branch)
        {
            coverage.hit(branch);
        }
        match played.end {
            End::Pass => continue,
            End::NotStarted { function, message } => {
                return Ok((Verdict::NotStarted { function, message }, coverage));
            }
            _ => {}
        }
        // A second run confirms the failure: a machine that stalled long
        // enough for a short TTL to run out in real time does not fail a
        // correct lock.
        let played = play::play(&h, &lock)?;
        if played.end == End::Pass {
            continue;
        }
        let (shrunk, played) = shrink::shrink(&h, &lock, played)?;
        let evidence = vec![transcript::render(check, &shrunk, h.steps.len(), &played)];
        let report = match played.end {
            End::Diverged { violation, .. } => {
                Report::broken(check, lock.name, violation, evidence)
            }
            End::Failed {
                function, failure, ..
            } => Report::failed(check, lock.name, function, failure, evidence),
            End::NotStarted { function, message } => {
                return Ok((Verdict::NotStarted { function, message }, coverage));
            }
            End::Pass => continue,
        };
        return Ok((Verdict::Fail(Box::new(report)), coverage));
    }
    Ok((Verdict::Pass, coverage))
}

/// The branches `exercise`'s model names, for its coverage.
pub fn branches(exercise: Subject) -> &'static [&'static str] {
    match exercise {
        Subject::Acquire => model::acquire::BRANCHES,
        Subject::Release => model::release::BRANCHES,
        Subject::Fencing => model::fencing::BRANCHES,
        Subject::Storage => model::storage::BRANCHES,
        Subject::Extend => model::extend::BRANCHES,
        Subject::Keeper => model::keeper::BRANCHES,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_check_has_its_own_fixed_seeds() {
        assert_eq!(
            seed_list("storage::explored", 3),
            seed_list("storage::explored", 3)
        );
        assert_ne!(
            seed_list("storage::explored", 3),
            seed_list("fencing::explored", 3)
        );
        assert_eq!(
            seed_list("storage::explored", 5)[..3],
            seed_list("storage::explored", 3)[..]
        );
    }

    #[test]
    fn seeds_are_read_in_hex_or_decimal() {
        assert_eq!(parse_number(SEED_VAR, "0x1f").ok(), Some(31));
        assert_eq!(parse_number(SEED_VAR, "31").ok(), Some(31));
        assert!(parse_number(SEED_VAR, "x").is_err());
    }
}
