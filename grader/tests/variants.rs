//! Every correct lock written differently from the reference passes every
//! check: the grader judges what a lock does, not how it is written.

use grader::checks::CHECKS;
use grader::lock::Lock;
use grader::reference::LOCK as REFERENCE;
use grader::report::Verdict;
use lock_catalogue::variants::ALL;

/// Runs every check but Redlock's: these variants keep the reference's Redlock, which
/// `reference.rs` already holds to its checks (on five nodes, they are the slowest to run
/// again), and the one Redlock variant has its own test below.
fn passes_every_check(name: &str) {
    let lock = variant(name);
    assert_eq!(
        (lock.redlock_acquire as usize, lock.redlock_release as usize),
        (
            REFERENCE.redlock_acquire as usize,
            REFERENCE.redlock_release as usize
        ),
        "{name:?} has a Redlock of its own: give it a test of `redlock::` checks"
    );
    passes(lock, |check| !check.starts_with("redlock::"));
}

/// Runs only the checks whose name starts with `prefix`: for a variant that differs from the
/// reference in one exercise only.
fn passes_every_check_of(name: &str, prefix: &str) {
    passes(variant(name), |check| check.starts_with(prefix));
}

fn variant(name: &str) -> &'static Lock {
    ALL.iter()
        .find(|l| l.name == name)
        .unwrap_or_else(|| panic!("no variant {name:?}"))
}

fn passes(lock: &Lock, selected: impl Fn(&str) -> bool) {
    let name = lock.name;
    for check in CHECKS.iter().filter(|c| selected(c.name)) {
        let verdict = check
            .run(lock)
            .unwrap_or_else(|e| panic!("{}: {e}", check.name));
        if let Verdict::Fail(report) = &verdict {
            panic!("the correct variant {name:?} failed:\n{report}");
        }
        assert_eq!(verdict, Verdict::Pass, "{name:?} on {}", check.name);
    }
}

#[test]
fn redlock_in_milliseconds_with_an_eval_release() {
    // It differs from the reference in its two Redlock functions only.
    passes_every_check_of("Redlock in milliseconds, EVAL release", "redlock::");
}

#[test]
fn redlock_with_the_drift_allowance_rounded_up() {
    // Under a millisecond of validity, it refuses where the reference grants: both are correct.
    passes_every_check_of("Redlock with 1 % of the TTL rounded up", "redlock::");
}

#[test]
fn set_options_and_base64_tokens() {
    passes_every_check("SetOptions, base64 tokens");
}

#[test]
fn px_before_nx_and_uuid_tokens() {
    passes_every_check("PX before NX, UUID tokens");
}

#[test]
fn pxat() {
    passes_every_check("PXAT");
}

#[test]
fn eval_release() {
    passes_every_check("EVAL, nil-or-OK release");
}

#[test]
fn watch_multi_release() {
    passes_every_check("WATCH/MULTI release");
}

#[test]
fn incr_before_set() {
    passes_every_check("INCR before SET in one script");
}

#[test]
fn worded_storage() {
    passes_every_check("string verdicts from the storage");
}

#[test]
fn watch_multi_storage() {
    passes_every_check("WATCH/MULTI storage");
}

// ---- Tokens in other encodings.

#[test]
fn unpadded_hex_tokens() {
    passes_every_check("unpadded hex tokens");
}

#[test]
fn uppercase_hex_tokens() {
    passes_every_check("uppercase hex tokens");
}

#[test]
fn decimal_u128_tokens() {
    passes_every_check("decimal u128 tokens");
}

#[test]
fn decimal_20_byte_tokens() {
    passes_every_check("decimal 20-byte tokens");
}

#[test]
fn padded_standard_base64_tokens() {
    passes_every_check("padded standard base64 tokens");
}

#[test]
fn simple_uuid_tokens() {
    passes_every_check("simple UUID tokens");
}

#[test]
fn prefixed_hex_tokens() {
    passes_every_check("prefixed hex tokens");
}

#[test]
fn every_variant_has_a_test_above() {
    assert_eq!(
        ALL.len(),
        17,
        "a new variant needs its own test in this file"
    );
}
