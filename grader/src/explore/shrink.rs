//! Cutting a failing history down to the shortest that still fails.
//!
//! Steps after the failing one never ran and go first. Then, greedily, the
//! shrinker drops one step, or one client's stepping in, or the lock held at
//! the start, and keeps the change when the history still fails the same
//! way (the same function, the same rule). A budget of plays bounds the
//! time a long history can take.

use super::history::{History, Step, Subject};
use super::play::{self, End, Played};
use crate::error::GradeError;
use crate::lock::Lock;
use crate::sandbox::Failure;

/// How many plays shrinking one history may take.
const BUDGET: usize = 120;

/// What must stay the same while shrinking: the function, and the rule it
/// broke or the way it failed. `None`: not worth shrinking (a call that
/// timed out costs seconds per play).
fn signature(end: &End) -> Option<String> {
    match end {
        End::Diverged {
            function,
            violation,
            ..
        } => Some(format!("{function} {:?}", violation.property)),
        End::Failed {
            function, failure, ..
        } => match failure {
            Failure::Panicked { .. } => Some(format!("{function} panicked")),
            Failure::Error { .. } => Some(format!("{function} error")),
            _ => None,
        },
        _ => None,
    }
}

/// The index of the step where `end` happened.
fn failing_step(end: &End) -> Option<usize> {
    match end {
        End::Diverged { step, .. } | End::Failed { step, .. } => Some(*step),
        _ => None,
    }
}

/// `h` without the steps after the one where `played` ended.
fn cut(mut h: History, played: &Played) -> History {
    if let Some(step) = failing_step(&played.end) {
        h.steps.truncate(step + 1);
    }
    h
}

/// The shortest history found that fails as `played` did, and its play.
pub fn shrink(h: &History, lock: &Lock, played: Played) -> Result<(History, Played), GradeError> {
    let Some(want) = signature(&played.end) else {
        return Ok((cut(h.clone(), &played), played));
    };
    let mut best = (cut(h.clone(), &played), played);
    let mut budget = BUDGET;
    'shrinking: loop {
        for candidate in smaller(&best.0) {
            if budget == 0 {
                break 'shrinking;
            }
            budget -= 1;
            let played = play::play(&candidate, lock)?;
            if signature(&played.end).as_ref() == Some(&want) {
                best = (cut(candidate, &played), played);
                continue 'shrinking;
            }
        }
        break;
    }
    Ok(best)
}

/// Histories one change smaller than `h`, the largest cuts first.
fn smaller(h: &History) -> Vec<History> {
    let mut out = Vec::new();
    for i in 0..h.steps.len() {
        let mut c = h.clone();
        c.steps.remove(i);
        if !c.steps.is_empty() {
            out.push(c);
        }
    }
    for i in 0..h.steps.len() {
        if let Step::Call {
            step_in: Some(_), ..
        } = &h.steps[i]
        {
            let mut c = h.clone();
            if let Step::Call { step_in, .. } = &mut c.steps[i] {
                *step_in = None;
            }
            out.push(c);
        }
    }
    // A keeper's history is the story of A's lease: it keeps its start.
    if h.start.lock.is_some() && h.exercise != Subject::Keeper {
        let mut c = h.clone();
        c.start.lock = None;
        out.push(c);
    }
    out
}
