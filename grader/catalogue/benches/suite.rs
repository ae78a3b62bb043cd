//! How long grading takes, as a table: `cargo bench -p lock-catalogue --bench suite`.
//!
//! - the whole scenario suite (every check on the reference lock, every
//!   timeline of the book), including starting Redis, once per way of getting
//!   Redis (target: under 10 s each);
//! - every check on the reference lock through the harness of
//!   `cargo test -p exercises`, a process per check (the `grade-lock`
//!   binary), Redis start included (target: under 5 s);
//! - the 40 s-pause scenario alone (target: under 100 ms);
//! - the token checks on the reference token (target: under 50 ms) and on
//!   a megabyte token (under 1 s);
//! - each explorer: seeds played per second and Redis commands per second
//!   (every command the server processed, the grader's own included), beside
//!   a raw loopback PING round trip measured in the same run (`-- --explorers`
//!   alone);
//! - regrading after editing one exercise file: in a scratch copy of the
//!   workspace with the reference solutions in place (built once, untimed),
//!   one line of `exercises/src/release.rs` changes, and
//!   `cargo test -p exercises release::` runs until its verdict, rebuild
//!   and Redis start included (target: at most 5 s; `-- --regrade` alone);
//! - with `-- --cold-build` after it, the cold build of `cargo test -p exercises` in a
//!   fresh target directory, which is what a learner waits for first
//!   (target: under 2.5 min; takes minutes to measure).
//!
//! Each suite runs in a child process (this same binary, with `--suite`), so
//! that Redis is started from scratch and its start-up counts.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use grader::checks::CHECKS;
use grader::reference::LOCK as REFERENCE;
use grader::{run, scenario, server};
use lock_catalogue::demos;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--suite") {
        std::process::exit(match suite() {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("{e}");
                1
            }
        });
    }
    println!("| measure | how | wall time | target |");
    println!("|---|---|---|---|");
    if args.iter().any(|a| a == "--regrade") {
        regrade_row();
        return;
    }
    if args.iter().any(|a| a == "--explorers") {
        explorer_rows();
        return;
    }
    for path in ["process", "container", "url"] {
        if path == "url" && std::env::var_os("REDIS_URL").is_none() {
            println!(
                "| scenario suite, Redis start included | url | (REDIS_URL not set) | < 10 s |"
            );
            continue;
        }
        let started = Instant::now();
        let child = Command::new(&args[0])
            .arg("--suite")
            .env("GRADER_REDIS", path)
            .output();
        let took = started.elapsed();
        let cell = match child {
            Ok(out) if out.status.success() => secs(took),
            Ok(out) => format!(
                "failed: {}",
                first_line(&String::from_utf8_lossy(&out.stderr))
            ),
            Err(e) => format!("failed: {e}"),
        };
        println!("| scenario suite, Redis start included | {path} | {cell} | < 10 s |");
    }
    println!(
        "| every check through the harness, a process each, Redis start included | process | {} | < 5 s |",
        through_the_harness()
    );
    match long_pause() {
        Ok((median, max)) => println!(
            "| 40 s pause over a 30 s TTL, one run | median of 20 ({}) | {} (max {}) | < 100 ms |",
            server_kind(),
            millis(median),
            millis(max)
        ),
        Err(e) => println!("| 40 s pause over a 30 s TTL, one run | | failed: {e} | < 100 ms |"),
    }
    token_checks();
    explorer_rows();
    regrade_row();
    if args.iter().any(|a| a == "--cold-build") {
        println!(
            "| cold build of `cargo test -p exercises` | fresh target dir | {} | < 150 s |",
            cold_build()
        );
    }
}

/// The suite itself, run in the child.
fn suite() -> Result<(), String> {
    server::shared().map_err(|e| e.to_string())?;
    for check in CHECKS {
        let verdict = check
            .run(&REFERENCE)
            .map_err(|e| format!("{}: {e}", check.name))?;
        if verdict != grader::Verdict::Pass {
            return Err(format!("{} did not pass on the reference lock", check.name));
        }
    }
    for demo in demos::all() {
        demo.timeline().map_err(|e| format!("{}: {e}", demo.name))?;
    }
    Ok(())
}

fn long_pause() -> Result<(Duration, Duration), String> {
    let scenario = scenario::named("long-pause").ok_or("no long-pause scenario")?;
    run::run(&scenario, &REFERENCE).map_err(|e| e.to_string())?;
    let mut times: Vec<Duration> = (0..20)
        .map(|_| {
            let started = Instant::now();
            run::run(&scenario, &REFERENCE)
                .map(|_| started.elapsed())
                .map_err(|e| e.to_string())
        })
        .collect::<Result<_, _>>()?;
    times.sort();
    Ok((times[times.len() / 2], times[times.len() - 1]))
}

/// The token checks on the reference token and on a megabyte token: no
/// Redis involved, only drawing and counting (median of 20 runs each).
fn token_checks() {
    let mega = lock_catalogue::wrong::ALL
        .iter()
        .find(|w| w.lock.name == "megabyte token")
        .map(|w| w.lock);
    for (lock, target) in [(Some(REFERENCE), "< 50 ms"), (mega, "< 1 s")] {
        let Some(lock) = lock else { continue };
        for name in ["token::unique", "token::unguessable"] {
            let Some(check) = grader::checks::named(name) else {
                continue;
            };
            let mut times: Vec<Duration> = (0..20)
                .map(|_| {
                    let started = Instant::now();
                    let _ = check.run(&lock);
                    started.elapsed()
                })
                .collect();
            times.sort();
            println!(
                "| `{name}`, {} | median of 20 | {} (max {}) | {target} |",
                lock.name,
                millis(times[times.len() / 2]),
                millis(times[times.len() - 1])
            );
        }
    }
}

/// `cargo test -p exercises` with the reference lock, less cargo's own start:
/// the harness's binary, run as the learner's test binary is.
fn through_the_harness() -> String {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_grade-lock"))
        .arg("--quiet")
        .env("GRADER_LOCK", "reference")
        .env("GRADER_REDIS", "process")
        .output();
    let took = started.elapsed();
    match out {
        Ok(out) if out.status.success() => secs(took),
        Ok(out) => format!(
            "failed: {}",
            first_line(&String::from_utf8_lossy(&out.stdout))
        ),
        Err(e) => format!("failed: {e}"),
    }
}

/// Seeds per explorer in the explorers' figures.
const EXPLORED: u64 = 200;

/// What one explorer's seeds took.
struct Explored {
    check: &'static str,
    seconds: f64,
    commands: u64,
}

/// The server's count of commands processed so far.
fn commands_processed(con: &mut redis::Connection) -> Result<u64, String> {
    let info: String = redis::cmd("INFO")
        .arg("stats")
        .query(con)
        .map_err(|e| e.to_string())?;
    info.lines()
        .find_map(|l| l.strip_prefix("total_commands_processed:"))
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| "no total_commands_processed in INFO".to_string())
}

/// Plays [`EXPLORED`] seeds of every explorer on the reference, one after the other, one thread:
/// each explorer's time and the commands the single server processed for it (Redlock's nodes
/// are servers of their own, so its count stays 0).
fn explorers(con: &mut redis::Connection) -> Result<Vec<Explored>, String> {
    use grader::explore::{self, Subject};
    let mut out = Vec::new();
    for (check, exercise) in [
        ("acquire::explored", Some(Subject::Acquire)),
        ("release::explored", Some(Subject::Release)),
        ("extend::explored", Some(Subject::Extend)),
        ("keeper::explored", Some(Subject::Keeper)),
        ("fencing::explored", Some(Subject::Fencing)),
        ("storage::explored", Some(Subject::Storage)),
        ("redlock::explored", None),
    ] {
        let seeds = explore::seed_list(check, EXPLORED);
        let before = commands_processed(con)?;
        let started = Instant::now();
        let verdict = match exercise {
            Some(exercise) => explore::explore(check, &REFERENCE, exercise, &seeds),
            None => grader::checks::redlock_explored::explore(check, &REFERENCE, &seeds)
                .map(|(verdict, _)| verdict),
        }
        .map_err(|e| e.to_string())?;
        let seconds = started.elapsed().as_secs_f64();
        if verdict != grader::Verdict::Pass {
            return Err(format!("{check} did not pass on the reference lock"));
        }
        out.push(Explored {
            check,
            seconds,
            commands: commands_processed(con)? - before,
        });
    }
    Ok(out)
}

/// Prints a row per explorer (seeds a second; a keeper's seed is five leases, a Redlock's four
/// rounds), their total, and a raw loopback round trip on the same server.
fn explorer_rows() {
    let kind = server_kind();
    let measured = server::shared()
        .map_err(|e| e.to_string())
        .and_then(|server| server.connect().map_err(|e| e.to_string()))
        .and_then(|mut con| {
            let pings = 2000;
            let started = Instant::now();
            for _ in 0..pings {
                redis::cmd("PING")
                    .query::<String>(&mut con)
                    .map_err(|e| e.to_string())?;
            }
            let ping = started.elapsed() / pings;
            Ok((explorers(&mut con)?, ping))
        });
    let (rows, ping) = match measured {
        Ok(measured) => measured,
        Err(e) => {
            println!("| explorers | | failed: {e} | |");
            return;
        }
    };
    for row in &rows {
        println!(
            "| explorer `{}`, {EXPLORED} seeds of the reference, one thread | {kind} | {:.1} s: {:.0} seeds/s, {:.0} Redis commands/s | |",
            row.check,
            row.seconds,
            EXPLORED as f64 / row.seconds,
            row.commands as f64 / row.seconds
        );
    }
    let seconds: f64 = rows.iter().map(|r| r.seconds).sum();
    println!("| every explorer, {EXPLORED} seeds each | {kind} | {seconds:.1} s | |");
    println!(
        "| raw loopback round trip (PING), same server | {kind} | {:.0} µs ({:.0} round trips/s) | |",
        ping.as_secs_f64() * 1e6,
        1.0 / ping.as_secs_f64()
    );
}

fn server_kind() -> String {
    server::shared()
        .map(|s| s.kind().to_string())
        .unwrap_or_else(|e| e.to_string())
}

fn cold_build() -> String {
    let Ok(target) = std::env::temp_dir()
        .join(format!("cold-build-{}", std::process::id()))
        .canonicalize()
        .or_else(|_| {
            let dir = std::env::temp_dir().join(format!("cold-build-{}", std::process::id()));
            std::fs::create_dir_all(&dir).map(|_| dir)
        })
    else {
        return "failed: no temporary directory".into();
    };
    let started = Instant::now();
    let status = Command::new(env!("CARGO"))
        .args(["test", "-p", "exercises", "--no-run", "--quiet"])
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status();
    let took = started.elapsed();
    let _ = std::fs::remove_dir_all(&target);
    match status {
        Ok(s) if s.success() => secs(took),
        Ok(s) => format!("failed: {s}"),
        Err(e) => format!("failed: {e}"),
    }
}

/// Prints the regrade figure's row.
fn regrade_row() {
    match regrade() {
        Ok((warm_up, took)) => println!(
            "| regrade after editing one exercise file: `cargo test -p exercises {EDITED}::` | warm build (first build {}) | {} | < 5 s |",
            secs(warm_up),
            secs(took)
        ),
        Err(e) => println!("| regrade after editing one exercise file | | failed: {e} | < 5 s |"),
    }
}

/// The exercise whose file the regrade figure edits.
const EDITED: &str = "release";

/// Regrades after an edit: a scratch copy of the workspace, kept between
/// runs under the target directory, gets the tracked files (only those that
/// changed, so that a second run finds its build warm) and the reference
/// solutions in the stubs' place; one grading builds it (the warm-up, timed
/// apart); then a line of one exercise file changes and the grading of that
/// exercise is timed until its verdict. Returns both times.
///
/// `-- --regrade` measures this alone.
fn regrade() -> Result<(Duration, Duration), String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    // The build of the learner's path (`.ci/learner-path`): the solutions in
    // the stubs' place, kept apart from the stubs' build for the same reason.
    let build = target.join("learner-path");
    let src = target.join("regrade");
    let listed = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(&root)
        .output()
        .map_err(|e| format!("git ls-files: {e}"))?;
    for path in String::from_utf8_lossy(&listed.stdout).split('\0') {
        if !path.is_empty() {
            copy_if_changed(&root.join(path), &src.join(path))?;
        }
    }
    for e in grader::exercise::EXERCISES {
        copy_if_changed(&root.join(e.solution()), &src.join(e.stub()))?;
    }
    let grade = || -> Result<Duration, String> {
        let started = Instant::now();
        let out = Command::new(env!("CARGO"))
            .args(["test", "--quiet", "--locked", "-p", "exercises"])
            .arg(format!("{EDITED}::"))
            .env("CARGO_TARGET_DIR", &build)
            .env("GRADER_REDIS", "process")
            .current_dir(&src)
            .output()
            .map_err(|e| format!("cargo test: {e}"))?;
        let took = started.elapsed();
        if out.status.success() {
            Ok(took)
        } else {
            Err(first_line(&String::from_utf8_lossy(&out.stderr)))
        }
    };
    let warm_up = grade()?;
    let file = src.join(format!("exercises/src/{EDITED}.rs"));
    let original =
        std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let edited = format!("{original}\n// An edit, as a learner makes one.\n");
    std::fs::write(&file, edited).map_err(|e| format!("{}: {e}", file.display()))?;
    let took = grade();
    std::fs::write(&file, original).map_err(|e| format!("{}: {e}", file.display()))?;
    Ok((warm_up, took?))
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

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn millis(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn first_line(s: &str) -> String {
    s.lines()
        .last()
        .unwrap_or_default()
        .chars()
        .take(160)
        .collect()
}
