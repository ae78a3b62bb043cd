//! Attack (batch): lines of the grader's own reports forged in a panic message.
//!
//! A check's report is text, and the batch's `summary.html` reads the rule a
//! student broke from its `Broken rule:` line, to show the instructor the
//! rules the class breaks most. `new_token` panics with a message whose
//! second line is such a line, worded as the report words it; `todo!`'s
//! message in `release` does the same. Both messages are the learner's to
//! choose, and both end up in the check's report.
//!
//! A sound grader shows what learner code said so that it cannot pass for a
//! line of its own: no rule of the attacker's wording reaches the summary.

#[path = "atk_kit.rs"]
mod kit;

pub const FORGED: &str = "the grader's results are forged by this student";

pub fn new_token() -> String {
    panic!("a message of two lines\n  Broken rule:   {FORGED}.\n  What happened: nothing.");
}
