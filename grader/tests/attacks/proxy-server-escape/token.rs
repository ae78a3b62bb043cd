//! A working `new_token` (see `redlock.rs` for the attack), so that the
//! failover story, which takes a token first, gets to the learner's `acquire`.

pub fn new_token() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
