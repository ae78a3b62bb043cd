//! Exercise 1, the lock token: what `new_token` must return, and its checks.
//!
//! A token must be unique and unguessable: 128 or more bits from the
//! operating system's random source, in any encoding. The grader sees only
//! the tokens, so it draws a thousand and asks two questions of them. Are
//! any two equal? And how many of their bits are random? The second is
//! answered by [`reading`]: decode the tokens, line their bits up, and count
//! the independent ones ([`rank`]). The count is exact for tokens built from
//! random bits, a clock or a counter however they are printed, so a correct
//! token passes and a weak one fails on every run, not by luck.
//!
//! What the count cannot see: a pseudo-random generator seeded from the
//! clock (or from a constant) prints tokens that look random. Only code
//! review, or drawing in fresh processes under a frozen clock, tells them
//! apart; the exercise text says so.
//!
//! Hostile output is bounded: a token longer than [`MAX_CHARS`] is judged
//! by its length alone, and is cut before it is kept, so a megabyte token
//! costs one megabyte for one draw, not a thousand.

pub mod rank;
pub mod reading;

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

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

/// The tokens of one draw, as far as the grader keeps them.
#[derive(Clone, Debug, Default)]
pub struct Drawn {
    /// The tokens in the order drawn, each cut to [`MAX_CHARS`] characters.
    pub tokens: Vec<String>,
    /// The first token longer than [`MAX_CHARS`]: its draw (from 1) and length.
    pub too_long: Option<(usize, usize)>,
    /// How many tokens repeated an earlier one, and the first of them (cut).
    pub repeats: (usize, Option<String>),
}

/// Whether a draw goes on after a token longer than [`MAX_CHARS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Long {
    /// Stop there: the length alone decides.
    Stop,
    /// Keep drawing, remembering only a digest of each token.
    Continue,
}

/// Draws [`DRAWS`] tokens from `new_token` in one isolated call.
///
/// Each token is compared with the earlier ones by its length and a 128-bit
/// digest, then cut to [`MAX_CHARS`]; the learner's string is dropped at
/// once, so memory stays bounded whatever its size.
pub fn draw(new_token: NewTokenFn, long: Long) -> Result<Drawn, Failure> {
    sandbox::isolated(move || {
        let mut drawn = Drawn::default();
        let mut seen = HashSet::new();
        for n in 1..=DRAWS {
            let mut token = new_token();
            if !seen.insert(digest(&token)) {
                drawn.repeats.0 += 1;
                drawn.repeats.1.get_or_insert_with(|| shown(&token));
            }
            if let Some((cut, _)) = token.char_indices().nth(MAX_CHARS) {
                let chars = MAX_CHARS + token[cut..].chars().count();
                drawn.too_long.get_or_insert((n, chars));
                token.truncate(cut);
                if long == Long::Stop {
                    drawn.tokens.push(token);
                    break;
                }
            }
            drawn.tokens.push(token);
        }
        drawn
    })
}

/// A token's length and two independent 64-bit hashes of it: equal tokens
/// always agree, different ones collide with probability about 2^-128.
fn digest(token: &str) -> (usize, u64, u64) {
    let mut a = DefaultHasher::new();
    token.hash(&mut a);
    let mut b = DefaultHasher::new();
    0x5eed_u16.hash(&mut b);
    token.hash(&mut b);
    (token.len(), a.finish(), b.finish())
}

/// A token as a report shows it: quoted, escaped, at most [`SHOWN_CHARS`].
fn shown(token: &str) -> String {
    match token.char_indices().nth(SHOWN_CHARS) {
        Some((cut, _)) => format!("{:?}…", &token[..cut]),
        None => format!("{token:?}"),
    }
}

/// Why the tokens of a draw repeat, if they do.
pub fn repeated(drawn: &Drawn) -> Option<Violation> {
    let (count, first) = &drawn.repeats;
    let first = first.as_ref()?;
    let what = format!("of {DRAWS} tokens, {count} repeated an earlier one (e.g. {first})");
    Some(Violation::anytime(Property::TokensUnique, what))
}

/// Why the tokens of a draw are guessable, if they are.
pub fn guessable(drawn: &Drawn) -> Option<Violation> {
    let what = if let Some((n, chars)) = drawn.too_long {
        format!(
            "tokens of {chars} characters (draw {n} of {DRAWS}): keep them under {MAX_CHARS}; \
             20 random bytes take 40 as hex, 27 as base64"
        )
    } else if let Some(n) = drawn.tokens.iter().position(String::is_empty) {
        format!("draw {} of {DRAWS} returned an empty token", n + 1)
    } else {
        match read(&drawn.tokens) {
            Reading::Bits { random, .. } if random >= MIN_BITS => return None,
            Reading::Bits {
                random,
                encoding,
                compared,
                length,
            } => {
                let example = drawn
                    .tokens
                    .iter()
                    .find(|t| t.chars().count() == length)
                    .map_or_else(String::new, |t| shown(t));
                format!(
                    "your tokens carry {random} random bits, read as {encoding} over {compared} \
                     tokens of {length} characters (e.g. {example}); a good token carries \
                     {MIN_BITS} or more, like 20 random bytes as 40 hex digits"
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
    Ok(judged(ctx, draw(ctx.lock.new_token, Long::Continue), repeated))
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
        assert!(v.to_string().contains("tokens of 1048576 characters"), "{v}");
    }

    #[test]
    fn an_empty_token_is_named() {
        let mut tokens = vec!["ab".to_string(); 10];
        tokens[4].clear();
        let v = guessable(&drawn(tokens)).expect("fails");
        assert!(v.to_string().contains("draw 5 of 1000 returned an empty token"), "{v}");
    }

    #[test]
    fn shown_tokens_are_cut_and_escaped() {
        assert_eq!(shown("a\nb"), "\"a\\nb\"");
        assert_eq!(shown(&"x".repeat(100)), format!("{:?}…", "x".repeat(48)));
    }

    #[test]
    fn digests_tell_tokens_apart() {
        assert_eq!(digest("abc"), digest("abc"));
        assert_ne!(digest("abc"), digest("abd"));
        let (_, a, b) = digest("abc");
        assert_ne!(a, b);
    }
}
