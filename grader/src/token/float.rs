//! The digits of a random double: tokens that print one float in their base.
//!
//! JavaScript's `Math.random()` returns a double in [0, 1) made of 52 random
//! bits, and V8 printed `Math.random().toString(36)` digit by digit, times 36
//! each time, until nothing was left: 20 to 26 base-36 digits that look like
//! 103 to 134 random bits and carry 52. The count of random bits
//! ([`super::reading`]) cannot see it: the digits are a product of the bits
//! with 9^26, which mixes them as no linear map does.
//!
//! What it can see is what such digits are. Read as a fraction in their base
//! (`0.d1 d2 … dn`), the digits of a double printed to the end are the
//! double itself: a binary fraction `m / 2^e` whose `m` has at most
//! [`DOUBLE_BITS`] significant bits. Random digits almost never are: in a
//! base `b = 2^a · c` with `c` odd, `N / b^n` is a binary fraction only when
//! `c^n` divides `N`, and then one of at most `a·n·2^52 + 1` values with so
//! few significant bits. A token carrying `H` random bits (however printed)
//! is one of them with probability at most `(a·n·2^52 + 1) / 2^H`: for
//! [`super::MIN_BITS`] bits and a token of at most [`super::MAX_CHARS`]
//! characters of an alphabet of at most 2^16 (so `a·n ≤ 4096`), below
//! 2^-55.9 for each token. The judge calls tokens a double's digits when one
//! in [`SHARE`] of them are ([`float_digits`]); for 1000 good tokens that
//! takes 100 such, with probability below C(1000, 100) · 2^-5590 < 2^-5120.
//! V8's digits are rounded now and then on the way (times 36 in a double),
//! and about 43 % of its tokens still read exactly: far above one in ten.
//!
//! What stays invisible: digits rounded at every step (a shortest
//! round-trip printing, which is short enough for the count to catch
//! anyway), several floats printed side by side, or one float's digits cut
//! or shuffled.

use std::collections::BTreeSet;

use super::reading::limbs;

/// The significant bits of a double.
pub const DOUBLE_BITS: u32 = 53;

/// One token in this many, or more, reading as a double's digits makes the
/// tokens a double's digits.
pub const SHARE: usize = 10;

/// Tokens that read as a random double's digits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FloatDigits {
    /// The base they were read in: how many different characters they use.
    pub base: usize,
    /// How many of the tokens read as a double's digits.
    pub found: usize,
    /// The first of them.
    pub example: String,
}

/// Whether one in [`SHARE`] or more of `tokens`, each read as a fraction in
/// the base of the characters they use (in their order), is a binary
/// fraction of at most [`DOUBLE_BITS`] significant bits.
pub fn float_digits(tokens: &[String]) -> Option<FloatDigits> {
    let alphabet: Vec<char> = tokens
        .iter()
        .flat_map(|t| t.chars())
        .collect::<BTreeSet<char>>()
        .into_iter()
        .collect();
    let base = u32::try_from(alphabet.len()).ok().filter(|&b| b >= 2)?;
    let mut found = tokens.iter().filter(|t| {
        let digits = t
            .chars()
            .map(|c| alphabet.binary_search(&c).unwrap_or(0) as u32);
        !t.is_empty() && binary_fraction_bits(digits, base).is_some_and(|b| b <= DOUBLE_BITS)
    });
    let example = found.next()?.clone();
    let found = 1 + found.count();
    (found * SHARE >= tokens.len()).then_some(FloatDigits {
        base: alphabet.len(),
        found,
        example,
    })
}

/// The significant bits of `0.d1 d2 … dn` in base `base`, given its `digits`
/// (most significant first), when it is a binary fraction; `None` when it
/// is not. Zero has none.
fn binary_fraction_bits(digits: impl Iterator<Item = u32>, base: u32) -> Option<u32> {
    let (mut n, mut number) = (0usize, Vec::new());
    // The number N = d1 d2 … dn, counted as the digits go.
    let digits: Vec<u32> = digits.inspect(|_| n += 1).collect();
    number.extend(limbs(digits.into_iter(), base));
    // N / base^n is binary when odd^n divides N, base = 2^a · odd.
    let odd = base >> base.trailing_zeros();
    if odd > 1 {
        for _ in 0..n {
            if divide(&mut number, odd) != 0 {
                return None;
            }
        }
    }
    // What is left, m · 2^k: m's bits are the fraction's significant ones.
    let low = number.iter().position(|&l| l != 0)?;
    let high = number.iter().rposition(|&l| l != 0)?;
    let low_bit = 32 * low as u32 + number[low].trailing_zeros();
    let high_bit = 32 * high as u32 + (31 - number[high].leading_zeros());
    Some(high_bit - low_bit + 1)
}

/// Divides the little-endian limbs `number` by `d` in place; the remainder.
fn divide(number: &mut [u32], d: u32) -> u32 {
    let mut rest = 0u64;
    for limb in number.iter_mut().rev() {
        let v = rest << 32 | u64::from(*limb);
        *limb = (v / u64::from(d)) as u32;
        rest = v % u64::from(d);
    }
    rest as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(digits: &str, base: u32) -> Option<u32> {
        let alphabet = "0123456789abcdefghijklmnopqrstuvwxyz";
        binary_fraction_bits(
            digits.chars().map(|c| alphabet.find(c).unwrap_or(0) as u32),
            base,
        )
    }

    #[test]
    fn binary_fractions_are_told_from_others() {
        // 0.5 and 0.75 in base 10; 0.1 is no binary fraction.
        assert_eq!(bits("5", 10), Some(1));
        assert_eq!(bits("75", 10), Some(2));
        assert_eq!(bits("1", 10), None);
        // 0.i in base 36 is 18/36 = 0.5; 0.c is 1/3.
        assert_eq!(bits("i", 36), Some(1));
        assert_eq!(bits("c", 36), None);
        // Every hex fraction is binary: 0x0.f1 has 8 significant bits.
        assert_eq!(bits("f1", 16), Some(8));
        assert_eq!(bits("000", 16), None);
    }

    /// `x` printed in base 36 as V8 printed a fraction until 2017: times 36
    /// in a double, a digit, the rest, until nothing is left.
    fn v8_digits(mut x: f64) -> String {
        let alphabet: Vec<char> = "0123456789abcdefghijklmnopqrstuvwxyz".chars().collect();
        let mut digits = String::new();
        while x > 0.0 {
            x *= 36.0;
            let d = x.floor();
            digits.push(alphabet[d as usize]);
            x -= d;
        }
        digits
    }

    #[test]
    fn a_double_printed_to_the_end_reads_as_itself() {
        // 2^-52 times 36^26 is 9^26: 26 digits, one significant bit.
        let digits = v8_digits(1.0 / (1u64 << 52) as f64);
        assert_eq!(digits.len(), 26);
        assert_eq!(bits(&digits, 36), Some(1));
        // Of many doubles of 52 random bits, those whose digits came out
        // without rounding read back to them, and none reads as more bits.
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut exact = 0;
        for _ in 0..1000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let k = state >> 12;
            let read = bits(&v8_digits(k as f64 / (1u64 << 52) as f64), 36);
            assert!(read.is_none_or(|b| b <= 52), "{k}: {read:?}");
            exact += usize::from(read.is_some());
        }
        assert!(exact > 350, "{exact}");
    }

    #[test]
    fn random_digits_are_no_double_s_and_a_double_s_are() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1442695040888963407);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let alphabet: Vec<char> = "0123456789abcdefghijklmnopqrstuvwxyz".chars().collect();
        let hex: Vec<String> = (0..1000)
            .map(|_| format!("{:016x}{:016x}{:08x}", next(), next(), next() as u32))
            .collect();
        assert_eq!(float_digits(&hex), None);
        let base36: Vec<String> = (0..1000)
            .map(|_| (0..25).map(|_| alphabet[(next() % 36) as usize]).collect())
            .collect();
        assert_eq!(float_digits(&base36), None);
        let doubles: Vec<String> = (0..1000)
            .map(|_| v8_digits((next() >> 12) as f64 / (1u64 << 52) as f64))
            .collect();
        let found = float_digits(&doubles).expect("a double's digits");
        assert_eq!(found.base, 36);
        assert!((300..600).contains(&found.found), "{}", found.found);
    }
}
