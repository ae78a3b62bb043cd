//! The rules of the token exercise: every acquisition needs a token of its own, and a token
//! carries [`MIN_BITS`] random bits or more.
//!
//! Both are judged from a draw of tokens ([`Drawn`]): whether any repeat, and how many of their
//! bits [`crate::token::reading`] finds random.

use std::collections::HashSet;

use crate::token::reading::{Reading, read};
use crate::token::{DRAWS, Drawn, MAX_CHARS, MIN_BITS, float};
use crate::verdict::{Property, Violation};

/// How much of a token a report shows.
const SHOWN_CHARS: usize = 48;

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

/// [`Property::TokensUnique`]: why the tokens of a draw repeat, if they do.
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

/// [`Property::TokensUnguessable`]: why the tokens of a draw are guessable, if they are.
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
