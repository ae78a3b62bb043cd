//! The harness of `cargo test -p exercises` gives every check a verdict or a
//! failure, whatever the code under test does to its process: exit with
//! status 0, abort, panic while unwinding, allocate without bound, stop, or
//! print the harness's own lines. Each test runs the `grade-lock` binary (the
//! harness on a lock of the catalogue) as a child, and reads what it printed
//! and how it exited, as cargo and CI do.

use std::process::Command;

use grader::checks::CHECKS;
use lock_catalogue::misbehaving::FAKE_RESULT_LINES;

/// The failing check of every misbehaving lock, and one that uses only the
/// reference solution and must pass beside it.
const FAILS: &str = "acquire::takes_a_free_lock";
const PASSES: &str = "release::releases_its_own_lock";

/// Held by the tests that grade many checks at once (every check of the
/// reference lock, here and through a runner),
/// so that they do not all load the machine together: each check's real-time
/// limit is a guard against a hang, and must not be reached by the others' load.
static HEAVY: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn heavy() -> std::sync::MutexGuard<'static, ()> {
    HEAVY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What a run of the harness left behind.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    /// The lines that read as libtest's summary, up to the time they took.
    fn summaries(&self) -> Vec<&str> {
        self.stdout
            .lines()
            .filter(|l| l.starts_with("test result:"))
            .map(|l| l.split("finished in").next().unwrap_or(l))
            .collect()
    }

    /// The report printed under the failed check `check`.
    fn report_of(&self, check: &str) -> &str {
        let start = format!("---- {check} ----\n");
        let from = self
            .stdout
            .find(&start)
            .unwrap_or_else(|| panic!("no report for {check}:\n{}", self.stdout));
        let rest = &self.stdout[from + start.len()..];
        let end = rest
            .find("\n----")
            .or_else(|| rest.find("\nfailures:"))
            .unwrap_or(rest.len());
        &rest[..end]
    }
}

/// Runs the harness on the lock `lock` with the command line `args`, against
/// this test process's Redis.
fn grade(lock: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let server = grader::server::shared().unwrap_or_else(|e| panic!("no Redis: {e}"));
    let out = Command::new(env!("CARGO_BIN_EXE_grade-lock"))
        .args(args)
        .env("GRADER_LOCK", lock)
        .envs(server.child_env())
        .env_remove("GRADER_CHECK_TIME_LIMIT")
        .envs(env.iter().copied())
        .output()
        .expect("grade-lock runs");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Asserts that `lock` fails `FAILS` with `cause` in its report, passes
/// `PASSES`, exits with libtest's failure status, and is counted so.
fn fails_with(lock: &str, cause: &str, env: &[(&str, &str)]) -> Run {
    let run = grade(lock, &["--exact", FAILS, PASSES], env);
    let all = format!("{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.code, Some(101), "{all}");
    assert!(
        run.stdout.contains(&format!("test {FAILS} ... FAILED\n")),
        "{all}"
    );
    assert!(
        run.stdout.contains(&format!("test {PASSES} ... ok\n")),
        "{all}"
    );
    let report = run.report_of(FAILS);
    assert!(report.contains(cause), "expected {cause:?} in:\n{report}");
    assert_eq!(
        run.summaries(),
        [format!(
            "test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; {} filtered out; ",
            CHECKS.len() - 2
        )],
        "{all}"
    );
    run
}

#[test]
fn the_reference_lock_passes_every_check_in_order_and_exits_0() {
    let _heavy = heavy();
    // Other test binaries' gradings may load the machine meanwhile: the real-time limit, a guard
    // against a hang and not what is tested here, is given room (the verdicts are on virtual time).
    let run = grade("reference", &[], &[("GRADER_CHECK_TIME_LIMIT", "300")]);
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let results: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("test "))
        .collect();
    let expected: Vec<String> = CHECKS
        .iter()
        .map(|c| format!("test {} ... ok", c.name))
        .collect();
    assert_eq!(results[..CHECKS.len()], expected[..], "{}", run.stdout);
    assert_eq!(
        run.summaries(),
        [format!(
            "test result: ok. {} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; ",
            CHECKS.len()
        )]
    );
}

#[test]
fn an_exit_with_status_0_is_a_failed_check() {
    fails_with(
        "exits",
        "The check gave no verdict: its process exited with status 0 (something called std::process::exit)",
        &[],
    );
}

#[test]
fn an_abort_is_a_failed_check() {
    fails_with("aborts", "its process was aborted (SIGABRT", &[]);
}

#[test]
fn a_panic_while_unwinding_is_a_failed_check_with_its_message() {
    let run = fails_with(
        "panics-while-unwinding",
        "its process was aborted (SIGABRT",
        &[],
    );
    assert!(
        run.report_of(FAILS)
            .contains("  │ thread caused non-unwinding panic. aborting."),
        "{}",
        run.stdout
    );
}

#[test]
fn allocating_without_bound_is_a_failed_check_out_of_memory() {
    fails_with(
        "hogs-memory",
        "its process ran out of memory (it asked for more than the 512 MiB a check may use)",
        &[],
    );
}

#[test]
fn a_process_that_never_ends_is_killed_at_the_time_limit() {
    fails_with(
        "stops",
        "its process was still running after 2 s of real time, and was killed",
        &[("GRADER_CHECK_TIME_LIMIT", "2")],
    );
}

#[test]
fn fake_result_lines_are_shown_under_the_failure_and_not_counted() {
    let run = fails_with("fakes-results", "exited with status 0", &[]);
    // Only the harness's lines start a line: the fakes are behind the bar,
    // with their carriage returns spelled out.
    for fake in FAKE_RESULT_LINES {
        for line in run.stdout.lines().filter(|l| l.contains(fake)) {
            assert!(
                line == format!("  │ {fake}") || line == format!("  │ \\r{fake}"),
                "{line:?}"
            );
        }
        assert!(
            run.report_of(FAILS).contains(&format!("  │ \\r{fake}")),
            "{}",
            run.stdout
        );
    }
    assert!(!run.stderr.contains("test result"), "{}", run.stderr);
}

#[test]
fn a_filter_that_matches_nothing_says_so() {
    let run = grade("reference", &["no_such_check"], &[]);
    assert_eq!(run.code, Some(0), "{}", run.stdout);
    assert!(run.stdout.contains("running 0 tests"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("No check was run: none matches \"no_such_check\"."),
        "{}",
        run.stdout
    );
    assert_eq!(
        run.summaries(),
        [format!(
            "test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; {} filtered out; ",
            CHECKS.len()
        )]
    );
}

#[test]
fn list_prints_the_selected_checks_as_cargo_reads_them() {
    let run = grade(
        "reference",
        &["release::", "--list", "--format", "terse"],
        &[],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let expected: String = CHECKS
        .iter()
        .filter(|c| c.name.contains("release::"))
        .map(|c| format!("{}: test\n", c.name))
        .collect();
    assert_eq!(run.stdout, expected);
}

/// The same locks played as learner code is: in a runner of their own, which
/// the judge starts for each check. What they do to their process happens to
/// the runner; the check's own process, which holds no code under test, says so.
const IN_A_RUNNER: (&str, &str) = ("GRADER_LOCK_IN", "runner");

#[test]
fn in_a_runner_the_reference_lock_passes_every_check() {
    let _heavy = heavy();
    // Fifteen other gradings run beside this one: the real-time limit, a guard against a
    // hang and not what is tested here, is given room (the verdicts are on virtual time).
    let run = grade(
        "reference",
        &[],
        &[IN_A_RUNNER, ("GRADER_CHECK_TIME_LIMIT", "300")],
    );
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        run.summaries(),
        [format!(
            "test result: ok. {} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; ",
            CHECKS.len()
        )],
        "{}",
        run.stdout
    );
}

#[test]
fn in_a_runner_an_exit_with_status_0_is_a_failed_check() {
    fails_with(
        "exits",
        "The check gave no verdict: the process running your code exited with status 0 \
         (something called std::process::exit)",
        &[IN_A_RUNNER],
    );
}

#[test]
fn in_a_runner_an_abort_and_a_panic_while_unwinding_are_failed_checks() {
    fails_with(
        "aborts",
        "the process running your code was aborted (SIGABRT",
        &[IN_A_RUNNER],
    );
    let run = fails_with(
        "panics-while-unwinding",
        "the process running your code was aborted (SIGABRT",
        &[IN_A_RUNNER],
    );
    assert!(
        run.report_of(FAILS)
            .contains("  │ thread caused non-unwinding panic. aborting."),
        "{}",
        run.stdout
    );
}

#[test]
fn in_a_runner_allocating_without_bound_is_out_of_memory() {
    fails_with(
        "hogs-memory",
        "the process running your code ran out of memory (it asked for more than the 512 MiB \
         a check may use)",
        &[IN_A_RUNNER],
    );
}

#[test]
fn in_a_runner_a_stopped_runner_fails_its_call_and_the_check_goes_on() {
    // The check's process is not stopped, only the runner: the call times out.
    fails_with(
        "stops",
        "did not return, and sent no Redis command for 3 s",
        &[IN_A_RUNNER],
    );
}

#[test]
fn in_a_runner_fake_result_lines_are_shown_and_not_counted() {
    let run = fails_with("fakes-results", "exited with status 0", &[IN_A_RUNNER]);
    for fake in FAKE_RESULT_LINES {
        assert!(
            run.report_of(FAILS).contains(&format!("  │ \\r{fake}")),
            "{}",
            run.stdout
        );
    }
}

#[test]
fn a_check_s_process_is_told_to_keep_its_runs_beside_the_judge() {
    // Beside the judge: TARGET/PROFILE/grade-lock keeps them in TARGET/course/runs.
    let judge = std::path::Path::new(env!("CARGO_BIN_EXE_grade-lock"));
    let target = judge
        .parent()
        .and_then(|p| p.parent())
        .expect("the judge's target directory");
    let runs = target.join(grader::recording::RUNS_SUBDIR);
    let check = "scenarios::normal_run";
    let kept = grader::recording::file(&runs, check);
    // An earlier failure, which the reference's pass forgets, if its process knows where it is.
    let _heavy = heavy();
    std::fs::create_dir_all(&runs).expect("the runs folder");
    std::fs::write(&kept, "{}\n").expect("an earlier failure's file");
    let server = grader::server::shared().unwrap_or_else(|e| panic!("no Redis: {e}"));
    let out = Command::new(judge)
        .args(["--exact", check])
        .env("GRADER_LOCK", "reference")
        .envs(server.child_env())
        .env_remove(grader::recording::RUNS_DIR_VAR)
        .output()
        .expect("grade-lock runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        !kept.exists(),
        "a pass forgets the check's kept run in {}",
        runs.display()
    );
}

/// The folders that a check's process makes for its sockets (its nodes', its runner's) live as
/// long as the process, which ends with `exit` or is killed: the harness removes them once the
/// process has ended, and its own as it exits. A run leaves nothing in the temporary directory.
#[test]
fn a_run_leaves_no_folder_in_the_temporary_directory() {
    let temp = std::env::temp_dir().join(format!("grader-leftovers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&temp);
    std::fs::create_dir(&temp).expect("a temporary directory for the run");
    let _heavy = heavy();
    // A check with Redlock's nodes, a failover story with its pair, and one on the run's server,
    // each with its runner.
    let run = grade(
        "reference",
        &[
            "redlock::takes_a_majority",
            "scenarios::failover_wait",
            "release::releases_its_own_lock",
        ],
        &[
            IN_A_RUNNER,
            ("TMPDIR", temp.to_str().expect("a UTF-8 path")),
        ],
    );
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let left: Vec<_> = std::fs::read_dir(&temp)
        .expect("the run's temporary directory")
        .map(|entry| entry.map(|e| e.file_name()))
        .collect();
    std::fs::remove_dir_all(&temp).expect("the run's temporary directory goes");
    assert!(left.is_empty(), "the run left {left:?} behind");
}
