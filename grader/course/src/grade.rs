//! One way to grade the learner's crate and get the results back as data.
//!
//! [`run`] does what `cargo test -p exercises` does, in two steps it can tell
//! apart: cargo builds the `grade` test and the learner's runner (a
//! compile error stops here and comes back as [`Results::CompileError`], with
//! cargo's text), then the judge (this program) runs every check in a process
//! of its own, each calling the learner's functions in that runner. The results
//! do not come from what the binary prints, which the learner's code can
//! imitate, but from the file its harness writes with this run's nonce
//! ([`grader::harness::results`]). A check that did not run has no passing
//! outcome there, so nothing built on [`Results`] can claim a pass for it.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Duration;

use super::error::CourseError;
use super::process;
use super::results::Results;
use super::{Format, GradeArgs, format};
use grader::checks;
use grader::harness::results::{RESULTS_FILE_VAR, ResultsFile};
use grader::harness::{Arguments, Outcome, groups};
use grader::isolation::{Isolation, Limit, Limits, Spec, Toolchain};

/// How to grade.
#[derive(Clone, Debug)]
pub struct Options {
    /// The workspace whose `exercises` crate is graded.
    pub workspace: PathBuf,
    /// Cargo's target directory; cargo's own choice when `None`.
    pub target_dir: Option<PathBuf>,
    /// Only the checks whose name contains one of these (all when empty).
    pub filters: Vec<String>,
    /// Ask cargo for colours in its messages (for a terminal).
    pub color: bool,
    /// Pass `--locked` to cargo: the workspace's Cargo.lock must not change.
    pub locked: bool,
    /// Pass `--offline` to cargo: every dependency is already on this machine.
    pub offline: bool,
    /// More environment for the build and the run (e.g. `GRADER_KEY_PREFIX`).
    pub env: Vec<(String, String)>,
    /// The real time the build and the run may take together.
    pub time_limit: Option<Duration>,
    /// The sandbox the build runs in, if any (a batch's builds always do;
    /// the learner's own builds run as the learner).
    pub isolation: Option<Isolation>,
    /// The judge that runs the checks on the built runner: this program
    /// itself by default (`cargo course` is the judge); a test of the grader
    /// names the `course` binary.
    pub judge: PathBuf,
}

impl Options {
    /// Grades `workspace` with cargo's defaults and no time limit.
    pub fn new(workspace: impl Into<PathBuf>) -> Options {
        Options {
            workspace: workspace.into(),
            target_dir: None,
            filters: Vec::new(),
            color: false,
            locked: false,
            offline: false,
            env: Vec::new(),
            time_limit: None,
            judge: this_program(),
            isolation: None,
        }
    }

    /// Grades the workspace this command was built from.
    pub fn this_course() -> Options {
        Options::new(course_root())
    }
}

/// This program's binary, the judge when it is `cargo course`.
pub fn this_program() -> PathBuf {
    std::env::current_exe().unwrap_or_else(|_| PathBuf::from("course"))
}

/// The root of the workspace this program was built in (this crate is
/// `grader/course` in it).
pub fn course_root() -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    crate_dir
        .ancestors()
        .nth(2)
        .unwrap_or(crate_dir)
        .to_path_buf()
}

/// How long the first build of the learner's crate takes once `cargo course`
/// itself is built, as measured on two cores (83 s at a load of 10): a screen
/// waiting on it says so.
pub const FIRST_BUILD: &str = "about 80 s";

/// Builds the exercises' test binary and runs it: every selected check's
/// outcome, or the compile error.
pub fn run(options: &Options) -> Result<Results, CourseError> {
    run_noting_build(options, || {})
}

/// [`run`], calling `built` when the build is over and the checks begin (not
/// when it failed): a screen that waits can tell a long build from the grading.
pub fn run_noting_build(options: &Options, built: impl FnOnce()) -> Result<Results, CourseError> {
    let started = std::time::Instant::now();
    let left = |limit: Option<Duration>| limit.map(|l| l.saturating_sub(started.elapsed()));
    let exe = match compile(options, options.time_limit)? {
        Built::Binary(exe) => exe,
        Built::CompileError(output) => {
            return Ok(Results::CompileError {
                output,
                not_run: selected(&options.filters),
            });
        }
    };
    built();
    let nonce = nonce()?;
    let results_path = std::env::temp_dir().join(format!(
        "course-results-{}-{}.json",
        std::process::id(),
        &nonce[..8]
    ));
    // The judge runs the checks; the runner just built holds the learner's code.
    let mut command = Command::new(&options.judge);
    command
        .args(&options.filters)
        .current_dir(options.workspace.join("exercises"))
        .envs(options.env.iter().map(|(k, v)| (k, v)))
        .env(RESULTS_FILE_VAR, &results_path)
        .env(grader::remote::RUNNER_VAR, &exe);
    let ran = process::run(
        &mut command,
        format!("{nonce}\n").as_bytes(),
        left(options.time_limit),
    )
    .map_err(|source| CourseError::System {
        what: "could not run the exercises' test binary",
        source,
    })?;
    let read = ResultsFile::read(&results_path, &nonce);
    let _ = std::fs::remove_file(&results_path);
    if ran.status.is_none() {
        return Err(CourseError::TimedOut {
            secs: options.time_limit.map_or(0, |l| l.as_secs()),
        });
    }
    match read {
        Ok(file) => Ok(Results::Graded {
            checks: file.checks,
        }),
        Err(problem) => Err(CourseError::NoResults {
            problem,
            output: format!("{}{}", ran.stderr, ran.stdout),
        }),
    }
}

/// The checks `filters` select, as the harness selects them.
pub fn selected(filters: &[String]) -> Vec<String> {
    let args = Arguments {
        filters: filters.to_vec(),
        ..Arguments::default()
    };
    checks::CHECKS
        .iter()
        .map(|c| c.name)
        .filter(|name| args.selects(name))
        .map(str::to_string)
        .collect()
}

/// What the build step gave.
enum Built {
    /// The path of the learner's runner, built for the `grade` test.
    Binary(PathBuf),
    /// Cargo's text, when the build failed.
    CompileError(String),
}

/// Builds the learner's runner: its path, or (`Err`) cargo's text when the
/// exercises did not compile.
pub fn build(options: &Options) -> Result<Result<PathBuf, String>, CourseError> {
    match compile(options, options.time_limit)? {
        Built::Binary(runner) => Ok(Ok(runner)),
        Built::CompileError(output) => Ok(Err(output)),
    }
}

/// `cargo build -p exercises --bin runner`, reading the binary's path from
/// cargo's JSON messages (the diagnostics stay as cargo renders them). The
/// runner is what `cargo test -p exercises` builds for its `grade` test too,
/// with the same profile, so the two share it; the test binary itself, which
/// only starts the judge, is not needed here.
fn compile(options: &Options, limit: Option<Duration>) -> Result<Built, CourseError> {
    let mut args: Vec<String> = ["build", "-p", "exercises", "--bin", "runner"]
        .map(String::from)
        .to_vec();
    args.push("--message-format=json-render-diagnostics".into());
    args.push(
        if options.color {
            "--color=always"
        } else {
            "--color=never"
        }
        .into(),
    );
    if options.locked {
        args.push("--locked".into());
    }
    if options.offline {
        args.push("--offline".into());
    }
    let (stdout, stderr) = match &options.isolation {
        Some(isolation) => match sandboxed_cargo(isolation, options, &args, limit)? {
            Ok(printed) => printed,
            Err(failed) => return Ok(Built::CompileError(failed)),
        },
        None => {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
            let mut command = Command::new(&cargo);
            command
                .args(&args)
                .arg("--manifest-path")
                .arg(options.workspace.join("Cargo.toml"))
                .envs(options.env.iter().map(|(k, v)| (k, v)));
            if let Some(dir) = &options.target_dir {
                command.env("CARGO_TARGET_DIR", dir);
            }
            let ran =
                process::run(&mut command, b"", limit).map_err(|source| CourseError::Cargo {
                    cargo: cargo.clone(),
                    source,
                })?;
            let Some(status) = ran.status else {
                return Err(CourseError::TimedOut {
                    secs: limit.map_or(0, |l| l.as_secs()),
                });
            };
            if !status.success() {
                return Ok(Built::CompileError(ran.stderr));
            }
            (ran.stdout, ran.stderr)
        }
    };
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        // The runner: the learner's code built into a program of its own.
        .filter(|m| {
            m["reason"] == "compiler-artifact"
                && m["target"]["name"] == "runner"
                && m["target"]["kind"]
                    .as_array()
                    .is_some_and(|k| k.iter().any(|k| k == "bin"))
        })
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .map(Built::Binary)
        .ok_or(CourseError::NoTestBinary { output: stderr })
}

/// Runs cargo with `args` in a sandbox ([`grader::isolation`]): the workspace
/// read-only, the target directory the only one it may write, the toolchain
/// and the registry read-only, no network, limits on memory, processes, file
/// size and time. Cargo's output, or (`Err`) what to show as the compile error.
///
/// Only cargo, rustc and the linker run there: a submission brings no build
/// script and no procedural macro (its manifest is the course's), so nothing
/// of the learner's runs at build time, and the target directory it shares
/// with later submissions holds only what rustc made of the course's crates.
fn sandboxed_cargo(
    isolation: &Isolation,
    options: &Options,
    args: &[String],
    limit: Option<Duration>,
) -> Result<Result<(String, String), String>, CourseError> {
    let Some(target) = &options.target_dir else {
        return Err(CourseError::Usage(
            "a sandboxed build needs a target directory of its own".to_string(),
        ));
    };
    std::fs::create_dir_all(target).map_err(|source| CourseError::File {
        what: "could not create",
        path: target.clone(),
        source,
    })?;
    let sandbox_problem = |e: &dyn std::fmt::Display| {
        CourseError::Usage(format!("the build's sandbox could not be made: {e}"))
    };
    let toolchain = Toolchain::detect(&options.workspace).map_err(|e| sandbox_problem(&e))?;
    let mut limits = Limits::build();
    if let Some(limit) = limit {
        limits.wall_time = limit.min(limits.wall_time);
    }
    let mut spec = Spec::new(toolchain.cargo(), target)
        .args(args)
        .arg("--manifest-path")
        .arg(options.workspace.join("Cargo.toml"))
        .ro(&options.workspace)
        .toolchain(&toolchain)
        .env("CARGO_TARGET_DIR", target)
        .cwd(&options.workspace)
        .limits(limits.clone());
    for (k, v) in &options.env {
        spec = spec.env(k, v);
    }
    let outcome = isolation.run(&spec).map_err(|e| sandbox_problem(&e))?;
    if outcome.hit(Limit::WallTime) {
        return Err(CourseError::TimedOut {
            secs: limits.wall_time.as_secs(),
        });
    }
    if !outcome.success() {
        let mut shown = outcome.stderr.to_string();
        if !outcome.limits_hit.is_empty() {
            shown.push_str(&format!(
                "\nThe build was stopped: it {} (its sandbox's limits are {} MiB of memory, {} \
                 processes, {} s).\n",
                outcome.describe(),
                limits.memory / (1024 * 1024),
                limits.processes,
                limits.wall_time.as_secs()
            ));
        }
        return Ok(Err(shown));
    }
    Ok(Ok((outcome.stdout.to_string(), outcome.stderr.to_string())))
}

/// 128 random bits, as hex.
fn nonce() -> Result<String, CourseError> {
    grader::random::hex::<16>().map_err(|e| CourseError::System {
        what: "no random nonce for the results file",
        source: std::io::Error::other(e.to_string()),
    })
}

/// A line per check (one per exercise not started), then the message of each
/// other check that did not pass, where to go next, and the points: what
/// `cargo course grade` prints on standard error.
pub fn summary(results: &Results) -> String {
    let rows = format::rows(results);
    let mut out = String::new();
    if let Results::CompileError { output, .. } = results {
        out.push_str(output);
        out.push_str("\nThe exercises did not compile: no check ran.\n");
    }
    let outcomes: Vec<(&str, &Outcome)> = results
        .checks()
        .iter()
        .map(|c| (c.name.as_str(), &c.outcome))
        .collect();
    let untouched: Vec<&str> = groups::by_exercise(&outcomes, |(name, _)| name)
        .into_iter()
        .filter(|(_, checks)| groups::untouched(checks.iter().map(|(_, o)| *o)))
        .map(|(exercise, _)| exercise)
        .collect();
    let collapsed = |row: &format::Row| untouched.contains(&row.exercise.as_str());
    for (exercise, of_exercise) in groups::by_exercise(&rows, |r| &r.name) {
        if untouched.contains(&exercise) {
            out.push_str(&format!(
                "{:>7}  {}\n",
                "",
                groups::untouched_line(exercise, of_exercise.len())
            ));
            continue;
        }
        for row in of_exercise {
            let mark = match row.status {
                format::Status::Pass => "ok",
                format::Status::Fail => "FAILED",
                format::Status::Error => "NOT RUN",
            };
            out.push_str(&format!("{mark:>7}  {}\n", row.name));
        }
    }
    for row in rows
        .iter()
        .filter(|r| r.status != format::Status::Pass && !collapsed(r))
    {
        if matches!(results, Results::Graded { .. }) {
            out.push_str(&format!(
                "\n---- {} ----\n{}\n",
                row.name,
                row.message.trim_end()
            ));
        }
    }
    if let Some(step) = groups::next_step(&outcomes) {
        out.push_str(&format!("\n{step}\n"));
    }
    out.push_str(&format!(
        "\n{} of {} checks passed: {} of {} points\n",
        rows.iter()
            .filter(|r| r.status == format::Status::Pass)
            .count(),
        rows.len(),
        rows.iter().map(|r| r.points).sum::<u32>(),
        rows.iter().map(|r| r.max_points).sum::<u32>()
    ));
    out
}

/// `cargo course grade`: grades this course's exercises and writes the
/// results in the format asked for, and exits as [`exit_code`] says.
pub fn command(args: &GradeArgs) -> Result<ExitCode, CourseError> {
    let mut options = Options::this_course();
    options.filters = args.filters.clone();
    let results = run(&options)?;
    // For the person or the CI log: a line per check, and what failed.
    eprint!("{}", summary(&results));
    let places = format::Places::read(&options.workspace);
    let rendered = format::render(args.format, &results, &places);
    let text = rendered.text;
    match &args.out {
        None => print!("{text}"),
        Some(dir) => {
            let path = dir.join(rendered.file_name);
            std::fs::create_dir_all(dir)
                .and_then(|()| std::fs::write(&path, text))
                .map_err(|source| CourseError::File {
                    what: "could not write",
                    path: path.clone(),
                    source,
                })?;
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(if exit_code(args.format, &results) == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// How `cargo course grade` exits once the results are written: 0 when
/// every check passed and 1 otherwise, so that a CI job turns red; but
/// always 0 for Exercism, whose runner interface asks for 0 whenever the
/// runner ran, whatever the tests' status, and reads that status from
/// `results.json` alone. (Grading that could not run at all, with no
/// results written, exits 2 in every format.)
pub fn exit_code(format: Format, results: &Results) -> u8 {
    match format {
        Format::Exercism => 0,
        _ if results.all_passed() => 0,
        _ => 1,
    }
}
