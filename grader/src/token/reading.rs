//! Reading a sample of tokens as bits, and counting how many are random.
//!
//! A token is text, but its randomness lives in the bits behind the text: 40
//! hex digits are 160 bits, a UUID is 122 random bits among fixed ones, and
//! `format!("{n}")` of a `u128` is a number of 128 bits whatever its number
//! of digits. So the tokens are first lined up: those of the most common
//! length are compared (a token printed from two variable-length parts
//! never mixes its alignments), the character positions that never change
//! (a `lock-` prefix, a UUID's hyphens) are set aside, and what is left is
//! decoded in the one encoding that fits every sample: decimal or
//! hexadecimal numbers, base64, or else plain text, one symbol per
//! character. An alphabet whose size is not a power of two (base 36, base
//! 62) is read as the digits of one number in that base, as decimal is: its
//! characters carry less than a whole number of bits each, and reading each
//! one as bits of its own would count, say, 120 bits in 20 base-36 digits,
//! which hold only 103. Each bit position then becomes a column down the samples; the
//! columns that are about as often 1 as 0 are kept, and the random bits are
//! their [affine rank](super::rank::affine_rank). A counter, a clock or a
//! value printed twice has few independent columns however it is printed,
//! and the count cannot exceed them. At most [`MOST_COMPARED`] tokens and
//! [`MOST_BITS`] bits are counted, which bounds the work on any input.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::rank::{Column, affine_rank};

/// The fewest tokens of one length worth comparing. `n` random bits fail to
/// show as `n` columns of full rank with probability below 2^(n+1-samples),
/// so at 250 samples a 122-bit token is miscounted with probability below
/// 2^-127.
pub const MIN_ALIGNED: usize = 250;

/// The most tokens of one length compared: more would cost time and change
/// no verdict, as 2^(123-400) is nothing.
pub const MOST_COMPARED: usize = 400;

/// The most random bits counted: enough to tell 160 from 120, and a bound
/// on the work hostile tokens can cause.
pub const MOST_BITS: usize = 256;

/// How the random part of the tokens was decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// Decimal digits, read as one number per token.
    Decimal,
    /// Hexadecimal digits, either case, 4 bits each.
    Hex,
    /// Base64 characters (standard or URL-safe), 6 bits each.
    Base64,
    /// Nothing to decode: every token is the same text.
    Fixed,
    /// Digits of an alphabet whose size is not a power of two (base 36,
    /// base 62), in the order of their characters, read as one number per
    /// token.
    Radix {
        /// The base: how many different characters the tokens use.
        symbols: usize,
    },
    /// Anything else: each character a symbol of the alphabet seen.
    Text {
        /// How many different characters the tokens use.
        symbols: usize,
    },
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Encoding::Fixed => write!(f, "text that never changes"),
            Encoding::Decimal => write!(f, "decimal numbers"),
            Encoding::Hex => write!(f, "hexadecimal digits"),
            Encoding::Base64 => write!(f, "base64 characters"),
            Encoding::Radix { symbols } => write!(
                f,
                "text of {symbols} different characters, each a digit of one number in base \
                 {symbols}"
            ),
            Encoding::Text { symbols } => write!(f, "text of {symbols} different characters"),
        }
    }
}

/// What the sample showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reading {
    /// The tokens of the most common length, decoded.
    Bits {
        /// The random bits found: the rank of the balanced columns, at most
        /// [`MOST_BITS`].
        random: usize,
        /// How their varying part was decoded.
        encoding: Encoding,
        /// How many tokens were compared, at most [`MOST_COMPARED`].
        compared: usize,
        /// Their length, in characters.
        length: usize,
    },
    /// No length is common enough to line tokens up.
    Scattered {
        /// How many different lengths the tokens have.
        lengths: usize,
        /// How many tokens share the most common one.
        most: usize,
    },
}

/// Counts the random bits in `tokens` (see the module's introduction).
pub fn read(tokens: &[String]) -> Reading {
    let mut by_length: BTreeMap<usize, Vec<Vec<char>>> = BTreeMap::new();
    for token in tokens {
        let chars: Vec<char> = token.chars().collect();
        by_length.entry(chars.len()).or_default().push(chars);
    }
    let lengths = by_length.len();
    // The most common length; among equals, the longest.
    let Some((length, aligned)) = by_length.into_iter().max_by_key(|(len, t)| (t.len(), *len))
    else {
        return Reading::Scattered {
            lengths: 0,
            most: 0,
        };
    };
    if aligned.len() < MIN_ALIGNED {
        return Reading::Scattered {
            lengths,
            most: aligned.len(),
        };
    }
    let aligned = &aligned[..aligned.len().min(MOST_COMPARED)];
    let varying: Vec<Vec<char>> = {
        let moving: Vec<usize> = (0..length)
            .filter(|&i| aligned.iter().any(|t| t[i] != aligned[0][i]))
            .collect();
        aligned
            .iter()
            .map(|t| moving.iter().map(|&i| t[i]).collect())
            .collect()
    };
    let encoding = detect(&varying);
    let columns = columns(&varying, &encoding);
    let samples = varying.len();
    let balanced = columns.into_iter().filter(|c| {
        let ones = c.ones_count();
        8 * ones >= samples && 8 * ones <= 7 * samples
    });
    Reading::Bits {
        random: affine_rank(balanced, samples, MOST_BITS),
        encoding,
        compared: samples,
        length,
    }
}

/// The one encoding every token's varying characters fit, narrowest first.
fn detect(tokens: &[Vec<char>]) -> Encoding {
    let all = |f: fn(&char) -> bool| tokens.iter().flatten().all(f);
    if tokens.iter().all(Vec::is_empty) {
        Encoding::Fixed
    } else if all(char::is_ascii_digit) {
        Encoding::Decimal
    } else if all(char::is_ascii_hexdigit) {
        Encoding::Hex
    } else {
        let symbols = tokens
            .iter()
            .flatten()
            .copied()
            .collect::<BTreeSet<char>>()
            .len();
        if !symbols.is_power_of_two() {
            Encoding::Radix { symbols }
        } else if all(|c| base64_value(*c).is_some()) {
            Encoding::Base64
        } else {
            Encoding::Text { symbols }
        }
    }
}

/// A base64 character's 6 bits; `+` and `-` are 62, `/` and `_` 63.
fn base64_value(c: char) -> Option<u32> {
    Some(match c {
        'A'..='Z' => c as u32 - 'A' as u32,
        'a'..='z' => c as u32 - 'a' as u32 + 26,
        '0'..='9' => c as u32 - '0' as u32 + 52,
        '+' | '-' => 62,
        '/' | '_' => 63,
        _ => return None,
    })
}

/// The bit columns of `tokens` (all of one length) in `encoding`: column
/// `j` holds bit `j` of every token, counted from the lowest bit of the last
/// character (numbers are right-aligned, whatever their width).
fn columns(tokens: &[Vec<char>], encoding: &Encoding) -> Vec<Column> {
    let mut columns = Vec::new();
    let mut set = |sample: usize, bit: usize| {
        if columns.len() <= bit {
            columns.resize(bit + 1, Column::zeros(tokens.len()));
        }
        columns[bit].set(sample);
    };
    match encoding {
        Encoding::Fixed => {}
        Encoding::Decimal => {
            for (sample, t) in tokens.iter().enumerate() {
                let digits = t.iter().map(|d| d.to_digit(10).unwrap_or(0));
                number_bits(sample, &limbs(digits, 10), &mut set);
            }
        }
        Encoding::Radix { symbols } => {
            let alphabet = alphabet(tokens);
            for (sample, t) in tokens.iter().enumerate() {
                let digits = t
                    .iter()
                    .map(|c| alphabet.binary_search(c).unwrap_or(0) as u32);
                number_bits(sample, &limbs(digits, *symbols as u32), &mut set);
            }
        }
        Encoding::Hex => symbol_bits(tokens, 4, |c| c.to_digit(16).unwrap_or(0), set),
        Encoding::Base64 => symbol_bits(tokens, 6, |c| base64_value(c).unwrap_or(0), set),
        Encoding::Text { symbols } => {
            let alphabet = alphabet(tokens);
            let width = usize::BITS - symbols.saturating_sub(1).leading_zeros();
            symbol_bits(
                tokens,
                width.max(1) as usize,
                |c| alphabet.binary_search(&c).unwrap_or(0) as u32,
                set,
            );
        }
    }
    columns
}

/// Every character the tokens use, in order: a character's value is its place.
fn alphabet(tokens: &[Vec<char>]) -> Vec<char> {
    let used: BTreeSet<char> = tokens.iter().flatten().copied().collect();
    used.into_iter().collect()
}

/// Sets, for each token, the `width` bits of each character's value.
fn symbol_bits(
    tokens: &[Vec<char>],
    width: usize,
    value: impl Fn(char) -> u32,
    mut set: impl FnMut(usize, usize),
) {
    for (sample, t) in tokens.iter().enumerate() {
        for (position, &c) in t.iter().rev().enumerate() {
            let v = value(c);
            for b in (0..width).filter(|b| v >> b & 1 == 1) {
                set(sample, position * width + b);
            }
        }
    }
}

/// Sets the bits of the number in `limbs` for token `sample`.
fn number_bits(sample: usize, limbs: &[u32], set: &mut impl FnMut(usize, usize)) {
    for (i, limb) in limbs.iter().enumerate() {
        for b in (0..32).filter(|b| limb >> b & 1 == 1) {
            set(sample, 32 * i + b);
        }
    }
}

/// A number written in `digits` of base `radix`, most significant first,
/// in little-endian 32-bit limbs.
pub(super) fn limbs(digits: impl Iterator<Item = u32>, radix: u32) -> Vec<u32> {
    let mut limbs: Vec<u32> = Vec::new();
    for d in digits {
        // Times the radix plus the digit, carried in u64.
        let mut carry = d as u64;
        for limb in &mut limbs {
            let v = *limb as u64 * radix as u64 + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry > 0 {
            limbs.push(carry as u32);
        }
    }
    limbs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic stream of random-looking bits for hand-built samples
    /// (splitmix64). Not xorshift: its outputs are linear in its 64-bit
    /// state, and the rank rightly finds only 64 bits in two of them.
    struct Bits(u64);
    impl Bits {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        fn u128(&mut self) -> u128 {
            (self.next() as u128) << 64 | self.next() as u128
        }
    }

    fn sample(n: usize, f: impl FnMut(&mut Bits) -> String) -> Vec<String> {
        let mut bits = Bits(0x9e37_79b9_7f4a_7c15);
        let mut f = f;
        (0..n).map(|_| f(&mut bits)).collect()
    }

    fn random_bits(reading: Reading) -> (usize, Encoding) {
        match reading {
            Reading::Bits {
                random, encoding, ..
            } => (random, encoding),
            other => panic!("expected bits, got {other:?}"),
        }
    }

    #[test]
    fn decimal_digits_become_the_numbers_limbs() {
        let decimal_limbs = |s: &str| limbs(s.chars().map(|d| d.to_digit(10).unwrap_or(0)), 10);
        assert_eq!(decimal_limbs("300"), vec![300]);
        assert_eq!(decimal_limbs("0"), Vec::<u32>::new());
        assert_eq!(decimal_limbs(&u128::MAX.to_string()), vec![u32::MAX; 4]);
        assert_eq!(
            decimal_limbs("4294967296"),
            vec![0, 1],
            "2^32 carries into a second limb"
        );
    }

    #[test]
    fn columns_hold_each_tokens_bits_lowest_first() {
        let tokens: Vec<Vec<char>> = ["1f", "20"].iter().map(|t| t.chars().collect()).collect();
        let c = columns(&tokens, &Encoding::Hex);
        // 0x1f = bits 0-4; 0x20 = bit 5.
        let ones: Vec<usize> = c.iter().map(Column::ones_count).collect();
        assert_eq!(ones, vec![1, 1, 1, 1, 1, 1]);
        let c = columns(&tokens, &Encoding::Decimal);
        // As decimal, "1f" reads 10 (the 'f' as 0) and "20" reads 0b10100.
        assert_eq!(c.len(), 5);
    }

    #[test]
    fn the_narrowest_encoding_that_fits_every_token_is_chosen() {
        let chars = |s: &[&str]| s.iter().map(|t| t.chars().collect()).collect::<Vec<_>>();
        assert_eq!(detect(&chars(&["0123", "9876"])), Encoding::Decimal);
        assert_eq!(detect(&chars(&["0123", "9a7F"])), Encoding::Hex);
        assert_eq!(detect(&chars(&["0g23", "9a7_"])), Encoding::Base64);
        assert_eq!(
            detect(&chars(&["a b", "a\nb"])),
            Encoding::Text { symbols: 4 }
        );
    }

    #[test]
    fn base64_characters_carry_six_bits() {
        assert_eq!(base64_value('A'), Some(0));
        assert_eq!(base64_value('9'), Some(61));
        assert_eq!(base64_value('-'), base64_value('+'));
        assert_eq!(base64_value('_'), Some(63));
        assert_eq!(base64_value('='), None);
    }

    #[test]
    fn a_counter_shows_only_the_bits_it_moves() {
        let mut n = 0u64;
        let tokens = sample(1000, |_| {
            n += 1;
            format!("{n:020}")
        });
        let (random, encoding) = random_bits(read(&tokens));
        assert_eq!(encoding, Encoding::Decimal);
        assert!(random <= 10, "{random}");
    }

    #[test]
    fn a_value_printed_twice_counts_once() {
        let tokens = sample(1000, |b| {
            let r = b.next();
            format!("{r:016x}{r:016x}")
        });
        assert_eq!(random_bits(read(&tokens)), (64, Encoding::Hex));
    }

    #[test]
    fn unpadded_and_decimal_128_bit_numbers_show_128_bits() {
        let hex = sample(1000, |b| format!("{:x}", b.u128()));
        assert_eq!(random_bits(read(&hex)), (128, Encoding::Hex));
        let dec = sample(1000, |b| b.u128().to_string());
        assert_eq!(random_bits(read(&dec)), (128, Encoding::Decimal));
    }

    #[test]
    fn the_count_stops_at_its_bound() {
        let tokens = sample(1000, |b| {
            (0..4).map(|_| format!("{:032x}", b.u128())).collect()
        });
        let Reading::Bits {
            random, compared, ..
        } = read(&tokens)
        else {
            panic!("one length")
        };
        assert_eq!((random, compared), (MOST_BITS, MOST_COMPARED));
    }

    #[test]
    fn fixed_characters_are_set_aside() {
        let tokens = sample(1000, |b| {
            let h = format!("{:032x}", b.u128());
            format!("lock-{}-4{}", &h[..12], &h[13..])
        });
        // One hex digit replaced by the fixed '4': 124 bits left.
        assert_eq!(random_bits(read(&tokens)), (124, Encoding::Hex));
    }

    #[test]
    fn symbols_of_any_alphabet_are_read_as_text() {
        let alphabet: Vec<char> = "αβγδεζηθικλμνξοπ".chars().collect();
        let tokens = sample(1000, |b| {
            let r = b.u128();
            (0..32)
                .map(|i| alphabet[(r >> (4 * i) & 15) as usize])
                .collect()
        });
        assert_eq!(
            random_bits(read(&tokens)),
            (128, Encoding::Text { symbols: 16 })
        );
    }

    #[test]
    fn digits_of_a_base_that_is_no_power_of_two_count_as_one_number() {
        // 20 base-36 digits hold 103 random bits, not the 120 that 6 bits a
        // character would make of them.
        let digits: Vec<char> = "0123456789abcdefghijklmnopqrstuvwxyz".chars().collect();
        let tokens = sample(1000, |b| {
            (0..20).map(|_| digits[(b.next() % 36) as usize]).collect()
        });
        let (random, encoding) = random_bits(read(&tokens));
        assert_eq!(encoding, Encoding::Radix { symbols: 36 });
        assert!((100..=104).contains(&random), "{random}");
        // And 22 base-62 digits hold 131.
        let digits: Vec<char> = ('0'..='9').chain('A'..='Z').chain('a'..='z').collect();
        let tokens = sample(1000, |b| {
            (0..22).map(|_| digits[(b.next() % 62) as usize]).collect()
        });
        let (random, encoding) = random_bits(read(&tokens));
        assert_eq!(encoding, Encoding::Radix { symbols: 62 });
        assert!((128..=131).contains(&random), "{random}");
    }

    #[test]
    fn tokens_of_scattered_lengths_are_not_lined_up() {
        let tokens = sample(1000, |b| "x".repeat(1 + (b.next() % 8) as usize));
        let Reading::Scattered { lengths, most } = read(&tokens) else {
            panic!("expected scattered lengths")
        };
        assert_eq!(lengths, 8);
        assert!(most < MIN_ALIGNED);
        assert_eq!(
            read(&[]),
            Reading::Scattered {
                lengths: 0,
                most: 0
            }
        );
    }

    #[test]
    fn constant_tokens_have_no_random_bits() {
        let tokens = sample(1000, |_| "my-lock-token".into());
        assert_eq!(random_bits(read(&tokens)), (0, Encoding::Fixed));
    }
}
