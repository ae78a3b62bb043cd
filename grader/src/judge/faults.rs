//! The rule every function that returns a `RedisResult` keeps when one of its
//! commands fails: it returns the error.
//!
//! After an error reply or a dropped connection the command did not run;
//! after a lost or late reply it did, and the client cannot know. Either way
//! an `Ok` answer is a claim the function cannot back: a release, a renewal or
//! a grant that did not happen, or that nobody can confirm, or a "no" that is
//! just as much a guess. An `Err` is right in every case, even when the
//! command ran: the caller then knows that it does not know. The exercises'
//! doc text says so in the words of [`ON_ERROR`], which a report quotes; each
//! exercise's judge ([`super::acquire`], [`super::release`], [`super::extend`])
//! names the claim its function made. A lease keeper answers a failed renewal
//! with the `lost` flag instead ([`super::keeper`]), and Redlock counts a node
//! whose command failed as a no ([`super::redlock`]).

use super::Call;
use crate::verdict::{Property, Violation};
use crate::wire::Hit;

/// What the exercises' doc text says an error must give, word for word (each exercise's
/// descriptor names the sentences its reports quote, [`crate::exercise::Exercise::says_on_failure`],
/// and a layout test holds its stub and its solution to them).
pub const ON_ERROR: &str = "An error from Redis or from the connection (an error reply, a \
     dropped connection, a reply lost or late) goes back to the caller as `Err`, never as an \
     answer: after a lost reply, nobody knows whether the command ran.";

/// What the call claimed with an `Ok` answer after the fault, in a
/// function's words.
pub struct Claim<'a> {
    /// The answer, as a learner writes it (`Ok(true)`).
    pub answer: String,
    /// What it claims, e.g. `a release that did not happen`.
    pub claims: &'a str,
}

/// `property`: after the fault `hit`, `call` returned the error; `claim` is
/// what it returned instead, if it did not (`None`: it returned `Err`).
pub fn returned_the_error(
    call: &Call<'_>,
    property: Property,
    hit: &Hit,
    claim: Option<Claim<'_>>,
) -> Option<Violation> {
    let Claim { answer, claims } = claim?;
    let what = format!(
        "{}, and {} returned {answer}: {claims}. {}",
        hit.did(),
        call.name(),
        doc_says(ON_ERROR)
    );
    Some(call.broke(property, what))
}

/// `Its doc says: "…"`, quoting `sentence` (the report ends the line with a
/// full stop of its own).
pub fn doc_says(sentence: &str) -> String {
    format!("Its doc says: \"{}\"", sentence.trim_end_matches('.'))
}

/// How an answer after `hit` is worded: of something that did not happen
/// (the command did not run), or that the call cannot know (it ran, and the
/// reply never came).
pub fn unknown<'a>(hit: &Hit, did_not_happen: &'a str, cannot_know: &'a str) -> &'a str {
    if hit.fault.runs() {
        cannot_know
    } else {
        did_not_happen
    }
}
