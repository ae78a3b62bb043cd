//! Times `cargo course batch` on a class of prepared submissions:
//!
//! ```sh
//! GRADER_REDIS=process cargo run --profile judge -p course --example batch_bench -- [N] [--no-sandbox] [--jobs J] [FILTER…]
//! ```
//!
//! makes N submissions (default 30) holding the reference solutions, grades
//! them as `cargo course batch` does (each build and run in its bubblewrap
//! sandbox, unless `--no-sandbox` says otherwise, to see what the sandbox
//! costs), and prints the time per submission and for the whole batch. The
//! grader's first build in `target/course-batch/` is done (and timed) apart,
//! before the clock starts; `0` does only that.
//!
//! On this machine's two cores, with the sandbox and two at once: 30
//! submissions of 69 checks in 235.3 s (7.8 s and about 15 CPU-s each, the
//! cores busy throughout; the measurement before gave 295.3 s, and one
//! before that 181.3 s: the figure moves with the machine). Three at once took
//! longer than two, as the gradings then contend for the same two cores.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use course::batch::{self, Batch};
use course::grade::course_root;
use grader::isolation::Isolation;

/// Makes `count` submissions holding the reference solutions in `dir`.
fn prepare(dir: &Path, count: usize) -> std::io::Result<()> {
    let _ = fs::remove_dir_all(dir);
    for i in 0..count {
        let src = dir.join(format!("student-{i:03}/exercises/src"));
        fs::create_dir_all(&src)?;
        for exercise in grader::exercise::EXERCISES {
            let from = course_root().join(exercise.solution());
            fs::copy(&from, src.join(format!("{}.rs", exercise.name)))?;
        }
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The batch runs its judge as this program (`cargo course` is its own judge, and so is this
    // bench): started by a submission's runner, it judges, and prepares no class of its own.
    if grader::harness::is_judge() {
        grader::harness::judge();
    }
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = match args.first().and_then(|n| n.parse().ok()) {
        Some(n) => {
            args.remove(0);
            n
        }
        None => 30,
    };
    let sandboxed = !args.iter().any(|a| a == "--no-sandbox");
    args.retain(|a| a != "--no-sandbox");
    let mut batch = Batch::this_course();
    // `--jobs N`: how many submissions at once, as `cargo course batch --jobs` (one per core).
    if let Some(at) = args.iter().position(|a| a == "--jobs") {
        let jobs = args.get(at + 1).and_then(|n| n.parse().ok());
        batch.jobs = jobs.ok_or("--jobs takes a number of submissions to grade at once")?;
        args.drain(at..at + 2);
    }
    batch.filters = args;
    batch.time_limit = Duration::from_secs(900);
    if sandboxed {
        // As `cargo course batch` does: no sandbox is an error, not a quiet fallback.
        let isolation = Isolation::detect().map_err(|e| {
            format!("{e}; install bubblewrap, or pass --no-sandbox to time the batch without it")
        })?;
        println!("sandbox: bubblewrap {}", isolation.version());
        batch.isolation = Some(isolation);
    } else {
        println!("sandbox: none (--no-sandbox)");
    }
    let root = std::env::temp_dir().join(format!("course-batch-bench-{}", std::process::id()));

    // One submission per worker first: the grader's build, outside the figure.
    let warm = root.join("warm");
    prepare(&warm, batch.jobs)?;
    let started = Instant::now();
    batch::grade_all(&batch, &warm, |_| {})?;
    println!(
        "warm-up ({} workers, builds included): {:.1} s",
        batch.jobs,
        started.elapsed().as_secs_f64()
    );

    // `batch_bench 0` only warms the batch's targets, for a timed run to follow.
    if n == 0 {
        let _ = fs::remove_dir_all(&root);
        return Ok(());
    }
    let class = root.join("class");
    prepare(&class, n)?;
    let started = Instant::now();
    let graded = batch::grade_all(&batch, &class, |one| {
        println!("  {}", batch::report::line(one));
    })?;
    let took = started.elapsed();
    let all_passed = graded
        .iter()
        .all(|g| g.results.as_ref().is_ok_and(|r| r.all_passed()));
    println!(
        "batch of {n} submissions, {} at once: {:.1} s ({:.1} s per submission); \
         every check passed: {all_passed}",
        batch.jobs,
        took.as_secs_f64(),
        took.as_secs_f64() / n.max(1) as f64
    );
    let _ = fs::remove_dir_all(&root);
    Ok(())
}
