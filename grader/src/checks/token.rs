//! The checks of the `token` exercise: a thousand tokens drawn from `new_token` in one call,
//! judged by [`crate::judge::token`].

use super::Ctx;
use crate::error::GradeError;
use crate::judge::token::{guessable, repeated};
use crate::report::{Report, Verdict};
use crate::sandbox::Failure;
use crate::token::{Drawn, Long, draw};
use crate::verdict::Violation;

/// The check `token::unique`.
pub fn unique(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    Ok(judged(
        ctx,
        draw(ctx.lock.new_token, Long::Budget),
        repeated,
    ))
}

/// The check `token::unguessable`.
pub fn unguessable(ctx: &Ctx<'_>) -> Result<Verdict, GradeError> {
    Ok(judged(ctx, draw(ctx.lock.new_token, Long::Stop), guessable))
}

/// The verdict on a draw: the function's failure, or the judge's.
fn judged(
    ctx: &Ctx<'_>,
    drawn: Result<Drawn, Failure>,
    judge: fn(&Drawn) -> Option<Violation>,
) -> Verdict {
    let report = |problem| Verdict::Fail(Box::new(problem));
    match drawn {
        Err(Failure::NotStarted { message }) => Verdict::NotStarted {
            function: "new_token",
            message,
        },
        // `new_token` sends no commands: there is no trace to show.
        Err(failure) => report(Report::failed(
            ctx.check,
            ctx.lock.name,
            "new_token",
            failure,
            vec![],
        )),
        Ok(drawn) => match judge(&drawn) {
            None => Verdict::Pass,
            Some(v) => report(Report::broken(ctx.check, ctx.lock.name, v, vec![])),
        },
    }
}
