//! Every rule's words, chapter and hints: one row per rule.
//!
//! A report names the broken rule in its words, gives its first hint and
//! the chapter to read; `cargo course` climbs the same three hints when the
//! learner presses `h` ([`Rule::hints`]: a nudge, the idea, then the Redis
//! command or the shape of the Lua script). Both read these rows, so a rule
//! cannot be added with its text half written, and the report and the loop
//! cannot tell a rule two ways.

use super::{HINT_LEVELS, Property};
use crate::exercise::chapter::{self, Chapter};

/// One rule of a safe lock, as a learner reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The rule it words.
    pub property: Property,
    /// The rule, as one sentence.
    pub words: &'static str,
    /// The book chapter that explains it.
    pub chapter: &'static Chapter,
    /// Three hints for a broken rule, from the gentlest: a nudge, the idea,
    /// then the Redis command or the shape of the Lua script. A report
    /// prints the nudge; `h` in `cargo course` reveals the others, in order.
    pub hints: [&'static str; HINT_LEVELS as usize],
}

/// Every rule, in the order of [`Property::ALL`] (a test holds the two in
/// step), so that a rule's row is found by its place.
pub const RULES: [Rule; Property::ALL.len()] = [
    Rule {
        property: Property::TokensUnique,
        words: "every acquisition needs a token of its own",
        chapter: &chapter::SINGLE_INSTANCE,
        hints: TOKEN_HINTS,
    },
    Rule {
        property: Property::TokensUnguessable,
        words: "a token must carry 120 random bits or more",
        chapter: &chapter::SINGLE_INSTANCE,
        hints: TOKEN_HINTS,
    },
    Rule {
        property: Property::AcquireTakesFreeLock,
        words: "acquire must take a lock that is free",
        chapter: &chapter::SINGLE_INSTANCE,
        hints: [
            "Does your acquire report a grant exactly when Redis wrote the key?",
            "One command both tries and tells: it writes only a missing key, and its reply says \
                 whether it did.",
            "`SET key token NX PX ttl_ms`: reply OK means granted, nil means refused.",
        ],
    },
    Rule {
        property: Property::AcquireRespectsHolder,
        words: "acquire must never take a lock that another client holds",
        chapter: &chapter::SINGLE_INSTANCE,
        hints: ONE_STEP_ACQUIRE_HINTS,
    },
    Rule {
        property: Property::AcquireLeavesHolderTtl,
        words: "a refused acquire must leave the holder's lock and its TTL as they are",
        chapter: &chapter::SINGLE_INSTANCE,
        hints: [
            "After a refusal, what else does your acquire send?",
            "A refused acquire owns nothing: the key and its expiry belong to the holder, and \
                 touching them keeps a crashed holder's lock alive.",
            "Send `SET key token NX PX ttl_ms` and nothing after a nil reply.",
        ],
    },
    Rule {
        property: Property::LockHasTtl,
        words: "the lock key must expire after exactly the TTL asked for",
        chapter: &chapter::SINGLE_INSTANCE,
        hints: [
            "Which unit does your expiry use, and what happens to 1.5 s?",
            "The TTL must reach Redis in milliseconds, unrounded.",
            "`SET key token NX PX ttl.as_millis()` (not EX, not `as_secs()`).",
        ],
    },
    Rule {
        property: Property::NoImmortalLock,
        words: "a client that crashes at any point must not leave a lock without a TTL",
        chapter: &chapter::SINGLE_INSTANCE,
        hints: [
            "What if your process dies right after the first command?",
            "The key and its expiry must be born together, in one command.",
            "`SET key token NX PX ttl_ms`, not `SETNX` then `PEXPIRE`.",
        ],
    },
    Rule {
        property: Property::OneWinner,
        words: "when several clients race for a free lock, exactly one wins",
        chapter: &chapter::SINGLE_INSTANCE,
        hints: ONE_STEP_ACQUIRE_HINTS,
    },
    Rule {
        property: Property::AcquireReportsFailure,
        words: "when a command of acquire fails or its reply is lost, acquire must return the \
                error, not a grant or a refusal",
        chapter: &chapter::SINGLE_INSTANCE,
        hints: FAILURE_HINTS,
    },
    Rule {
        property: Property::ReleaseFreesOwnLock,
        words: "releasing your own lock must delete it",
        chapter: &chapter::RELEASING,
        hints: OWN_RELEASE_HINTS,
    },
    Rule {
        property: Property::ReleaseSparesOthers,
        words: "a release must never delete another client's lock",
        chapter: &chapter::RELEASING,
        hints: [
            "Whose lock is it by the time your DEL arrives?",
            "Your lock may have expired and passed to someone else: compare and delete in one \
                 atomic step, inside Redis.",
            "One `EVAL` of `if redis.call('GET', KEYS[1]) == ARGV[1] then return \
                 redis.call('DEL', KEYS[1]) else return 0 end`.",
        ],
    },
    Rule {
        property: Property::ReleaseTellsTruth,
        words: "release must return true exactly when it deleted your lock",
        chapter: &chapter::RELEASING,
        hints: OWN_RELEASE_HINTS,
    },
    Rule {
        property: Property::ReleaseReportsFailure,
        words: "when a command of release fails or its reply is lost, release must return the \
                error, not true or false",
        chapter: &chapter::RELEASING,
        hints: FAILURE_HINTS,
    },
    Rule {
        property: Property::ExtendRenewsOwnLock,
        words: "extend must renew your own lock to exactly the TTL asked for",
        chapter: &chapter::RENEWAL,
        hints: OWN_RENEWAL_HINTS,
    },
    Rule {
        property: Property::ExtendSparesOthers,
        words: "extend must never renew, change or bring back a lock that is not yours",
        chapter: &chapter::RENEWAL,
        hints: [
            "What does your extend do to a key that holds someone else's token, or no key at all?",
            "Only the holder may renew: compare the token and renew in one step, and never \
                 create a key that expired: a lost lock is lost.",
            "One Lua script: GET, compare with ARGV[1], PEXPIRE only on a match, return 0 \
                 otherwise; no SET anywhere.",
        ],
    },
    Rule {
        property: Property::ExtendTellsTruth,
        words: "extend must return true exactly when it renewed your lock",
        chapter: &chapter::RENEWAL,
        hints: OWN_RENEWAL_HINTS,
    },
    Rule {
        property: Property::ExtendReportsFailure,
        words: "when a command of extend fails or its reply is lost, extend must return the \
                error, not true or false",
        chapter: &chapter::RENEWAL,
        hints: FAILURE_HINTS,
    },
    Rule {
        property: Property::KeeperRenewsInTime,
        words: "a lease keeper must renew the lock by the time a third of its TTL has passed",
        chapter: &chapter::RENEWAL,
        hints: [
            "How much of the TTL is left when your keeper renews?",
            "Renew early and often enough that a late tick or two still finds the lock alive: \
                 every third of the TTL, to the full TTL.",
            "`if now - *renewed_at >= ttl / 3 { if extend(con, key, token, ttl)? { *renewed_at = \
                 now } else { lost.store(true, SeqCst) } }`",
        ],
    },
    Rule {
        property: Property::KeeperStopsJob,
        words: "once a renewal fails, the job must be told before it writes again",
        chapter: &chapter::RENEWAL,
        hints: [
            "When a renewal fails, who finds out, and when?",
            "A failed renewal means the lock may already be someone else's: the job must learn it \
                 before its next write, in the same tick.",
            "On `extend` returning false, `lost.store(true, Ordering::SeqCst)` before returning; \
                 renew only through your `extend`.",
        ],
    },
    Rule {
        property: Property::KeeperStopsForGood,
        words: "a job told that its lease is lost must stay stopped",
        chapter: &chapter::RENEWAL,
        hints: [
            "After the lease is lost, what does your keeper still send?",
            "A lost lease is over: someone else may have written in between, so the job stays \
                 stopped and the keeper renews nothing.",
            "Return at once while `lost` is set; never clear it and never SET the key again.",
        ],
    },
    Rule {
        property: Property::KeeperRenewsOnPace,
        words: "a lease keeper must not renew (or look at the lock) before a quarter of its TTL has passed",
        chapter: &chapter::RENEWAL,
        hints: [
            "How many commands does your keeper send in one TTL?",
            "A renewal is due once a third of the TTL has passed since the last one that succeeded; \
                 until then a tick sends nothing, and `renewed_at` must say when that last renewal was.",
            "`if now.saturating_sub(*renewed_at) < ttl / 3 { return Ok(()) }` before renewing, and \
                 `*renewed_at = now` when `extend` answers true.",
        ],
    },
    Rule {
        property: Property::TokensGrow,
        words: "the newest grant must carry the largest fencing token",
        chapter: &chapter::FENCING,
        hints: [
            "Could another client be granted the lock between your two commands?",
            "Taking the lock and drawing the fencing token must happen in one atomic step.",
            "One Lua script: `if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then \
                 return redis.call('INCR', KEYS[2]) else return false end`.",
        ],
    },
    Rule {
        property: Property::StaleRequestsRejected,
        words: "the storage must refuse a request whose token is older than one it has seen",
        chapter: &chapter::FENCING_STORAGE,
        hints: [
            "Where does your storage compare the tokens, and can a write slip in meanwhile?",
            "Compare the request's token with the highest one seen and act on it inside one script.",
            "`local seen = tonumber(redis.call('HGET', KEYS[1], 'fence')) or 0; if \
                 tonumber(ARGV[1]) < seen then return 0 end`, then the write, in the same script.",
        ],
    },
    Rule {
        property: Property::EqualTokensAccepted,
        words: "the storage must accept the current holder's token again",
        chapter: &chapter::FENCING_STORAGE,
        hints: [
            "What does your storage do with the same token twice?",
            "Refuse only tokens strictly smaller than the highest seen: the holder reuses its token.",
            "Refuse with `if tonumber(ARGV[1]) < seen`, never `<=`.",
        ],
    },
    Rule {
        property: Property::FreshTokensAccepted,
        words: "the storage must accept a token larger than every token it has seen",
        chapter: &chapter::FENCING_STORAGE,
        hints: [
            "How do \"9\" and \"10\" compare in your script, and what is a missing field?",
            "Compare tokens as numbers, and read a row or field that is not there yet as 0.",
            "`local seen = tonumber(redis.call('HGET', KEYS[1], 'fence')) or 0` and \
                 `tonumber(ARGV[1])`.",
        ],
    },
    Rule {
        property: Property::StorageKeepsValue,
        words: "the storage must keep the last accepted value and read it back (0 when there is none)",
        chapter: &chapter::FENCING_STORAGE,
        hints: [
            "What does your storage store on an accepted write, and read back?",
            "An accepted write stores its value; a refused one changes nothing; a read returns \
                 the value as a number, 0 when there is none.",
            "`redis.call('HSET', KEYS[1], 'value', ARGV[2], 'fence', ARGV[1])`, and for a read \
                 `tonumber(redis.call('HGET', KEYS[1], 'value')) or 0`.",
        ],
    },
    Rule {
        property: Property::FencesNeverExpire,
        words: "the fence counter and the storage row must never expire",
        chapter: &chapter::FENCING,
        hints: [
            "Which of your keys get an expiry?",
            "Only the lock expires; the counter and the row must outlive every holder.",
            "No `PX`, `EXPIRE` or `PEXPIRE` on the fence counter or the row.",
        ],
    },
    Rule {
        property: Property::StorageRemembersHighest,
        words: "the storage must remember the highest token it has seen",
        chapter: &chapter::FENCING_STORAGE,
        hints: [
            "After accepting a token, where does your storage write it down?",
            "The storage must keep the highest token it accepted, to refuse older ones later.",
            "`redis.call('HSET', KEYS[1], 'fence', ARGV[1])` in the accepting branch.",
        ],
    },
    Rule {
        property: Property::StorageReportsFailure,
        words: "when the storage's command fails or its reply is lost, fenced_write and \
                fenced_read must return the error, not an answer",
        chapter: &chapter::FENCING_STORAGE,
        hints: FAILURE_HINTS,
    },
    Rule {
        property: Property::CounterEndsRight,
        words: "the counter must end where the scenario says",
        chapter: &chapter::TIMEOUT,
        hints: STORY_HINTS,
    },
    Rule {
        property: Property::SameAsReference,
        words: "a correct lock makes this scenario unfold as shown",
        chapter: &chapter::TIMEOUT,
        hints: STORY_HINTS,
    },
    Rule {
        property: Property::RedlockTakesMajority,
        words: "Redlock must take the lock when a majority of the nodes is free and answering",
        chapter: &chapter::REDLOCK_PRACTICE,
        hints: MAJORITY_HINTS,
    },
    Rule {
        property: Property::RedlockNeedsMajority,
        words: "Redlock must grant the lock only with a majority of the nodes, in time",
        chapter: &chapter::REDLOCK_PRACTICE,
        hints: MAJORITY_HINTS,
    },
    Rule {
        property: Property::RedlockValidity,
        words: "Redlock's validity is the TTL minus the time spent asking minus the drift \
                 allowance (1 % of the TTL plus 2 ms)",
        chapter: &chapter::REDLOCK_PRACTICE,
        hints: [
            "When did the TTL start on the first node, and when did you stop asking?",
            "The keys started expiring while you were still asking the others, and clocks drift: \
                 the lock is yours for less than the TTL.",
            "`validity = ttl - (clock() after - clock() before) - (ttl / 100 + 2 ms)`; refuse when \
                 it is not positive.",
        ],
    },
    Rule {
        property: Property::RedlockReleasesOnFailure,
        words: "a Redlock acquire that fails must release the lock on every node",
        chapter: &chapter::REDLOCK_PRACTICE,
        hints: [
            "When your acquire gives up, which nodes still hold your token?",
            "A node that seemed to refuse may have set the key and lost only its reply: a failed \
                 acquire must undo itself everywhere.",
            "Before returning None, call your release (compare-and-delete script) on every node.",
        ],
    },
    Rule {
        property: Property::RedlockReleaseTellsTruth,
        words: "redlock_release must count the nodes whose delete came back done, and no others",
        chapter: &chapter::REDLOCK_PRACTICE,
        hints: [
            "What does your redlock_release count when a node answers with an error, or not at \
                 all?",
            "Count a node only when its script's reply came back and said it deleted: after an \
                 error the delete did not run, or ran without your knowing.",
            "On each node, `if script.key(key).arg(token).invoke::<i64>(node) == Ok(1) { freed \
                 += 1 }`; no `unwrap_or(1)`, and no count of the nodes you asked.",
        ],
    },
    Rule {
        property: Property::RedlockSameAsReference,
        words: "a correct Redlock makes this story unfold as shown",
        chapter: &chapter::REDLOCK_PRACTICE,
        hints: [
            "Step through the story: at which second does your Redlock act differently?",
            "The algorithm is the same on every node and every time: SET NX PX, a majority, the \
                 time spent and the drift subtracted, a release everywhere on failure.",
            "Compare your acquire with the steps of the chapter: SET NX PX per node, count, \
                 subtract elapsed and drift, release on failure.",
        ],
    },
];

/// The hints [`Property::ExtendRenewsOwnLock`], [`Property::ExtendTellsTruth`] share.
const OWN_RENEWAL_HINTS: [&str; HINT_LEVELS as usize] = [
    "After your extend, does the key's TTL read what you asked for, and does the answer match?",
    "A renewal is the holder's alone, and the unit matters: the TTL is a Duration, and \
                 PEXPIRE counts milliseconds, EXPIRE seconds.",
    "Lua: `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', \
                 KEYS[1], ARGV[2]) end return 0`, with ARGV[2] = `ttl.as_millis()`; true on 1.",
];

/// The hints [`Property::RedlockTakesMajority`], [`Property::RedlockNeedsMajority`] share.
const MAJORITY_HINTS: [&str; HINT_LEVELS as usize] = [
    "How many nodes said yes, and how many make a majority of all of them?",
    "A Redlock is held only on more than half of all the nodes (3 of 5); a node that \
                 errs or does not answer counts as a no, and must not end the call.",
    "For each node `SET key token NX PX ttl_ms`, count the OKs ignoring errors, grant when \
                 `count >= nodes.len() / 2 + 1`.",
];

/// The hints [`Property::TokensUnique`], [`Property::TokensUnguessable`] share.
const TOKEN_HINTS: [&str; HINT_LEVELS as usize] = [
    "Could two clients, or an attacker, ever come up with the same token as yours?",
    "A token proves who holds the lock, so it must be unique and unguessable: take it from \
                 the operating system's random source, not from a clock, a counter or a constant.",
    "`getrandom::fill(&mut bytes)` on a `[0u8; 16]`, then the 16 bytes as hex.",
];

/// The hints [`Property::AcquireRespectsHolder`], [`Property::OneWinner`] share.
const ONE_STEP_ACQUIRE_HINTS: [&str; HINT_LEVELS as usize] = [
    "What does your acquire do when the key already exists?",
    "Only Redis may decide, in one atomic step, to write the key only if it is missing: \
                 a look in Rust first (GET, EXISTS) leaves a gap for another client.",
    "`SET key token NX PX ttl_ms` alone: no GET or EXISTS before it.",
];

/// The hints [`Property::ReleaseFreesOwnLock`], [`Property::ReleaseTellsTruth`] share.
const OWN_RELEASE_HINTS: [&str; HINT_LEVELS as usize] = [
    "Does your release delete the key when it holds your token, and say so?",
    "Compare the stored token with yours, delete on a match, and return what the delete did.",
    "`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) \
                 else return 0 end`, with the lock key as KEYS[1] and your token as ARGV[1].",
];

/// The hints [`Property::AcquireReportsFailure`], [`Property::ReleaseReportsFailure`],
/// [`Property::ExtendReportsFailure`] and [`Property::StorageReportsFailure`] share.
const FAILURE_HINTS: [&str; HINT_LEVELS as usize] = [
    "What does your function return when Redis answers with an error, or not at all?",
    "An error means the command did not run, or ran without your knowing: only the caller \
                 can decide what to do then, so hand the error on; an answer would be a guess.",
    "Pass the command's error on with `?` (`let n: i64 = script.invoke(con)?;`), not \
                 `unwrap_or`, `.ok()`, `unwrap_or_default()` or a `match` that turns `Err` into \
                 an answer.",
];

/// The hints [`Property::CounterEndsRight`], [`Property::SameAsReference`] share.
const STORY_HINTS: [&str; HINT_LEVELS as usize] = [
    "Find the first second where your run and the correct one differ.",
    "At that second, which of your functions ran, and what did it return?",
    "Run that exercise's own checks (`cargo test -p exercises NAME::`): they show the \
                 commands it sent.",
];
