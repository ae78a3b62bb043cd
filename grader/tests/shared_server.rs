//! Runs that share one Redis never collide, whatever their pids: two test
//! processes that are both pid 1 (each in a pid namespace of its own, as in
//! CI containers) grade the reference lock side by side on one server, and a
//! run after a killed one with the same pid finds nothing of it in its way.
//!
//! Each run is this test binary again, started through `unshare --pid`
//! ([`child_runs_every_check`] is its entry). Where pid namespaces cannot be
//! made (no `unshare`, no right to use it), the tests fail, saying so.

use std::process::{Child, Command, Stdio};

use grader::reference::LOCK as REFERENCE;
use grader::report::Verdict;
use grader::world::World;
use grader::{checks, server};

/// Set in a child's environment: run the checks and report.
const CHILD: &str = "SHARED_SERVER_TEST_CHILD";

/// `unshare` with the arguments that give a child a pid namespace here, or
/// why there is none.
fn namespaces() -> Result<Vec<&'static str>, String> {
    let ways: [&[&str]; 2] = [
        &["--pid", "--fork", "--kill-child"],
        &[
            "--user",
            "--map-root-user",
            "--pid",
            "--fork",
            "--kill-child",
        ],
    ];
    let mut why = String::from("no `unshare` on PATH");
    for way in ways {
        match Command::new("unshare")
            .args(way)
            .args(["sh", "-c", "echo $$"])
            .output()
        {
            Ok(out)
                if out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "1" =>
            {
                return Ok(way.to_vec());
            }
            Ok(out) => why = String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            Err(e) => why = format!("`unshare`: {e}"),
        }
    }
    Err(why)
}

/// Starts a run of every check, as pid 1 of a new pid namespace, against the
/// server this process uses.
fn start_run(unshare: &[&str], mode: &str) -> Child {
    let server = server::shared().expect("a Redis");
    Command::new("unshare")
        .args(unshare)
        .arg(std::env::current_exe().expect("this test binary"))
        .args([
            "--exact",
            "child_runs_every_check",
            "--ignored",
            "--nocapture",
        ])
        .env(CHILD, mode)
        .envs(server.child_env())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start a run")
}

/// What a run reported.
struct Run {
    /// Its pid, as it saw it.
    pid: String,
    /// The checks that did not pass.
    failed: Vec<String>,
    /// What it said of them on stderr, for the message of a failed test.
    why: String,
}

/// What a run reported, once it has ended.
fn outcome(child: Child) -> Run {
    let out = child.wait_with_output().expect("the run ends");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let pid = text
        .lines()
        .find_map(|l| l.strip_prefix("child: pid "))
        .unwrap_or_else(|| panic!("the run did not report:\n{text}"))
        .to_owned();
    let failed = text
        .lines()
        .filter_map(|l| l.strip_prefix("child: not passed "))
        .map(str::to_owned)
        .collect();
    assert!(
        text.contains("child: done"),
        "the run did not finish:\n{text}"
    );
    let why = String::from_utf8_lossy(&out.stderr).into_owned();
    Run { pid, failed, why }
}

#[test]
fn two_runs_with_the_same_pid_on_one_server_both_pass() {
    let unshare = match namespaces() {
        Ok(args) => args,
        Err(why) => panic!(
            "cannot run here: no pid namespace can be made here ({why}): the test needs `unshare --user --pid` (run it as root, or allow unprivileged user namespaces)"
        ),
    };
    let (a, b) = (start_run(&unshare, "checks"), start_run(&unshare, "checks"));
    let (a, b) = (outcome(a), outcome(b));
    assert_eq!(
        (a.pid.as_str(), b.pid.as_str()),
        ("1", "1"),
        "both runs are pid 1"
    );
    assert_eq!(
        a.failed,
        Vec::<String>::new(),
        "the first run's checks; it said:\n{}",
        a.why
    );
    assert_eq!(
        b.failed,
        Vec::<String>::new(),
        "the second run's checks; it said:\n{}",
        b.why
    );
}

#[test]
fn a_run_after_a_killed_one_with_the_same_pid_passes() {
    let unshare = match namespaces() {
        Ok(args) => args,
        Err(why) => panic!(
            "cannot run here: no pid namespace can be made here ({why}): the test needs `unshare --user --pid` (run it as root, or allow unprivileged user namespaces)"
        ),
    };
    // A run killed while its worlds hold the lock, as pid 1: it leaves every
    // key behind, as SIGKILL would.
    let killed = start_run(&unshare, "killed");
    let out = killed.wait_with_output().expect("the first run ends");
    assert!(!out.status.success(), "the first run was not killed");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("child: pid 1"), "{text}");
    let after = outcome(start_run(&unshare, "checks"));
    assert_eq!(after.pid, "1");
    assert_eq!(
        after.failed,
        Vec::<String>::new(),
        "the run after the killed one; it said:\n{}",
        after.why
    );
}

/// The entry of a run started by the tests above; does nothing otherwise.
/// In mode `checks` it runs every check on the reference lock; in mode
/// `killed` it opens worlds, takes their locks and dies on the spot.
#[test]
#[ignore = "a run that the other tests start in a pid namespace"]
fn child_runs_every_check() {
    let Some(mode) = std::env::var_os(CHILD) else {
        return;
    };
    println!("child: pid {}", std::process::id());
    if mode == "killed" {
        let mut worlds = Vec::new();
        for _ in 0..40 {
            let mut world = World::open().expect("a world");
            let lock = world.keys.lock.clone();
            redis::cmd("SET")
                .arg(&lock)
                .arg("a-killed-run")
                .arg("NX")
                .arg("PX")
                .arg(60_000)
                .exec(world.con())
                .expect("take the lock");
            worlds.push(world);
        }
        std::process::abort();
    }
    for check in checks::CHECKS {
        // Why a check did not pass goes to stderr, which the test shows
        // when the run does not pass; the names go to stdout, which it reads.
        let why = match check.run(&REFERENCE) {
            Ok(Verdict::Pass) => continue,
            Ok(Verdict::Fail(report)) => format!("failed:\n{report}"),
            Ok(other) => format!("did not pass: {other:?}"),
            Err(e) => format!("could not be graded: {e}"),
        };
        eprintln!("child: {} {why}", check.name);
        println!("child: not passed {}", check.name);
    }
    println!("child: done");
}
