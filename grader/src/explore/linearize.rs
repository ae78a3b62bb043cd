//! The ways a step may have gone, in the model.
//!
//! A call that another client stepped into is still correct if the step
//! ends as if the calls had come one wholly after the other, in some order;
//! and a call that crashed is correct if Redis is as it would be with the
//! call done, or not begun. For each order the caller offers, this walks
//! every branch the model allows (a grant or a refusal where both are
//! right) and compares where each ends with what Redis holds.

use crate::model::{self, Answer, Baseline, Diff, Expected, Observed, Op, State};

/// One call in an order the model tries: its text, operation and answer
/// (`None` when it crashed or made no answer).
pub type Linear = (String, Op, Option<Answer>);

/// One way the step may have gone, and how Redis differs from it.
#[derive(Clone, Debug)]
pub struct Tried {
    /// The model's state at its end (its counter raised to Redis').
    pub state: State,
    /// What the model expected of each call in the order.
    pub expected: Vec<Option<Expected>>,
    /// The branch of the model each call in the order took.
    pub branches: Vec<&'static str>,
    /// Which call of the order is the call under test.
    pub under_test: usize,
    /// The differences: none when this way fits.
    pub diffs: Vec<Diff>,
}

/// Every way `order` may go from `start`, compared with `observed`.
pub fn tried(
    start: &State,
    order: &[Linear],
    under_test: usize,
    observed: &Observed,
    baseline: &Baseline,
) -> Vec<Tried> {
    let mut leaves = Vec::new();
    walk(start, order, Leaf::default(), &mut leaves);
    let may_set = order.iter().any(|(_, op, _)| op.sets_a_ttl());
    leaves
        .into_iter()
        .map(|(mut state, mut leaf)| {
            leaf.diffs.extend(model::compare(
                start, &mut state, observed, baseline, may_set,
            ));
            Tried {
                state,
                expected: leaf.expected,
                branches: leaf.branches,
                under_test,
                diffs: leaf.diffs,
            }
        })
        .collect()
}

/// One way through an order so far: what each call was expected to do and
/// the branch it took, and the differences of the answers.
#[derive(Clone, Default)]
struct Leaf {
    expected: Vec<Option<Expected>>,
    branches: Vec<&'static str>,
    diffs: Vec<Diff>,
}

/// Every way `rest` may go from `state`, each with the state it ends in.
fn walk(state: &State, rest: &[Linear], so_far: Leaf, out: &mut Vec<(State, Leaf)>) {
    let Some(((_, op, got), rest)) = rest.split_first() else {
        out.push((state.clone(), so_far));
        return;
    };
    let k = so_far.expected.len();
    for branch in model::apply(state, op, got.as_ref()) {
        let mut next = so_far.clone();
        let d = &mut next.diffs;
        if let (Some(want), Some(got)) = (&branch.expected, got)
            && !want.admits(got)
        {
            d.push(Diff::Answer {
                op: k,
                expected: want.clone(),
                got: got.clone(),
            });
        }
        next.expected.push(branch.expected);
        next.branches.push(branch.name);
        walk(&branch.state, rest, next, out);
    }
}
