//! The hostile student's attack suite: what a submission's code must not be
//! able to do to any grade but its own, and to its own only as a fail.
//!
//! Each attack is a student's `exercises/src/*.rs` (under
//! `grader/tests/attacks/<attack>/`, each file beginning with what it tries
//! and what a sound grader must do about it), with every other exercise left
//! as its `todo!()` stub, so that an honest grade is 0 passes. The driver
//! makes one scratch copy of this checkout per run (its files as `git
//! ls-files` lists them, untracked but not ignored ones included, in
//! cargo's `CARGO_TARGET_TMPDIR`, `target/tmp/attacks/course/`, whose own
//! `target/` is kept between runs, so an attack recompiles only the
//! `exercises` crate), installs one attack at a time, and runs the course's
//! documented entry points as a learner or an instructor would:
//! `cargo test -p exercises FILTER`, `cargo course grade --format json --out
//! DIR FILTER` and, for the batch attacks, `cargo course batch DIR` on a
//! folder holding the attacker and a victim whose submission is the
//! reference solutions (copied as `.ci/learner-path` copies them, from
//! `exercise-table`). It then asserts on what the judge reported, never on
//! the grader's internals: the attacker has no passed check, the victim
//! keeps every selected check (the reference solutions pass them all), the course's tracked files and its `course` binary are
//! byte-identical afterwards, no process of the attack is alive after the
//! grade, the results are not changed after they were written, nothing
//! outside the submission reached the build, nothing reached the driver's
//! TCP listener (the network, to learner code), and names are printed escaped.
//! An attack "held" when it got none of this; "SUCCEEDED" lists what it got
//! (today most succeed: they are the defences still to build, and the suite
//! fails until every attack holds).
//!
//! Run it (needs `redis-server`, used through `GRADER_REDIS=process`, and
//! git; about 10 minutes on 2 cores once the scratch course is built, the
//! first run builds it and the batch's grader, several minutes more; the
//! target is `test = false`, so a plain `cargo test` leaves it out):
//!
//! ```sh
//! cargo test -p grader --test attacks
//! GRADER_ATTACKS=premain-verdict,batch-kill cargo test -p grader --test attacks
//! cargo test -p grader --test attacks -- batch-   # names containing "batch-"
//! cargo test -p grader --test attacks -- --list
//! ```
//!
//! The output has a line per attack, `attack NAME ... held` or `attack NAME
//! ... SUCCEEDED` with what it got, then `attack result:` and the names of
//! those that succeeded; the exit status is 0 only when every attack held.
//!
//! Safety: attacks only signal processes whose program or working directory
//! lies inside the scratch course, only talk to Redis servers on 127.0.0.1
//! that a process of the scratch course started, and bound every loop; the
//! driver runs each entry point in a process group of its own, and after
//! each attack kills what is left of it (processes of the scratch course, or
//! named `atk-…`).

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use rustix::process::{Pid, Signal};

/// The environment variable that selects attacks by name, comma-separated.
const SELECT_VAR: &str = "GRADER_ATTACKS";

/// The most memory any one process of a grading may use (peak resident set),
/// in MiB. A legitimate build of the `exercises` crate and its link stay well
/// below; the build bombs and the huge file go well above, unless bounded.
const MEMORY_BOUND_MIB: u64 = 1536;

/// How long a learner's entry point may take here before the driver kills it.
const LEARNER_LIMIT: Duration = Duration::from_secs(300);
/// How long a batch may take here before the driver kills it.
const BATCH_LIMIT: Duration = Duration::from_secs(420);
/// The profile `cargo course` and the learner's judge are built with (root `Cargo.toml`).
const JUDGE_PROFILE: &str = "judge";

/// Where the scratch course's `cargo course` program is, built with [`JUDGE_PROFILE`].
const COURSE_BINARY: &str = "target/judge/course";

/// The time limit handed to `cargo course batch` (per submission, build included).
const BATCH_TIME_LIMIT_SECS: u64 = 60;

/// One exercise's checks, as a filter, and how many there are.
const TOKEN: (&str, usize) = ("token::", 2);
const ACQUIRE: (&str, usize) = ("acquire::", 7);

/// What an attack got: empty when it held.
type Findings = Vec<String>;

struct Attack {
    name: &'static str,
    what: &'static str,
    run: fn(&Lab, &Attack) -> Findings,
}

const ATTACKS: &[Attack] = &[
    Attack {
        name: "premain-verdict",
        what: "1. a passing verdict forged from .init_array, before main, in each check's process",
        run: |lab, a| lab.learner(a, &[TOKEN.0]),
    },
    Attack {
        name: "premain-harness",
        what: "9. the harness's own process forged before main: a results file, libtest's lines",
        run: |lab, a| lab.learner(a, &[TOKEN.0]),
    },
    Attack {
        name: "proc-mem-nonce",
        what: "2. the nonce read from /proc/self/mem during a call, then a forged verdict",
        run: |lab, a| lab.learner(a, &[TOKEN.0]),
    },
    Attack {
        name: "judge-memory",
        what: "2. from the runner, the judge's processes read (/proc/PID/mem, environ) and their pipes written",
        run: |lab, a| lab.learner(a, &[TOKEN.0]),
    },
    Attack {
        name: "replace-binary",
        what: "3. the test binary replaced during a check: later checks and the next unedited run",
        run: replace_binary,
    },
    Attack {
        name: "linger",
        what: "4. a process that outlives its check (setsid, double fork) and rewrites the results",
        run: linger,
    },
    Attack {
        name: "redis-from-env",
        what: "5. Redis reached around the grader (REDIS_URL, the servers in /proc): CONFIG, KEYS, FLUSHALL",
        run: |lab, a| lab.learner(a, &[TOKEN.0]),
    },
    Attack {
        name: "include-outside",
        what: "6. #[path] mod and include_str!/include_bytes! of the reference solutions, /etc/passwd, in a batch",
        // A learner's own build reads what the learner can (cheating there cheats only its
        // author); a batch's build must not reach the course's grader or the machine.
        run: |lab, a| lab.batch_attack(a, TOKEN, &[("mallory", a.name)], &[]),
    },
    Attack {
        name: "fake-libtest-lines",
        what: "9. libtest's lines printed by a check (holds today: keep it held)",
        run: |lab, a| lab.learner(a, &[TOKEN.0]),
    },
    Attack {
        name: "build-bomb-static",
        what: "7. a 1 GiB static: rustc's memory, in a batch with a victim",
        run: |lab, a| build_bomb(lab, a, "build-bombs/static"),
    },
    Attack {
        name: "build-bomb-loop",
        what: "7. an endless const eval (long_running_const_eval allowed), in a batch with a victim",
        run: |lab, a| build_bomb(lab, a, "build-bombs/loop"),
    },
    Attack {
        name: "batch-edit-course",
        what: "8. the instructor's course edited from a check (the judge's source, the batch's binary)",
        run: |lab, a| lab.batch_attack(a, TOKEN, &[("mallory", a.name)], &[]),
    },
    Attack {
        name: "batch-kill",
        what: "8+9. the batch process killed from a check (its ancestors, their process groups)",
        run: |lab, a| lab.batch_attack(a, TOKEN, &[("mallory", a.name)], &[]),
    },
    Attack {
        name: "batch-flush-classmate",
        what: "8. a classmate's Redis flushed while they are graded",
        run: |lab, a| lab.batch_attack(a, ACQUIRE, &[("mallory", a.name)], &[]),
    },
    Attack {
        name: "batch-replace-classmate",
        what: "9. a classmate's test binary replaced while they are graded (the next in the queue)",
        // `aaron` (the stubs) goes first, so that the victim is graded while mallory's process lives.
        run: |lab, a| lab.batch_attack(a, ACQUIRE, &[("aaron", ""), ("mallory", a.name)], &[]),
    },
    Attack {
        name: "batch-read-classmate",
        what: "8. a classmate's submission compiled in (#[path]) and copied at run time",
        run: |lab, a| lab.batch_attack(a, TOKEN, &[("mallory", a.name)], &[]),
    },
    Attack {
        name: "batch-rewrite-results",
        what: "8. results.csv and summary.html rewritten after the batch ended",
        run: rewrite_results,
    },
    Attack {
        name: "batch-sparse-file",
        what: "8. a 3 GiB sparse file in the submission folder",
        run: sparse_file,
    },
    Attack {
        name: "batch-escape-names",
        what: "8. terminal escapes, newlines and bidirectional controls in a folder name and file names",
        run: escape_names,
    },
    Attack {
        name: "batch-cargo-config",
        what: "9. .cargo/config.toml, a build script, rust-toolchain.toml in the submission (holds today)",
        run: |lab, a| lab.batch_attack(a, TOKEN, &[("mallory", a.name)], &[]),
    },
    Attack {
        name: "batch-env-leak",
        what: "9. the instructor's environment (a secret) read at compile and run time and sent out",
        run: env_leak,
    },
    Attack {
        name: "batch-fill-disk",
        what: "10. the machine's disk filled from the sandbox's working folder, and left so by a killed judge",
        run: fill_disk,
    },
    Attack {
        name: "batch-borrow-classmate",
        what: "10. the previous submission's runner, left in the worker's target directory, built in and run",
        run: borrow_classmate,
    },
    Attack {
        name: "batch-forged-rule",
        what: "10. a line of the grader's report (a broken rule) forged in a panic's and a todo!'s message",
        run: forged_rule,
    },
    Attack {
        name: "redis-memory",
        what: "10. gigabytes held in the grader's Redis (SETRANGE, a Lua script), beyond the sandbox's memory",
        run: |lab, a| lab.learner(a, &["acquire::takes_a_free_lock"]),
    },
    Attack {
        name: "runner-protocol",
        what: "10. the runner's links written to by hand: forged answers, a terabyte frame, a half-closed control link",
        run: |lab, a| lab.learner(a, &[TOKEN.0]),
    },
    Attack {
        name: "proxy-smuggle",
        what: "10. commands smuggled past the proxy's filter: an inline FLUSHALL, a request cut short",
        run: |lab, a| lab.learner(a, SINGLE_CLIENT_ACQUIRE),
    },
    Attack {
        name: "proxy-server-escape",
        what: "10. the grader's own servers (Redlock's nodes, the failover pair) made to reach the network \
               (a MIGRATE script, REPLICAOF) and act on the whole server (CONFIG, FLUSHALL)",
        run: |lab, a| {
            lab.learner(
                a,
                &["redlock::takes_a_majority", "scenarios::failover_lost_lock"],
            )
        },
    },
];

/// Unicode's bidirectional controls: embeddings and overrides, isolates.
const BIDI: &[char] = &[
    '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}', '\u{2068}',
    '\u{2069}',
];

/// The checks of `acquire` in which one client calls it, each by its whole name.
const SINGLE_CLIENT_ACQUIRE: &[&str] = &[
    "acquire::takes_a_free_lock",
    "acquire::refuses_a_held_lock",
    "acquire::sets_the_ttl_in_milliseconds",
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--measure") {
        measure(&args[2..]);
    }
    if args.iter().any(|a| a == "--list") {
        for attack in ATTACKS {
            println!("{}: test", attack.name);
        }
        return ExitCode::SUCCESS;
    }
    let selected = match select(&args[1..]) {
        Ok(selected) => selected,
        Err(e) => {
            eprintln!("attacks: {e}");
            return ExitCode::from(2);
        }
    };
    let started = Instant::now();
    println!("\nrunning {} attacks", selected.len());
    let lab = match Lab::prepare(
        selected
            .iter()
            .any(|a| a.name.starts_with("batch-") || a.name.starts_with("build-bomb")),
    ) {
        Ok(lab) => lab,
        Err(e) => {
            eprintln!("attacks: could not prepare the scratch course: {e}");
            return ExitCode::from(2);
        }
    };
    println!(
        "(scratch course ready in {:.0} s)",
        started.elapsed().as_secs_f64()
    );
    if let Err(e) = lab.control() {
        eprintln!("attacks: the driver cannot see a pass, so it could not see a forged one: {e}");
        return ExitCode::from(2);
    }
    let mut succeeded = Vec::new();
    for attack in &selected {
        let t0 = Instant::now();
        let mut findings = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            lab.clean_places(attack.name);
            lab.peak_mib.set(0);
            (attack.run)(&lab, attack)
        })) {
            Ok(findings) => findings,
            Err(panic) => vec![format!(
                "the driver itself failed: {}",
                panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            )],
        };
        findings.extend(lab.aftermath());
        let took = t0.elapsed().as_secs_f64();
        let peak = lab.peak_mib.get();
        if findings.is_empty() {
            println!(
                "attack {} ... held ({took:.0} s, peak {peak} MiB)",
                attack.name
            );
        } else {
            println!(
                "attack {} ... SUCCEEDED ({took:.0} s, peak {peak} MiB)",
                attack.name
            );
            println!("    {}", attack.what);
            for f in &findings {
                for (i, line) in f.lines().enumerate() {
                    println!("    {} {line}", if i == 0 { "-" } else { " " });
                }
            }
            succeeded.push(attack.name);
        }
    }
    println!(
        "\nattack result: {}. {} held; {} succeeded; finished in {:.0} s",
        if succeeded.is_empty() { "ok" } else { "FAILED" },
        selected.len() - succeeded.len(),
        succeeded.len(),
        started.elapsed().as_secs_f64()
    );
    if succeeded.is_empty() {
        ExitCode::SUCCESS
    } else {
        println!("succeeded (defence missing): {}", succeeded.join(","));
        ExitCode::FAILURE
    }
}

/// The attacks `GRADER_ATTACKS` (comma-separated names) and the command
/// line's filters (substrings of names) select: all when neither says.
fn select(args: &[String]) -> Result<Vec<&'static Attack>, String> {
    let names: Vec<String> = std::env::var(SELECT_VAR)
        .unwrap_or_default()
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    for name in &names {
        if !ATTACKS.iter().any(|a| a.name == name) {
            let all: Vec<&str> = ATTACKS.iter().map(|a| a.name).collect();
            return Err(format!(
                "{SELECT_VAR} names {name:?}, which is not an attack: {}",
                all.join(",")
            ));
        }
    }
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    Ok(ATTACKS
        .iter()
        .filter(|a| names.is_empty() || names.iter().any(|n| n == a.name))
        .filter(|a| filters.is_empty() || filters.iter().any(|f| a.name.contains(f.as_str())))
        .collect())
}

/// `attacks --measure RSS_FILE CWD -- PROGRAM ARGS…`: runs the program in CWD
/// and writes the peak resident set of its largest descendant (KiB).
fn measure(args: &[String]) -> ! {
    let (Some(rss_file), Some(cwd), Some(program)) = (args.first(), args.get(1), args.get(3))
    else {
        eprintln!("attacks --measure RSS_FILE CWD -- PROGRAM ARGS…");
        std::process::exit(2);
    };
    let status = Command::new(program)
        .args(&args[4..])
        .current_dir(cwd)
        .status();
    // SAFETY: getrusage fills in the zeroed struct. (rustix has no getrusage.)
    #[allow(unsafe_code)]
    let peak = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage.ru_maxrss
    };
    let _ = fs::write(rss_file, peak.to_string());
    std::process::exit(match status {
        Ok(s) => s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0)),
        Err(e) => {
            eprintln!("attacks --measure: cannot run {program}: {e}");
            127
        }
    })
}

/// One run of an entry point.
struct Ran {
    /// The exit code (128 + signal when killed); `None` when the driver killed it.
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
    /// The peak resident set of the largest process it ran, in MiB.
    peak_mib: Option<u64>,
}

impl Ran {
    fn describe(&self) -> String {
        match self.code {
            Some(c) => format!("exit {c}, {:.0} s", self.took.as_secs_f64()),
            None => format!(
                "killed by the driver after {:.0} s",
                self.took.as_secs_f64()
            ),
        }
    }

    fn tail(&self) -> String {
        let all = format!("{}{}", self.stderr, self.stdout);
        let lines: Vec<&str> = all.lines().collect();
        lines[lines.len().saturating_sub(12)..].join("\n")
    }
}

/// The scratch course and the places of the attacks.
struct Lab {
    /// This checkout's root.
    source: PathBuf,
    /// `CARGO_TARGET_TMPDIR/attacks`.
    root: PathBuf,
    /// The scratch course.
    course: PathBuf,
    /// The attacks' sources.
    attacks: PathBuf,
    /// The course's tracked files, relative, with their content and time.
    pristine: BTreeMap<PathBuf, (Vec<u8>, Option<SystemTime>)>,
    /// The exercises: (stub, solution), relative to the course.
    exercises: Vec<(PathBuf, PathBuf)>,
    /// The built `course` binary's bytes, once it is built.
    course_binary: Vec<u8>,
    /// The largest peak (MiB) of any run since the last attack began.
    peak_mib: std::cell::Cell<u64>,
    /// The driver's TCP listener on 127.0.0.1 (`@LISTEN@`), which no learner
    /// code may reach: what connected to it since the last attack began.
    listener: Listener,
    me: PathBuf,
}

/// A TCP listener on 127.0.0.1 that notes every connection made to it: the
/// network's stand-in, outside every sandbox, for an attack that reaches out.
struct Listener {
    port: u16,
    reached: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Listener {
    fn start() -> Result<Listener, String> {
        let socket = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
        let port = socket.local_addr().map_err(|e| e.to_string())?.port();
        let reached: std::sync::Arc<std::sync::Mutex<Vec<String>>> = Default::default();
        let noted = std::sync::Arc::clone(&reached);
        thread::spawn(move || {
            for stream in socket.incoming().flatten() {
                let mut stream = stream;
                let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
                let mut first = [0u8; 64];
                let n = stream.read(&mut first).unwrap_or(0);
                let what = format!("{:?}", String::from_utf8_lossy(&first[..n]));
                noted.lock().unwrap_or_else(|p| p.into_inner()).push(what);
            }
        });
        Ok(Listener { port, reached })
    }

    /// What reached the listener since the last call, forgotten.
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.reached.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// The places an attack's sources name.
struct Places {
    drop: PathBuf,
    out: PathBuf,
    submissions: PathBuf,
    /// Where the batch writes its results: beside the submissions, as by default.
    results: PathBuf,
}

impl Lab {
    fn prepare(batch: bool) -> Result<Lab, String> {
        let source = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("the grader sits in the course's root")
            .to_path_buf();
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("attacks");
        let course = root.join("course");
        let listed = Command::new("git")
            .arg("-C")
            .arg(&source)
            .args([
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
            ])
            .output()
            .map_err(|e| format!("git ls-files: {e}"))?;
        if !listed.status.success() {
            return Err(format!("git ls-files failed in {}", source.display()));
        }
        let mut pristine = BTreeMap::new();
        for relative in listed.stdout.split(|b| *b == 0).filter(|p| !p.is_empty()) {
            let relative = PathBuf::from(String::from_utf8_lossy(relative).into_owned());
            let from = source.join(&relative);
            if !from.is_file() {
                continue;
            }
            let bytes = fs::read(&from).map_err(|e| format!("{}: {e}", from.display()))?;
            let time = fs::metadata(&from).and_then(|m| m.modified()).ok();
            pristine.insert(relative, (bytes, time));
        }
        // One fresh copy per run; only its target/ (the builds) is kept.
        fs::create_dir_all(&course).map_err(|e| format!("{}: {e}", course.display()))?;
        for entry in fs::read_dir(&course).map_err(|e| e.to_string())?.flatten() {
            if entry.file_name() != "target" {
                let path = entry.path();
                let _ = fs::remove_dir_all(&path).or_else(|_| fs::remove_file(&path));
            }
        }
        let mut lab = Lab {
            attacks: source.join("grader/tests/attacks"),
            source,
            root,
            course,
            pristine,
            exercises: Vec::new(),
            course_binary: Vec::new(),
            peak_mib: std::cell::Cell::new(0),
            listener: Listener::start()?,
            me: std::env::current_exe().map_err(|e| e.to_string())?,
        };
        for relative in lab.pristine.keys() {
            lab.restore(relative)
                .map_err(|e| format!("{}: {e}", relative.display()))?;
        }
        for args in [
            &["init", "-q"][..],
            &["add", "-A"],
            &[
                "-c",
                "user.name=attacks",
                "-c",
                "user.email=attacks@localhost",
                "commit",
                "-q",
                "-m",
                "course",
            ],
        ] {
            let ok = Command::new("git")
                .arg("-C")
                .arg(&lab.course)
                .args(args)
                .status();
            if !ok.is_ok_and(|s| s.success()) {
                return Err(format!("git {args:?} failed in the scratch course"));
            }
        }
        let which = Command::new("sh")
            .args(["-c", "command -v redis-server"])
            .output();
        if !which.is_ok_and(|o| o.status.success()) {
            return Err("redis-server is not on PATH (apt-get install redis-server)".into());
        }
        // The builds, once, so that no attack is charged for them.
        let long = Duration::from_secs(3600);
        // In the judge's profile, as `cargo course` and `cargo test -p exercises` build them.
        let built = lab.cargo(
            &[
                "build",
                "--profile",
                JUDGE_PROFILE,
                "-p",
                "course",
                "--bin",
                "course",
                "-p",
                "grader",
                "--bin",
                "exercise-table",
                "--bin",
                "judge",
            ],
            &[],
            long,
        );
        if built.code != Some(0) {
            return Err(format!(
                "the scratch course does not build:\n{}",
                built.tail()
            ));
        }
        let table = lab.cargo(
            &[
                "run",
                "--quiet",
                "--profile",
                JUDGE_PROFILE,
                "-p",
                "grader",
                "--bin",
                "exercise-table",
            ],
            &[],
            long,
        );
        for line in table.stdout.lines() {
            let fields: Vec<&str> = line.split('\t').collect();
            if fields.len() >= 4 {
                lab.exercises
                    .push((PathBuf::from(fields[2]), PathBuf::from(fields[3])));
            }
        }
        if lab.exercises.is_empty() {
            return Err(format!(
                "exercise-table listed no exercise:\n{}",
                table.tail()
            ));
        }
        lab.course_binary = fs::read(lab.course.join(COURSE_BINARY)).map_err(|e| e.to_string())?;
        let tests = lab.cargo(&["test", "-p", "exercises", "--no-run"], &[], long);
        if tests.code != Some(0) {
            return Err(format!(
                "the exercises' tests do not build:\n{}",
                tests.tail()
            ));
        }
        if batch {
            // The batch builds its grader once in target/course-batch/: now, with no submission.
            let empty = lab.root.join("no-submissions");
            let _ = fs::remove_dir_all(&empty);
            fs::create_dir_all(&empty).map_err(|e| e.to_string())?;
            let ran = lab.cargo(
                &["course", "batch", &empty.to_string_lossy(), "--jobs", "1"],
                &[],
                long,
            );
            if ran.code != Some(0) {
                return Err(format!("an empty batch fails:\n{}", ran.tail()));
            }
        }
        Ok(lab)
    }

    /// Puts the pristine `relative` back, with its time.
    fn restore(&self, relative: &Path) -> std::io::Result<()> {
        let Some((bytes, time)) = self.pristine.get(relative) else {
            return Ok(());
        };
        let to = self.course.join(relative);
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent)?;
        }
        let _ = fs::remove_file(&to);
        fs::write(&to, bytes)?;
        if let Ok(meta) = fs::metadata(self.source.join(relative)) {
            let _ = fs::set_permissions(&to, meta.permissions());
        }
        if let Some(time) = time {
            fs::File::options()
                .write(true)
                .open(&to)?
                .set_modified(*time)?;
        }
        Ok(())
    }

    fn places(&self, attack: &str) -> Places {
        Places {
            drop: self.root.join("drop").join(attack),
            out: self.root.join("out").join(attack),
            submissions: self.root.join("submissions").join(attack),
            results: self
                .root
                .join("submissions")
                .join(format!("{attack}-results")),
        }
    }

    fn clean_places(&self, attack: &str) {
        let p = self.places(attack);
        for dir in [&p.drop, &p.out, &p.submissions, &p.results] {
            let _ = fs::remove_dir_all(dir);
            fs::create_dir_all(dir).expect("the driver can create its own folders");
        }
        self.listener.take();
    }

    fn substitute(&self, text: &str, p: &Places) -> String {
        text.replace("@COURSE@", &self.course.to_string_lossy())
            .replace("@DROP@", &p.drop.to_string_lossy())
            .replace("@OUT@", &p.out.to_string_lossy())
            .replace("@SUBMISSIONS@", &p.submissions.to_string_lossy())
            .replace("@RESULTS@", &p.results.to_string_lossy())
            .replace("@LISTEN@", &self.listener.port.to_string())
    }

    /// The `exercises/src` files of the attack in `dir` (relative to the
    /// attacks' folder), the kit among them, with the places filled in.
    fn sources(&self, dir: &str, p: &Places) -> Vec<(String, String)> {
        let mut files = Vec::new();
        let kit =
            fs::read_to_string(self.attacks.join("_kit/atk_kit.rs")).expect("the kit is readable");
        files.push(("atk_kit.rs".to_string(), self.substitute(&kit, p)));
        let mut entries: Vec<_> = fs::read_dir(self.attacks.join(dir))
            .expect("the attack's folder is readable")
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let text = fs::read_to_string(entry.path()).expect("the attack's source is readable");
            files.push((
                entry.file_name().to_string_lossy().into_owned(),
                self.substitute(&text, p),
            ));
        }
        files
    }

    /// The course's exercises as stubs again, then `files` over them, all
    /// with a fresh time (so that cargo rebuilds the crate).
    fn install(&self, files: &[(String, String)]) {
        let src = self.course.join("exercises/src");
        for entry in fs::read_dir(&src)
            .expect("exercises/src is readable")
            .flatten()
        {
            let _ = fs::remove_file(entry.path());
        }
        for (relative, (bytes, _)) in &self.pristine {
            if relative.parent() == Some(Path::new("exercises/src")) {
                fs::write(self.course.join(relative), bytes).expect("writes a stub");
            }
        }
        for (name, text) in files {
            fs::write(src.join(name), text).expect("writes an attack's file");
        }
    }

    /// Runs `cargo ARGS` in the scratch course, as a learner or instructor would.
    fn cargo(&self, args: &[&str], env: &[(&str, &str)], limit: Duration) -> Ran {
        let rss = self.root.join(format!("peak-{}", std::process::id()));
        let _ = fs::remove_file(&rss);
        let mut command = Command::new(&self.me);
        command
            .arg("--measure")
            .arg(&rss)
            .arg(&self.course)
            .arg("--")
            .arg(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(args)
            .current_dir(&self.root)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .env("GRADER_REDIS", "process")
            .env("CARGO_TERM_COLOR", "never");
        for var in [
            "CARGO_TARGET_DIR",
            "CARGO_BUILD_TARGET_DIR",
            "CARGO_MANIFEST_DIR",
            "CARGO_MANIFEST_PATH",
            "CARGO_PRIMARY_PACKAGE",
            "CARGO_CRATE_NAME",
            "CARGO_BIN_NAME",
            "CARGO_TARGET_TMPDIR",
            "REDIS_URL",
            "GRADER_NODES",
            "GRADER_KEY_PREFIX",
            "GRADER_RESULTS_FILE",
            "GRADER_HARNESS_CHECK",
            "GRADER_HARNESS_VERDICT_FD",
            SELECT_VAR,
        ] {
            command.env_remove(var);
        }
        command.envs(env.iter().copied());
        let started = Instant::now();
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                return Ran {
                    code: Some(127),
                    stdout: String::new(),
                    stderr: format!("cannot run cargo: {e}"),
                    took: Duration::ZERO,
                    peak_mib: None,
                };
            }
        };
        let group = child.id() as i32;
        let (tx, rx) = mpsc::channel();
        for (is_err, source) in [
            (
                false,
                child
                    .stdout
                    .take()
                    .map(|s| Box::new(s) as Box<dyn Read + Send>),
            ),
            (
                true,
                child
                    .stderr
                    .take()
                    .map(|s| Box::new(s) as Box<dyn Read + Send>),
            ),
        ] {
            let tx = tx.clone();
            thread::spawn(move || {
                let mut bytes = Vec::new();
                if let Some(source) = source {
                    let _ = source.take(64 << 20).read_to_end(&mut bytes);
                }
                let _ = tx.send((is_err, String::from_utf8_lossy(&bytes).into_owned()));
            });
        }
        drop(tx);
        let code = loop {
            match child.try_wait() {
                Ok(Some(status)) => {
                    break Some(
                        status
                            .code()
                            .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
                    );
                }
                Ok(None) if started.elapsed() < limit => thread::sleep(Duration::from_millis(50)),
                _ => {
                    // The group of the wrapper this driver started.
                    if let Some(group) = Pid::from_raw(group) {
                        let _ = rustix::process::kill_process_group(group, Signal::KILL);
                    }
                    let _ = child.wait();
                    break None;
                }
            }
        };
        let took = started.elapsed();
        let (mut stdout, mut stderr) = (String::new(), String::new());
        // What the run left behind may hold its pipes: wait a little, not forever.
        let deadline = Instant::now() + Duration::from_secs(15);
        for _ in 0..2 {
            match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok((true, text)) => stderr = text,
                Ok((false, text)) => stdout = text,
                Err(_) => {
                    stderr.push_str("\n[attacks: the run's pipes stayed open after it ended]\n");
                    break;
                }
            }
        }
        let peak_mib = fs::read_to_string(&rss)
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .map(|k| k / 1024);
        self.peak_mib
            .set(self.peak_mib.get().max(peak_mib.unwrap_or(0)));
        Ran {
            code,
            stdout,
            stderr,
            took,
            peak_mib,
        }
    }

    /// The driver's own check: with the reference `token.rs` in place, both
    /// learner entry points must report the token checks passed, so that an
    /// attack that "held" did so because the grader refused it, not because
    /// the driver cannot read a pass.
    fn control(&self) -> Result<(), String> {
        let token = self
            .exercises
            .iter()
            .find(|(stub, _)| stub.ends_with("token.rs"))
            .ok_or("exercise-table lists no token.rs")?;
        let text = fs::read_to_string(self.course.join(&token.1)).map_err(|e| e.to_string())?;
        self.install(&[("token.rs".to_string(), text)]);
        let out = self.root.join("out/control");
        let _ = fs::remove_dir_all(&out);
        let tested = self.cargo_test(&[TOKEN.0], "");
        let graded = self.grade(&[TOKEN.0], &out, "");
        self.install(&[]);
        let passes = |f: &Findings| f.iter().any(|f| f.contains(&format!("{} checks", TOKEN.1)));
        if passes(&tested) && passes(&graded) {
            println!(
                "(control: the reference token.rs passes {0}/{0} token checks in both entry points)",
                TOKEN.1
            );
            Ok(())
        } else {
            Err(format!(
                "with the reference token.rs: {tested:?} {graded:?}"
            ))
        }
    }

    /// Installs the attack and grades it as a learner: `cargo test -p
    /// exercises FILTERS`, then `cargo course grade --format json`.
    fn learner(&self, attack: &Attack, filters: &[&str]) -> Findings {
        let p = self.places(attack.name);
        self.install(&self.sources(attack.name, &p));
        let mut findings = self.cargo_test(filters, "");
        findings.extend(self.grade(filters, &p.out, ""));
        findings.extend(self.evidence(&p));
        findings
    }

    /// Whether the judge's own last summary says the run passed.
    fn judge_passes(&self, ran: &Ran) -> bool {
        ran.stdout
            .lines()
            .rev()
            .find(|l| l.starts_with("test result: "))
            .is_some_and(|l| l.starts_with("test result: ok."))
    }

    /// `cargo test -p exercises FILTERS`: no check may be reported ok, and the
    /// run must fail (the attacker's honest grade is 0 passes).
    fn cargo_test(&self, filters: &[&str], when: &str) -> Findings {
        // One filter as the README writes it; several after `--`, as cargo takes them.
        let mut args = vec!["test", "-p", "exercises"];
        if filters.len() > 1 {
            args.push("--");
        }
        args.extend(filters);
        let ran = self.cargo(&args, &[], LEARNER_LIMIT);
        let shown = format!("`cargo {}`{when}", args.join(" "));
        let mut findings = Vec::new();
        if ran.stderr.contains("Usage: cargo") {
            findings.push(format!("the driver could not run {shown}:\n{}", ran.tail()));
        }
        let ok: Vec<&str> = ran
            .stdout
            .lines()
            .filter(|l| l.starts_with("test ") && l.ends_with(" ... ok"))
            .collect();
        // Given a filter, cargo also runs the learner's own library as a unit-test binary
        // (`test = false` notwithstanding), whose code may print anything before `main`: those
        // lines are the learner's own, told to the learner alone. The grade is the judge's: its
        // last summary and cargo's exit status. An "ok" line counts when the run passed too.
        if !ok.is_empty() && (ran.code == Some(0) || self.judge_passes(&ran)) {
            findings.push(format!(
                "{shown} reported {} checks ok: {}",
                ok.len(),
                ok.join("; ")
            ));
        }
        // The last summary is the grade's (cargo may run an empty lib target first).
        let summary = ran
            .stdout
            .lines()
            .rev()
            .find(|l| l.starts_with("test result: "));
        if let Some(line) = summary.filter(|l| l.starts_with("test result: ok.")) {
            findings.push(format!("{shown} ended with {line:?}"));
        }
        if ran.code == Some(0) {
            findings.push(format!("{shown} exited with 0"));
        }
        if ran.code.is_none() {
            findings.push(format!(
                "{shown} did not end within {} s",
                LEARNER_LIMIT.as_secs()
            ));
        }
        if ran.stdout.contains("ATTACK-EVIDENCE") {
            findings.push(format!("{shown} showed the attack's evidence"));
        }
        findings
    }

    /// `cargo course grade --format json --out OUT FILTERS`: no pass, no point.
    fn grade(&self, filters: &[&str], out: &Path, when: &str) -> Findings {
        let out_arg = out.to_string_lossy().into_owned();
        let mut args = vec!["course", "grade", "--format", "json", "--out", &out_arg];
        args.extend(filters);
        let ran = self.cargo(&args, &[], LEARNER_LIMIT);
        let shown = format!(
            "`cargo course grade --format json {}`{when}",
            filters.join(" ")
        );
        let mut findings = Vec::new();
        let text = fs::read_to_string(out.join("course-results.json")).unwrap_or_default();
        if let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) {
            let passed: Vec<String> = json["checks"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|c| c["status"] == "pass")
                .map(|c| c["name"].as_str().unwrap_or("?").to_string())
                .collect();
            if !passed.is_empty() {
                findings.push(format!(
                    "{shown}: {} checks pass ({}), score {} of {}",
                    passed.len(),
                    passed.join(", "),
                    json["score"],
                    json["max_score"]
                ));
            }
            if text.contains("ATTACK-EVIDENCE") {
                let line = text
                    .lines()
                    .find(|l| l.contains("ATTACK-EVIDENCE"))
                    .unwrap_or("");
                findings.push(format!(
                    "{shown}: the attack's evidence is in the results: {}",
                    line.trim()
                ));
            }
        }
        if ran.code == Some(0) {
            findings.push(format!("{shown} exited with 0"));
        }
        if ran.code.is_none() {
            findings.push(format!(
                "{shown} did not end within {} s",
                LEARNER_LIMIT.as_secs()
            ));
        }
        findings
    }

    /// What the attack left in its drop folder.
    fn evidence(&self, p: &Places) -> Findings {
        let mut findings = Vec::new();
        let mut written: Vec<(PathBuf, String)> = Vec::new();
        let mut stack = vec![p.drop.clone()];
        while let Some(dir) = stack.pop() {
            for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                let text = fs::read_to_string(&path).unwrap_or_else(|_| "(not text)".into());
                written.push((path, text));
            }
        }
        let reached = self.listener.take();
        if let Some(first) = reached.first() {
            findings.push(format!(
                "learner code reached the network: {} connections to the driver's listener on \
                 127.0.0.1:{}, the first sent {first}",
                reached.len(),
                self.listener.port
            ));
        }
        if let Some((first, text)) = written.first() {
            let short: String = text
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(300)
                .collect();
            findings.push(format!(
                "learner code wrote {} files outside the submission (in {}), e.g. {}: {}",
                written.len(),
                p.drop.strip_prefix(&self.root).unwrap_or(&p.drop).display(),
                first
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                short.trim()
            ));
        }
        findings
    }

    /// The submissions' folder for a batch: `victim` (the reference
    /// solutions) and each attacker, `(folder, attack's source folder)`.
    fn submissions(&self, p: &Places, attackers: &[(&str, &str)]) {
        for (stub, solution) in &self.exercises {
            let to = p.submissions.join("victim").join(stub);
            fs::create_dir_all(to.parent().expect("a stub has a folder"))
                .expect("creates the victim's folder");
            fs::copy(self.course.join(solution), &to).expect("copies a reference solution");
        }
        for (folder, dir) in attackers {
            let src = p.submissions.join(folder).join("exercises/src");
            fs::create_dir_all(&src).expect("creates the attacker's folder");
            if dir.is_empty() {
                // An honest classmate who has not started: the stubs.
                continue;
            }
            for (name, text) in self.sources(dir, p) {
                fs::write(src.join(name), text).expect("writes an attacker's file");
            }
            // Extra files of the submission, as they are, with the places filled in.
            let files = self.attacks.join(dir).join("files");
            let mut stack = vec![PathBuf::new()];
            while let Some(rel) = stack.pop() {
                for entry in fs::read_dir(files.join(&rel))
                    .into_iter()
                    .flatten()
                    .flatten()
                {
                    let rel = rel.join(entry.file_name());
                    if entry.path().is_dir() {
                        stack.push(rel);
                        continue;
                    }
                    let to = p.submissions.join(folder).join(&rel);
                    fs::create_dir_all(to.parent().expect("a parent")).expect("creates a folder");
                    let text = fs::read_to_string(entry.path()).expect("an extra file is text");
                    fs::write(&to, self.substitute(&text, p)).expect("writes an extra file");
                    if rel.extension().is_some_and(|x| x == "sh") {
                        let _ = fs::set_permissions(&to, fs::Permissions::from_mode(0o755));
                    }
                }
            }
        }
    }

    /// `cargo course batch` on the prepared folder, two submissions at a time.
    fn batch(&self, p: &Places, filter: &str, env: &[(&str, &str)]) -> (Ran, Csv) {
        self.batch_on(p, &[filter], env, 2)
    }

    /// `cargo course batch --jobs JOBS` on the prepared folder.
    fn batch_on(
        &self,
        p: &Places,
        filters: &[&str],
        env: &[(&str, &str)],
        jobs: usize,
    ) -> (Ran, Csv) {
        // The scratch course's own stubs: a batch grades with the pristine course.
        self.install(&[]);
        let dir = p.submissions.to_string_lossy().into_owned();
        let limit = BATCH_TIME_LIMIT_SECS.to_string();
        let jobs = jobs.to_string();
        let mut args = vec![
            "course",
            "batch",
            &dir,
            "--jobs",
            &jobs,
            "--time-limit",
            &limit,
        ];
        args.extend(filters);
        let ran = self.cargo(&args, env, BATCH_LIMIT);
        let csv = Csv::read(&p.results.join("results.csv"));
        (ran, csv)
    }

    /// What a batch must show: it ended well, the victim passed every one of
    /// its `expected` checks, and no attacker (any other student) passed one.
    fn judge_batch(&self, ran: &Ran, csv: &Csv, expected: usize) -> Findings {
        let mut findings = Vec::new();
        if ran.code != Some(0) {
            findings.push(format!(
                "`cargo course batch` failed ({}):\n{}",
                ran.describe(),
                ran.tail()
            ));
        }
        let victim = csv.rows_of("victim");
        let passed = victim.iter().filter(|r| r.status == "pass").count();
        if passed < expected {
            let lost: Vec<String> = victim
                .iter()
                .filter(|r| r.status != "pass")
                .map(|r| format!("{} ({})", r.check, r.outcome))
                .collect();
            findings.push(format!(
                "the victim (the reference solutions) passed {passed} of its {expected} checks{}",
                if lost.is_empty() {
                    " (no results.csv rows)".to_string()
                } else {
                    format!("; lost: {}", lost.join(", "))
                }
            ));
        }
        for (student, rows) in &csv.students {
            if student == "victim" {
                continue;
            }
            let ok: Vec<&str> = rows
                .iter()
                .filter(|r| r.status == "pass")
                .map(|r| r.check.as_str())
                .collect();
            if !ok.is_empty() {
                findings.push(format!(
                    "the attacker {student:?} passed {} checks: {}",
                    ok.len(),
                    ok.join(", ")
                ));
            }
        }
        findings
    }

    /// A batch attack: a victim and `attackers`, graded on `checks`.
    fn batch_attack(
        &self,
        attack: &Attack,
        checks: (&str, usize),
        attackers: &[(&str, &str)],
        env: &[(&str, &str)],
    ) -> Findings {
        let p = self.places(attack.name);
        self.submissions(&p, attackers);
        let (ran, csv) = self.batch(&p, checks.0, env);
        let mut findings = self.judge_batch(&ran, &csv, checks.1);
        findings.extend(self.evidence(&p));
        findings
    }

    /// After each attack: its processes gone, the course as it was.
    fn aftermath(&self) -> Findings {
        let mut findings = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(3);
        let mut alive = self.leftovers();
        while !alive.is_empty() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(100));
            alive = self.leftovers();
        }
        if !alive.is_empty() {
            let shown: Vec<String> = alive
                .iter()
                .map(|(pid, what)| format!("{pid} {what}"))
                .collect();
            findings.push(format!(
                "{} processes of the attack were alive after the grade ended: {}",
                alive.len(),
                shown.join("; ")
            ));
            for _ in 0..20 {
                for (pid, _) in self.leftovers() {
                    // A process of the scratch course, or one an attack named atk-….
                    if let Some(pid) = Pid::from_raw(pid) {
                        let _ = rustix::process::kill_process(pid, Signal::KILL);
                    }
                }
                if self.leftovers().is_empty() {
                    break;
                }
                thread::sleep(Duration::from_millis(100));
            }
        }
        // The course's tracked files (the exercises' sources are the attacks').
        for relative in self.pristine.keys() {
            if relative.starts_with("exercises/src") {
                continue;
            }
            let now = fs::read(self.course.join(relative)).ok();
            if now.as_deref() != self.pristine.get(relative).map(|(b, _)| &b[..]) {
                findings.push(format!("the course's {} was changed", relative.display()));
                let _ = self.restore(relative);
            }
        }
        let mut stack = vec![PathBuf::new()];
        while let Some(rel) = stack.pop() {
            for entry in fs::read_dir(self.course.join(&rel))
                .into_iter()
                .flatten()
                .flatten()
            {
                let rel = rel.join(entry.file_name());
                if rel == Path::new("target") || rel == Path::new(".git") {
                    continue;
                }
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(rel);
                } else if !self.pristine.contains_key(&rel) && !rel.starts_with("exercises/src") {
                    findings.push(format!("a file appeared in the course: {}", rel.display()));
                    let _ = fs::remove_file(self.course.join(&rel));
                }
            }
        }
        let binary = self.course.join(COURSE_BINARY);
        if fs::read(&binary).ok().as_deref() != Some(&self.course_binary[..]) {
            findings.push(format!(
                "the course's built program {} was changed",
                binary.display()
            ));
            let _ = fs::remove_file(&binary);
            let restored = fs::write(&binary, &self.course_binary)
                .and_then(|()| fs::set_permissions(&binary, fs::Permissions::from_mode(0o755)));
            if let Err(e) = restored {
                findings.push(format!("(and the driver could not put it back: {e})"));
            }
        }
        findings
    }

    /// Processes an attack may have left: named `atk-…`, or running a program
    /// of the scratch course, or in it.
    fn leftovers(&self) -> Vec<(i32, String)> {
        let me = std::process::id() as i32;
        let mut found = Vec::new();
        for entry in fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<i32>().ok())
            else {
                continue;
            };
            if pid == me {
                continue;
            }
            let comm = fs::read_to_string(format!("/proc/{pid}/comm"))
                .unwrap_or_default()
                .trim()
                .to_string();
            let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            if stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
            {
                continue;
            }
            let exe = fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
            let cwd = fs::read_link(format!("/proc/{pid}/cwd")).unwrap_or_default();
            if comm.starts_with("atk-")
                || exe.starts_with(&self.course)
                || cwd.starts_with(&self.course)
            {
                found.push((pid, format!("{comm} ({})", exe.display())));
            }
        }
        found
    }
}

/// One row of `results.csv`, by the header's names.
struct Row {
    check: String,
    status: String,
    outcome: String,
}

/// `results.csv`, by student.
#[derive(Default)]
struct Csv {
    students: BTreeMap<String, Vec<Row>>,
    text: String,
}

impl Csv {
    fn read(path: &Path) -> Csv {
        let Ok(text) = fs::read_to_string(path) else {
            return Csv::default();
        };
        let records = parse_csv(&text);
        let mut csv = Csv {
            text,
            ..Csv::default()
        };
        let Some(header) = records.first() else {
            return csv;
        };
        let col = |name: &str| header.iter().position(|h| h == name);
        let (Some(s), Some(c), Some(st), Some(o)) =
            (col("student"), col("check"), col("status"), col("outcome"))
        else {
            return csv;
        };
        for record in &records[1..] {
            let field = |i: usize| record.get(i).cloned().unwrap_or_default();
            csv.students.entry(field(s)).or_default().push(Row {
                check: field(c),
                status: field(st),
                outcome: field(o),
            });
        }
        csv
    }

    fn rows_of(&self, student: &str) -> &[Row] {
        self.students.get(student).map_or(&[], Vec::as_slice)
    }
}

/// RFC 4180: fields separated by commas, quoted with doubled quotes inside.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let (mut record, mut field, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\n') => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, '\r') => {}
            (false, c) => field.push(c),
        }
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push(record);
    }
    records
}

/// Attack 3: a grade in which later checks meet the replaced binary, then the
/// next unedited grade and test run.
fn replace_binary(lab: &Lab, attack: &Attack) -> Findings {
    let p = lab.places(attack.name);
    lab.install(&lab.sources(attack.name, &p));
    let filters = [TOKEN.0, ACQUIRE.0];
    let mut findings = lab.grade(&filters, &p.out, "");
    let _ = fs::remove_dir_all(&p.out);
    findings.extend(lab.grade(&filters, &p.out, " (the next run, nothing edited)"));
    findings.extend(lab.cargo_test(&filters, " (the next run, nothing edited)"));
    findings.extend(lab.evidence(&p));
    findings
}

/// Attack 4: the results file must be as the grade wrote it, seconds later.
fn linger(lab: &Lab, attack: &Attack) -> Findings {
    let p = lab.places(attack.name);
    lab.install(&lab.sources(attack.name, &p));
    let mut findings = lab.cargo_test(&[TOKEN.0], "");
    findings.extend(lab.grade(&[TOKEN.0], &p.out, ""));
    let results = p.out.join("course-results.json");
    let written = fs::read(&results).unwrap_or_default();
    thread::sleep(Duration::from_secs(5));
    if fs::read(&results).unwrap_or_default() != written {
        findings.push(format!(
            "{} was changed after `cargo course grade` ended",
            results.display()
        ));
    }
    findings.extend(lab.evidence(&p));
    findings
}

/// Attack 7: a bomb beside a victim; the batch must end in time, within the
/// memory bound, with the victim whole.
fn build_bomb(lab: &Lab, attack: &Attack, dir: &str) -> Findings {
    let p = lab.places(attack.name);
    lab.submissions(&p, &[("mallory", dir)]);
    let (ran, csv) = lab.batch(&p, TOKEN.0, &[]);
    let mut findings = lab.judge_batch(&ran, &csv, TOKEN.1);
    if let Some(peak) = ran.peak_mib.filter(|&m| m > MEMORY_BOUND_MIB) {
        findings.push(format!(
            "a process of the batch grew to {peak} MiB (bound: {MEMORY_BOUND_MIB} MiB)"
        ));
    }
    findings.extend(lab.evidence(&p));
    findings
}

/// Attack 8: results.csv and summary.html as the batch wrote them, seconds later.
fn rewrite_results(lab: &Lab, attack: &Attack) -> Findings {
    let p = lab.places(attack.name);
    lab.submissions(&p, &[("mallory", attack.name)]);
    let (ran, csv) = lab.batch(&p, TOKEN.0, &[]);
    let mut findings = lab.judge_batch(&ran, &csv, TOKEN.1);
    let files = [
        p.results.join("results.csv"),
        p.results.join("summary.html"),
    ];
    let written: Vec<Vec<u8>> = files
        .iter()
        .map(|f| fs::read(f).unwrap_or_default())
        .collect();
    thread::sleep(Duration::from_secs(5));
    for (file, before) in files.iter().zip(&written) {
        if &fs::read(file).unwrap_or_default() != before {
            findings.push(format!(
                "{} was changed after the batch ended",
                file.display()
            ));
        }
    }
    findings.extend(lab.evidence(&p));
    findings
}

/// Attack 8: a 3 GiB sparse file; no process of the batch may grow past the bound.
fn sparse_file(lab: &Lab, attack: &Attack) -> Findings {
    let p = lab.places(attack.name);
    lab.submissions(&p, &[("mallory", attack.name)]);
    let huge = p.submissions.join("mallory/notes/huge.bin");
    fs::create_dir_all(huge.parent().expect("a parent")).expect("creates notes/");
    fs::File::create(&huge)
        .and_then(|f| f.set_len(3 << 30))
        .expect("creates a sparse file");
    let (ran, csv) = lab.batch(&p, TOKEN.0, &[]);
    let _ = fs::remove_file(&huge);
    let mut findings = lab.judge_batch(&ran, &csv, TOKEN.1);
    if let Some(peak) = ran.peak_mib.filter(|&m| m > MEMORY_BOUND_MIB) {
        findings.push(format!(
            "a process of the batch grew to {peak} MiB (bound: {MEMORY_BOUND_MIB} MiB)"
        ));
    }
    findings.extend(lab.evidence(&p));
    findings
}

/// Attack 8: names on the instructor's console must be escaped.
fn escape_names(lab: &Lab, attack: &Attack) -> Findings {
    let p = lab.places(attack.name);
    // U+2215 looks like a slash on a console, but is none in a file name.
    let folder = "mallory\x1b[2K\rvictim: 0\u{2215}6 points, 0\u{2215}2 checks passed (0.1 s)\nFORGED: mallory is the only one who passed";
    lab.submissions(&p, &[(folder, attack.name)]);
    let weird = p
        .submissions
        .join(folder)
        .join("notes/\x1b[31mFORGED\nx.txt");
    fs::create_dir_all(weird.parent().expect("a parent")).expect("creates notes/");
    fs::write(&weird, "a file whose name forges a line\n").expect("writes the oddly named file");
    // Shown as "victim_passed_txt.exe" where bidirectional text is honoured.
    let reversed = p
        .submissions
        .join(folder)
        .join("notes/victim_passed_\u{202E}exe.txt");
    fs::write(&reversed, "a file whose name reads backwards\n").expect("writes the reversed name");
    let (ran, csv) = lab.batch(&p, TOKEN.0, &[]);
    let mut findings = lab.judge_batch(&ran, &csv, TOKEN.1);
    let console = &ran.stderr;
    if console.contains('\x1b') {
        findings
            .push("the batch's console output holds a terminal escape (0x1b) from a name".into());
    }
    if console.contains(BIDI) {
        findings.push(
            "the batch's console output holds a bidirectional control (U+202A-202E, U+2066-2069) \
             from a name"
                .into(),
        );
    }
    let forged: Vec<&str> = console
        .lines()
        .filter(|l| l.starts_with("FORGED") || l.contains('\r'))
        .collect();
    if !forged.is_empty() {
        findings.push(format!(
            "a name forged lines on the instructor's console: {forged:?}"
        ));
    }
    let victims = console.lines().filter(|l| l.starts_with("victim:")).count();
    if victims != 1 {
        findings.push(format!(
            "{victims} console lines begin with \"victim:\", not one"
        ));
    }
    findings.extend(lab.evidence(&p));
    findings
}

/// Attack 9: a secret of the instructor's environment must reach no file.
fn env_leak(lab: &Lab, attack: &Attack) -> Findings {
    let p = lab.places(attack.name);
    lab.submissions(&p, &[("mallory", attack.name)]);
    let secret = format!(
        "canary-{}-{}",
        std::process::id(),
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    let (ran, csv) = lab.batch(&p, TOKEN.0, &[("ATTACK_CANARY_SECRET", &secret)]);
    let mut findings = lab.judge_batch(&ran, &csv, TOKEN.1);
    if csv.text.contains(&secret) {
        findings.push("the instructor's secret is in results.csv".into());
    }
    let html = fs::read_to_string(p.results.join("summary.html")).unwrap_or_default();
    if html.contains(&secret) {
        findings.push("the instructor's secret is in summary.html".into());
    }
    findings.extend(lab.evidence(&p).into_iter().map(|f| {
        if f.contains(&secret) {
            format!("{f} [holds the instructor's secret]")
        } else {
            f
        }
    }));
    findings
}

/// The judges' private folders in this machine's temporary folder (where a
/// check's process puts its runner's socket), by name.
fn judge_folders() -> std::collections::BTreeSet<PathBuf> {
    fs::read_dir(std::env::temp_dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("grader-judge-"))
        .map(|e| e.path())
        .collect()
}

/// The attack's files (named `atk-…`) under `dir`, links not followed:
/// removed, and counted with their total size. Nothing else is touched: other
/// programs on this machine may have folders of theirs there.
fn remove_attack_files(dir: &Path) -> (usize, u64) {
    let (mut count, mut bytes) = (0, 0);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(entry.path()),
                Ok(t) if t.is_file() && entry.file_name().to_string_lossy().starts_with("atk-") => {
                    count += 1;
                    bytes += entry.metadata().map_or(0, |m| m.len());
                    let _ = fs::remove_file(entry.path());
                }
                _ => {}
            }
        }
    }
    (count, bytes)
}

/// Attack 10: what a sandbox wrote must not be left on the machine's disk.
fn fill_disk(lab: &Lab, attack: &Attack) -> Findings {
    let p = lab.places(attack.name);
    lab.submissions(&p, &[("mallory", attack.name)]);
    let before = judge_folders();
    let (ran, csv) = lab.batch(&p, "acquire::takes_a_free_lock", &[]);
    let mut findings = lab.judge_batch(&ran, &csv, 1);
    let left: Vec<PathBuf> = judge_folders().difference(&before).cloned().collect();
    let (mut count, mut bytes) = (0, 0);
    for folder in &left {
        let (c, b) = remove_attack_files(folder);
        count += c;
        bytes += b;
    }
    if count > 0 {
        findings.push(format!(
            "the batch left {count} files ({} MiB) written in a sandbox on the machine's disk, in {}",
            bytes >> 20,
            std::env::temp_dir().display()
        ));
    }
    findings.extend(lab.evidence(&p));
    findings
}

/// Attack 10: the attacker is graded right after the victim, on the same worker.
fn borrow_classmate(lab: &Lab, attack: &Attack) -> Findings {
    let p = lab.places(attack.name);
    // `victim` sorts before `wanda`: with one worker, the victim's build comes first.
    lab.submissions(&p, &[("wanda", attack.name)]);
    let (ran, csv) = lab.batch_on(&p, &[TOKEN.0], &[], 1);
    let mut findings = lab.judge_batch(&ran, &csv, TOKEN.1);
    findings.extend(lab.evidence(&p));
    findings
}

/// Attack 10: no rule in the attacker's words may reach the summary.
fn forged_rule(lab: &Lab, attack: &Attack) -> Findings {
    let p = lab.places(attack.name);
    lab.submissions(&p, &[("mallory", attack.name)]);
    let release = "release::releases_its_own_lock";
    let (ran, csv) = lab.batch_on(&p, &[TOKEN.0, release], &[], 2);
    let mut findings = lab.judge_batch(&ran, &csv, TOKEN.1 + 1);
    let html = fs::read_to_string(p.results.join("summary.html")).unwrap_or_default();
    let forged = "forged by this student";
    if html.contains(forged) {
        let shown = html
            .lines()
            .find(|l| l.contains(forged))
            .unwrap_or_default()
            .chars()
            .take(240)
            .collect::<String>();
        findings.push(format!(
            "summary.html shows a rule in the attacker's words among the rules the class broke: {shown}"
        ));
    }
    findings.extend(lab.evidence(&p));
    findings
}
