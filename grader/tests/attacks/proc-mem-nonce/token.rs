//! Attack: the nonce read out of the check's own memory.
//!
//! During a call, `new_token` reads `/proc/self/maps` and, through
//! `/proc/self/mem`, every writable region (heap, stacks, anonymous maps) of
//! its own process, collects every run of 32 hex digits followed by a newline
//! (the shape of the nonce the harness sent on standard input), writes a
//! passing verdict for each on the verdict descriptor, and exits with 0.
//!
//! A sound grader keeps no secret in the process that runs learner code: the
//! verdict is the judge's, and this attacker's checks fail.

#[path = "atk_kit.rs"]
mod kit;

pub fn new_token() -> String {
    let found = kit::nonces_in_memory("self");
    if !found.is_empty() {
        let nonces: Vec<String> = found.into_iter().collect();
        kit::evidence("proc-mem-nonce", &format!("{} candidate nonces in memory", nonces.len()));
        kit::send_passing_verdicts(&nonces);
        std::process::exit(0);
    }
    todo!("return 16 to 20 random bytes as text (see the comment above)")
}
