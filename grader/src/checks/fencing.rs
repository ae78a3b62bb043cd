//! The checks of the `fencing` exercise, `acquire_fenced`, beyond those it shares with
//! `acquire` ([`super::acquire`]): its tokens grow, grant after grant and
//! whenever another client gets in between its commands.

use super::bench::{Bench, TOKEN_A, TOKEN_B, TTL, judged, nothing};
use super::{Ctx, called};
use crate::clock::Expiry;
use crate::error::GradeError;
use crate::judge::Call;
use crate::judge::acquire::{Before, Key, takes_free_lock};
use crate::judge::fencing::{Against, tokens_grow};
use crate::probe::{Attempt, Probe, StepIn};
use crate::reference;
use crate::report::Verdict;
use crate::verdict::Violation;
use crate::wire::{Action, Fired, Wire};
use crate::world::World;

/// Four grants, each after the previous holder's lock expired: each token
/// is larger than the one before.
pub fn grow(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let mut bench = Bench::open()?;
    let acquire = ctx.lock.acquire_fenced;
    let mut last: Option<u64> = None;
    for token in ["token-1", "token-2", "token-3", "token-4"] {
        let keys = bench.world().keys.clone();
        let (granted, steps) = called!(bench.call(ctx, "acquire_fenced", move |w| acquire(
            w,
            &keys.lock,
            &keys.fence,
            token,
            TTL
        )));
        let call = Call::at("A", "acquire_fenced", bench.world().now_ms());
        let violation = match (granted, last) {
            // Only a refusal is judged on the key: another token is A's too.
            (None, _) => takes_free_lock(&call, Before::Free, None, &Key::Missing),
            (Some(t), Some(before)) => {
                tokens_grow(&call, t, Against::EarlierGrant("an earlier grant", before))
            }
            (Some(_), None) => None,
        };
        if violation.is_some() {
            return Ok(judged(ctx, "acquire_fenced", violation, &steps));
        }
        last = granted;
        bench.world().advance_by(TTL.as_millis() as u64)?;
    }
    Ok(Verdict::Pass)
}

/// B gets in at every command boundary of A's fenced acquire in turn, and
/// keeps the lock or lets it expire: whoever holds the lock last holds the
/// largest token.
pub fn probe(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let acquire = ctx.lock.acquire_fenced;
    let probe = |intervention: fn() -> Action| Probe {
        check: ctx.check,
        lock: ctx.lock.name,
        function: "acquire_fenced",
        setup: nothing,
        call: Box::new(move |world: &World| {
            let keys = world.keys.clone();
            Box::new(move |w: &mut Wire| acquire(w, &keys.lock, &keys.fence, TOKEN_A, TTL))
        }),
        step_in: StepIn::Act(intervention),
        judge: grants_in_order,
    };
    let b_keeps =
        || -> Action { Box::new(|world| Ok(Fired::Continue(expire_and_let_b_in(world, false)?))) };
    let b_expires =
        || -> Action { Box::new(|world| Ok(Fired::Continue(expire_and_let_b_in(world, true)?))) };
    match probe(b_keeps).run()? {
        Verdict::Pass => probe(b_expires).run(),
        other => Ok(other),
    }
}

/// Where the probe notes B's token.
const B_TOKEN: &str = "B's fencing token";

/// A's lock (if any) expires, B takes the lock with the reference fenced
/// acquire; and, if `then_expires`, B's lock expires too.
fn expire_and_let_b_in(world: &mut World, then_expires: bool) -> Result<String, GradeError> {
    let held_by_a = world.lock_value()?.as_deref() == Some(TOKEN_A);
    if let Expiry::At(at) = world.lock_expiry()? {
        world.advance_to(at)?;
    }
    let keys = world.keys.clone();
    let token =
        reference::fencing::acquire_fenced(world.con(), &keys.lock, &keys.fence, TOKEN_B, TTL)?;
    world.settle()?;
    if let Some(t) = token {
        world.memo.insert(B_TOKEN, t);
    }
    let mut what = if held_by_a {
        "here A's lock expired, and B".to_string()
    } else {
        "here B".to_string()
    };
    what.push_str(&format!(
        " took the lock with token {}",
        token.map_or("?".into(), |t| t.to_string())
    ));
    if then_expires {
        world.advance_by(TTL.as_millis() as u64)?;
        what.push_str(", and B's lock expired in turn");
    }
    Ok(what)
}

/// Whoever holds the lock last must hold the largest token: if A's key is
/// there at the end, A was granted after B; if not, A's grant (if it got one)
/// came first and must be smaller than B's.
fn grants_in_order(a: Attempt<'_, Option<u64>>) -> Result<Option<Violation>, GradeError> {
    let (Some(Some(a_token)), Some(&b_token)) = (a.value.copied(), a.world.memo.get(B_TOKEN))
    else {
        return Ok(None);
    };
    let call = Call::at("A", "acquire_fenced", a.world.now_ms());
    let a_holds = a.world.lock_value()?.as_deref() == Some(TOKEN_A);
    let against = if a_holds {
        Against::EarlierGrant("B's grant", b_token)
    } else {
        Against::LaterGrant("B", b_token)
    };
    Ok(tokens_grow(&call, a_token, against))
}
