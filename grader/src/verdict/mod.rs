//! The properties a lock must keep, and what a broken one looks like.
//!
//! Snapshots show what happened; these decide whether it was allowed. Each
//! [`Property`] is one rule of a safe lock, stated the way a learner needs to
//! hear it, with hints that climb from a nudge to the command and the book
//! chapter that explains it, all in its one row of [`RULES`]. A [`Violation`]
//! is one time a rule was broken: which rule, at which second, and what
//! exactly happened.

mod rules;

use std::fmt;

pub use rules::{RULES, Rule};

/// How many hints a rule has ([`Property::hint_levels`]).
pub const HINT_LEVELS: u8 = 3;

/// One rule of a safe lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Property {
    /// Tokens differ from one acquisition to the next.
    TokensUnique,
    /// Tokens carry 120 random bits or more ([`crate::token::MIN_BITS`]).
    TokensUnguessable,
    /// `acquire` takes a free lock.
    AcquireTakesFreeLock,
    /// `acquire` never takes a lock someone else holds.
    AcquireRespectsHolder,
    /// A refused `acquire` leaves the holder's key and its TTL as they are.
    AcquireLeavesHolderTtl,
    /// The lock key expires after exactly the TTL asked for.
    LockHasTtl,
    /// A crash at any point leaves no lock without a TTL.
    NoImmortalLock,
    /// Of several clients racing for a free lock, exactly one wins.
    OneWinner,
    /// `acquire` returns the error when a command fails or its reply is lost, never a grant
    /// or a refusal it cannot know.
    AcquireReportsFailure,
    /// Releasing one's own lock deletes it.
    ReleaseFreesOwnLock,
    /// A release never deletes or changes another client's lock.
    ReleaseSparesOthers,
    /// `release` says truthfully whether it deleted the lock.
    ReleaseTellsTruth,
    /// `release` returns the error when a command fails or its reply is lost.
    ReleaseReportsFailure,
    /// `extend` renews the caller's own lock to exactly the TTL asked for.
    ExtendRenewsOwnLock,
    /// `extend` never renews, changes or brings back a lock that is not the caller's.
    ExtendSparesOthers,
    /// `extend` says truthfully whether it renewed the lock.
    ExtendTellsTruth,
    /// `extend` returns the error when a command fails or its reply is lost.
    ExtendReportsFailure,
    /// A lease keeper renews by the time a third of the TTL has passed.
    KeeperRenewsInTime,
    /// Once a renewal fails, the job is told before its next write.
    KeeperStopsJob,
    /// A job told that its lease is lost stays stopped.
    KeeperStopsForGood,
    /// A lease keeper renews no sooner than a quarter of the TTL after the
    /// last renewal.
    KeeperRenewsOnPace,
    /// The newest grant always carries the largest fencing token.
    TokensGrow,
    /// The storage refuses a request whose token is older than one it has seen.
    StaleRequestsRejected,
    /// The storage accepts a token equal to the highest it has seen.
    EqualTokensAccepted,
    /// The storage accepts a token larger than every one it has seen.
    FreshTokensAccepted,
    /// The storage keeps the last accepted value and reads it back.
    StorageKeepsValue,
    /// The fence counter and the row never expire.
    FencesNeverExpire,
    /// The storage remembers the highest token it has seen.
    StorageRemembersHighest,
    /// `fenced_write` and `fenced_read` return the error when a command fails or its reply is
    /// lost.
    StorageReportsFailure,
    /// The counter ends where the scenario says it must.
    CounterEndsRight,
    /// The run matches the reference run second by second.
    SameAsReference,
    /// Redlock takes the lock when a majority of the nodes is free and answering.
    RedlockTakesMajority,
    /// Redlock grants the lock only with a majority of the nodes.
    RedlockNeedsMajority,
    /// Redlock's validity is the TTL minus the time spent minus the drift allowance.
    RedlockValidity,
    /// A Redlock acquire that fails releases the lock on every node.
    RedlockReleasesOnFailure,
    /// `redlock_release` counts the nodes whose delete came back done, and no others.
    RedlockReleaseTellsTruth,
    /// A Redlock story unfolds as it does with a correct Redlock.
    RedlockSameAsReference,
}

impl Property {
    /// Every rule, in the order of the enum: for reading a rule back by its
    /// name (`format!("{p:?}")`), as the learner's progress file stores it.
    pub const ALL: [Property; 37] = [
        Property::TokensUnique,
        Property::TokensUnguessable,
        Property::AcquireTakesFreeLock,
        Property::AcquireRespectsHolder,
        Property::AcquireLeavesHolderTtl,
        Property::LockHasTtl,
        Property::NoImmortalLock,
        Property::OneWinner,
        Property::AcquireReportsFailure,
        Property::ReleaseFreesOwnLock,
        Property::ReleaseSparesOthers,
        Property::ReleaseTellsTruth,
        Property::ReleaseReportsFailure,
        Property::ExtendRenewsOwnLock,
        Property::ExtendSparesOthers,
        Property::ExtendTellsTruth,
        Property::ExtendReportsFailure,
        Property::KeeperRenewsInTime,
        Property::KeeperStopsJob,
        Property::KeeperStopsForGood,
        Property::KeeperRenewsOnPace,
        Property::TokensGrow,
        Property::StaleRequestsRejected,
        Property::EqualTokensAccepted,
        Property::FreshTokensAccepted,
        Property::StorageKeepsValue,
        Property::FencesNeverExpire,
        Property::StorageRemembersHighest,
        Property::StorageReportsFailure,
        Property::CounterEndsRight,
        Property::SameAsReference,
        Property::RedlockTakesMajority,
        Property::RedlockNeedsMajority,
        Property::RedlockValidity,
        Property::RedlockReleasesOnFailure,
        Property::RedlockReleaseTellsTruth,
        Property::RedlockSameAsReference,
    ];

    /// The rule's row: its words, chapter and hints.
    pub fn row(self) -> &'static Rule {
        &RULES[self as usize]
    }

    /// The rule, as one sentence.
    pub fn rule(self) -> &'static str {
        self.row().words
    }

    /// Three hints for a broken rule, from the gentlest ([`Rule::hints`]).
    pub fn hint_levels(self) -> [&'static str; HINT_LEVELS as usize] {
        self.row().hints
    }

    /// The book chapter that explains the rule, as a reader finds it
    /// ([`crate::exercise::chapter::Chapter::line`]: title, served page and file).
    pub fn chapter(self) -> String {
        self.row().chapter.line()
    }
}

/// One time a rule was broken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The rule.
    pub property: Property,
    /// When, in virtual milliseconds, if it happened at one moment.
    pub at_ms: Option<u64>,
    /// What happened, e.g. "A's release deleted B's lock".
    pub what: String,
}

impl Violation {
    /// A violation at virtual instant `at_ms`.
    pub fn at(property: Property, at_ms: u64, what: impl Into<String>) -> Violation {
        Violation {
            property,
            at_ms: Some(at_ms),
            what: what.into(),
        }
    }

    /// A violation not tied to one moment.
    pub fn anytime(property: Property, what: impl Into<String>) -> Violation {
        Violation {
            property,
            at_ms: None,
            what: what.into(),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at_ms {
            Some(ms) => write!(f, "at t = {}: {}", seconds(ms), self.what),
            None => write!(f, "{}", self.what),
        }
    }
}

/// `12 s`, or `1.5 s` when the instant is not a whole second.
pub fn seconds(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{} s", ms as f64 / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_has_its_row_in_its_place() {
        for (i, rule) in Property::ALL.into_iter().enumerate() {
            assert_eq!(
                rule as usize, i,
                "{rule:?} is out of the enum's order in ALL"
            );
            assert_eq!(
                RULES[i].property, rule,
                "row {i} of RULES words another rule"
            );
            assert!(RULES[i].hints.iter().all(|h| !h.is_empty()), "{rule:?}");
        }
    }
}
