//! Every model's branch for a call that met one of the grader's faults
//! ([`crate::wire::Fault`]): an error reply, a dropped connection, a reply
//! lost after the command ran, or one that came too late.
//!
//! Whatever the function, the call must return `Err` (a lease keeper's tick
//! sets `lost` instead, and may return the error): any answer is a claim it
//! cannot back. What Redis holds afterwards is either unchanged or as the
//! call would have left it: a command whose reply was lost may have done the
//! call's work, and so may the commands before the one a fault stopped (a
//! correct acquire that sets the key, then waits for its replicas, has taken
//! the lock when its `WAIT` or `INFO` fails). The branch is named by the
//! fault: the command it hit ran, or did not.

use super::{Answer, Branch, Divergence, Expected, Op, State};
use crate::judge::{self, Call};
use crate::verdict::Violation;
use crate::wire::Hit;

/// A fault stopped a command before it ran.
pub const STOPPED: &str = "a failed command (it did not run): Err";
/// A command ran and its reply was lost or late.
pub const RAN: &str = "a failed command (it ran, its reply lost): Err";

/// The branches every explorer's model lists for its faults.
pub const BRANCHES: [&str; 2] = [STOPPED, RAN];

/// The ways `op` may go when its command met the fault `hit`.
pub fn faulted(state: &State, op: &Op, hit: &Hit) -> Vec<Branch> {
    let name = if hit.fault.runs() { RAN } else { STOPPED };
    let mut states = vec![told(op, state.clone())];
    for branch in super::apply(state, op, None) {
        let ran = told(op, branch.state);
        if !states.contains(&ran) {
            states.push(ran);
        }
    }
    states
        .into_iter()
        .map(|state| Branch {
            name,
            expected: Some(expected(op)),
            state,
        })
        .collect()
}

/// What a call must return after a fault: `Err`; a keeper's tick, `lost`.
fn expected(op: &Op) -> Expected {
    match op {
        Op::Keep { .. } => Expected::Kept {
            renewed_at_ms: None,
            lost: true,
            may_fail: true,
        },
        _ => Expected::Error,
    }
}

/// `state` after a faulted `op`: a keeper has told its job.
fn told(op: &Op, mut state: State) -> State {
    if matches!(op, Op::Keep { .. }) {
        state.keeper.lost = true;
    }
    state
}

/// The rule a faulted call broke by answering, in its exercise's words:
/// `None` when the call under test met no fault or returned as it must.
pub fn judge(d: &Divergence<'_>) -> Option<Violation> {
    let Some(Op::Failed { op, hit }) = d.ops.get(d.under_test) else {
        return None;
    };
    let (_, got) = d.own_answer()?;
    let call = Call::at(d.caller, d.function, d.now_ms);
    match (op.as_ref(), got) {
        (Op::Acquire { .. }, Answer::Bool(granted)) => {
            judge::acquire::reports_failure(&call, hit, Some(granted.then_some(None)))
        }
        (Op::AcquireFenced { .. }, Answer::Token(token)) => {
            judge::acquire::reports_failure(&call, hit, Some(token.map(Some)))
        }
        (Op::Release { .. }, Answer::Bool(deleted)) => {
            judge::release::reports_failure(&call, hit, Some(*deleted))
        }
        (Op::Extend { .. }, Answer::Bool(renewed)) => {
            judge::extend::reports_failure(&call, hit, Some(*renewed))
        }
        (Op::Write { .. }, Answer::Bool(accepted)) => judge::storage::reports_failure(
            &call,
            hit,
            Some(judge::storage::Answered::Write(*accepted)),
        ),
        (Op::Read { .. }, Answer::Read(value)) => judge::storage::reports_failure(
            &call,
            hit,
            Some(judge::storage::Answered::Read(*value)),
        ),
        (Op::Keep { .. }, Answer::Kept { lost, error, .. }) => {
            let returned = if *error { "Err(…)" } else { "Ok(())" };
            judge::keeper::stops_job(&call, hit, *lost, returned)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Held;
    use crate::wire::Fault;

    fn hit(fault: Fault) -> Hit {
        Hit {
            fault,
            command: "EVALSHA".into(),
            node: None,
        }
    }

    fn held() -> State {
        State {
            now_ms: 0,
            lock: Some(Held {
                token: "a".into(),
                expires_at: 1000,
            }),
            counter: 0,
            row: Default::default(),
            keeper: Default::default(),
        }
    }

    #[test]
    fn a_failed_call_may_have_done_its_work_or_not_and_must_return_err() {
        let release = Op::Release { token: "a".into() };
        let stopped = faulted(&held(), &release, &hit(Fault::Dropped));
        assert_eq!(stopped.len(), 2);
        assert_eq!(stopped[0].state, held());
        assert!(stopped.iter().all(|b| b.name == STOPPED));
        assert_eq!(stopped[0].expected, Some(Expected::Error));
        let ran = faulted(&held(), &release, &hit(Fault::LostReply));
        let states: Vec<_> = ran.iter().map(|b| b.state.lock.clone()).collect();
        assert_eq!(states, vec![held().lock, None]);
        assert!(ran.iter().all(|b| b.name == RAN));
        assert!(!Expected::Error.admits(&Answer::Bool(false)));
        assert!(Expected::Error.admits(&Answer::Error));
    }

    #[test]
    fn a_faulted_tick_must_tell_the_job() {
        let tick = Op::Keep {
            token: "a".into(),
            ttl_ms: 900,
            now_ms: 600,
        };
        let b = faulted(&held(), &tick, &hit(Fault::ErrorReply));
        assert!(b.iter().all(|b| b.state.keeper.lost));
        let e = b[0].expected.clone().expect("an answer");
        let kept = |lost| Answer::Kept {
            renewed_at_ms: 0,
            lost,
            error: true,
        };
        assert!(e.admits(&kept(true)) && !e.admits(&kept(false)));
    }
}
