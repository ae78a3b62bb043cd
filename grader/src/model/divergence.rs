//! A step no correct lock could have produced, as a judge sees it.

use super::{Answer, Diff, Expected, Op, State};
use crate::verdict::{Property, Violation};

/// A step that went differently from every way the model allows, for the
/// exercise's judge to name the rule it broke.
pub struct Divergence<'a> {
    /// Virtual now after the step, in ms.
    pub now_ms: u64,
    /// Who called the function under test, e.g. `A`.
    pub caller: &'a str,
    /// The caller's lock token, for the lock's own functions.
    pub token: Option<&'a str>,
    /// The fencing token the caller passed, for the storage's functions.
    pub fencing_token: Option<u64>,
    /// The function under test, e.g. `release`.
    pub function: &'static str,
    /// The calls of the step in the order the model tried them, as text
    /// (`A's release(lock, "tok-A")`); [`Diff::Answer::op`] indexes it.
    pub calls: &'a [String],
    /// What each of `calls` returned (`None`: nothing, or it crashed).
    pub answers: &'a [Option<Answer>],
    /// The model's operation for each of `calls`.
    pub ops: &'a [Op],
    /// Which of `calls` is the call under test.
    pub under_test: usize,
    /// The model's state before the step.
    pub before: &'a State,
    /// The model's state after the step, in the order tried.
    pub after: &'a State,
    /// Whether the caller crashed in the middle of its call.
    pub crashed: bool,
    /// How many commands the call under test sent.
    pub sent: usize,
    /// How Redis differs from the model.
    pub diffs: &'a [Diff],
}

impl Divergence<'_> {
    /// The answer the call under test gave, when it differs from the model's.
    pub fn own_answer(&self) -> Option<(&Expected, &Answer)> {
        self.diffs.iter().find_map(|d| match d {
            Diff::Answer { op, expected, got } if *op == self.under_test => Some((expected, got)),
            _ => None,
        })
    }

    /// Another client's call whose answer differs from the model's.
    pub fn other_answer(&self) -> Option<(&str, &Expected, &Answer)> {
        self.other_op_answer().map(|(_, text, e, a)| (text, e, a))
    }

    /// The same, with the other call's operation.
    pub fn other_op_answer(&self) -> Option<(Option<&Op>, &str, &Expected, &Answer)> {
        self.diffs.iter().find_map(|d| match d {
            Diff::Answer { op, expected, got } if *op != self.under_test => {
                Some((self.ops.get(*op), self.calls[*op].as_str(), expected, got))
            }
            _ => None,
        })
    }

    /// The first difference of the kind `pick` selects.
    pub fn find<T>(&self, pick: impl Fn(&Diff) -> Option<T>) -> Option<T> {
        self.diffs.iter().find_map(pick)
    }

    /// Another call of the step granted a fencing token below `t`, with
    /// its text and token.
    pub fn smaller_grant(&self, t: u64) -> Option<(&str, u64)> {
        self.answers.iter().enumerate().find_map(|(k, a)| match a {
            Some(Answer::Token(Some(u))) if k != self.under_test && *u < t => {
                Some((self.calls[k].as_str(), *u))
            }
            _ => None,
        })
    }

    /// The call under test, as text.
    pub fn call(&self) -> &str {
        &self.calls[self.under_test]
    }

    /// A violation of `property` now.
    pub fn violation(&self, property: Property, what: String) -> Violation {
        Violation::at(property, self.now_ms, what)
    }

    /// The fallback: a difference no rule of this exercise names.
    pub fn unexplained(&self) -> Violation {
        let what = match self.diffs.first() {
            Some(d) => format!("after {}, {d}", self.call()),
            None => format!("{} went differently from the model", self.call()),
        };
        self.violation(Property::SameAsReference, what)
    }
}
