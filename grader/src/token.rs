//! The `token` exercise, the lock token: what `new_token` must return, and how the grader
//! draws and reads tokens. Its checks are [`crate::checks::token`]; its rules are judged in
//! [`crate::judge::token`].
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

use crate::lock::NewTokenFn;
use crate::sandbox::{self, Failure};

/// How many tokens each check draws.
pub const DRAWS: usize = 1000;
/// The longest token judged, in characters: a UUID takes 36, 32 random
/// bytes as hex 64.
pub const MAX_CHARS: usize = 256;
/// The fewest random bits a token may carry: a UUID v4 has 122, and 16 to 20
/// random bytes have 128 to 160. A clock, a counter or a 64-bit value has
/// at most 64, however printed.
pub const MIN_BITS: usize = 120;

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
