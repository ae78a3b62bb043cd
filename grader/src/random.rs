//! Random names from the operating system's random source: the run's key
//! prefix, ACL passwords, the nonce a check's verdict must carry. Each is a
//! number of random bytes written as lowercase hex, so that it needs no
//! quoting in a key, a command line or a file name.
//!
//! The lock tokens of the reference solution and of the catalogue's variants
//! are drawn where they are used, as a learner would write them.

/// `N` random bytes as `2 × N` lowercase hex digits, or why the operating
/// system gave none.
pub fn hex<const N: usize>() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex_has_two_lowercase_digits_a_byte_and_differs_each_time() {
        let (a, b) = (super::hex::<16>(), super::hex::<16>());
        let (a, b) = (a.expect("random"), b.expect("random"));
        assert_eq!(a.len(), 32);
        assert!(
            a.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')),
            "{a}"
        );
        assert_ne!(a, b);
    }
}
