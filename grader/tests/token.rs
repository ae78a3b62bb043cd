//! The token judge gives the same verdict on every run: every correct token
//! in the catalogues (hex with or without leading zeros, decimal, base64,
//! UUIDs, a prefix) passes, and every weak one (32 or 64 random bits, a
//! clock, a counter, a value printed twice, a random double's digits) fails,
//! with the number of random bits its encoding really carries, or, for the
//! double's digits, however many the count finds.
//!
//! Each token is judged `TOKEN_RUNS` times (5 by default, to keep the suite
//! quick). The full count is
//! `TOKEN_RUNS=1000 cargo test --release -p grader --test token -- --nocapture`,
//! which prints the range of bits found for each token.

use grader::judge::token as rules;
use grader::reference::LOCK as REFERENCE;
use grader::token::reading::{Reading, read};
use grader::token::{self, Drawn, Long};
use grader::verdict::Property;
use lock_catalogue::{variants, wrong};

/// How many times each token is judged.
fn runs() -> usize {
    std::env::var("TOKEN_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
}

/// The random bits each token must show, on every run.
enum Expect {
    Exactly(usize),
    AtMost(usize),
    /// At least so many: the count alone would pass it, and the test of a
    /// double's digits ([`token::float`]) fails it.
    AtLeast(usize),
}

/// Draws and judges `new_token` `runs()` times; returns the verdicts' count
/// of failures and the range of random bits found.
fn judge(name: &str, new_token: grader::lock::NewTokenFn) -> (usize, usize, usize) {
    let (mut failed, mut least, mut most) = (0, usize::MAX, 0);
    for _ in 0..runs() {
        let drawn: Drawn = token::draw(new_token, Long::Stop)
            .unwrap_or_else(|f| panic!("{name}: new_token failed: {f}"));
        if rules::guessable(&drawn).is_some() {
            failed += 1;
        }
        if let Reading::Bits { random, .. } = read(&drawn.tokens) {
            least = least.min(random);
            most = most.max(random);
        }
    }
    println!(
        "{name:>32}: {failed}/{} failed, {least}..={most} random bits",
        runs()
    );
    (failed, least, most)
}

fn check_bits(name: &str, (least, most): (usize, usize), expect: &Expect) {
    match *expect {
        Expect::Exactly(n) => assert!(
            least == n && most == n,
            "{name}: expected {n} random bits every run, found {least}..={most}"
        ),
        Expect::AtMost(n) => assert!(
            most <= n,
            "{name}: expected at most {n} random bits, found up to {most}"
        ),
        Expect::AtLeast(n) => assert!(
            least >= n,
            "{name}: expected at least {n} random bits, found as few as {least}"
        ),
    }
}

#[test]
fn every_correct_token_passes_every_run_with_its_bits() {
    let expected = [
        ("reference", 160),
        ("SetOptions, base64 tokens", 128),
        ("PX before NX, UUID tokens", 122),
        ("unpadded hex tokens", 128),
        ("uppercase hex tokens", 128),
        ("decimal u128 tokens", 128),
        ("decimal 20-byte tokens", 160),
        ("padded standard base64 tokens", 160),
        ("simple UUID tokens", 122),
        ("prefixed hex tokens", 128),
    ];
    let mut tokens = vec![("reference", REFERENCE.new_token)];
    tokens.extend(
        variants::ALL
            .iter()
            .filter(|l| expected.iter().any(|(n, _)| *n == l.name))
            .map(|l| (l.name, l.new_token)),
    );
    assert_eq!(tokens.len(), expected.len(), "a variant was renamed");
    for (name, new_token) in tokens {
        let (failed, least, most) = judge(name, new_token);
        assert_eq!(failed, 0, "{name} failed {failed} of {} runs", runs());
        let bits = expected.iter().find(|(n, _)| *n == name).map(|(_, b)| *b);
        check_bits(name, (least, most), &Expect::Exactly(bits.unwrap_or(0)));
    }
}

#[test]
fn every_weak_token_fails_every_run_with_its_bits() {
    let expected = [
        ("constant token", Expect::Exactly(0)),
        ("64-bit token", Expect::Exactly(64)),
        ("timestamp token", Expect::AtMost(40)),
        ("32-bit token", Expect::Exactly(32)),
        ("nanosecond clock token", Expect::AtMost(40)),
        ("seconds-and-nanoseconds token", Expect::AtMost(40)),
        ("counter token", Expect::AtMost(25)),
        ("counter behind a random prefix", Expect::AtMost(25)),
        ("64 random bits printed twice", Expect::Exactly(64)),
        // 20 × log2(36) ≈ 103.4: 104 bit positions, the top one set in about a quarter of them.
        ("20 base-36 digits as tokens", Expect::AtMost(104)),
        // 52 random bits k as 20 to 26 base-36 digits (k · 9^26 when printed
        // exactly): the count finds about 129 bits mixed, the float test 52.
        ("Math.random().toString(36) tokens", Expect::AtLeast(120)),
    ];
    let weak: Vec<_> = wrong::ALL
        .iter()
        .filter(|w| w.fails.starts_with("token::") && w.lock.name != "megabyte token")
        .collect();
    assert_eq!(
        weak.len(),
        expected.len(),
        "each weak token in the catalogue needs its expected bits here"
    );
    for w in weak {
        let (failed, least, most) = judge(w.lock.name, w.lock.new_token);
        assert_eq!(failed, runs(), "{} passed some runs", w.lock.name);
        let (_, expect) = expected
            .iter()
            .find(|(n, _)| *n == w.lock.name)
            .unwrap_or_else(|| panic!("no expected bits for {:?}", w.lock.name));
        check_bits(w.lock.name, (least, most), expect);
    }
}

#[test]
fn a_megabyte_token_is_refused_for_its_length_after_one_draw() {
    let mega = wrong::ALL
        .iter()
        .find(|w| w.lock.name == "megabyte token")
        .expect("in the catalogue");
    let drawn = token::draw(mega.lock.new_token, Long::Stop).expect("draws");
    assert_eq!(
        drawn.tokens.len(),
        1,
        "the draw stops at the first long token"
    );
    assert!(drawn.tokens[0].len() <= token::MAX_CHARS);
    assert_eq!(drawn.too_long, Some((1, 40 + (1 << 20))));
    let v = rules::guessable(&drawn).expect("fails");
    assert_eq!(v.property, Property::TokensUnguessable);
    assert!(v.what.starts_with("tokens of 1048616 characters"), "{v}");
}

/// A megabyte of zeros every time: the same token.
fn constant_megabyte() -> String {
    "0".repeat(1 << 20)
}

#[test]
fn megabyte_tokens_are_compared_whole_within_the_budget() {
    let mega = wrong::ALL
        .iter()
        .find(|w| w.lock.name == "megabyte token")
        .expect("in the catalogue");
    let drawn = token::draw(mega.lock.new_token, Long::Budget).expect("draws");
    assert_eq!(
        drawn.tokens.len(),
        16,
        "16 MiB of tokens, then the draw stops"
    );
    assert!(drawn.tokens.iter().all(|t| t.len() == 40 + (1 << 20)));
    // Cut to 256 characters they would all be alike; whole, none repeats.
    assert_eq!(rules::repeated(&drawn), None);
    let same = token::draw(constant_megabyte, Long::Budget).expect("draws");
    let v = rules::repeated(&same).expect("a repeat");
    assert_eq!(v.property, Property::TokensUnique);
    assert!(v.what.starts_with("of 16 tokens, 15 repeated"), "{v}");
}

#[test]
fn tokens_with_spaces_newlines_or_any_characters_are_read_as_text() {
    let tokens: Vec<String> = (0..1000u32)
        .map(|i| {
            format!(
                "{} \n{}",
                i % 7,
                char::from_u32(0x4e00 + i % 13).unwrap_or('?')
            )
        })
        .collect();
    let Reading::Bits {
        random, encoding, ..
    } = read(&tokens)
    else {
        panic!("one length: lined up")
    };
    assert!(random <= 10, "{random}");
    assert!(encoding.to_string().starts_with("text of "), "{encoding}");
    let v = rules::guessable(&Drawn {
        tokens,
        ..Drawn::default()
    })
    .expect("too few bits");
    assert!(
        v.what.contains("read as text of 20 different characters"),
        "{v}"
    );
}
