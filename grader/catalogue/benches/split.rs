//! What splitting the grader into a judge and a runner costs and saves, as one
//! markdown table: `cargo bench -p lock-catalogue --bench split [-- --cold-build]`.
//!
//! The "before the split" column holds constants ([`BEFORE`]): figures from
//! the issue, measured on the previous layout (one test binary holding the
//! learner's code and the whole grader). They are not measured here. The
//! "now" column is measured in this run, through the documented entry points
//! only (cargo commands, the built binaries, `grader`'s public exports), in
//! scratch copies of the workspace (its `git ls-files`, as `.ci/learner-path`
//! makes one) under `<target>/split/`, built in a target directory of their
//! own, `<target>/split/build`, never in the workspace's. Redis is a local
//! `redis-server` (`GRADER_REDIS=process`, unless set otherwise).
//!
//! Rows, in the order printed:
//!
//! 1. **Load average** (`/proc/loadavg`) at the start, and again at the end:
//!    the machine may be shared, and every figure below is wall time.
//! 2. **The learner's first build** (only with `-- --cold-build`: it takes
//!    minutes). In a copy with the stubs, the target directory emptied first,
//!    `cargo test -p exercises --no-run` (which builds the runner: redis,
//!    lock-runner, exercises and what they need), then
//!    `cargo build --profile judge -p grader --bin judge` in the same target directory (the
//!    judge, which the learner's first `cargo test -p exercises` builds next,
//!    through the runner). Packages are counted from cargo's
//!    `--message-format=json`: the distinct package ids of the
//!    `compiler-artifact` messages that were not fresh.
//! 3. **What a save rebuilds.** In a copy with the reference solutions in the
//!    stubs' place (built once, untimed: `cargo test -p exercises --no-run`
//!    and one `cargo test -p exercises release::`, which builds the judge):
//!    the size of the runner (`exercises/runner/main.rs`, relinked on every save),
//!    and whether the judge's binary `<build>/judge/judge` was relinked by the
//!    saves of row 4 (its modification time before and after).
//! 4. **Save → verdict for one exercise.** A line appended to
//!    `exercises/src/release.rs` (a comment, different each time), then
//!    `cargo test -p exercises release::` timed until it exits with its
//!    verdict: median of [`SAVES`]. Then where that time goes, median of 3
//!    each after another such edit: the rebuild (`cargo test -p exercises
//!    --no-run`), the judge's no-op build that the runner asks cargo for
//!    (`cargo build --profile judge -p grader --bin judge`), and the judge alone running the
//!    exercise's checks (`judge release::` with `GRADER_RUNNER` naming the
//!    runner, as the runner starts it).
//! 5. **The whole `cargo test -p exercises`** in the same copy, already built:
//!    median of [`WHOLE_RUNS`]. Beside it, every check through the `grade-lock`
//!    binary on the reference lock, in-process and with
//!    `GRADER_LOCK_IN=runner` (the same checks; `grade-lock` is built in the
//!    bench profile, the copy's `cargo test` in the dev profile), median of
//!    [`WHOLE_RUNS`] each.
//! 6. **Redis commands per second through the proxy**, against raw loopback
//!    round trips to the same server, in the same run. This bench starts one
//!    Redis (`grader::server::shared`) and hands its URL to `grade-lock`
//!    (`GRADER_REDIS=url`, as the harness hands it to its checks). The raw
//!    figures are a `redis::Connection` sending PINGs, and GET/SET pairs, to
//!    that server. The lock figures come through the public path: `grade-lock`
//!    runs the [`HAMMERED`] checks one at a time, once with `GRADER_LOCK=hammers`
//!    (an `acquire` that sends GET and SET until the wire stops it at the
//!    command budget of 1000 per call) and once with the reference lock;
//!    the server's `INFO commandstats` is read before and after each run.
//!    The lock's commands are the GET and SET calls (the wire's own
//!    bookkeeping, two TIMEs and a PEXPIRETIME per timed key around each
//!    command, and the clock's script after one that changed an expiry, uses
//!    neither; the server's `total_commands_processed`, which counts them and
//!    the script's inner calls, is shown beside). Commands per second = (GET+SET of the
//!    hammers run − those of the reference run) / (time of the hammers run −
//!    time of the reference run), each a median of [`LOCK_RUNS`], so process
//!    starts, Redis set-up and the checks' own commands cancel out. That is
//!    done in-process (the lock on the wire itself) and with
//!    `GRADER_LOCK_IN=runner` (every command over the runner's Unix socket to
//!    the judge's proxy, then the wire). The failing check's report is in the
//!    hammers' time, so the figure errs low.
//!
//! A row that cannot be measured prints why, in its "now" cell, and the bench
//! goes on with the next. `-- --proxy` measures row 6 alone.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant, SystemTime};

use grader::checks::CHECKS;
use grader::exercise::EXERCISES;
use grader::server;

/// Figures from the issue, measured on the previous layout (before the split).
struct Before {
    /// Packages cargo compiled for the learner's first `cargo test -p exercises`.
    first_build_packages: usize,
    /// Size of the test binary relinked on every save, in MB.
    test_binary_mb: f64,
    /// The whole `cargo test -p exercises` with the reference solutions, in seconds.
    whole_run_s: f64,
    /// A batch of 30 submissions without a sandbox (`cargo course batch`), in seconds.
    batch_of_30_s: f64,
}

/// Measured on the previous layout, not here: see [`Before`].
const BEFORE: Before = Before {
    first_build_packages: 199,
    test_binary_mb: 168.0,
    whole_run_s: 6.8,
    batch_of_30_s: 174.5,
};

/// The exercise whose file the saves edit.
const EDITED: &str = "release";
/// Timed saves (row 4).
const SAVES: usize = 5;
/// Runs of the whole suite, and of each `grade-lock` variant (row 5).
const WHOLE_RUNS: usize = 3;
/// Runs of each lock in each mode (row 6).
const LOCK_RUNS: usize = 5;
/// Round trips of the raw figure (row 6).
const PINGS: u32 = 4000;
/// Checks in which the lock's `acquire` is called by one client: with
/// `hammers`, each sends up to the command budget (1000) and fails.
const HAMMERED: &[&str] = &[
    "acquire::takes_a_free_lock",
    "acquire::refuses_a_held_lock",
    "acquire::sets_the_ttl_in_milliseconds",
    "acquire::no_lock_without_ttl_after_a_crash",
    "acquire::a_crashed_holder_frees_the_lock",
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cold = args.iter().any(|a| a == "--cold-build");
    if std::env::var_os("GRADER_REDIS").is_none() {
        // SAFETY: no other thread runs yet, so nothing reads the environment meanwhile.
        #[allow(unsafe_code)]
        unsafe {
            std::env::set_var("GRADER_REDIS", "process")
        };
    }
    println!("| measure | before the split | now | target |");
    println!("|---|---|---|---|");
    row("load average at start (1, 5, 15 min)", "", &load(), "");
    if args.iter().any(|a| a == "--proxy") {
        proxy_rows();
        let _ = std::fs::remove_dir_all(runs_dir());
        row("load average at end (1, 5, 15 min)", "", &load(), "");
        return;
    }
    let paths = match Paths::new() {
        Ok(p) => p,
        Err(e) => {
            row("every row", "", &format!("failed: {e}"), "");
            return;
        }
    };
    if cold {
        first_build_rows(&paths);
    } else {
        row(
            "the learner's first build",
            &format!("{} packages", BEFORE.first_build_packages),
            "not measured: add `-- --cold-build` (minutes)",
            "",
        );
    }
    save_rows(&paths);
    whole_rows(&paths);
    proxy_rows();
    row(
        "a batch of 30 submissions (`cargo course batch`)",
        &format!("{:.1} s, without a sandbox", BEFORE.batch_of_30_s),
        "not measured by this bench",
        "",
    );
    let _ = std::fs::remove_dir_all(runs_dir());
    row("load average at end (1, 5, 15 min)", "", &load(), "");
    println!();
    println!(
        "\"Before the split\": figures from the issue, measured on the previous layout (one \
         test binary with the learner's code and the whole grader), not in this run. \"Now\": \
         wall time in this run, on {} cores; the load average above says how busy the machine \
         was. The lock's commands per second: (GET+SET calls of `GRADER_LOCK=hammers` − those \
         of the reference lock) / (time of the one run − time of the other), over the checks \
         {}, one at a time, Redis's `INFO commandstats` read around each run; process starts \
         and the checks' own commands cancel out, the failing checks' reports do not, so the \
         figure errs low. \"Server commands\" counts everything Redis processed meanwhile, the \
         wire's bookkeeping script and its inner calls included.",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        HAMMERED.join(", ")
    );
}

/// Prints one row of the table.
fn row(measure: &str, before: &str, now: &str, target: &str) {
    println!("| {measure} | {before} | {now} | {target} |");
}

/// The load average, as `/proc/loadavg` has it.
fn load() -> String {
    match std::fs::read_to_string("/proc/loadavg") {
        Ok(s) => s.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
        Err(e) => format!("unknown (/proc/loadavg: {e})"),
    }
}

/// Where the scratch copies and their build go.
struct Paths {
    /// The checkout this bench is built from.
    root: PathBuf,
    /// A copy with the stubs, for the learner's first build.
    stubs: PathBuf,
    /// A copy with the reference solutions in the stubs' place.
    solutions: PathBuf,
    /// The copies' target directory.
    build: PathBuf,
}

impl Paths {
    fn new() -> Result<Paths, String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let root = root
            .canonicalize()
            .map_err(|e| format!("{}: {e}", root.display()))?;
        let target = match std::env::var_os("CARGO_TARGET_DIR") {
            Some(dir) => std::path::absolute(PathBuf::from(dir))
                .map_err(|e| format!("CARGO_TARGET_DIR: {e}"))?,
            None => root.join("target"),
        };
        let split = target.join("split");
        Ok(Paths {
            root,
            stubs: split.join("stubs"),
            solutions: split.join("solutions"),
            build: split.join("build"),
        })
    }
}

// ------------------------------------------------------------------ copies

/// Copies the tracked files of the checkout to `to` (only those that
/// changed, so that a warm build stays warm) and, with `solutions`, the
/// reference solutions over the stubs.
fn copy_workspace(root: &Path, to: &Path, solutions: bool) -> Result<(), String> {
    let listed = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("git ls-files: {e}"))?;
    if !listed.status.success() {
        return Err(format!("git ls-files: {}", last_line(&listed.stderr)));
    }
    for path in String::from_utf8_lossy(&listed.stdout).split('\0') {
        if !path.is_empty() {
            copy_if_changed(&root.join(path), &to.join(path))?;
        }
    }
    if solutions {
        for e in EXERCISES {
            copy_if_changed(&root.join(e.solution()), &to.join(e.stub()))?;
        }
    }
    Ok(())
}

/// Copies `from` to `to` unless `to` already holds the same bytes, so that
/// its modification time, which cargo goes by, stays as it was.
fn copy_if_changed(from: &Path, to: &Path) -> Result<(), String> {
    let bytes = std::fs::read(from).map_err(|e| format!("{}: {e}", from.display()))?;
    if std::fs::read(to).ok().as_ref() == Some(&bytes) {
        return Ok(());
    }
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(to, bytes).map_err(|e| format!("{}: {e}", to.display()))
}

// ------------------------------------------------------------------ commands

/// `cargo ARGS` in the copy `dir`, building in `build`.
fn cargo(dir: &Path, build: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO"));
    command
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", build);
    command
}

/// Runs `command` to its end and says how long it took.
fn timed(command: &mut Command) -> Result<(Duration, Output), String> {
    let started = Instant::now();
    let out = command
        .output()
        .map_err(|e| format!("could not run {}: {e}", describe(command)))?;
    Ok((started.elapsed(), out))
}

/// Runs `command` and fails unless it exits with 0.
fn succeeds(command: &mut Command) -> Result<(Duration, Output), String> {
    let (took, out) = timed(command)?;
    if out.status.success() {
        Ok((took, out))
    } else {
        Err(format!(
            "`{}` failed ({}): {}",
            describe(command),
            out.status,
            why(&out)
        ))
    }
}

/// Runs a grading and fails unless every selected check passed; returns its time.
fn grades(command: &mut Command) -> Result<Duration, String> {
    let (took, out) = succeeds(command)?;
    match passed(&out.stdout) {
        Some(_) => Ok(took),
        None => Err(format!(
            "`{}` printed no passing summary line",
            describe(command)
        )),
    }
}

/// The number of passed checks on a `test result: ok. N passed; 0 failed` line.
fn passed(stdout: &[u8]) -> Option<usize> {
    String::from_utf8_lossy(stdout).lines().find_map(|l| {
        let rest = l.strip_prefix("test result: ok. ")?;
        let (n, rest) = rest.split_once(" passed; ")?;
        rest.starts_with("0 failed").then(|| n.parse().ok())?
    })
}

fn describe(command: &Command) -> String {
    let mut words = vec![command.get_program().to_string_lossy().into_owned()];
    words.extend(command.get_args().map(|a| a.to_string_lossy().into_owned()));
    words.join(" ")
}

/// The last line of stderr, or of stdout when stderr is empty: usually the reason.
fn why(out: &Output) -> String {
    let err = last_line(&out.stderr);
    if err.is_empty() {
        last_line(&out.stdout)
    } else {
        err
    }
}

fn last_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .replace('|', "/")
        .chars()
        .take(200)
        .collect()
}

/// The packages cargo compiled (not fresh), by package id, from its JSON messages.
fn compiled(stdout: &[u8]) -> BTreeSet<String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["fresh"] == false)
        .filter_map(|m| m["package_id"].as_str().map(str::to_string))
        .collect()
}

/// A package's name from its id (`registry+…#redis@1.8.0`, `path+file:///…/exercises#0.1.0`).
fn package_name(id: &str) -> String {
    match id.rsplit_once('#') {
        Some((_, spec)) if spec.contains('@') => spec.split('@').next().unwrap_or(spec).into(),
        Some((path, _)) => path.rsplit('/').next().unwrap_or(path).into(),
        None => id.into(),
    }
}

/// The executable of the `grade` test target, from cargo's JSON messages.
/// The executable cargo built for the target `name`, from its `--message-format=json` output.
fn executable(stdout: &[u8], name: &str) -> Result<PathBuf, String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == name)
        .and_then(|m| m["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| format!("cargo named no executable for the `{name}` target"))
}

fn modified(path: &Path) -> Result<SystemTime, String> {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .map_err(|e| format!("{}: {e}", path.display()))
}

fn megabytes(path: &Path) -> Result<f64, String> {
    std::fs::metadata(path)
        .map(|m| m.len() as f64 / 1e6)
        .map_err(|e| format!("{}: {e}", path.display()))
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

/// `median (min–max)` of a few runs.
fn spread(times: &[Duration]) -> String {
    let mut sorted = times.to_vec();
    sorted.sort();
    match (sorted.first(), sorted.last()) {
        (Some(min), Some(max)) => format!(
            "{} (median of {}; {:.2}–{:.2} s)",
            secs(median(sorted.clone())),
            sorted.len(),
            min.as_secs_f64(),
            max.as_secs_f64()
        ),
        _ => "no run".into(),
    }
}

// ------------------------------------------------------------------ row 2

struct FirstBuild {
    runner: BTreeSet<String>,
    runner_took: Duration,
    judge: BTreeSet<String>,
    judge_took: Duration,
}

/// The learner's first build, in an emptied target directory (the copies'
/// own, which the later rows then find warm).
fn first_build(paths: &Paths) -> Result<FirstBuild, String> {
    match std::fs::remove_dir_all(&paths.build) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("{}: {e}", paths.build.display())),
    }
    copy_workspace(&paths.root, &paths.stubs, false)?;
    let json = "--message-format=json";
    let (runner_took, out) = succeeds(&mut cargo(
        &paths.stubs,
        &paths.build,
        &["test", "--locked", "-p", "exercises", "--no-run", json],
    ))?;
    let runner = compiled(&out.stdout);
    let (judge_took, out) = succeeds(&mut cargo(
        &paths.stubs,
        &paths.build,
        &[
            "build",
            "--locked",
            "--profile",
            "judge",
            "-p",
            "grader",
            "--bin",
            "judge",
            json,
        ],
    ))?;
    let judge = compiled(&out.stdout);
    Ok(FirstBuild {
        runner,
        runner_took,
        judge,
        judge_took,
    })
}

fn first_build_rows(paths: &Paths) {
    eprintln!("split: the learner's first build, in an emptied target directory (minutes)…");
    let b = match first_build(paths) {
        Ok(b) => b,
        Err(e) => {
            row(
                "the learner's first build",
                &format!("{} packages", BEFORE.first_build_packages),
                &format!("failed: {e}"),
                "",
            );
            return;
        }
    };
    let names: BTreeSet<String> = b.runner.iter().map(|id| package_name(id)).collect();
    let grader_in_runner = names.contains("grader");
    let workspace: Vec<&str> = ["redis", "lock-runner", "exercises"]
        .into_iter()
        .filter(|n| names.contains(*n))
        .collect();
    row(
        "learner's first build, the runner: `cargo test -p exercises --no-run`, empty target dir",
        &format!(
            "{} packages (learner's code and grader in one test binary)",
            BEFORE.first_build_packages
        ),
        &format!(
            "{} packages in {} ({}; the grader {})",
            b.runner.len(),
            secs(b.runner_took),
            workspace.join(", "),
            if grader_in_runner {
                "among them"
            } else {
                "not among them"
            }
        ),
        "redis, lock-runner, exercises and their dependencies only",
    );
    let twice = b.judge.intersection(&b.runner).count();
    let twice_names: BTreeSet<String> = b
        .judge
        .iter()
        .map(|id| package_name(id))
        .filter(|n| names.contains(n))
        .collect();
    row(
        "then the judge: `cargo build -p grader --bin judge`, same target dir (the runner asks cargo for it on the first `cargo test`)",
        "(within the 199)",
        &format!(
            "{} packages in {} ({} package ids already built for the runner; compiled again under the same name: {})",
            b.judge.len(),
            secs(b.judge_took),
            twice,
            if twice_names.is_empty() {
                "none".to_string()
            } else {
                twice_names.into_iter().collect::<Vec<_>>().join(", ")
            }
        ),
        "",
    );
    let distinct = b.runner.union(&b.judge).count();
    row(
        "the learner's first wait in all (runner, then judge)",
        &format!("{} packages", BEFORE.first_build_packages),
        &format!(
            "{} compilations ({} distinct package ids) in {}",
            b.runner.len() + b.judge.len(),
            distinct,
            secs(b.runner_took + b.judge_took)
        ),
        "< 150 s (the suite's target for the first build)",
    );
}

// ------------------------------------------------------------------ rows 3 and 4

struct Saves {
    runner_mb: f64,
    judge_mb: f64,
    runner_relinked: usize,
    judge_relinked: bool,
    times: Vec<Duration>,
    rebuild: Vec<Duration>,
    judge_noop: Vec<Duration>,
    checks: Vec<Duration>,
}

/// `cargo test -p exercises release::` in the copy with the solutions.
fn grade_edited(paths: &Paths) -> Command {
    let filter = format!("{EDITED}::");
    cargo(
        &paths.solutions,
        &paths.build,
        &["test", "--locked", "--quiet", "-p", "exercises", &filter],
    )
}

fn saves(paths: &Paths) -> Result<Saves, String> {
    copy_workspace(&paths.root, &paths.solutions, true)?;
    eprintln!("split: building the copy with the reference solutions (untimed)…");
    let build_runner = [
        "test",
        "--locked",
        "-p",
        "exercises",
        "--no-run",
        "--message-format=json",
    ];
    let (_, out) = succeeds(&mut cargo(&paths.solutions, &paths.build, &build_runner))?;
    // The learner's functions as a program (the `runner` binary the `grade` test builds beside
    // it); the `grade` test itself only starts the judge.
    let runner = executable(&out.stdout, "runner")?;
    // The first grading builds the judge, through the runner.
    grades(&mut grade_edited(paths))?;
    let judge = paths.build.join("judge").join("judge");
    let judge_before = modified(&judge)?;

    let file = paths.solutions.join(format!("exercises/src/{EDITED}.rs"));
    let original =
        std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let edit = |n: usize| -> Result<(), String> {
        let edited = format!("{original}\n// Save {n}: an edit, as a learner makes one.\n");
        std::fs::write(&file, edited).map_err(|e| format!("{}: {e}", file.display()))
    };
    let measured = (|| -> Result<Saves, String> {
        eprintln!("split: {SAVES} saves of {EDITED}.rs, each graded…");
        let mut times = Vec::new();
        let mut runner_relinked = 0;
        for n in 0..SAVES {
            edit(n)?;
            let before = modified(&runner)?;
            times.push(grades(&mut grade_edited(paths))?);
            if modified(&runner)? != before {
                runner_relinked += 1;
            }
        }
        let judge_relinked = modified(&judge)? != judge_before;
        eprintln!("split: where a save's time goes…");
        let (mut rebuild, mut judge_noop, mut checks) = (Vec::new(), Vec::new(), Vec::new());
        for n in SAVES..SAVES + 3 {
            edit(n)?;
            let no_run = ["test", "--locked", "--quiet", "-p", "exercises", "--no-run"];
            rebuild.push(succeeds(&mut cargo(&paths.solutions, &paths.build, &no_run))?.0);
            let noop = [
                "build",
                "--locked",
                "--quiet",
                "--profile",
                "judge",
                "-p",
                "grader",
                "--bin",
                "judge",
            ];
            judge_noop.push(succeeds(&mut cargo(&paths.solutions, &paths.build, &noop))?.0);
            let mut alone = Command::new(&judge);
            alone
                .arg(format!("{EDITED}::"))
                .env(grader::remote::RUNNER_VAR, &runner)
                .current_dir(&paths.solutions);
            checks.push(grades(&mut alone)?);
        }
        Ok(Saves {
            runner_mb: megabytes(&runner)?,
            judge_mb: megabytes(&judge)?,
            runner_relinked,
            judge_relinked: judge_relinked || modified(&judge)? != judge_before,
            times,
            rebuild,
            judge_noop,
            checks,
        })
    })();
    std::fs::write(&file, &original).map_err(|e| format!("{}: {e}", file.display()))?;
    measured
}

fn save_rows(paths: &Paths) {
    let s = match saves(paths) {
        Ok(s) => s,
        Err(e) => {
            let failed = format!("failed: {e}");
            row(
                "what a save rebuilds: the `grade` test binary",
                &format!("{:.0} MB, relinked on every save", BEFORE.test_binary_mb),
                &failed,
                "",
            );
            row(
                &format!("save → verdict: `cargo test -p exercises {EDITED}::`"),
                "",
                &failed,
                "< 1.5 s",
            );
            return;
        }
    };
    row(
        "what a save rebuilds: the `grade` test binary (now the runner, `exercises/runner/main.rs`)",
        &format!("{:.0} MB, relinked on every save", BEFORE.test_binary_mb),
        &format!(
            "{:.1} MB, relinked on {} of {} saves",
            s.runner_mb, s.runner_relinked, SAVES
        ),
        "much smaller",
    );
    row(
        "the judge `target/judge/judge` relinked on a save",
        "(it was in the test binary)",
        &format!(
            "{} ({:.1} MB; modification time {} over the {} saves)",
            if s.judge_relinked { "yes" } else { "no" },
            s.judge_mb,
            if s.judge_relinked {
                "changed"
            } else {
                "unchanged"
            },
            SAVES + 3
        ),
        "no",
    );
    row(
        &format!(
            "save → verdict: one comment line added to `exercises/src/{EDITED}.rs`, then `cargo test -p exercises {EDITED}::`"
        ),
        "",
        &spread(&s.times),
        "< 1.5 s on a quiet machine",
    );
    row(
        "… of which: the rebuild (`cargo test -p exercises --no-run` after the edit)",
        "",
        &spread(&s.rebuild),
        "",
    );
    row(
        "… of which: the judge's no-op build the runner asks cargo for (`cargo build -p grader --bin judge`)",
        "",
        &spread(&s.judge_noop),
        "",
    );
    row(
        &format!(
            "… of which: the judge alone, running the checks (`judge {EDITED}::`, Redis start included)"
        ),
        "",
        &spread(&s.checks),
        "",
    );
}

// ------------------------------------------------------------------ row 5

/// Where `grade-lock`'s checks keep their runs: left to itself, a binary
/// outside `deps/` keeps them two folders up from its own, in the checkout.
fn runs_dir() -> PathBuf {
    std::env::temp_dir().join(format!("split-bench-runs-{}", std::process::id()))
}

struct Whole {
    cargo_test: Vec<Duration>,
    in_process: Vec<Duration>,
    in_runner: Vec<Duration>,
}

/// `grade-lock --quiet` on the reference lock, every check; in a runner or not.
fn grade_lock_all(in_runner: bool) -> Result<Duration, String> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_grade-lock"));
    command
        .arg("--quiet")
        .env("GRADER_LOCK", "reference")
        .env(grader::recording::RUNS_DIR_VAR, runs_dir());
    if in_runner {
        command.env("GRADER_LOCK_IN", "runner");
    } else {
        command.env_remove("GRADER_LOCK_IN");
    }
    let (took, out) = succeeds(&mut command)?;
    match passed(&out.stdout) {
        Some(n) if n == CHECKS.len() => Ok(took),
        other => Err(format!(
            "grade-lock passed {other:?} checks, not the {} there are",
            CHECKS.len()
        )),
    }
}

fn whole(paths: &Paths) -> Result<Whole, String> {
    eprintln!("split: the whole `cargo test -p exercises`, {WHOLE_RUNS} times…");
    let no_run = ["test", "--locked", "--quiet", "-p", "exercises", "--no-run"];
    succeeds(&mut cargo(&paths.solutions, &paths.build, &no_run))?;
    let mut cargo_test = Vec::new();
    for _ in 0..WHOLE_RUNS {
        let mut all = cargo(
            &paths.solutions,
            &paths.build,
            &["test", "--locked", "--quiet", "-p", "exercises"],
        );
        let (took, out) = succeeds(&mut all)?;
        match passed(&out.stdout) {
            Some(n) if n == CHECKS.len() => cargo_test.push(took),
            other => {
                return Err(format!(
                    "`cargo test -p exercises` passed {other:?} checks, not the {} there are",
                    CHECKS.len()
                ));
            }
        }
    }
    eprintln!("split: every check through grade-lock, in-process and in a runner…");
    let mut in_process = Vec::new();
    let mut in_runner = Vec::new();
    for _ in 0..WHOLE_RUNS {
        in_process.push(grade_lock_all(false)?);
        in_runner.push(grade_lock_all(true)?);
    }
    Ok(Whole {
        cargo_test,
        in_process,
        in_runner,
    })
}

fn whole_rows(paths: &Paths) {
    let before = format!("{:.1} s", BEFORE.whole_run_s);
    let target = format!("≤ {:.1} s", BEFORE.whole_run_s);
    let measure = format!(
        "the whole `cargo test -p exercises`, reference solutions, already built ({} checks)",
        CHECKS.len()
    );
    match whole(paths) {
        Ok(w) => {
            row(&measure, &before, &spread(&w.cargo_test), &target);
            row(
                "every check through `grade-lock` (bench profile), lock in the check's process",
                "",
                &spread(&w.in_process),
                "",
            );
            row(
                "every check through `grade-lock` (bench profile), `GRADER_LOCK_IN=runner`",
                "",
                &spread(&w.in_runner),
                "",
            );
        }
        Err(e) => row(&measure, &before, &format!("failed: {e}"), &target),
    }
}

// ------------------------------------------------------------------ row 6

/// The server's count of commands processed so far.
fn commands_processed(con: &mut redis::Connection) -> Result<u64, String> {
    let info: String = redis::cmd("INFO")
        .arg("stats")
        .query(con)
        .map_err(|e| format!("INFO stats: {e}"))?;
    info.lines()
        .find_map(|l| l.strip_prefix("total_commands_processed:"))
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| "no total_commands_processed in INFO stats".to_string())
}

/// The GET and SET calls the server has processed so far (scripts' inner calls included).
fn gets_and_sets(con: &mut redis::Connection) -> Result<u64, String> {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(con)
        .map_err(|e| format!("INFO commandstats: {e}"))?;
    let calls = |name: &str| -> u64 {
        info.lines()
            .find_map(|l| l.strip_prefix(&format!("cmdstat_{name}:calls=")))
            .and_then(|rest| rest.split(',').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    Ok(calls("get") + calls("set"))
}

/// What one run counted: its time, the lock's commands (GET+SET), all the server's commands.
type Counted = (Duration, u64, u64);

/// One `grade-lock` run of the [`HAMMERED`] checks against the server at
/// `url`: its time and the commands the server processed meanwhile.
fn hammered_run(
    con: &mut redis::Connection,
    url: &str,
    lock: &str,
    in_runner: bool,
) -> Result<Counted, String> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_grade-lock"));
    command
        .args(["--quiet", "--exact", "--test-threads", "1"])
        .args(HAMMERED)
        .env("GRADER_LOCK", lock)
        .env("GRADER_REDIS", "url")
        .env("REDIS_URL", url)
        .env(grader::recording::RUNS_DIR_VAR, runs_dir());
    if in_runner {
        command.env("GRADER_LOCK_IN", "runner");
    } else {
        command.env_remove("GRADER_LOCK_IN");
    }
    let before = (gets_and_sets(con)?, commands_processed(con)?);
    let (took, out) = timed(&mut command)?;
    let after = (gets_and_sets(con)?, commands_processed(con)?);
    let summary = String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|l| l.starts_with("test result: "))
        .map(str::to_string)
        .ok_or_else(|| format!("grade-lock ({lock}) printed no summary: {}", why(&out)))?;
    // The reference passes every check; hammers fails every one, at the budget.
    let expected = if lock == "reference" {
        format!("test result: ok. {} passed; 0 failed", HAMMERED.len())
    } else {
        format!("test result: FAILED. 0 passed; {} failed", HAMMERED.len())
    };
    if !summary.starts_with(&expected) {
        return Err(format!(
            "grade-lock ({lock}) said {summary:?}, not {expected:?}"
        ));
    }
    Ok((
        took,
        after.0.saturating_sub(before.0),
        after.1.saturating_sub(before.1),
    ))
}

struct Rate {
    /// The lock's commands (GET+SET) of hammers over the reference.
    commands: u64,
    /// Everything the server processed, hammers over the reference.
    server_commands: u64,
    took: Duration,
    per_s: f64,
}

/// Commands per second of `hammers` over the reference, in one mode.
fn lock_rate(con: &mut redis::Connection, url: &str, in_runner: bool) -> Result<Rate, String> {
    let (mut ref_t, mut ref_c, mut ham_t, mut ham_c) = (vec![], vec![], vec![], vec![]);
    let (mut ref_s, mut ham_s) = (vec![], vec![]);
    for _ in 0..LOCK_RUNS {
        let (t, c, s) = hammered_run(con, url, "reference", in_runner)?;
        ref_t.push(t);
        ref_c.push(c);
        ref_s.push(s);
        let (t, c, s) = hammered_run(con, url, "hammers", in_runner)?;
        ham_t.push(t);
        ham_c.push(c);
        ham_s.push(s);
    }
    let mid = |mut v: Vec<u64>| -> u64 {
        v.sort_unstable();
        v.get(v.len() / 2).copied().unwrap_or(0)
    };
    let commands = mid(ham_c).saturating_sub(mid(ref_c));
    let server_commands = mid(ham_s).saturating_sub(mid(ref_s));
    let took = median(ham_t).saturating_sub(median(ref_t));
    if took.is_zero() || commands == 0 {
        return Err(format!(
            "no difference to measure ({commands} commands in {})",
            secs(took)
        ));
    }
    Ok(Rate {
        commands,
        server_commands,
        took,
        per_s: commands as f64 / took.as_secs_f64(),
    })
}

/// Round trips per second of `PINGS` commands made by `make(i)` on `con`.
fn raw_rate(con: &mut redis::Connection, make: impl Fn(u32) -> redis::Cmd) -> Result<f64, String> {
    let started = Instant::now();
    for i in 0..PINGS {
        make(i)
            .query::<redis::Value>(con)
            .map_err(|e| e.to_string())?;
    }
    Ok(f64::from(PINGS) / started.elapsed().as_secs_f64())
}

fn proxy_rows() {
    eprintln!("split: Redis commands per second, raw and through the proxy…");
    #[allow(clippy::type_complexity)]
    let measured =
        (|| -> Result<(String, f64, f64, Result<Rate, String>, Result<Rate, String>), String> {
            let server = server::shared().map_err(|e| e.to_string())?;
            let mut con = server.connect().map_err(|e| e.to_string())?;
            let url = server.url().to_string();
            let key = format!("{}bench-split", grader::prefix::course());
            let ping = raw_rate(&mut con, |_| redis::cmd("PING"))?;
            let get_set = raw_rate(&mut con, |i| {
                if i % 2 == 0 {
                    let mut c = redis::cmd("GET");
                    c.arg(&key);
                    c
                } else {
                    let mut c = redis::cmd("SET");
                    c.arg(&key).arg("someone-else");
                    c
                }
            })?;
            let _: Result<i64, _> = redis::cmd("DEL").arg(&key).query(&mut con);
            let in_process = lock_rate(&mut con, &url, false);
            let in_runner = lock_rate(&mut con, &url, true);
            Ok((
                server.kind().to_string(),
                ping,
                get_set,
                in_process,
                in_runner,
            ))
        })();
    let (kind, ping, get_set, in_process, in_runner) = match measured {
        Ok(m) => m,
        Err(e) => {
            row(
                "Redis commands per second through the proxy",
                "",
                &format!("failed: {e}"),
                "≥ half the raw rate",
            );
            return;
        }
    };
    row(
        &format!("raw loopback round trips, a `redis::Connection` to the same server ({kind})"),
        "",
        &format!("{ping:.0} PINGs/s; {get_set:.0} GET/SET/s ({PINGS} each)"),
        "",
    );
    let cell = |rate: &Result<Rate, String>| match rate {
        Ok(r) => format!(
            "{:.0} lock commands/s, {:.0} % of raw GET/SET ({} GET/SET in {:.3} s; {} server commands meanwhile, {:.1} per lock command)",
            r.per_s,
            100.0 * r.per_s / get_set,
            r.commands,
            r.took.as_secs_f64(),
            r.server_commands,
            r.server_commands as f64 / r.commands as f64
        ),
        Err(e) => format!("failed: {e}"),
    };
    row(
        "`GRADER_LOCK=hammers` on the wire in the check's process (`grade-lock`)",
        "",
        &cell(&in_process),
        "",
    );
    let target = format!(
        "≥ {:.0} commands/s (half the raw GET/SET rate)",
        get_set / 2.0
    );
    row(
        "`GRADER_LOCK=hammers` in a runner, through the judge's proxy (`GRADER_LOCK_IN=runner`)",
        "",
        &cell(&in_runner),
        &target,
    );
    if let (Ok(a), Ok(b)) = (&in_process, &in_runner) {
        row(
            "… the proxy's own cost: the runner's rate over the in-process one",
            "",
            &format!(
                "{:.0} % ({:.0} µs more per command)",
                100.0 * b.per_s / a.per_s,
                1e6 * (1.0 / b.per_s - 1.0 / a.per_s)
            ),
            "",
        );
    }
}
