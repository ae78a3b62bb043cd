//! The rules a story keeps as a whole: it unfolds second by second as it does with a correct
//! lock, and ends as that run ends.
//!
//! The story engine ([`crate::run`]) judges every call of a story with the other judges of
//! [`crate::judge`] as it plays; what is judged here is the run as a whole: that its clients
//! finished, its counter, and the played run against the reference lock's, timeline against
//! timeline (a Redlock story against a correct Redlock's, step by step).

use crate::timeline::{Action, ActionKind, Second, Timeline};
use crate::verdict::{Property, Violation};

/// [`Property::SameAsReference`]: `ours` goes second by second as `theirs`, a correct lock's
/// run of the same story (both with their tokens renumbered, so that only their order counts);
/// the violation is at the first second where they part.
pub fn same_as_reference(ours: &Timeline, theirs: &Timeline) -> Option<Violation> {
    let t = first_second_apart(&ours.seconds, &theirs.seconds)?;
    let parting = ours
        .seconds
        .iter()
        .zip(&theirs.seconds)
        .find(|(a, _)| a.t == t)
        .and_then(|(a, b)| first_call_apart(a, b, ours.fencing));
    let what = match parting {
        Some(call) => {
            format!("from t = {t} s on, your run differs from a correct lock's run: {call}")
        }
        None => format!("from t = {t} s on, your run differs from a correct lock's run"),
    };
    Some(Violation::at(Property::SameAsReference, t * 1000, what))
}

/// The first second where two runs' `ours` and `theirs` differ, or where the shorter one ends.
fn first_second_apart(ours: &[Second], theirs: &[Second]) -> Option<u64> {
    ours.iter()
        .zip(theirs)
        .find(|(a, b)| a != b)
        .map(|(a, _)| a.t)
        .or_else(|| (ours.len() != theirs.len()).then(|| ours.len().min(theirs.len()) as u64))
}

/// A played Redlock story: its timeline, and the lines that tell its events in words
/// («t = 1 s B denied: no majority of the nodes», with the nodes' holders).
pub struct Told<'a> {
    /// The run, second by second.
    pub timeline: &'a Timeline,
    /// The story's events, a line each.
    pub lines: &'a [String],
}

/// [`Property::RedlockSameAsReference`]: `ours`, a run of a Redlock story, goes second by second
/// as `theirs`, a correct Redlock's, in everything but how long the majority has left (which
/// depends on the order a Redlock asks the nodes in, which the algorithm leaves free). The
/// violation names the first step of the story where the two tell other events, or, when they
/// tell the same ones, the first second where what the clients believe or the nodes hold differs.
pub fn redlock_same_as_reference(ours: &Told<'_>, theirs: &Told<'_>) -> Option<Violation> {
    let shared = |timeline: &Timeline| -> Vec<Second> {
        timeline
            .seconds
            .iter()
            .map(|second| Second {
                ttl_left_s: None,
                ..second.clone()
            })
            .collect()
    };
    let t = first_second_apart(&shared(ours.timeline), &shared(theirs.timeline))?;
    // The first line where the runs part names the event, in words both runs use.
    let step = ours
        .lines
        .iter()
        .zip(theirs.lines)
        .position(|(a, b)| a != b)
        .unwrap_or(ours.lines.len().min(theirs.lines.len()));
    // «t = 1 s B denied: no majority of the nodes» (nodes A A A · ·)
    let said = |lines: &[String]| {
        let Some(line) = lines.get(step) else {
            return "nothing more".to_owned();
        };
        let (event, nodes) = line.rsplit_once("nodes: ").unwrap_or((line, ""));
        let event = event.split_whitespace().collect::<Vec<_>>().join(" ");
        format!("«{event}» (nodes {nodes})")
    };
    let what = if ours.lines == theirs.lines {
        format!(
            "your Redlock's run tells the same events as a correct Redlock's, but from t = {t} s \
             on what the clients believe or the nodes hold differs (the timelines below)"
        )
    } else {
        format!(
            "your Redlock's run parts from a correct Redlock's at step {} of the story: yours \
             says {}, a correct one says {}",
            step + 1,
            said(ours.lines),
            said(theirs.lines)
        )
    };
    Some(Violation::at(
        Property::RedlockSameAsReference,
        t * 1000,
        what,
    ))
}

/// [`Property::CounterEndsRight`]: the story's clients all finished within `limit_s` seconds of
/// the story; `waiting` names those that had not, at `at_ms`.
pub fn everyone_finished(waiting: &[&str], limit_s: u64, at_ms: u64) -> Option<Violation> {
    (!waiting.is_empty()).then(|| {
        Violation::at(
            Property::CounterEndsRight,
            at_ms,
            format!(
                "after {limit_s} s, {} still had not finished",
                waiting.join(" and ")
            ),
        )
    })
}

/// [`Property::CounterEndsRight`]: the counter ended at `counter`, as with a correct lock it
/// ends at `expected`.
pub fn counter_ends_right(counter: i64, expected: i64) -> Option<Violation> {
    (counter != expected).then(|| {
        Violation::anytime(
            Property::CounterEndsRight,
            format!("the counter ended at {counter}; with a correct lock it ends at {expected}"),
        )
    })
}

/// [`Property::SameAsReference`], where only the end is held to a correct lock's run (a
/// keeper may renew at other moments than the reference's): `ours` ends as `theirs` does; the
/// violation is at the run's last second.
pub fn ends_as_reference(ours: &Timeline, theirs: &Timeline) -> Option<Violation> {
    (ours.outcome != theirs.outcome).then(|| {
        let what = format!(
            "the run ended with \"{}\" instead of \"{}\"",
            ours.outcome.summary, theirs.outcome.summary
        );
        let t = ours.seconds.len() as u64;
        Violation::at(Property::SameAsReference, t * 1000, what)
    })
}

/// The first call of the learner's code that went otherwise in the second `ours` than in a
/// correct lock's `theirs`, client by client in order: "first in C's acquire: yours "denied", a
/// correct lock's "acquired"". What the story does itself (a pause, a crash, a plain read) is
/// passed over; `None` when only what follows from a call differs (a belief, the counter).
fn first_call_apart(ours: &Second, theirs: &Second, fencing: bool) -> Option<String> {
    let said = |a: Option<&Action>| a.map_or("nothing".to_owned(), |a| format!("\"{}\"", a.text));
    for (client, mine) in &ours.clients {
        let Some(right) = theirs.clients.get(client) else {
            continue;
        };
        for i in 0..mine.actions.len().max(right.actions.len()) {
            let (a, b) = (mine.actions.get(i), right.actions.get(i));
            let same = a.map(|a| (a.kind, &a.text)) == b.map(|b| (b.kind, &b.text));
            let function = a.or(b).and_then(|x| function_of(x.kind, fencing));
            if let (false, Some(function)) = (same, function) {
                return Some(format!(
                    "first in {client}'s {function}: yours {}, a correct lock's {}",
                    said(a),
                    said(b)
                ));
            }
        }
    }
    None
}

/// The function of the learner's lock whose call an action records, if one did.
fn function_of(kind: ActionKind, fencing: bool) -> Option<&'static str> {
    Some(match kind {
        ActionKind::Acquired | ActionKind::Denied if fencing => "acquire_fenced",
        ActionKind::Acquired | ActionKind::Denied => "acquire",
        ActionKind::Released | ActionKind::ReleaseRefused | ActionKind::DeletedOther => "release",
        ActionKind::Renewed | ActionKind::LeaseLost => "keep_alive",
        ActionKind::Read | ActionKind::ReadRejected if fencing => "fenced_read",
        ActionKind::Wrote | ActionKind::WriteRejected if fencing => "fenced_write",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::{ClientSecond, State};

    /// A second in which each of `clients` did `actions`.
    fn second(clients: &[(&str, Vec<Action>)]) -> Second {
        Second {
            t: 4,
            clients: clients
                .iter()
                .map(|(name, actions)| {
                    let client = ClientSecond {
                        state: State::Waiting,
                        believes: false,
                        token: None,
                        actions: actions.clone(),
                    };
                    (name.to_string(), client)
                })
                .collect(),
            holder: None,
            ttl_left_s: None,
            counter: 0,
            highest_token: None,
            notes: Vec::new(),
            nodes: Default::default(),
        }
    }

    fn action(kind: ActionKind, text: &str) -> Action {
        Action::new(kind, text, false, false)
    }

    #[test]
    fn the_first_call_apart_is_named_with_both_answers() {
        let read = action(ActionKind::Read, "read 0");
        let ours = second(&[
            ("A", vec![read.clone()]),
            ("C", vec![action(ActionKind::Denied, "denied")]),
        ]);
        let theirs = second(&[
            ("A", vec![read]),
            ("C", vec![action(ActionKind::Acquired, "acquired")]),
        ]);
        assert_eq!(
            first_call_apart(&ours, &theirs, false).as_deref(),
            Some("first in C's acquire: yours \"denied\", a correct lock's \"acquired\"")
        );
        assert_eq!(
            first_call_apart(&ours, &theirs, true).as_deref(),
            Some("first in C's acquire_fenced: yours \"denied\", a correct lock's \"acquired\"")
        );
    }

    #[test]
    fn what_the_story_does_itself_is_passed_over() {
        let ours = second(&[(
            "A",
            vec![
                action(ActionKind::Paused, "paused"),
                action(ActionKind::Read, "read 1"),
            ],
        )]);
        let theirs = second(&[("A", vec![action(ActionKind::Read, "read 0")])]);
        assert_eq!(first_call_apart(&ours, &theirs, false), None);
        // A call that did not happen in one run is named too.
        let released = second(&[("A", vec![action(ActionKind::Released, "released")])]);
        assert_eq!(
            first_call_apart(&released, &second(&[("A", vec![])]), false).as_deref(),
            Some("first in A's release: yours \"released\", a correct lock's nothing")
        );
    }
}
