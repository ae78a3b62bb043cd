//! A failing history as a learner reads it.
//!
//! One block per step, in virtual time: the call and who made it, for the
//! function under test every command it sent with Redis' reply, what the
//! grader made happen in between, and what the call returned beside what the
//! model allows. The step that diverged is marked, with how Redis differs
//! from the model. The last line replays exactly this history.

use std::fmt::Write as _;

use super::SEED_VAR;
use super::history::{History, Subject, client_name};
use super::play::{End, Played, Record};
use crate::model::Diff;
use crate::verdict::seconds;
use crate::wire::Step as Sent;

/// The transcript of `played`, a history of `h` shrunk from `original` steps.
pub fn render(check: &str, h: &History, original: usize, played: &Played) -> String {
    let mut out = String::new();
    let shrunk = if original > h.steps.len() {
        format!(", cut down from {original} steps to {}", h.steps.len())
    } else {
        String::new()
    };
    let _ = writeln!(out, "An explored history (seed {:#018x}{shrunk}):", h.seed);
    if h.exercise == Subject::Keeper {
        let _ = writeln!(out, "  key:     lock `{}`", h.lock);
    } else {
        let _ = writeln!(
            out,
            "  keys:    lock `{}`, fence counter `{}`, row `{}`",
            h.lock, h.fence, h.row
        );
    }
    let clients: Vec<String> = h
        .tokens
        .iter()
        .enumerate()
        .map(|(i, t)| format!("{} {t:?}", client_name(i)))
        .collect();
    let _ = writeln!(
        out,
        "  clients: {} (each acquisition takes a fresh token)",
        clients.join(", ")
    );
    let _ = writeln!(out, "  start:   {}", start(h));
    let last = played.records.len().saturating_sub(1);
    let failed = played.end != End::Pass;
    for (i, record) in played.records.iter().enumerate() {
        out.push('\n');
        step(&mut out, record, failed && i == last);
    }
    let _ = writeln!(
        out,
        "\nReplay: {SEED_VAR}={:#018x} cargo test -p exercises {check}",
        h.seed
    );
    out
}

/// What Redis held before the first step.
fn start(h: &History) -> String {
    if h.exercise == Subject::Keeper {
        return match h.start.lock {
            Some((c, ttl)) => format!(
                "{} took the lock at t = 0 for {}; its keeper starts with renewed_at 0 s, lost false",
                client_name(c),
                seconds(ttl)
            ),
            None => "lock free; A's keeper starts with renewed_at 0 s, lost false".into(),
        };
    }
    let lock = match h.start.lock {
        Some((c, ttl)) => format!("lock held by {} until t = {}", client_name(c), seconds(ttl)),
        None => "lock free".into(),
    };
    let counter = match h.start.counter {
        Some(n) => format!("counter at {n}"),
        None => "no counter".into(),
    };
    let row = match (h.start.row_value, h.start.row_fence) {
        (None, None) => "no row".to_string(),
        (Some(v), None) => format!("row {{ value: {v} }} (no fence field)"),
        (None, Some(f)) => format!("row {{ fence: {f} }} (no value field)"),
        (Some(v), Some(f)) => format!("row {{ value: {v}, fence: {f} }}"),
    };
    format!("{lock}; {counter}; {row}")
}

fn step(out: &mut String, r: &Record, failed: bool) {
    let mark = if failed { "✗" } else { " " };
    let is_call = r.text.contains("'s ");
    let whose = if r.yours || !is_call {
        ""
    } else {
        "   (reference)"
    };
    let _ = writeln!(out, "{mark} t = {:<7} {}{whose}", seconds(r.t_ms), r.text);
    if r.yours {
        let caller = r.text.split("'s ").next().unwrap_or("");
        let mut n = 0;
        for s in &r.sent {
            match s {
                Sent::Sent { command, reply } => {
                    n += 1;
                    let _ = writeln!(out, "      {caller} {n}. {command} → {reply}");
                }
                Sent::Intervened(what) if r.moves.is_empty() => {
                    let _ = writeln!(out, "      ⚡ {what}");
                }
                Sent::Intervened(_) => {
                    for (done, expected) in &r.moves {
                        let line = match (&done.answer, expected) {
                            (Some(a), Some(e)) if e.admits(a) => {
                                format!("{} → {a}   (model: {e})", done.text)
                            }
                            (Some(a), Some(e)) => format!("{} → {a}   (model: {e})   ✗", done.text),
                            (Some(a), None) => format!("{} → {a}", done.text),
                            _ => done.text.clone(),
                        };
                        let _ = writeln!(out, "      ⚡ here {line}");
                    }
                }
            }
        }
    }
    match (&r.answer, &r.expected) {
        (Some(a), Some(e)) => {
            let wrong = if e.admits(a) { "" } else { "   ✗" };
            let _ = writeln!(out, "      returned {a}   (model: {e}){wrong}");
        }
        (Some(a), None) => {
            let _ = writeln!(out, "      returned {a}");
        }
        (None, _) if is_call => {
            let _ = writeln!(out, "      returned nothing: it crashed");
        }
        _ => {}
    }
    // Answers are marked where they are shown; the rest is Redis' state.
    for d in r.diffs.iter().filter(|d| !matches!(d, Diff::Answer { .. })) {
        let _ = writeln!(out, "      ✗ {d}");
    }
}
