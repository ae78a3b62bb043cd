//! The test harness of `cargo test -p exercises`: a verdict for every check,
//! or a failure.
//!
//! Under Rust's own test harness, the code under test shares the process
//! that counts the results: a learner's `std::process::exit(0)` ends the run
//! with status 0 and no result at all, an abort or a panic in a `Drop` takes
//! every check down with it, and anything printed can pass for a result line.
//! So the learner's code is not in this program at all: `exercises/tests/grade.rs`
//! builds it into the runner (`grader/runner`), which hands over to the judge,
//! this program ([`judge`]). The judge runs itself again once per selected
//! check (`supervise`), several at a time; each of these processes runs its
//! one check (`child`), calling the learner's functions in a runner of its own
//! ([`crate::remote`]), and sends the verdict on a private channel. A check
//! that sends none fails, and its report says what happened to its process or
//! to its runner ([`crate::outcome`]). The results are printed in the checks' order,
//! in libtest's shape ([`summary`]), and the exit status is 0 only when every
//! selected check sent a passing verdict.
//!
//! The grader's own tests also play locks of its catalogue in the check's
//! process itself ([`main`] with such a lock, as the `grade-lock` binary
//! does): that code is the grader's, and the harness holds it just as well.
//!
//! The harness picks Redis once ([`server::shared`]) and hands it to every
//! check's process, so a run starts one server, which goes when the run ends.

pub mod arguments;
mod capture;
mod child;
pub mod groups;
pub mod private;
pub mod results;
pub mod summary;
pub(crate) mod supervise;

use std::io::{self, Write};
use std::num::NonZeroUsize;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

pub use crate::outcome::{Cause, End, Outcome};
pub use arguments::Arguments;
pub use capture::{Output, spelled_out};
pub use summary::Counts;
pub use supervise::{Finished, Limits};

use crate::checks::Check;
use crate::lock::Lock;
use crate::report::Verdict;
use crate::server;

/// The real time a check's process may take, unless
/// `GRADER_CHECK_TIME_LIMIT` says otherwise. A check calls the lock a few
/// times, each call cut off after [`crate::sandbox::CALL_LIMIT`] without a
/// command or after the command budget; a process still running after this is
/// stuck outside the grader's reach. The longest honest check sets it: Redlock's explorer,
/// whose rounds pause, kill and restart real nodes, took 52 s with container nodes on a quiet
/// machine, and more with the learner's code in a runner of its own.
pub const TIME_LIMIT: Duration = Duration::from_secs(180);

pub use crate::limits::MEMORY_LIMIT;

/// The environment variable that sets the time limit, in seconds.
pub const TIME_LIMIT_VAR: &str = "GRADER_CHECK_TIME_LIMIT";

/// The exit status of a run with a failed check, as libtest's.
const FAILED: i32 = 101;

/// The `main` of a test binary graded by the harness: runs the `checks`
/// (named `exercise::check`, in the order to report them) on `lock`, as the
/// command line asks, and exits with 0 only if every selected check passed.
///
/// In a process the harness started for one check, runs that check instead
/// and sends its verdict.
pub fn main(lock: &Lock, checks: &[&str]) -> ! {
    // Before anything else, in the harness and in each check's process alike.
    private::keep_out_of_reach();
    if let Some(check) = child::requested() {
        child::run(check, lock);
    }
    let code = match Arguments::parse(std::env::args().skip(1)) {
        Ok(args) => run(lock, checks, &args),
        Err(e) => {
            eprintln!("error: {e}\n\n{}", arguments::USAGE);
            FAILED
        }
    };
    // The shared server's folder, held in a static that `exit` does not drop.
    if let Ok(tag) = crate::folder::own_tag() {
        crate::folder::sweep_tagged(tag);
    }
    std::process::exit(code)
}

/// The `main` of the judge when the learner's runner started it
/// (`cargo test -p exercises`): every check of the course, on the learner's
/// lock, whose code runs in the runner that [`crate::remote::RUNNER_VAR`] names.
pub fn judge() -> ! {
    let names: Vec<&str> = crate::checks::CHECKS.iter().map(|c| c.name).collect();
    main(&crate::remote::LOCK, &names)
}

/// Whether this process was started as the judge of a learner's runner.
pub fn is_judge() -> bool {
    std::env::var_os(crate::remote::RUNNER_VAR).is_some()
}

/// Runs the selected checks, prints the run on stdout, and returns the exit
/// status: 0 when every selected check sent a passing verdict.
pub fn run(lock: &Lock, checks: &[&str], args: &Arguments) -> i32 {
    let mut out = io::stdout().lock();
    if args.help {
        print!("{}", arguments::USAGE);
        return 0;
    }
    for option in &args.ignored_options {
        eprintln!("note: the grader's harness ignores {option}");
    }
    let selected: Vec<&str> = checks.iter().copied().filter(|c| args.selects(c)).collect();
    // Asked for by `cargo course`: read before any check runs.
    let results_file = if args.list {
        None
    } else {
        match results::requested() {
            Ok(file) => file,
            Err(e) => {
                eprintln!("error: {e}");
                return FAILED;
            }
        }
    };
    if args.list {
        for check in &selected {
            let _ = writeln!(out, "{check}: test");
        }
        if !args.quiet {
            let _ = writeln!(out, "\n{} tests, 0 benchmarks", selected.len());
        }
        return 0;
    }
    let limits = match time_limit() {
        Ok(time) => Limits {
            time,
            memory: MEMORY_LIMIT,
        },
        Err(e) => {
            eprintln!("error: {e}");
            return FAILED;
        }
    };
    // Redis first: its one-line notice on stderr comes before the results.
    let prepared = if selected.is_empty() {
        Ok(None)
    } else {
        server::shared()
            .map_err(|e| e.to_string())
            .and_then(|server| match std::env::current_exe() {
                Ok(exe) => Ok(Some((server, exe))),
                Err(e) => Err(format!("the harness cannot find its own test binary: {e}")),
            })
    };
    let started = Instant::now();
    let mut printer = summary::Printer::new(lock.name, args.quiet, args.show_output, &selected);
    let _ = printer.start(&mut out);
    if selected.is_empty() {
        let _ = writeln!(
            out,
            "\nNo check was run: none matches {}. `cargo test -p exercises -- --list` lists them.",
            describe_filters(args)
        );
    }
    // Twice the cores: a check spends much of its time waiting on Redis.
    let jobs = args.jobs.map_or_else(
        || thread::available_parallelism().map_or(2, |n| 2 * n.get()),
        NonZeroUsize::get,
    );

    let mut results: Vec<Option<Finished>> = vec![None; selected.len()];
    let mut shown = 0;
    let mut show = |index: usize, finished: Finished, out: &mut io::StdoutLock<'_>| {
        results[index] = Some(finished);
        while let Some(Some(next)) = results.get(shown) {
            let _ = printer.result(out, selected[shown], next);
            shown += 1;
        }
    };
    match prepared {
        Ok(None) => {}
        Ok(Some((server, exe))) => {
            // A check's server, nodes and Docker helper are this process's, and so is the
            // network of nodes when a check starts some: one for the run, made only if needed.
            let mut env = if selected.iter().any(|c| crate::checks::starts_nodes(c)) {
                server.child_env_with_nodes()
            } else {
                server.child_env()
            };
            // Where the learner's code runs, decided once for every check.
            if is_judge() {
                let (note, value) = crate::remote::sandbox_note();
                eprintln!("{note}");
                env.push((crate::remote::SANDBOX_VAR.to_string(), value));
            }
            run_all(&exe, &selected, &env, limits, jobs, |i, f| {
                show(i, f, &mut out)
            });
        }
        Err(e) => {
            let _ = writeln!(out, "\nerror: {e}\n");
            let reason = "the grader could not run this check (why, and what to do, is said \
                          above the results)";
            for i in 0..selected.len() {
                show(i, not_run(reason), &mut out);
            }
        }
    }
    // Every check has its result by now; should one be missing, it fails.
    let results: Vec<(&str, Finished)> = selected
        .iter()
        .copied()
        .zip(results)
        .map(|(name, finished)| {
            let lost = || not_run("the harness lost this check's result");
            (name, finished.unwrap_or_else(lost))
        })
        .collect();
    if let Some((path, nonce)) = &results_file
        && let Err(e) = results::write(path, nonce, &results)
    {
        eprintln!("error: the harness could not write its results to {path}: {e}");
        return FAILED;
    }
    let counts = printer.finish(
        &mut out,
        &results,
        checks.len() - selected.len(),
        started.elapsed(),
    );
    match counts {
        // Every selected check sent a passing verdict.
        Ok(c) if c.failed == 0 && c.passed == selected.len() => 0,
        _ => FAILED,
    }
}

/// Runs each check of `selected` in a process of its own, at most `jobs` at a
/// time, and hands each result to `each` as it comes. Checks that spend real
/// time or play many histories start first ([`crate::checks::start_rank`]); the
/// others follow in their order.
pub fn run_all(
    exe: &Path,
    selected: &[&str],
    env: &[(String, String)],
    limits: Limits,
    jobs: usize,
    mut each: impl FnMut(usize, Finished),
) {
    let mut order: Vec<usize> = (0..selected.len()).collect();
    // A stable sort: the long ones first, each rank as listed.
    order.sort_by_key(|&i| crate::checks::start_rank(selected[i]));
    let order = &order;
    let next = AtomicUsize::new(0);
    let (done, results) = mpsc::channel();
    thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, selected.len().max(1)) {
            let done = done.clone();
            let next = &next;
            scope.spawn(move || {
                while let Some(&index) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let check = selected[index];
                    let finished = supervise::run(exe, check, env, limits);
                    if done.send((index, finished)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done);
        for (index, finished) in results {
            each(index, finished);
        }
    });
}

fn not_run(reason: &str) -> Finished {
    Finished {
        outcome: Outcome::NotRun {
            reason: reason.to_string(),
        },
        output: Output::default(),
        took: Duration::ZERO,
    }
}

/// The time limit, from `GRADER_CHECK_TIME_LIMIT` or [`TIME_LIMIT`].
fn time_limit() -> Result<Duration, String> {
    match std::env::var(TIME_LIMIT_VAR) {
        Err(_) => Ok(TIME_LIMIT),
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(secs) if secs > 0 => Ok(Duration::from_secs(secs)),
            _ => Err(format!(
                "{TIME_LIMIT_VAR}={v:?} is not a number of seconds above 0: set it to one, \
                 or unset it for the default of {} s",
                TIME_LIMIT.as_secs()
            )),
        },
    }
}

fn describe_filters(args: &Arguments) -> String {
    if args.ignored_only {
        return "--ignored (no check is ignored)".to_string();
    }
    let mut parts: Vec<String> = args.filters.iter().map(|f| format!("{f:?}")).collect();
    parts.extend(args.skip.iter().map(|s| format!("--skip {s:?}")));
    if args.exact {
        parts.push("--exact".to_string());
    }
    parts.join(" ")
}

/// Runs `check` on `lock`, in this process, and says how it ended (what a
/// check's child process sends back; [`crate::grade`] turns it into a
/// test's panic).
pub(crate) fn outcome_of(check: &Check, lock: &Lock) -> Outcome {
    match check.run(lock) {
        Ok(Verdict::Pass) => Outcome::Passed,
        Ok(Verdict::NotStarted { function, message }) => Outcome::NotStarted {
            // The todo!'s message is the learner's: spelled out, it starts no line of its own.
            message: format!(
                "not started: `{function}` in {} still says todo!(\"{}\")",
                crate::stub_file(function),
                spelled_out(&message, &[])
            ),
        },
        Ok(Verdict::Fail(report)) => Outcome::Failed {
            report: report.to_string(),
        },
        Err(e) => Outcome::NotRun {
            reason: format!("the grader could not run this check: {e}"),
        },
    }
}
