//! Exercise 1: the lock token.
//!
//! Every acquisition writes a token into the lock key. The token is how a
//! client later proves that the lock is still *its* lock: release and
//! renewal compare it before they touch the key. Two clients must never pick
//! the same token, and nobody should be able to guess one, so it comes from
//! the operating system's random source, not from a clock or a counter.

/// Returns a fresh, unguessable token for one acquisition of a lock.
///
/// The Redis documentation suggests 20 random bytes; this returns them as 40
/// hexadecimal characters (160 bits). Hex, base64 or a UUID v4 all do: a
/// token must carry at least 120 random bits.
///
/// The grader counts how many bits of your tokens are random, whatever their
/// encoding, but it cannot see where the bits came from. One disguise it
/// does see: the digits of a random double printed to the last, as
/// JavaScript's `Math.random().toString(36)` printed them (52 random bits
/// spread over 20 to 26 digits). Read as a fraction in their base, such
/// digits are a binary fraction of at most 53 significant bits, which
/// random tokens almost never are, and when one token in ten or more is,
/// the grader fails them. Others it cannot see: a generator seeded from the
/// clock (or from a fixed number), a hash of a counter, or several floats
/// side by side print tokens that look as random as real ones, yet anyone
/// who knows roughly when the generator was seeded, or which floats came
/// out, can replay them. Only the operating system's random source will do;
/// the checks cannot tell those apart, so that part is up to you.
pub fn new_token() -> String {
    let mut bytes = [0u8; 20];
    // The OS random source only fails on a broken system; a lock without
    // unguessable tokens must not go on silently.
    getrandom::fill(&mut bytes).expect("the operating system's random source failed");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
