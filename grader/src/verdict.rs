//! The properties a lock must keep, and what a broken one looks like.
//!
//! Snapshots show what happened; these decide whether it was allowed. Each
//! [`Property`] is one rule of a safe lock, stated the way a learner needs to
//! hear it, with hints that climb from a nudge to the command and the book
//! chapter that explains it. A [`Violation`] is one time a rule was broken: which
//! rule, at which second, and what exactly happened.
//!
//! The file is longer than most on purpose: every rule's words (the rule,
//! its three hints, from a nudge to the command, its chapter) stay in
//! this one place, so a rule cannot be added with its text half written.

use std::fmt;

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
    /// Releasing one's own lock deletes it.
    ReleaseFreesOwnLock,
    /// A release never deletes or changes another client's lock.
    ReleaseSparesOthers,
    /// `release` says truthfully whether it deleted the lock.
    ReleaseTellsTruth,
    /// `extend` renews the caller's own lock to exactly the TTL asked for.
    ExtendRenewsOwnLock,
    /// `extend` never renews, changes or brings back a lock that is not the caller's.
    ExtendSparesOthers,
    /// `extend` says truthfully whether it renewed the lock.
    ExtendTellsTruth,
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
    /// A Redlock story unfolds as it does with a correct Redlock.
    RedlockSameAsReference,
}

impl Property {
    /// Every rule, in the order of the enum: for reading a rule back by its
    /// name (`format!("{p:?}")`), as the learner's progress file stores it.
    pub const ALL: [Property; 32] = [
        Property::TokensUnique,
        Property::TokensUnguessable,
        Property::AcquireTakesFreeLock,
        Property::AcquireRespectsHolder,
        Property::AcquireLeavesHolderTtl,
        Property::LockHasTtl,
        Property::NoImmortalLock,
        Property::OneWinner,
        Property::ReleaseFreesOwnLock,
        Property::ReleaseSparesOthers,
        Property::ReleaseTellsTruth,
        Property::ExtendRenewsOwnLock,
        Property::ExtendSparesOthers,
        Property::ExtendTellsTruth,
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
        Property::CounterEndsRight,
        Property::SameAsReference,
        Property::RedlockTakesMajority,
        Property::RedlockNeedsMajority,
        Property::RedlockValidity,
        Property::RedlockReleasesOnFailure,
        Property::RedlockSameAsReference,
    ];

    /// The rule, as one sentence.
    pub fn rule(self) -> &'static str {
        match self {
            Property::TokensUnique => "every acquisition needs a token of its own",
            Property::TokensUnguessable => "a token must carry 120 random bits or more",
            Property::AcquireTakesFreeLock => "acquire must take a lock that is free",
            Property::AcquireRespectsHolder => {
                "acquire must never take a lock that another client holds"
            }
            Property::AcquireLeavesHolderTtl => {
                "a refused acquire must leave the holder's lock and its TTL as they are"
            }
            Property::LockHasTtl => "the lock key must expire after exactly the TTL asked for",
            Property::NoImmortalLock => {
                "a client that crashes at any point must not leave a lock without a TTL"
            }
            Property::OneWinner => "when several clients race for a free lock, exactly one wins",
            Property::ReleaseFreesOwnLock => "releasing your own lock must delete it",
            Property::ReleaseSparesOthers => "a release must never delete another client's lock",
            Property::ReleaseTellsTruth => {
                "release must return true exactly when it deleted your lock"
            }
            Property::ExtendRenewsOwnLock => {
                "extend must renew your own lock to exactly the TTL asked for"
            }
            Property::ExtendSparesOthers => {
                "extend must never renew, change or bring back a lock that is not yours"
            }
            Property::ExtendTellsTruth => {
                "extend must return true exactly when it renewed your lock"
            }
            Property::KeeperRenewsInTime => {
                "a lease keeper must renew the lock by the time a third of its TTL has passed"
            }
            Property::KeeperStopsJob => {
                "once a renewal fails, the job must be told before it writes again"
            }
            Property::KeeperStopsForGood => "a job told that its lease is lost must stay stopped",
            Property::KeeperRenewsOnPace => {
                "a lease keeper must not renew (or look at the lock) before a quarter of its TTL has passed"
            }
            Property::TokensGrow => "the newest grant must carry the largest fencing token",
            Property::StaleRequestsRejected => {
                "the storage must refuse a request whose token is older than one it has seen"
            }
            Property::EqualTokensAccepted => {
                "the storage must accept the current holder's token again"
            }
            Property::StorageRemembersHighest => {
                "the storage must remember the highest token it has seen"
            }
            Property::FreshTokensAccepted => {
                "the storage must accept a token larger than every token it has seen"
            }
            Property::StorageKeepsValue => {
                "the storage must keep the last accepted value and read it back (0 when there is none)"
            }
            Property::FencesNeverExpire => {
                "the fence counter and the storage row must never expire"
            }
            Property::CounterEndsRight => "the counter must end where the scenario says",
            Property::SameAsReference => "a correct lock makes this scenario unfold as shown",
            Property::RedlockTakesMajority => {
                "Redlock must take the lock when a majority of the nodes is free and answering"
            }
            Property::RedlockNeedsMajority => {
                "Redlock must grant the lock only with a majority of the nodes, in time"
            }
            Property::RedlockValidity => {
                "Redlock's validity is the TTL minus the time spent asking minus the drift \
                 allowance (1 % of the TTL plus 2 ms)"
            }
            Property::RedlockReleasesOnFailure => {
                "a Redlock acquire that fails must release the lock on every node"
            }
            Property::RedlockSameAsReference => {
                "a correct Redlock makes this story unfold as shown"
            }
        }
    }

    /// Three hints for a broken rule, from the gentlest: a nudge, the idea,
    /// then the Redis command or the shape of the Lua script. A report
    /// prints the nudge; `h` in `cargo course` reveals the others, in order.
    pub fn hint_levels(self) -> [&'static str; HINT_LEVELS as usize] {
        match self {
            Property::ExtendRenewsOwnLock | Property::ExtendTellsTruth => [
                "After your extend, does the key's TTL read what you asked for, and does the answer match?",
                "A renewal is the holder's alone, and the unit matters: the TTL is a Duration, and \
                 PEXPIRE counts milliseconds, EXPIRE seconds.",
                "Lua: `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', \
                 KEYS[1], ARGV[2]) end return 0`, with ARGV[2] = `ttl.as_millis()`; true on 1.",
            ],
            Property::ExtendSparesOthers => [
                "What does your extend do to a key that holds someone else's token, or no key at all?",
                "Only the holder may renew: compare the token and renew in one step, and never \
                 create a key that expired: a lost lock is lost.",
                "One Lua script: GET, compare with ARGV[1], PEXPIRE only on a match, return 0 \
                 otherwise; no SET anywhere.",
            ],
            Property::KeeperRenewsInTime => [
                "How much of the TTL is left when your keeper renews?",
                "Renew early and often enough that a late tick or two still finds the lock alive: \
                 every third of the TTL, to the full TTL.",
                "`if now - *renewed_at >= ttl / 3 { if extend(con, key, token, ttl)? { *renewed_at = \
                 now } else { lost.store(true, SeqCst) } }`",
            ],
            Property::KeeperStopsJob => [
                "When a renewal fails, who finds out, and when?",
                "A failed renewal means the lock may already be someone else's: the job must learn it \
                 before its next write, in the same tick.",
                "On `extend` returning false, `lost.store(true, Ordering::SeqCst)` before returning; \
                 renew only through your `extend`.",
            ],
            Property::KeeperRenewsOnPace => [
                "How many commands does your keeper send in one TTL?",
                "A renewal is due once a third of the TTL has passed since the last one that succeeded; \
                 until then a tick sends nothing, and `renewed_at` must say when that last renewal was.",
                "`if now.saturating_sub(*renewed_at) < ttl / 3 { return Ok(()) }` before renewing, and \
                 `*renewed_at = now` when `extend` answers true.",
            ],
            Property::KeeperStopsForGood => [
                "After the lease is lost, what does your keeper still send?",
                "A lost lease is over: someone else may have written in between, so the job stays \
                 stopped and the keeper renews nothing.",
                "Return at once while `lost` is set; never clear it and never SET the key again.",
            ],
            Property::RedlockTakesMajority | Property::RedlockNeedsMajority => [
                "How many nodes said yes, and how many make a majority of all of them?",
                "A Redlock is held only on more than half of all the nodes (3 of 5); a node that \
                 errs or does not answer counts as a no, and must not end the call.",
                "For each node `SET key token NX PX ttl_ms`, count the OKs ignoring errors, grant when \
                 `count >= nodes.len() / 2 + 1`.",
            ],
            Property::RedlockValidity => [
                "When did the TTL start on the first node, and when did you stop asking?",
                "The keys started expiring while you were still asking the others, and clocks drift: \
                 the lock is yours for less than the TTL.",
                "`validity = ttl - (clock() after - clock() before) - (ttl / 100 + 2 ms)`; refuse when \
                 it is not positive.",
            ],
            Property::RedlockReleasesOnFailure => [
                "When your acquire gives up, which nodes still hold your token?",
                "A node that seemed to refuse may have set the key and lost only its reply: a failed \
                 acquire must undo itself everywhere.",
                "Before returning None, call your release (compare-and-delete script) on every node.",
            ],
            Property::RedlockSameAsReference => [
                "Step through the story: at which second does your Redlock act differently?",
                "The algorithm is the same on every node and every time: SET NX PX, a majority, the \
                 time spent and the drift subtracted, a release everywhere on failure.",
                "Compare your acquire with the steps of the chapter: SET NX PX per node, count, \
                 subtract elapsed and drift, release on failure.",
            ],
            Property::TokensUnique | Property::TokensUnguessable => [
                "Could two clients, or an attacker, ever come up with the same token as yours?",
                "A token proves who holds the lock, so it must be unique and unguessable: take it from \
                 the operating system's random source, not from a clock, a counter or a constant.",
                "`getrandom::fill(&mut bytes)` on a `[0u8; 16]`, then the 16 bytes as hex.",
            ],
            Property::AcquireTakesFreeLock => [
                "Does your acquire report a grant exactly when Redis wrote the key?",
                "One command both tries and tells: it writes only a missing key, and its reply says \
                 whether it did.",
                "`SET key token NX PX ttl_ms`: reply OK means granted, nil means refused.",
            ],
            Property::AcquireLeavesHolderTtl => [
                "After a refusal, what else does your acquire send?",
                "A refused acquire owns nothing: the key and its expiry belong to the holder, and \
                 touching them keeps a crashed holder's lock alive.",
                "Send `SET key token NX PX ttl_ms` and nothing after a nil reply.",
            ],
            Property::AcquireRespectsHolder | Property::OneWinner => [
                "What does your acquire do when the key already exists?",
                "Only Redis may decide, in one atomic step, to write the key only if it is missing: \
                 a look in Rust first (GET, EXISTS) leaves a gap for another client.",
                "`SET key token NX PX ttl_ms` alone: no GET or EXISTS before it.",
            ],
            Property::LockHasTtl => [
                "Which unit does your expiry use, and what happens to 1.5 s?",
                "The TTL must reach Redis in milliseconds, unrounded.",
                "`SET key token NX PX ttl.as_millis()` (not EX, not `as_secs()`).",
            ],
            Property::NoImmortalLock => [
                "What if your process dies right after the first command?",
                "The key and its expiry must be born together, in one command.",
                "`SET key token NX PX ttl_ms`, not `SETNX` then `PEXPIRE`.",
            ],
            Property::ReleaseFreesOwnLock | Property::ReleaseTellsTruth => [
                "Does your release delete the key when it holds your token, and say so?",
                "Compare the stored token with yours, delete on a match, and return what the delete did.",
                "`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) \
                 else return 0 end`, with the lock key as KEYS[1] and your token as ARGV[1].",
            ],
            Property::ReleaseSparesOthers => [
                "Whose lock is it by the time your DEL arrives?",
                "Your lock may have expired and passed to someone else: compare and delete in one \
                 atomic step, inside Redis.",
                "One `EVAL` of `if redis.call('GET', KEYS[1]) == ARGV[1] then return \
                 redis.call('DEL', KEYS[1]) else return 0 end`.",
            ],
            Property::TokensGrow => [
                "Could another client be granted the lock between your two commands?",
                "Taking the lock and drawing the fencing token must happen in one atomic step.",
                "One Lua script: `if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then \
                 return redis.call('INCR', KEYS[2]) else return false end`.",
            ],
            Property::StaleRequestsRejected => [
                "Where does your storage compare the tokens, and can a write slip in meanwhile?",
                "Compare the request's token with the highest one seen and act on it inside one script.",
                "`local seen = tonumber(redis.call('HGET', KEYS[1], 'fence')) or 0; if \
                 tonumber(ARGV[1]) < seen then return 0 end`, then the write, in the same script.",
            ],
            Property::EqualTokensAccepted => [
                "What does your storage do with the same token twice?",
                "Refuse only tokens strictly smaller than the highest seen: the holder reuses its token.",
                "Refuse with `if tonumber(ARGV[1]) < seen`, never `<=`.",
            ],
            Property::FreshTokensAccepted => [
                "How do \"9\" and \"10\" compare in your script, and what is a missing field?",
                "Compare tokens as numbers, and read a row or field that is not there yet as 0.",
                "`local seen = tonumber(redis.call('HGET', KEYS[1], 'fence')) or 0` and \
                 `tonumber(ARGV[1])`.",
            ],
            Property::StorageKeepsValue => [
                "What does your storage store on an accepted write, and read back?",
                "An accepted write stores its value; a refused one changes nothing; a read returns \
                 the value as a number, 0 when there is none.",
                "`redis.call('HSET', KEYS[1], 'value', ARGV[2], 'fence', ARGV[1])`, and for a read \
                 `tonumber(redis.call('HGET', KEYS[1], 'value')) or 0`.",
            ],
            Property::FencesNeverExpire => [
                "Which of your keys get an expiry?",
                "Only the lock expires; the counter and the row must outlive every holder.",
                "No `PX`, `EXPIRE` or `PEXPIRE` on the fence counter or the row.",
            ],
            Property::StorageRemembersHighest => [
                "After accepting a token, where does your storage write it down?",
                "The storage must keep the highest token it accepted, to refuse older ones later.",
                "`redis.call('HSET', KEYS[1], 'fence', ARGV[1])` in the accepting branch.",
            ],
            Property::CounterEndsRight | Property::SameAsReference => [
                "Find the first second where your run and the correct one differ.",
                "At that second, which of your functions ran, and what did it return?",
                "Run that exercise's own checks (`cargo test -p exercises NAME::`): they show the \
                 commands it sent.",
            ],
        }
    }

    /// The book chapter that explains the rule.
    pub fn chapter(self) -> &'static str {
        match self {
            Property::TokensUnique
            | Property::TokensUnguessable
            | Property::AcquireTakesFreeLock
            | Property::AcquireRespectsHolder
            | Property::AcquireLeavesHolderTtl
            | Property::LockHasTtl
            | Property::NoImmortalLock
            | Property::OneWinner => {
                "1, Why a lock, and the single-instance lock (book/src/single-instance.md)"
            }
            Property::ReleaseFreesOwnLock
            | Property::ReleaseSparesOthers
            | Property::ReleaseTellsTruth => {
                "2, Releasing: check, then delete, in one step (book/src/releasing.md)"
            }
            Property::CounterEndsRight | Property::SameAsReference => {
                "3, The timeout is the danger (book/src/timeout.md)"
            }
            Property::ExtendRenewsOwnLock
            | Property::ExtendSparesOthers
            | Property::ExtendTellsTruth
            | Property::KeeperRenewsInTime
            | Property::KeeperStopsJob
            | Property::KeeperStopsForGood
            | Property::KeeperRenewsOnPace => "3.1, Renewal and the watchdog (book/src/renewal.md)",
            Property::TokensGrow | Property::FencesNeverExpire => {
                "4, Fencing tokens (book/src/fencing.md)"
            }
            Property::RedlockTakesMajority
            | Property::RedlockNeedsMajority
            | Property::RedlockValidity
            | Property::RedlockReleasesOnFailure
            | Property::RedlockSameAsReference => {
                "6, Redlock in practice (book/src/redlock-practice.md)"
            }
            Property::StaleRequestsRejected
            | Property::EqualTokensAccepted
            | Property::FreshTokensAccepted
            | Property::StorageKeepsValue
            | Property::StorageRemembersHighest => {
                "4.1, The storage's side (book/src/fencing-storage.md)"
            }
        }
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
