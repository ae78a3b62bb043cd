//! Subject 7's model: one tick of the lease keeper.
//!
//! The keeper's state is two values the caller keeps between ticks and the
//! keeper rewrites: `renewed_at`, the time of the last renewal that
//! succeeded (the acquire counts as one, at 0), and `lost`, the flag the job
//! reads before every write. A tick at `now` goes one of these ways:
//!
//! - `lost` is set: nothing. No command touches the key, the flag stays set.
//! - less than a third of the TTL has passed since `renewed_at`: nothing is
//!   needed yet (but see below);
//! - otherwise the renewal is due, and it goes as `extend` goes: when the key
//!   holds the caller's token its TTL becomes the full TTL and `renewed_at`
//!   becomes `now`; when it holds another token, or nothing, the key is left
//!   as it is and `lost` is set in this very tick; when Redis answers the
//!   renewal with an error (the key holds a hash), `lost` is set too, and the
//!   tick may return that error or `Ok(())`.
//!
//! The boundary: exactly a third is due (`now - renewed_at >= ttl / 3`, as
//! the stub says "once a third of `ttl` has passed"), in whole milliseconds
//! as the reference measures it: `3 * elapsed >= ttl`.
//!
//! Early renewals: a keeper that renews somewhat sooner is as safe, and the
//! course's own correct variants include one that renews every quarter of
//! the TTL, as some libraries do. So from a quarter of the TTL on, a tick
//! may renew (and then, if the lock is no longer the caller's, set `lost`),
//! or wait. Sooner than a quarter is a keeper that renews at every tick, or
//! nearly: safe, but it sends Redis, the one server every client shares,
//! many times the commands for each lock it keeps, and it most often hides a
//! `renewed_at` that is not kept right. That breaks
//! [`Property::KeeperRenewsOnPace`].
//!
//! Once `lost` is set, `renewed_at` no longer matters: the model does not
//! compare it on a tick that sets the flag.

use super::faulted::{RAN, STOPPED};
use super::{Answer, Branch, Diff, Divergence, Expected, Held, Op, State};
use crate::verdict::{Property, Violation, seconds};

/// What the observer reads in a lock key that holds a hash.
pub const WRONG_TYPE: &str = "<hash>";

/// The keeper's own state between two ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Keeper {
    /// The last renewal that succeeded, in ms (0: the acquire).
    pub renewed_at_ms: u64,
    /// Whether the job has been told that the lease is lost.
    pub lost: bool,
}

/// Something the grader does to the lock key between two ticks, as no
/// client's function would: the other ways a key changes under a keeper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Touch {
    /// `DEL`: an operator, or a client with a plain-DEL release.
    Delete,
    /// `PEXPIRE` to this many ms, if the key exists.
    Pexpire {
        /// The new TTL.
        ttl_ms: u64,
    },
    /// The key replaced by a hash, with this TTL: a value of the wrong type,
    /// to which Redis answers a renewal with an error.
    Hash {
        /// Its TTL.
        ttl_ms: u64,
    },
}

impl Touch {
    /// The state after it.
    pub fn apply(&self, state: &State) -> State {
        match *self {
            Touch::Delete => State {
                lock: None,
                ..state.clone()
            },
            Touch::Pexpire { ttl_ms } => match &state.lock {
                Some(held) => state.taken(&held.token, ttl_ms),
                None => state.clone(),
            },
            Touch::Hash { ttl_ms } => state.taken(WRONG_TYPE, ttl_ms),
        }
    }
}

/// Whether `elapsed` ms since the last renewal make a renewal due.
pub fn due(elapsed_ms: u64, ttl_ms: u64) -> bool {
    elapsed_ms.saturating_mul(3) >= ttl_ms
}

/// Whether a renewal after `elapsed` ms is allowed, though not yet due.
pub fn allowed(elapsed_ms: u64, ttl_ms: u64) -> bool {
    elapsed_ms.saturating_mul(4) >= ttl_ms
}

/// The branches the explorer must reach. A renewal between a quarter and a
/// third of the TTL is one of two right ways, which the reference never
/// takes: it is shown when reached, and held to no floor.
pub const BRANCHES: &[&str] = &[
    NOT_YET,
    EARLY_QUIET,
    RENEWED,
    GONE,
    TAKEN,
    WRONG_TYPE_LOST,
    ALREADY_LOST,
    STOPPED,
    RAN,
];
const NOT_YET: &str = "not yet a quarter of the TTL: quiet";
const EARLY_QUIET: &str = "a quarter, not yet a third: quiet";
const EARLY_RENEWED: &str = "a quarter, not yet a third: a renewal";
const RENEWED: &str = "due, the key A's: renewed";
const GONE: &str = "due, the key gone: lost";
const TAKEN: &str = "due, the key another's: lost";
const WRONG_TYPE_LOST: &str = "due, the key of the wrong type: lost";
const ALREADY_LOST: &str = "already lost: quiet";

/// The ways one tick of `keep_alive(lock, token, ttl, now)` may go. `now`
/// is what the keeper was handed; the state's own now may be later, when
/// time moved on while the tick ran (another client stepping in).
pub fn keep(state: &State, token: &str, ttl_ms: u64, now_ms: u64) -> Vec<Branch> {
    let k = state.keeper;
    let quiet = |name| Branch {
        name,
        expected: Some(Expected::Kept {
            renewed_at_ms: (!k.lost).then_some(k.renewed_at_ms),
            lost: k.lost,
            may_fail: false,
        }),
        state: state.clone(),
    };
    let elapsed = now_ms.saturating_sub(k.renewed_at_ms);
    if k.lost {
        return vec![quiet(ALREADY_LOST)];
    }
    if !allowed(elapsed, ttl_ms) {
        return vec![quiet(NOT_YET)];
    }
    let due = due(elapsed, ttl_ms);
    let renewal = renewal(state, token, ttl_ms, now_ms, due);
    if due {
        vec![renewal]
    } else {
        vec![quiet(EARLY_QUIET), renewal]
    }
}

/// A renewal now, as `extend` goes, noted at the keeper's `now_ms`; `due`
/// when a third of the TTL has passed.
fn renewal(state: &State, token: &str, ttl_ms: u64, now_ms: u64, due: bool) -> Branch {
    let holder = state.lock.as_ref().map(|h| h.token.as_str());
    let mut next = match holder {
        Some(t) if t == token => state.taken(token, ttl_ms),
        _ => state.clone(),
    };
    next.keeper = if holder == Some(token) {
        Keeper {
            renewed_at_ms: now_ms,
            lost: false,
        }
    } else {
        Keeper {
            lost: true,
            ..state.keeper
        }
    };
    // Early, the renewal is one of two right ways, whatever it finds.
    let name = match holder {
        _ if !due => EARLY_RENEWED,
        Some(t) if t == token => RENEWED,
        None => GONE,
        Some(WRONG_TYPE) => WRONG_TYPE_LOST,
        Some(_) => TAKEN,
    };
    Branch {
        name,
        expected: Some(Expected::Kept {
            renewed_at_ms: (!next.keeper.lost).then_some(next.keeper.renewed_at_ms),
            lost: next.keeper.lost,
            may_fail: holder == Some(WRONG_TYPE),
        }),
        state: next,
    }
}

/// The lock key after a tick, as the model has it, in words.
fn key_now(state: &State, token: Option<&str>) -> String {
    match &state.lock {
        None => "is gone".into(),
        Some(Held { token: t, .. }) if t == WRONG_TYPE => {
            "holds a hash, to which Redis answers a renewal with an error".into()
        }
        Some(Held { token: t, .. }) if Some(t.as_str()) == token => "is the caller's".into(),
        Some(Held { token: t, .. }) => format!("holds another token, {t:?}"),
    }
}

/// The rule a divergent tick broke.
pub fn judge(d: &Divergence<'_>) -> Violation {
    let (
        Some(Some(Answer::Kept {
            renewed_at_ms,
            lost,
            error,
        })),
        Some(Op::Keep { ttl_ms, now_ms, .. }),
    ) = (d.answers.get(d.under_test), d.ops.get(d.under_test))
    else {
        return d.unexplained();
    };
    let (got_at, got_lost, ttl) = (*renewed_at_ms, *lost, *ttl_ms);
    let (before, after) = (d.before.keeper, d.after.keeper);
    let call = d.call();
    let touched = d.find(|x| match x {
        Diff::LockValue { .. } | Diff::LockExpiry { .. } => Some(x.to_string()),
        _ => None,
    });
    let now = *now_ms;
    let elapsed = now.saturating_sub(before.renewed_at_ms);
    let since = format!(
        "{} had passed since the last renewal (t = {}), of a {} TTL",
        seconds(elapsed),
        seconds(before.renewed_at_ms),
        seconds(ttl)
    );
    if before.lost && !got_lost {
        return d.violation(
            Property::KeeperStopsForGood,
            format!("{call} cleared `lost`, set at an earlier tick: the job writes again, though someone else may have held the lock and written in between"),
        );
    }
    if before.lost {
        let what = match &touched {
            Some(what) => format!("it changed the lock ({what})"),
            None if *error => "it still sent a command, which Redis answered with an error".into(),
            None => format!("it left renewed_at = {}", seconds(got_at)),
        };
        return d.violation(
            Property::KeeperStopsForGood,
            format!(
                "`lost` was set at an earlier tick, and {call} did not leave it at that: {what}"
            ),
        );
    }
    if after.lost && !got_lost && d.sent == 0 {
        return d.violation(
            Property::KeeperRenewsInTime,
            format!("{since}, a third or more: the renewal was due, and {call} sent nothing; the lock key {}, so the renewal would have failed and told the job", key_now(d.after, d.token)),
        );
    }
    if after.lost && !got_lost {
        let also = touched
            .as_ref()
            .map_or(String::new(), |what| format!(" ({what})"));
        return d.violation(
            Property::KeeperStopsJob,
            format!("{since}: the renewal was due, and could not succeed: the lock key {}{also}; {call} left `lost` unset, and the job writes next", key_now(d.after, d.token)),
        );
    }
    // A renewal the model made, or one it would have allowed (from a
    // quarter on, where the first way it tries is to wait).
    let renewed_in_model = after.renewed_at_ms != before.renewed_at_ms;
    let may_renew = renewed_in_model || allowed(elapsed, ttl);
    if got_lost && !after.lost {
        return if may_renew {
            d.violation(
                Property::KeeperRenewsInTime,
                format!("{since}, and the lock key was the caller's: {call} set `lost` instead of renewing it, and the healthy job stopped"),
            )
        } else {
            d.violation(
                Property::KeeperRenewsOnPace,
                format!("only {since}, less than a quarter: {call} looked at the lock and set `lost`, where no renewal was due yet"),
            )
        };
    }
    if may_renew && let Some(what) = &touched {
        let did = if got_at == now {
            "renewed, but not to the full TTL"
        } else {
            "did not renew"
        };
        return d.violation(
            Property::KeeperRenewsInTime,
            format!("{since}, a third or more: {call} {did} ({what})"),
        );
    }
    if let Some(what) = &touched {
        return d.violation(
            Property::KeeperRenewsOnPace,
            format!("only {since}, less than a quarter: {call} renewed already ({what})"),
        );
    }
    // A renewal too early whose new TTL left no trace (the key expired or
    // changed hands since) still shows in what it noted.
    if !may_renew && !after.lost && got_at == now && got_at != after.renewed_at_ms {
        return d.violation(
            Property::KeeperRenewsOnPace,
            format!("only {since}, less than a quarter: {call} renewed already (it left renewed_at = {})", seconds(got_at)),
        );
    }
    if !after.lost && got_at != after.renewed_at_ms {
        let model = seconds(after.renewed_at_ms);
        return if got_at < after.renewed_at_ms {
            d.violation(
                Property::KeeperRenewsOnPace,
                format!("{call} left renewed_at = {}, but the last renewal that succeeded was at t = {model}: counted from there, the next renewal comes too soon", seconds(got_at)),
            )
        } else {
            d.violation(
                Property::KeeperRenewsInTime,
                format!("{call} left renewed_at = {}, but the last renewal that succeeded was at t = {model}: counted from there, the next renewal comes too late", seconds(got_at)),
            )
        };
    }
    if let Some((expected, got)) = d.own_answer() {
        return d.violation(
            Property::KeeperStopsJob,
            format!("{call} returned {got}; the model: {expected} (an error only when Redis answered one)"),
        );
    }
    d.unexplained()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Expiry;

    /// A tick at the state's now, with token "a".
    fn tick(state: &State, ttl_ms: u64) -> Vec<Branch> {
        keep(state, "a", ttl_ms, state.now_ms)
    }

    fn expiry(state: &State) -> Expiry {
        state
            .lock
            .as_ref()
            .map_or(Expiry::Missing, |h| Expiry::At(h.expires_at))
    }

    fn at(now_ms: u64, renewed_at_ms: u64, holder: Option<&str>) -> State {
        State {
            now_ms,
            lock: holder.map(|t| Held {
                token: t.into(),
                expires_at: now_ms + 1000,
            }),
            counter: 0,
            row: Default::default(),
            keeper: Keeper {
                renewed_at_ms,
                lost: false,
            },
        }
    }

    #[test]
    fn exactly_a_third_is_due_and_a_millisecond_less_is_not() {
        // 6 s: a third is 2 s exactly.
        let due_now = tick(&at(2000, 0, Some("a")), 6000);
        assert_eq!(due_now.len(), 1);
        assert_eq!(due_now[0].state.keeper.renewed_at_ms, 2000);
        assert_eq!(expiry(&due_now[0].state), Expiry::At(8000));
        let early = tick(&at(1999, 0, Some("a")), 6000);
        assert_eq!(early.len(), 2, "a renewal is allowed, not required");
        assert_eq!(early[0].state.keeper.renewed_at_ms, 0);
        // 1 s: a third is 333.3 ms, so 333 ms is not due and 334 ms is.
        assert_eq!(tick(&at(333, 0, Some("a")), 1000).len(), 2);
        assert_eq!(tick(&at(334, 0, Some("a")), 1000).len(), 1);
    }

    #[test]
    fn before_a_quarter_a_tick_does_nothing() {
        // Even when the lock is someone else's: a quarter of 6 s is 1.5 s.
        let s = at(1499, 0, Some("b"));
        let quiet = Expected::Kept {
            renewed_at_ms: Some(0),
            lost: false,
            may_fail: false,
        };
        assert_eq!(
            tick(&s, 6000),
            vec![Branch {
                name: NOT_YET,
                expected: Some(quiet),
                state: s.clone()
            }]
        );
        assert_eq!(tick(&at(1500, 0, Some("b")), 6000).len(), 2);
    }

    #[test]
    fn a_failed_renewal_sets_lost_and_leaves_the_key() {
        for holder in [None, Some("b"), Some(WRONG_TYPE)] {
            let s = at(2000, 0, holder);
            let b = tick(&s, 6000);
            assert_eq!(b.len(), 1);
            assert!(b[0].state.keeper.lost);
            assert_eq!(b[0].state.lock, s.lock);
            let error = Answer::Kept {
                renewed_at_ms: 0,
                lost: true,
                error: true,
            };
            let admits_error = b[0].expected.as_ref().is_some_and(|e| e.admits(&error));
            assert_eq!(admits_error, holder == Some(WRONG_TYPE));
        }
    }

    #[test]
    fn once_lost_nothing_more_happens() {
        let mut s = at(9000, 0, Some("a"));
        s.keeper.lost = true;
        let b = tick(&s, 6000);
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].state, s);
    }
}
