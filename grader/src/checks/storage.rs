//! The checks of the `storage` exercise, the storage's `fenced_write` and `fenced_read`.

use super::bench::{Bench, a_holds_fenced, judged};
use super::{Ctx, called};
use crate::error::GradeError;
use crate::judge::Call;
use crate::judge::storage::{
    Kept, Seen, answered, keeps_value, remembers_highest, stale_left_no_trace,
};
use crate::probe::{Attempt, Probe, StepIn};
use crate::reference;
use crate::report::Verdict;
use crate::wire::{Fired, Wire};
use crate::world::World;

/// Writes through the learner's storage, one after the other, each judged
/// on its answer, the value and the fence it leaves: `(token, value)`.
fn writes(ctx: &Ctx<'_>, writes: &[(u64, i64)]) -> Result<Verdict, GradeError> {
    let mut bench = Bench::open()?;
    let mut highest: Option<u64> = None;
    let mut kept = 0;
    for &(token, value) in writes {
        let (row, write) = (bench.world().keys.row.clone(), ctx.lock.fenced_write);
        let (accepted, steps) =
            called!(bench.call(ctx, "fenced_write", move |w| write(w, &row, token, value)));
        let call = Call::anytime("A", "fenced_write");
        let row = bench.world().row()?;
        let seen = highest;
        if accepted {
            highest = Some(seen.map_or(token, |h| h.max(token)));
            kept = value;
        }
        let violation = answered(&call, token, accepted, Seen::Row(seen))
            .or_else(|| {
                let kept = if accepted {
                    Kept::Written {
                        value,
                        row: row.value,
                    }
                } else {
                    Kept::Refused {
                        before: kept,
                        row: row.value,
                    }
                };
                keeps_value(&call, token, kept)
            })
            .or_else(|| remembers_highest(&call, token, row.fence, highest.unwrap_or(0)));
        if violation.is_some() {
            return Ok(judged(ctx, "fenced_write", violation, &steps));
        }
    }
    Ok(Verdict::Pass)
}

/// 33, 33 again, then 34: all accepted.
pub fn accepts(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    writes(ctx, &[(33, 1), (33, 2), (34, 3)])
}

/// 34, then 33: the second refused.
pub fn rejects(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    writes(ctx, &[(34, 1), (33, 2)])
}

/// The fence follows the highest token, and refuses all below it.
pub fn remembers(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    writes(ctx, &[(34, 1), (35, 2), (33, 3), (34, 4)])
}

/// A read with 34 of a fresh row answers 0 and raises the fence; a read and
/// a write with 33 are refused after it.
pub fn reads(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let mut bench = Bench::open()?;
    let (row, read, write) = (
        bench.world().keys.row.clone(),
        ctx.lock.fenced_read,
        ctx.lock.fenced_write,
    );
    let reader = Call::anytime("A", "fenced_read");
    for (token, seen) in [(34, None), (33, Some(34))] {
        let r = row.clone();
        let (got, steps) = called!(bench.call(ctx, "fenced_read", move |w| read(w, &r, token)));
        let now = bench.world().row()?;
        let violation = answered(&reader, token, got.is_some(), Seen::Row(seen))
            .or_else(|| {
                let got = got?;
                keeps_value(
                    &reader,
                    token,
                    Kept::Read {
                        got,
                        row: now.value,
                    },
                )
            })
            .or_else(|| remembers_highest(&reader, token, now.fence, 34));
        if violation.is_some() {
            return Ok(judged(ctx, "fenced_read", violation, &steps));
        }
    }
    let (accepted, steps) =
        called!(bench.call(ctx, "fenced_write", move |w| write(w, &row, 33, 1)));
    let writer = Call::anytime("A", "fenced_write");
    let violation = answered(&writer, 33, accepted, Seen::Row(Some(34)));
    Ok(judged(ctx, "fenced_write", violation, &steps))
}

/// B's value in the storage probe.
const B_VALUE: i64 = 7;

/// B, the new holder, writes with token 34 at every command boundary of A's
/// write with 33 in turn: the row ends as B's write left it.
pub fn probe(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    let write = ctx.lock.fenced_write;
    Probe {
        check: ctx.check,
        lock: ctx.lock.name,
        function: "fenced_write",
        setup: a_holds_fenced,
        call: Box::new(move |world: &World| {
            let row = world.keys.row.clone();
            Box::new(move |w: &mut Wire| write(w, &row, 33, 1))
        }),
        step_in: StepIn::Act(|| {
            Box::new(|world| {
                let row = world.keys.row.clone();
                reference::storage::fenced_write(world.con(), &row, 34, B_VALUE)?;
                Ok(Fired::Continue(format!(
                    "here B, the new holder, wrote {B_VALUE} with token 34"
                )))
            })
        }),
        judge: |a: Attempt<'_, bool>| {
            let row = a.world.row()?;
            let call = Call::at("A", "fenced_write", a.world.now_ms());
            Ok(stale_left_no_trace(
                &call,
                33,
                (34, B_VALUE),
                (row.fence, row.value),
            ))
        },
    }
    .run()
}
