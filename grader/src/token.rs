//! The `token` exercise, the lock token: what `new_token` must return, and its checks.
//!
//! A token must be unique and unguessable: [`MIN_BITS`] (120) or more bits
//! from the operating system's random source, in any encoding, as the
//! exercise's text says. The grader sees only
//! the tokens, so it draws a thousand and asks two questions of them. Are
//! any two equal? And how many of their bits are random? The second is
//! answered by [`reading`]: decode the tokens, line their bits up, and count
//! the independent ones ([`rank`]). The count never exceeds the bits a
//! clock, a counter or a repeated value moves, and finds every bit of a
//! random token but for odds far below 2^-100, so a correct token passes and
//! a weak one fails on every run, not by luck.
//!
//! What the count cannot see: bits derived from few others by a non-linear
//! function look random to it. One such function it knows: the digits of a
//! random double printed to the last ([`float`]), which a second test finds.
//! A hash of a counter, several floats side by side, or a pseudo-random
//! generator seeded from the clock (or from a constant), prints tokens that
//! pass. Only code review, or drawing in fresh processes under a frozen
//! clock, tells them apart; the exercise text says so.
//!
//! Hostile output is bounded: a token longer than [`MAX_CHARS`] fails
//! `token::unguessable` by its length alone, after one draw, and
//! `token::unique` compares tokens whole but stops drawing at
//! [`DRAW_BUDGET`] bytes, so a megabyte token costs milliseconds, not
//! minutes and gigabytes.

pub mod float;
pub mod rank;
pub mod reading;

use std::collections::HashSet;

use crate::checks::Ctx;
use crate::error::GradeError;
use crate::lock::NewTokenFn;
use crate::report::{Report, Verdict};
use crate::sandbox::{self, Failure};
use crate::verdict::{Property, Violation};
use reading::{Reading, read};

/// How many tokens each check draws.
pub const DRAWS: usize = 1000;
/// The longest token judged, in characters: a UUID takes 36, 32 random
/// bytes as hex 64.
pub const MAX_CHARS: usize = 256;
/// The fewest random bits a token may carry: a UUID v4 has 122, and 16 to 20
/// random bytes have 128 to 160. A clock, a counter or a 64-bit value has
/// at most 64, however printed.
pub const MIN_BITS: usize = 120;
/// How much of a token a report shows.
const SHOWN_CHARS: usize = 48;

/// The tokens of one draw.
#[derive(Clone, Debug, Default)]
pub struct Drawn {
    /// The tokens in the order drawn. A token longer than [`MAX_CHARS`]
    /// ends a [`Long::Stop`] draw and is kept cut to that length.
    pub tokens: Vec<String>,
    /// The first token longer than [`MAX_CHARS`]: its draw (from 1) and length.
    pub too_long: Option<(usize, usize)>,
}

/// What a draw does with tokens longer than [`MAX_CHARS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Long {
    /// Stop at the first: its length alone decides (`token::unguessable`).
    Stop,
    /// Keep them whole, and stop once the tokens drawn hold [`DRAW_BUDGET`]
    /// bytes (`token::unique`): a repeat found is a repeat, and tokens that
    /// long fail `token::unguessable` anyway.
    Budget,
}

/// The most bytes of tokens a [`Long::Budget`] draw keeps: room for a
/// thousand tokens of [`MAX_CHARS`] characters of any width, or sixteen of
/// a megabyte.
pub const DRAW_BUDGET: usize = 16 << 20;

/// Draws up to [`DRAWS`] tokens from `new_token` in one isolated call.
///
/// Memory and time stay bounded whatever the tokens' size: a long token is
/// cut ([`Long::Stop`]) or ends the draw once the budget is spent
/// ([`Long::Budget`]).
pub fn draw(new_token: NewTokenFn, long: Long) -> Result<Drawn, Failure> {
    sandbox::isolated(move || {
        let mut drawn = Drawn::default();
        let mut bytes = 0;
        for n in 1..=DRAWS {
            let mut token = new_token();
            bytes += token.len();
            if let Some((cut, _)) = token.char_indices().nth(MAX_CHARS) {
                if drawn.too_long.is_none() {
                    drawn.too_long = Some((n, MAX_CHARS + token[cut..].chars().count()));
                }
                if long == Long::Stop {
                    token.truncate(cut);
                    drawn.tokens.push(token);
                    break;
                }
            }
            drawn.tokens.push(token);
            if bytes >= DRAW_BUDGET {
                break;
            }
        }
        drawn
    })
}

/// A token as a report shows it: quoted, escaped, at most [`SHOWN_CHARS`].
fn shown(token: &str) -> String {
    match token.char_indices().nth(SHOWN_CHARS) {
        Some((cut, _)) => {
            let quoted = format!("{:?}", &token[..cut]);
            format!("{}…\"", quoted.strip_suffix('"').unwrap_or(&quoted))
        }
        None => format!("{token:?}"),
    }
}

/// Why the tokens of a draw repeat, if they do.
pub fn repeated(drawn: &Drawn) -> Option<Violation> {
    let mut seen = HashSet::new();
    let mut repeats = drawn.tokens.iter().filter(|t| !seen.insert(t.as_str()));
    let first = repeats.next()?;
    let what = format!(
        "of {} tokens, {} repeated an earlier one (e.g. {})",
        drawn.tokens.len(),
        1 + repeats.count(),
        shown(first)
    );
    Some(Violation::anytime(Property::TokensUnique, what))
}

/// Why the tokens of a draw are guessable, if they are.
pub fn guessable(drawn: &Drawn) -> Option<Violation> {
    let what = if let Some((n, chars)) = drawn.too_long {
        format!(
            "tokens of {chars} characters (draw {n} of {DRAWS}): keep them under {MAX_CHARS} characters; \
             20 random bytes take 40 as hex, 27 as base64"
        )
    } else if let Some(n) = drawn.tokens.iter().position(String::is_empty) {
        format!("draw {} of {DRAWS} returned an empty token", n + 1)
    } else {
        match read(&drawn.tokens) {
            Reading::Bits { random, .. } if random >= MIN_BITS => {
                let float = float::float_digits(&drawn.tokens)?;
                let base = float.base;
                format!(
                    "your tokens (e.g. {}) carry at most {} random bits, read as the digits of \
                     a random double in base {base}: one in {} or more of them, read as a \
                     fraction in base {base}, is a binary fraction of at most {} significant \
                     bits, as a double printed to its last digit is (JavaScript's \
                     `Math.random().toString(36)`), and random tokens almost never are; a good \
                     token carries {MIN_BITS} or more, like 20 random bytes as 40 \
                     hex digits",
                    shown(&float.example),
                    float::DOUBLE_BITS,
                    float::SHARE,
                    float::DOUBLE_BITS,
                )
            }
            Reading::Bits {
                random,
                encoding,
                length,
                ..
            } => {
                let example = drawn
                    .tokens
                    .iter()
                    .find(|t| t.chars().count() == length)
                    .map_or_else(String::new, |t| shown(t));
                format!(
                    "your tokens (e.g. {example}) carry {random} random bits, read as {encoding}; \
                     a good token carries {MIN_BITS} or more, like 20 random bytes as 40 hex digits"
                )
            }
            Reading::Scattered { lengths, most } => format!(
                "your tokens come in {lengths} different lengths, at most {most} of {DRAWS} alike, \
                 too scattered to line up: give every token the same length, like 20 random bytes \
                 as 40 hex digits"
            ),
        }
    };
    Some(Violation::anytime(Property::TokensUnguessable, what))
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn drawn(tokens: Vec<String>) -> Drawn {
        Drawn {
            tokens,
            ..Drawn::default()
        }
    }

    #[test]
    fn a_long_token_is_judged_by_its_length() {
        let v = guessable(&Drawn {
            too_long: Some((3, 1 << 20)),
            ..Drawn::default()
        })
        .expect("fails");
        assert!(
            v.to_string().contains("tokens of 1048576 characters"),
            "{v}"
        );
    }

    #[test]
    fn an_empty_token_is_named() {
        let mut tokens = vec!["ab".to_string(); 10];
        tokens[4].clear();
        let v = guessable(&drawn(tokens)).expect("fails");
        assert!(
            v.to_string()
                .contains("draw 5 of 1000 returned an empty token"),
            "{v}"
        );
    }

    #[test]
    fn shown_tokens_are_cut_and_escaped() {
        assert_eq!(shown("a\nb"), "\"a\\nb\"");
        assert_eq!(shown(&"x".repeat(100)), format!("\"{}…\"", "x".repeat(48)));
    }
}
