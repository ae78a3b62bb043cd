//! The sandbox of `grader::isolation`, attacked.
//!
//! Each test is an attack. The attacker is this very test binary, started
//! again with `ISOLATION_ATTACK` set (see [`attacker`]): it exits with 0 when
//! the attack worked and with 1 when it was blocked (any other code means it
//! did not even run, and fails the test). Where it means something, the
//! attack is first made without the sandbox, where it must work, then inside,
//! where it must be blocked. The tests need `bwrap`; without it they fail,
//! saying so: a test that did not test is never a pass.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use grader::isolation::{Isolation, Limit, Limits, Mechanism, Outcome, Spec, Toolchain};

/// The attack's exit code when it worked, and when it was blocked.
const WORKED: i32 = 0;
const BLOCKED: i32 = 1;

/// The sandbox; a test that cannot have one fails, saying why (a test that
/// did not test is not a pass).
fn isolation() -> &'static Isolation {
    static ISOLATION: OnceLock<Result<Isolation, String>> = OnceLock::new();
    match ISOLATION.get_or_init(|| Isolation::detect().map_err(|e| e.to_string())) {
        Ok(isolation) => isolation,
        Err(why) => panic!("cannot run here: no sandbox ({why}): apt-get install bubblewrap"),
    }
}

/// The sandbox (see [`isolation`]).
macro_rules! sandbox {
    () => {
        isolation()
    };
}

/// A directory of the test's own, removed at the end.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("isolation-test-{}-{name}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A value no other run shares, put in the attacker's environment so that
/// its processes can be found in /proc, whatever they call themselves.
fn marker() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{}-{}-{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Pids of the processes (on this machine) whose environment holds `marker`.
fn marked(marker: &str) -> Vec<u32> {
    let needle = format!("ISOLATION_MARKER={marker}");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ.split(|b| *b == 0).any(|v| v == needle.as_bytes()) {
            found.push(pid);
        }
    }
    found
}

fn exe() -> PathBuf {
    std::env::current_exe().expect("the test binary's path")
}

/// How the attacker is started: the ignored test [`attacker`], alone.
const ATTACKER_ARGS: [&str; 6] = [
    "--exact",
    "attacker",
    "--ignored",
    "--nocapture",
    "--test-threads=1",
    "--quiet",
];

/// The attack inside a sandbox whose scratch directory is `scratch`.
fn inside(attack: &str, arg: &str, scratch: &Path) -> Spec {
    Spec::new(exe(), scratch)
        .ro(exe())
        .args(ATTACKER_ARGS)
        .env("ISOLATION_ATTACK", attack)
        .env("ISOLATION_ARG", arg)
}

/// The same attack without a sandbox; its exit code and output. The output
/// goes to a file, not a pipe: a daemon that keeps a pipe open would keep
/// the reader waiting.
fn outside(attack: &str, arg: &str, marker: &str) -> (i32, String) {
    let dir = TempDir::new("outside-output");
    let log = dir.path().join("log");
    let file = std::fs::File::create(&log).expect("the log");
    let status = Command::new(exe())
        .args(ATTACKER_ARGS)
        .env("ISOLATION_ATTACK", attack)
        .env("ISOLATION_ARG", arg)
        .env("ISOLATION_MARKER", marker)
        .stdout(file.try_clone().expect("the log"))
        .stderr(file)
        .status()
        .expect("the attacker runs");
    (
        status.code().unwrap_or(-1),
        std::fs::read_to_string(&log).unwrap_or_default(),
    )
}

fn run(isolation: &Isolation, spec: Spec) -> Outcome {
    let outcome = isolation
        .run(&spec)
        .unwrap_or_else(|e| panic!("the sandbox failed: {e}"));
    println!(
        "inside: {}\nstdout: {}\nstderr: {}",
        outcome.describe(),
        outcome.stdout,
        outcome.stderr
    );
    outcome
}

fn assert_blocked(outcome: &Outcome) {
    assert_eq!(
        outcome.exit_code,
        Some(BLOCKED),
        "the attack must run and be blocked: {}",
        outcome.describe()
    );
}

#[test]
fn cannot_see_or_signal_a_process_outside() {
    let isolation = sandbox!();
    let scratch = TempDir::new("signal");
    let mut victim = Command::new("sleep").arg("30").spawn().expect("a sleeper");
    let (code, said) = outside("kill", &victim.id().to_string(), &marker());
    assert_eq!(
        code, WORKED,
        "without a sandbox the attacker kills the sleeper: {said}"
    );
    assert!(victim.wait().is_ok_and(|s| !s.success()));

    let mut victim = Command::new("sleep").arg("30").spawn().expect("a sleeper");
    let outcome = run(
        isolation,
        inside("kill", &victim.id().to_string(), scratch.path()),
    );
    assert_blocked(&outcome);
    assert!(
        victim.try_wait().expect("the sleeper").is_none(),
        "the sleeper outside must still run"
    );
    let _ = victim.kill();
    let _ = victim.wait();
}

#[test]
fn cannot_write_outside_the_scratch_dir() {
    let isolation = sandbox!();
    let scratch = TempDir::new("write-scratch");
    let bound = TempDir::new("write-ro");
    let home = PathBuf::from(std::env::var_os("HOME").expect("HOME"));
    let in_home = home.join(format!(".isolation-test-{}", marker()));
    let in_bound = bound.path().join("planted");

    let (code, said) = outside("write", &in_home.to_string_lossy(), &marker());
    assert_eq!(
        code, WORKED,
        "without a sandbox the attacker writes in $HOME: {said}"
    );
    std::fs::remove_file(&in_home).expect("the attacker's file in $HOME");

    // The root of the sandbox is a tmpfs made read-only once its mount
    // points exist; /usr is bound read-only.
    let at_root = PathBuf::from(format!("/planted-{}", marker()));
    let in_usr = PathBuf::from(format!("/usr/planted-{}", marker()));
    for target in [&in_home, &in_bound, &at_root, &in_usr] {
        let spec = inside("write", &target.to_string_lossy(), scratch.path()).ro(bound.path());
        assert_blocked(&run(isolation, spec));
        assert!(
            !target.exists(),
            "{} must not have been written",
            target.display()
        );
    }
    // The scratch directory is writable, and what is written there stays.
    let own = scratch.path().join("allowed");
    let outcome = run(
        isolation,
        inside("write", &own.to_string_lossy(), scratch.path()),
    );
    assert_eq!(outcome.exit_code, Some(WORKED));
    assert!(own.exists());
}

#[test]
fn cannot_read_a_path_not_bound_in() {
    let isolation = sandbox!();
    let scratch = TempDir::new("read");
    let classmate = TempDir::new("classmate");
    let secret = classmate.path().join("exercises-src-acquire.rs");
    std::fs::write(&secret, "a classmate's solution").expect("the classmate's file");

    let (code, said) = outside("read", &secret.to_string_lossy(), &marker());
    assert_eq!(
        code, WORKED,
        "without a sandbox the attacker reads the classmate's file: {said}"
    );
    assert_blocked(&run(
        isolation,
        inside("read", &secret.to_string_lossy(), scratch.path()),
    ));
}

#[test]
fn has_no_network() {
    let isolation = sandbox!();
    let scratch = TempDir::new("net");
    let listener = TcpListener::bind("127.0.0.1:0").expect("a listener");
    let address = listener.local_addr().expect("its address").to_string();

    let (code, said) = outside("connect-tcp", &address, &marker());
    assert_eq!(
        code, WORKED,
        "without a sandbox the attacker reaches {address}: {said}"
    );
    assert_blocked(&run(
        isolation,
        inside("connect-tcp", &address, scratch.path()),
    ));
}

#[test]
fn reaches_a_unix_socket_in_a_bound_directory() {
    let isolation = sandbox!();
    let scratch = TempDir::new("unix");
    let sockets = TempDir::new("sockets");
    let socket = sockets.path().join("judge.sock");
    let listener = UnixListener::bind(&socket).expect("a socket");
    // The judge's side: answers one `ping` with `pong`.
    let judge = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().expect("a connection");
        let mut ping = [0u8; 4];
        stream.read_exact(&mut ping).expect("ping");
        stream.write_all(b"pong").expect("pong");
        ping
    });
    let path = socket.to_string_lossy().into_owned();
    // Without the bind the socket is out of reach…
    assert_blocked(&run(
        isolation,
        inside("connect-unix", &path, scratch.path()),
    ));
    // …and with its directory bound (read-only is enough for a socket) it
    // is the way to the judge.
    let outcome = run(
        isolation,
        inside("connect-unix", &path, scratch.path()).ro(sockets.path()),
    );
    assert_eq!(outcome.exit_code, Some(WORKED), "{}", outcome.describe());
    assert_eq!(&judge.join().expect("the judge's thread"), b"ping");
}

#[test]
fn a_setsid_double_forked_daemon_is_gone_after_the_call() {
    let isolation = sandbox!();
    let outside_dir = TempDir::new("daemon-outside");
    let mark = marker();
    let (code, said) = outside("daemon", &outside_dir.path().to_string_lossy(), &mark);
    assert_eq!(code, WORKED, "{said}");
    let left = marked(&mark);
    assert!(
        !left.is_empty(),
        "without a sandbox the daemon outlives its parent"
    );
    for pid in left {
        // The daemon this test started.
        if let Some(pid) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }

    let scratch = TempDir::new("daemon");
    let mark = marker();
    let spec = inside("daemon", &scratch.path().to_string_lossy(), scratch.path())
        .env("ISOLATION_MARKER", &mark);
    let outcome = run(isolation, spec);
    assert_eq!(
        outcome.exit_code,
        Some(WORKED),
        "the daemon was started: {}",
        outcome.describe()
    );
    assert_eq!(
        marked(&mark),
        Vec::<u32>::new(),
        "no process of the sandbox may be left"
    );
    let beats = std::fs::metadata(scratch.path().join("heartbeat"))
        .map(|m| m.len())
        .unwrap_or(0);
    std::thread::sleep(Duration::from_millis(300));
    let later = std::fs::metadata(scratch.path().join("heartbeat"))
        .map(|m| m.len())
        .unwrap_or(0);
    assert_eq!(beats, later, "the daemon's heartbeat must have stopped");
}

/// Fails, saying why, when `mechanism` does not hold on this machine.
fn enforced(what: &str, mechanism: Mechanism) {
    if let Mechanism::NotEnforced(why) = mechanism {
        panic!("cannot run here: {what} is not enforced on this machine: {why}");
    }
}

#[test]
fn a_fork_bomb_is_stopped_by_the_process_limit() {
    let isolation = sandbox!();
    enforced("the process limit", isolation.enforcement().processes);
    let (code, said) = outside("fork", "100", &marker());
    assert_eq!(
        code, WORKED,
        "without a sandbox 100 processes start: {said}"
    );

    let scratch = TempDir::new("fork");
    let limits = Limits {
        processes: 32,
        wall_time: Duration::from_secs(20),
        ..Limits::run()
    };
    let outcome = run(
        isolation,
        inside("fork", "100", scratch.path()).limits(limits.clone()),
    );
    assert_blocked(&outcome);
    assert!(outcome.hit(Limit::Processes), "{}", outcome.describe());

    // A real bomb (every process forks forever) ends at the wall time, with
    // the limit hit and nothing left.
    let mark = marker();
    let limits = Limits {
        wall_time: Duration::from_secs(2),
        ..limits
    };
    let started = Instant::now();
    let spec = inside("fork-bomb", "", scratch.path())
        .env("ISOLATION_MARKER", &mark)
        .limits(limits);
    let outcome = run(isolation, spec);
    assert!(
        outcome.hit(Limit::Processes) && outcome.hit(Limit::WallTime),
        "{}",
        outcome.describe()
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(marked(&mark), Vec::<u32>::new());
}

#[test]
fn a_memory_hog_is_killed_by_the_memory_limit() {
    let isolation = sandbox!();
    let (code, said) = outside("memory", "512", &marker());
    assert_eq!(code, WORKED, "without a sandbox 512 MiB can be had: {said}");

    let scratch = TempDir::new("memory");
    let limits = Limits {
        memory: 128 << 20,
        ..Limits::run()
    };
    let outcome = run(
        isolation,
        inside("memory", "512", scratch.path()).limits(limits),
    );
    assert!(
        outcome.hit(Limit::Memory),
        "the result must say memory: {}",
        outcome.describe()
    );
    assert_ne!(outcome.exit_code, Some(WORKED));
    println!(
        "memory: {}",
        outcome.enforcement.memory == Mechanism::Cgroup { version: 1 }
    );
    if let Some(peak) = outcome.peak_memory {
        assert!(peak <= 128 << 20, "peak {peak} over the limit");
    }
}

#[test]
fn a_big_write_is_stopped_by_the_file_size_limit() {
    let isolation = sandbox!();
    let outside_dir = TempDir::new("fsize-outside");
    let target = outside_dir.path().join("big");
    let (code, said) = outside("write-big", &target.to_string_lossy(), &marker());
    assert_eq!(code, WORKED, "without a sandbox 8 MiB are written: {said}");

    let scratch = TempDir::new("fsize");
    let target = scratch.path().join("big");
    let limits = Limits {
        file_size: 1 << 20,
        ..Limits::run()
    };
    let outcome = run(
        isolation,
        inside("write-big", &target.to_string_lossy(), scratch.path()).limits(limits),
    );
    assert!(outcome.hit(Limit::FileSize), "{}", outcome.describe());
    let written = std::fs::metadata(&target).map(|m| m.len()).unwrap_or(0);
    assert!(written <= 1 << 20, "{written} bytes written");
}

#[test]
fn a_wall_time_overrun_kills_everything() {
    let isolation = sandbox!();
    let scratch = TempDir::new("wall");
    let mark = marker();
    let limits = Limits {
        wall_time: Duration::from_secs(1),
        ..Limits::run()
    };
    let started = Instant::now();
    let spec = inside(
        "daemon-and-hang",
        &scratch.path().to_string_lossy(),
        scratch.path(),
    )
    .env("ISOLATION_MARKER", &mark)
    .limits(limits);
    let outcome = run(isolation, spec);
    let took = started.elapsed();
    assert!(outcome.hit(Limit::WallTime), "{}", outcome.describe());
    assert_eq!(outcome.exit_code, None);
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_secs(4),
        "took {took:?}"
    );
    assert_eq!(
        marked(&mark),
        Vec::<u32>::new(),
        "the hung command and its daemon must be gone"
    );
}

#[test]
fn a_spinning_tree_is_stopped_by_the_cpu_limit() {
    let isolation = sandbox!();
    let scratch = TempDir::new("cpu");
    let limits = Limits {
        cpu_time: Duration::from_secs(1),
        wall_time: Duration::from_secs(30),
        ..Limits::run()
    };
    let started = Instant::now();
    let outcome = run(isolation, inside("spin", "", scratch.path()).limits(limits));
    assert!(outcome.hit(Limit::CpuTime), "{}", outcome.describe());
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn output_is_capped_and_the_rest_dropped_with_a_note() {
    let isolation = sandbox!();
    let scratch = TempDir::new("output");
    let outcome = run(isolation, inside("flood", "3", scratch.path()));
    assert_eq!(outcome.exit_code, Some(WORKED));
    assert_eq!(outcome.stdout.text.len(), 1 << 20);
    assert!(
        outcome.stdout.dropped >= 2 << 20,
        "{} dropped",
        outcome.stdout.dropped
    );
    assert!(
        outcome
            .stdout
            .to_string()
            .ends_with("was dropped: the output is capped]")
    );
}

#[test]
fn the_environment_holds_only_what_is_given() {
    let isolation = sandbox!();
    let scratch = TempDir::new("env");
    let outcome = run(
        isolation,
        inside("env", "", scratch.path()).env("GIVEN", "yes"),
    );
    assert_eq!(outcome.exit_code, Some(WORKED));
    let mut keys: Vec<&str> = outcome
        .stdout
        .text
        .lines()
        .filter_map(|l| l.strip_prefix("var "))
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "GIVEN",
            "HOME",
            "ISOLATION_ARG",
            "ISOLATION_ATTACK",
            "LANG",
            "PATH",
            "PWD",
            "TMPDIR"
        ]
    );
}

#[test]
fn a_missing_program_is_a_setup_error_not_an_outcome() {
    let isolation = sandbox!();
    let scratch = TempDir::new("setup");
    let error = isolation
        .run(&Spec::new("/no/such/program", scratch.path()))
        .expect_err("a setup error");
    assert!(error.to_string().contains("/no/such/program"), "{error}");
    let missing = isolation
        .run(&Spec::new("true", scratch.path().join("absent")))
        .expect_err("no scratch");
    assert!(missing.to_string().contains("does not exist"), "{missing}");
}

#[test]
fn detection_names_the_remedy() {
    let error = Isolation::with_bwrap("/no/such/bwrap").expect_err("no bwrap there");
    assert!(error.to_string().contains("apt-get install"), "{error}");
    // A bwrap that fails as it does under Ubuntu 24.04's AppArmor rule.
    let dir = TempDir::new("fake-bwrap");
    let fake = dir.path().join("bwrap");
    let script = "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'bubblewrap 0.0'; exit 0; }\n\
                  echo 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n";
    std::fs::write(&fake, script).expect("the fake bwrap");
    let executable = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(&fake, executable).expect("chmod");
    let error = Isolation::with_bwrap(&fake).expect_err("a refusing bwrap");
    let message = error.to_string();
    assert!(
        message.contains("kernel.apparmor_restrict_unprivileged_userns=0"),
        "{message}"
    );
    println!("{message}");
}

/// The judge's two uses, as the batch will make them: a submission's crate
/// in a read-only tree (the pristine course with the submission's files),
/// built into a scratch target directory; then its binary run in a sandbox
/// of its own. The build script attacks, and the build still works.
#[test]
fn builds_a_crate_whose_build_script_attacks_then_runs_it() {
    let isolation = sandbox!();
    let toolchain = Toolchain::detect(Path::new(env!("CARGO_MANIFEST_DIR"))).expect("a toolchain");
    let course = TempDir::new("course");
    let scratch = TempDir::new("build");
    let listener = TcpListener::bind("127.0.0.1:0").expect("a listener");
    let address = listener.local_addr().expect("its address").to_string();
    let home = PathBuf::from(std::env::var_os("HOME").expect("HOME"));
    let in_home = home.join(format!(".isolation-build-{}", marker()));
    let in_course = course.path().join("planted");
    let files = [
        (
            "Cargo.toml",
            "[package]\nname = \"submission\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"
                .to_string(),
        ),
        // Committed, as the course's is: a read-only tree cannot get one.
        (
            "Cargo.lock",
            "version = 4\n\n[[package]]\nname = \"submission\"\nversion = \"0.1.0\"\n".to_string(),
        ),
        (
            "src/main.rs",
            "fn main() { println!(\"hello from the submission\"); }\n".to_string(),
        ),
        (
            "build.rs",
            format!(
                "fn main() {{\n\
                   let home = std::fs::write({in_home:?}, \"x\").is_ok();\n\
                   let course = std::fs::write({in_course:?}, \"x\").is_ok();\n\
                   let net = std::net::TcpStream::connect({address:?}).is_ok();\n\
                   println!(\"cargo:warning=attack: home {{home}}, course {{course}}, network {{net}}\");\n\
                 }}\n"
            ),
        ),
    ];
    std::fs::create_dir_all(course.path().join("src")).expect("the crate");
    for (name, text) in files {
        std::fs::write(course.path().join(name), text).expect("a file of the crate");
    }

    let target = scratch.path().join("target");
    let build = Spec::new(toolchain.cargo(), scratch.path())
        .args(["build", "--locked", "--offline", "--manifest-path"])
        .arg(course.path().join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .ro(course.path())
        .toolchain(&toolchain)
        .limits(Limits::build());
    let outcome = run(isolation, build);
    assert!(
        outcome.success(),
        "the build must work inside: {}",
        outcome.describe()
    );
    assert!(
        outcome
            .stderr
            .text
            .contains("attack: home false, course false, network false"),
        "the build script's attacks must fail"
    );
    assert!(!in_home.exists() && !in_course.exists());
    println!(
        "the build: {:?} CPU, {:?} of memory at most",
        outcome.cpu_time, outcome.peak_memory
    );

    let binary = target.join("debug/submission");
    let run_dir = TempDir::new("run");
    let outcome = run(isolation, Spec::new(&binary, run_dir.path()).ro(&binary));
    assert_eq!(outcome.stdout.text, "hello from the submission\n");
}

/// The real thing, slow (minutes on two cores), so not run by default: this
/// course's learner crate built from a read-only copy of the workspace with
/// the registry bound read-only, as `cargo course batch` builds each
/// submission.
#[test]
#[ignore = "slow (minutes on two cores): cargo test -p grader --test isolation -- --ignored \
            builds_the_course_learner_crate"]
fn builds_the_course_learner_crate() {
    let isolation = sandbox!();
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace");
    let toolchain = Toolchain::detect(workspace).expect("a toolchain");
    let scratch = TempDir::new("course-build");
    let build = Spec::new(toolchain.cargo(), scratch.path())
        .args([
            "test",
            "--no-run",
            "--locked",
            "--offline",
            "-p",
            "exercises",
            "--manifest-path",
        ])
        .arg(workspace.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", scratch.path().join("target"))
        .ro(workspace)
        .toolchain(&toolchain)
        .limits(Limits::build());
    let outcome = run(isolation, build);
    println!(
        "the course build: {:?} wall, {:?} CPU, {:?} bytes of memory at most",
        outcome.wall_time, outcome.cpu_time, outcome.peak_memory
    );
    assert!(outcome.success(), "{}", outcome.describe());
}

#[test]
fn overhead_of_a_sandboxed_true() {
    let isolation = sandbox!();
    let scratch = TempDir::new("overhead");
    const RUNS: u32 = 20;
    let started = Instant::now();
    for _ in 0..RUNS {
        Command::new("true").status().expect("true");
    }
    let plain = started.elapsed() / RUNS;
    let started = Instant::now();
    for _ in 0..RUNS {
        let outcome = isolation
            .run(&Spec::new("true", scratch.path()))
            .expect("a sandbox");
        assert!(outcome.success());
    }
    let sandboxed = started.elapsed() / RUNS;
    println!(
        "overhead: a sandboxed `true` takes {:.1} ms on average over {RUNS} runs ({:.1} ms without a sandbox; {}, limits by:\n{})",
        sandboxed.as_secs_f64() * 1e3,
        plain.as_secs_f64() * 1e3,
        isolation.version(),
        isolation.enforcement()
    );
}

/// The attacks, run when this binary is started with `ISOLATION_ATTACK`
/// ([`ATTACKER_ARGS`]). Not a test of its own, so ignored: the ordinary run
/// does not show it as a pass.
#[test]
#[ignore = "an attack, which the other tests of this file start in a child process with \
            ISOLATION_ATTACK set"]
fn attacker() {
    let Ok(attack) = std::env::var("ISOLATION_ATTACK") else {
        panic!("started by the other tests of this file, with ISOLATION_ATTACK set");
    };
    let arg = std::env::var("ISOLATION_ARG").unwrap_or_default();
    let (worked, said) = attack::run(&attack, &arg);
    println!("{attack}: {said}");
    std::process::exit(if worked { WORKED } else { BLOCKED });
}

// The attacks fork, detach and kill as hostile code does, with raw system calls.
#[allow(unsafe_code)]
mod attack {
    use std::io::{Read, Write};
    use std::path::Path;
    use std::time::Duration;

    /// Makes one attack: whether it worked, and what happened.
    pub fn run(attack: &str, arg: &str) -> (bool, String) {
        match attack {
            "kill" => kill(arg),
            "write" => result(std::fs::write(arg, "planted")),
            "read" => result(std::fs::read_to_string(arg)),
            "connect-tcp" => result(std::net::TcpStream::connect_timeout(
                &arg.parse().expect("an address"),
                Duration::from_secs(2),
            )),
            "connect-unix" => connect_unix(arg),
            "daemon" => daemon(Path::new(arg), false),
            "daemon-and-hang" => daemon(Path::new(arg), true),
            "fork" => fork(arg.parse().expect("a count")),
            "fork-bomb" => fork_bomb(),
            "memory" => memory(arg.parse().expect("MiB")),
            "write-big" => result(std::fs::write(arg, vec![b'x'; 8 << 20])),
            "spin" => loop {
                std::hint::black_box(0u64);
            },
            "flood" => flood(arg.parse().expect("MiB")),
            "env" => {
                for (key, _) in std::env::vars_os() {
                    println!("var {}", key.to_string_lossy());
                }
                (true, "listed".into())
            }
            other => panic!("no attack {other}"),
        }
    }

    fn result<T: std::fmt::Debug>(r: std::io::Result<T>) -> (bool, String) {
        match r {
            Ok(_) => (true, "done".into()),
            Err(e) => (false, e.to_string()),
        }
    }

    fn kill(pid: &str) -> (bool, String) {
        let visible = Path::new("/proc").join(pid).exists();
        let pid: libc::pid_t = pid.parse().expect("a pid");
        // SAFETY: a plain system call; the point is to see it fail.
        let ret = unsafe { libc::kill(pid, libc::SIGKILL) };
        let error = std::io::Error::last_os_error();
        (
            ret == 0,
            format!(
                "visible in /proc: {visible}, kill: {}",
                if ret == 0 {
                    "done".into()
                } else {
                    error.to_string()
                }
            ),
        )
    }

    fn connect_unix(path: &str) -> (bool, String) {
        let talk = || -> std::io::Result<Vec<u8>> {
            let mut stream = std::os::unix::net::UnixStream::connect(path)?;
            stream.write_all(b"ping")?;
            let mut reply = vec![0u8; 4];
            stream.read_exact(&mut reply)?;
            Ok(reply)
        };
        match talk() {
            Ok(reply) => (
                reply == b"pong",
                format!("the judge said {}", String::from_utf8_lossy(&reply)),
            ),
            Err(e) => (false, e.to_string()),
        }
    }

    /// A grandchild in a session of its own, deaf to SIGHUP and SIGTERM,
    /// writing a heartbeat into `dir` forever; the parent returns (or hangs).
    fn daemon(dir: &Path, hang: bool) -> (bool, String) {
        let beat = dir.join("heartbeat");
        // SAFETY: fork in a process that is about to do nothing but simple
        // system calls in the child (the test harness thread is idle).
        unsafe {
            match libc::fork() {
                0 => {
                    libc::setsid();
                    if libc::fork() == 0 {
                        libc::signal(libc::SIGHUP, libc::SIG_IGN);
                        libc::signal(libc::SIGTERM, libc::SIG_IGN);
                        loop {
                            if let Ok(mut f) = std::fs::OpenOptions::new()
                                .create(true)
                                .append(true)
                                .open(&beat)
                            {
                                let _ = f.write_all(b".");
                            }
                            std::thread::sleep(Duration::from_millis(10));
                        }
                    }
                    libc::_exit(0);
                }
                -1 => return (false, "fork failed".into()),
                child => {
                    libc::waitpid(child, std::ptr::null_mut(), 0);
                }
            }
        }
        while !beat.exists() {
            std::thread::sleep(Duration::from_millis(5));
        }
        if hang {
            loop {
                std::thread::sleep(Duration::from_secs(1));
            }
        }
        (true, "a daemon runs".into())
    }

    fn fork(count: usize) -> (bool, String) {
        let mut children = Vec::new();
        for _ in 0..count {
            // SAFETY: the child only sleeps and exits.
            match unsafe { libc::fork() } {
                0 => unsafe {
                    libc::sleep(30);
                    libc::_exit(0)
                },
                -1 => break,
                pid => children.push(pid),
            }
        }
        let started = children.len();
        for pid in children {
            // SAFETY: killing and reaping our own children.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
        }
        (
            started == count,
            format!("{started} of {count} processes started"),
        )
    }

    fn fork_bomb() -> (bool, String) {
        loop {
            // SAFETY: every process forks forever; that is the attack.
            unsafe { libc::fork() };
        }
    }

    fn memory(mib: usize) -> (bool, String) {
        let mut chunks: Vec<Vec<u8>> = Vec::new();
        for _ in 0..mib {
            // Written, so that the pages are really there.
            chunks.push(vec![1u8; 1 << 20]);
        }
        let total: usize = chunks.iter().map(|c| c.len()).sum();
        (true, format!("{} MiB held", total >> 20))
    }

    fn flood(mib: usize) -> (bool, String) {
        let line = [b'y'; 1024];
        let mut out = std::io::stdout().lock();
        for _ in 0..mib * 1024 {
            let _ = out.write_all(&line);
        }
        let _ = out.flush();
        (true, String::new())
    }
}
