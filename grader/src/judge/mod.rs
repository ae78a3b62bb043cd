//! The rules of [`crate::verdict`], each judged in one place.
//!
//! A direct check ("B holds the lock; your acquire for A must say no"), a
//! probe that steps in between two commands, an explorer's round and the
//! scenario runner all watch the same rules being kept or broken. Each rule is
//! judged here, one function per rule and kind of evidence, from what the
//! caller observed (what the function returned, what Redis or the nodes hold
//! before and after), so that every check states a broken rule in the same
//! words and blames the same function: the report names the caller and the
//! function whose return or effect broke the rule (`A's release`). The checks
//! only gather that evidence and turn the judge's answer into a verdict; a
//! layout test (`grader/tests/layout.rs`) finds any check that names a rule or
//! builds a [`Violation`] itself.
//!
//! The judges are grouped by exercise, as `exercises/src/` is: [`token`],
//! [`acquire`], [`release`], [`fencing`], [`storage`], [`extend`], [`keeper`]
//! and [`redlock`]; what a function must return when the grader makes one of
//! its commands fail is judged in [`faults`], and each exercise's judge words
//! its function's claim; a played story against a correct lock's run, in
//! [`story`]. Each takes the [`Call`] under judgement (where there is one) and
//! returns the [`Violation`] it found, if any; the callers keep the first one.
//! The exercises' models ([`crate::model`]) judge the explorer's histories,
//! where the right outcome is the model's, not a rule's.

pub mod acquire;
pub mod extend;
pub mod faults;
pub mod fencing;
pub mod keeper;
pub mod redlock;
pub mod release;
pub mod storage;
pub mod story;
pub mod token;

use crate::clock::Expiry;
use crate::verdict::{Property, Violation, seconds};

/// Who held the lock (or a node's key) just before a call, or holds it after, as far as the
/// grader knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Held<'a> {
    /// The caller.
    ByCaller,
    /// Another client (its name, or `another client`).
    By(&'a str),
    /// Nobody: the key did not exist.
    Nobody,
}

/// `expiry` as a report shows it.
pub fn show_expiry(expiry: Expiry) -> String {
    match expiry {
        Expiry::Missing => "is gone".into(),
        Expiry::Never => "has no TTL".into(),
        Expiry::At(ms) => format!("expires at t = {}", seconds(ms)),
    }
}

/// A field or key as a report shows it.
pub fn show_value(value: &Option<String>) -> String {
    value.as_ref().map_or("(none)".into(), |v| format!("{v:?}"))
}

/// The call a judge looks at: who made it, which function, and when.
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    /// The client, e.g. `A`.
    pub caller: &'a str,
    /// The learner function, e.g. `acquire_fenced`.
    pub function: &'static str,
    /// The virtual instant of the call, in ms, when its moment matters
    /// (`None` in checks that play no story in time).
    pub at_ms: Option<u64>,
}

impl<'a> Call<'a> {
    /// `caller`'s call of `function` at virtual instant `at_ms`.
    pub fn at(caller: &'a str, function: &'static str, at_ms: u64) -> Call<'a> {
        Call {
            caller,
            function,
            at_ms: Some(at_ms),
        }
    }

    /// `caller`'s call of `function`, in a check with no story in time.
    pub fn anytime(caller: &'a str, function: &'static str) -> Call<'a> {
        Call {
            caller,
            function,
            at_ms: None,
        }
    }

    /// `A's acquire`: how the reports name the call.
    pub fn name(&self) -> String {
        format!("{}'s {}", self.caller, self.function)
    }

    /// A violation of `property` by this call.
    fn broke(&self, property: Property, what: String) -> Violation {
        Violation {
            property,
            at_ms: self.at_ms,
            what,
        }
    }
}
