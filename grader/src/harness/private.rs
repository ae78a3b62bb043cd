//! The judge's processes, kept out of reach of other programs of the same user.
//!
//! Where no sandbox stands between them (no bubblewrap, or `GRADER_SANDBOX=none`), the learner's
//! runner runs as the same user as the judge, and on Linux a process may read and write the
//! memory of another process of its user through `/proc/PID/mem`, open its pipes through
//! `/proc/PID/fd/N` and read its environment, unless a security module (Yama's
//! `ptrace_scope`) says otherwise, and many machines have none. The runner is a child of a
//! check's process: the attack `judge-memory` (`grader/tests/attacks/`) read the check's nonce
//! out of its memory and wrote verdicts into its channel that way.
//!
//! A process that is not *dumpable* (`PR_SET_DUMPABLE` 0) allows none of that to a process
//! without `CAP_SYS_PTRACE`: the kernel then treats it as another user's. Every process of the
//! judge (the harness and each check's process) makes itself so before anything else; the
//! runner is a program of its own, and exec makes it dumpable again, so it can still read
//! itself. The sandbox stays the defence that counts (it also hides the judge's processes
//! altogether); this holds where the sandbox is missing. Elsewhere than Linux the operating
//! system already keeps another process's memory from code without the right to debug it.

/// Makes this process undumpable: no core file, and no process of the same user can read its
/// memory, its descriptors or its environment. Not being able to is no error: the sandbox, where
/// there is one, still holds.
pub(crate) fn keep_out_of_reach() {
    #[cfg(target_os = "linux")]
    let _ = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable);
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    //! The attack, then the defence: a child of the test (standing for a check's process) starts
    //! a child of its own (standing for the runner), which tries to read its parent's memory and
    //! environment. Both run as one user with no capabilities, as a learner's runner and the
    //! judge do: when the tests run as root, as `nobody`, from a copy of the test binary that
    //! `nobody` may run.

    use std::io::Read;
    use std::os::unix::process::CommandExt;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    const THIS_TEST: &str = "harness::private::tests::a_runner_reaches_a_plain_judge_only";
    const ROLE: &str = "GRADER_TEST_PRIVATE_ROLE";
    const TARGET: &str = "GRADER_TEST_PRIVATE_TARGET";
    /// `nobody` and `nogroup` on Debian and most Linux systems.
    const NOBODY: u32 = 65_534;

    /// The exit status of the "runner": 0 when it read its parent's memory or environment, 1
    /// when it was refused both.
    fn reach_parent() -> i32 {
        let target = std::env::var(TARGET).unwrap_or_default();
        let mut byte = [0u8; 1];
        let memory = std::fs::File::open(format!("/proc/{target}/mem")).is_ok();
        let environ = std::fs::File::open(format!("/proc/{target}/environ"))
            .and_then(|mut f| f.read(&mut byte))
            .is_ok();
        if memory || environ { 0 } else { 1 }
    }

    /// Runs the test binary `exe` again in `role`, with `env` (as `nobody` when `as_nobody`),
    /// and returns its exit status.
    fn again(exe: &Path, role: &str, env: &[(&str, String)], as_nobody: bool) -> i32 {
        let mut command = Command::new(exe);
        command
            .args(["--exact", THIS_TEST, "--test-threads", "1"])
            .env(ROLE, role)
            .envs(env.iter().map(|(k, v)| (*k, v)));
        if as_nobody {
            // Dropping from root, std also clears the supplementary groups.
            command.uid(NOBODY).gid(NOBODY);
        }
        let status = command
            .status()
            .unwrap_or_else(|e| panic!("{} cannot run as the {role}: {e}", exe.display()));
        status.code().unwrap_or(-1)
    }

    /// A copy of the test binary in a folder of its own that any user may enter, when the tests
    /// run as root; the binary itself otherwise.
    fn runnable_binary(as_nobody: bool) -> (PathBuf, Option<PathBuf>) {
        let me = std::env::current_exe().expect("the test binary");
        if !as_nobody {
            return (me, None);
        }
        use std::os::unix::fs::PermissionsExt;
        let folder = std::env::temp_dir().join(format!("grader-private-{}", std::process::id()));
        std::fs::create_dir_all(&folder).expect("a scratch folder");
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755))
            .expect("the scratch folder opened to all");
        let copy = folder.join("test-binary");
        std::fs::copy(&me, &copy).expect("the test binary copied");
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755))
            .expect("the copy made runnable");
        (copy, Some(folder))
    }

    #[test]
    fn a_runner_reaches_a_plain_judge_only() {
        let me = std::env::current_exe().expect("the test binary");
        match std::env::var(ROLE).as_deref() {
            Ok("runner") => std::process::exit(reach_parent()),
            Ok(judge) => {
                if judge == "private judge" {
                    super::keep_out_of_reach();
                }
                let pid = std::process::id().to_string();
                std::process::exit(again(&me, "runner", &[(TARGET, pid)], false));
            }
            Err(_) => {}
        }
        let as_nobody = rustix::process::geteuid().is_root();
        let (exe, scratch) = runnable_binary(as_nobody);
        let plain = again(&exe, "plain judge", &[], as_nobody);
        let private = again(&exe, "private judge", &[], as_nobody);
        if let Some(folder) = scratch {
            let _ = std::fs::remove_dir_all(folder);
        }
        assert_eq!(
            plain, 0,
            "the attack failed against a plain process: it would prove nothing below"
        );
        assert_eq!(
            private, 1,
            "a runner read the memory or the environment of a process kept out of reach"
        );
    }
}
