//! `cargo course batch DIR`: a whole class graded with the course's pristine
//! grader.
//!
//! `DIR` holds one folder (or git clone) per student, named after them. Each
//! submission contributes only its `exercises/src/*.rs`; they go into a
//! scratch copy of this course ([`workspace`]), so a submission that edited
//! the grader, `exercises/tests/grade.rs` or the workspace is graded as if it
//! had not, and every file it changed is flagged. Up to one submission per
//! core is graded at once, each through [`grade::run`] with a time limit: its
//! checks run in processes of their own and, with `GRADER_REDIS=process`,
//! against a Redis server of their own, so a submission that hangs, crashes,
//! exits or floods Redis costs only its own grade. The results go to
//! `results.csv` (one row per student and check, [`report`]) and
//! `summary.html` (the class at a glance, [`summary`]), in a folder beside
//! the submissions' ([`results_folder`]), never among them.

mod manifest;
pub mod products;
pub mod report;
pub mod standing;
pub mod summary;
pub mod workspace;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use super::BatchArgs;
use super::error::CourseError;
use super::grade::{self, Options};
use super::results::Results;
use grader::isolation::Isolation;
use workspace::{Pristine, Submission};

/// One student's grading.
#[derive(Debug)]
pub struct Graded {
    /// The submission's folder name.
    pub student: String,
    /// Files that differ from the course's, outside `exercises/src/*.rs`.
    pub changed: Vec<String>,
    /// The results, or why the submission could not be graded.
    pub results: Result<Results, String>,
    /// How long it took, build included.
    pub took: Duration,
}

/// How to grade a batch.
#[derive(Clone, Debug)]
pub struct Batch {
    /// The course whose grader and tests are used.
    pub course: PathBuf,
    /// Where the workers' scratch copies and target directories live.
    pub cache: PathBuf,
    /// How many submissions at once.
    pub jobs: usize,
    /// The real time one submission may take, build included.
    pub time_limit: Duration,
    /// Only the checks whose name contains one of these (all when empty).
    pub filters: Vec<String>,
    /// Only shard K of N of the submissions, as `(K, N)`.
    pub shard: Option<(usize, usize)>,
    /// The judge that runs every submission's checks (this program by default).
    pub judge: PathBuf,
    /// The commit of the course whose stubs, tests and runner a submission is
    /// built with (`HEAD` by default): never the work tree.
    pub commit: String,
    /// The sandbox every build and every run of a submission's code happens
    /// in; `None` only when the instructor said `--no-sandbox`.
    pub isolation: Option<Isolation>,
}

impl Batch {
    /// A batch with this course's grader, one job per core.
    pub fn this_course() -> Batch {
        let course = grade::course_root();
        Batch {
            cache: course.join("target/course-batch"),
            course,
            jobs: thread::available_parallelism().map_or(2, |n| n.get()),
            time_limit: Duration::from_secs(600),
            filters: Vec::new(),
            shard: None,
            judge: grade::this_program(),
            commit: "HEAD".to_string(),
            isolation: None,
        }
    }
}

/// The submissions in `dir`: its folders, by name, hidden ones left out.
pub fn submissions(dir: &Path) -> Result<Vec<(String, PathBuf)>, CourseError> {
    let entries = std::fs::read_dir(dir).map_err(|source| CourseError::File {
        what: "could not read the submissions folder",
        path: dir.to_path_buf(),
        source,
    })?;
    let mut found: Vec<(String, PathBuf)> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .filter(|(name, _)| !name.starts_with('.'))
        .collect();
    found.sort();
    Ok(found)
}

/// Grades every submission in `dir`; `each` hears of each as it ends.
pub fn grade_all(
    batch: &Batch,
    dir: &Path,
    mut each: impl FnMut(&Graded),
) -> Result<Vec<Graded>, CourseError> {
    let mut pristine = Pristine::at(&batch.course, &batch.commit, &batch.cache)?;
    let mut submissions = submissions(dir)?;
    if let Some((k, n)) = batch.shard {
        submissions = submissions
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % n == k)
            .map(|(_, s)| s)
            .collect();
    }
    let jobs = batch.jobs.clamp(1, submissions.len().max(1));
    let workers: Vec<(PathBuf, PathBuf)> = (0..jobs)
        .map(|i| {
            (
                batch.cache.join(format!("workspace-{i}")),
                batch.cache.join(format!("target-{i}")),
            )
        })
        .collect();
    prepare(batch, &mut pristine, &workers)?;

    let next = AtomicUsize::new(0);
    let (done, finished) = mpsc::channel();
    let mut graded: Vec<Option<Graded>> = submissions.iter().map(|_| None).collect();
    thread::scope(|scope| {
        for (workspace, target) in &workers {
            let done = done.clone();
            let (next, submissions, pristine) = (&next, &submissions, &pristine);
            scope.spawn(move || {
                while let Some((student, path)) =
                    submissions.get(next.fetch_add(1, Ordering::Relaxed))
                {
                    let one = grade_one(batch, pristine, student, path, workspace, target);
                    if done.send(one).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done);
        for one in finished {
            each(&one);
            if let Some(slot) = submissions.iter().position(|(s, _)| *s == one.student) {
                graded[slot] = Some(one);
            }
        }
    });
    Ok(graded.into_iter().flatten().collect())
}

/// Makes each worker's build workspace, and builds the runner's dependencies
/// once for all: the first worker builds the stubs, the others start from a
/// copy of its target directory (cargo finds it fresh: the copies keep the
/// files' times).
fn prepare(
    batch: &Batch,
    pristine: &mut Pristine,
    workers: &[(PathBuf, PathBuf)],
) -> Result<(), CourseError> {
    for (i, (workspace, target)) in workers.iter().enumerate() {
        pristine.build_workspace(workspace)?;
        Submission::default().install(workspace)?;
        if i > 0 && !target.exists() && workers[0].1.exists() {
            let copied = std::process::Command::new("cp")
                .arg("-a")
                .arg(&workers[0].1)
                .arg(target)
                .status();
            if !copied.is_ok_and(|s| s.success()) {
                let _ = std::fs::remove_dir_all(target);
            }
        }
        let started = Instant::now();
        let mut options = options(batch, workspace, target);
        options.time_limit = None;
        // The first build (the course's own stubs) cuts Cargo.lock down to the
        // build workspace's two members; every build after it keeps it as it is.
        options.locked = i > 0;
        // The course's own stubs, from git: nothing of a student's is built here, and the
        // first build must write the cut-down lock file, which a sandbox's read-only view forbids.
        options.isolation = None;
        if let Err(output) = grade::build(&options)? {
            return Err(CourseError::Usage(format!(
                "the course's own stubs do not build in {}, so no submission can be graded:\n{output}",
                workspace.display()
            )));
        }
        if i == 0 {
            let cut = workspace.join("Cargo.lock");
            pristine.lock = std::fs::read(&cut).map_err(|source| CourseError::File {
                what: "could not read",
                path: cut,
                source,
            })?;
        }
        if started.elapsed() > Duration::from_secs(60) {
            eprintln!(
                "batch: built the runner's dependencies for worker {i} in {:.0} s (once: later \
                 batches reuse them)",
                started.elapsed().as_secs_f64()
            );
        }
    }
    Ok(())
}

fn options(batch: &Batch, workspace: &Path, target: &Path) -> Options {
    let mut options = Options::new(workspace);
    options.target_dir = Some(target.to_path_buf());
    options.locked = true;
    options.offline = true;
    options.filters = batch.filters.clone();
    options.time_limit = Some(batch.time_limit);
    options.judge = batch.judge.clone();
    options.isolation = batch.isolation.clone();
    // The judge's checks run each submission's runner in the same sandbox, or
    // (`--no-sandbox`) in none: never decided by what this machine happens to have.
    let sandbox = if batch.isolation.is_some() {
        "bwrap"
    } else {
        "none"
    };
    options
        .env
        .push((grader::remote::SANDBOX_VAR.to_string(), sandbox.to_string()));
    // A runner needs no debug information: where a learner's code panicked is compiled in
    // (`panic::Location`). Without it a submission's build takes about a quarter less CPU
    // (0.32 s against 0.25 s here), and the batch's target directories are its own, so no
    // build of the learner's is rebuilt for it.
    options
        .env
        .push(("CARGO_PROFILE_DEV_DEBUG".to_string(), "false".to_string()));
    options
}

fn grade_one(
    batch: &Batch,
    pristine: &Pristine,
    student: &str,
    path: &Path,
    workspace: &Path,
    target: &Path,
) -> Graded {
    let started = Instant::now();
    let submission = Submission::read(path, pristine);
    let changed = submission
        .as_ref()
        .map(|s| s.changed.clone())
        .unwrap_or_default();
    let results = submission
        .and_then(|submission| {
            pristine.build_workspace(workspace)?;
            submission.install(workspace)?;
            // Nothing of the submission this worker built before may be seen by this build.
            products::remove(target).map_err(|source| CourseError::File {
                what: "could not remove the previous submission's build from",
                path: target.to_path_buf(),
                source,
            })?;
            grade::run(&options(batch, workspace, target))
        })
        .map_err(|e| e.to_string());
    Graded {
        student: student.to_string(),
        changed,
        results,
        took: started.elapsed(),
    }
}

/// Where a batch of the submissions in `dir` writes its results: `out` when
/// given, else the folder `DIR-results` beside `dir`. A folder inside `dir`
/// is refused: the next batch would grade it as a student's.
pub fn results_folder(dir: &Path, out: Option<&Path>) -> Result<PathBuf, CourseError> {
    let absolute = |path: &Path| {
        std::path::absolute(path).map_err(|source| CourseError::File {
            what: "could not find",
            path: path.to_path_buf(),
            source,
        })
    };
    let submissions = absolute(dir)?;
    // `a/./b` and `a/b/` are `a/b`.
    let submissions: PathBuf = submissions.components().collect();
    let folder = match out {
        Some(out) => absolute(out)?.components().collect(),
        None => {
            let name = submissions
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .ok_or_else(|| {
                    CourseError::Usage(format!(
                        "{} has no name to put the results beside: pass --out OUT",
                        dir.display()
                    ))
                })?;
            submissions.with_file_name(format!("{name}-results"))
        }
    };
    if folder.starts_with(&submissions) {
        return Err(CourseError::Usage(format!(
            "--out {} is inside the submissions folder {}, where the next batch would grade it \
             as a student: choose a folder outside it (by default the results go beside it, in \
             {}-results)",
            folder.display(),
            dir.display(),
            submissions.display()
        )));
    }
    Ok(folder)
}

/// `cargo course batch DIR`: grades, prints a line per student, writes
/// `results.csv` and `summary.html` into the results folder.
pub fn command(args: &BatchArgs) -> Result<ExitCode, CourseError> {
    let mut batch = Batch::this_course();
    if let Some(jobs) = args.jobs {
        batch.jobs = jobs;
    }
    batch.time_limit = Duration::from_secs(args.time_limit);
    batch.filters = args.filters.clone();
    batch.shard = args.shard;
    batch.commit = args.commit.clone();
    batch.isolation = if args.no_sandbox {
        eprintln!(
            "batch: --no-sandbox: every submission's build and code run as you, beside the others'"
        );
        None
    } else {
        Some(Isolation::detect().map_err(|e| {
            CourseError::Usage(format!(
                "a batch grades strangers' code, so it builds and runs each submission in a \
                 sandbox, and there is none here: {e}\nInstall bubblewrap (`apt-get install \
                 bubblewrap`), or pass --no-sandbox to grade submissions you trust without one"
            ))
        })?)
    };
    let out = results_folder(&args.dir, args.out.as_deref())?;
    let book = if args.book_url.ends_with('/') {
        args.book_url.clone()
    } else {
        format!("{}/", args.book_url)
    };
    let started = Instant::now();
    let graded = grade_all(&batch, &args.dir, |one| eprintln!("{}", report::line(one)))?;
    report::write(&out, &graded, &batch.filters, &book)?;
    eprintln!(
        "batch: {} submissions in {:.1} s; wrote {} and {}",
        graded.len(),
        started.elapsed().as_secs_f64(),
        out.join(report::CSV).display(),
        out.join(report::HTML).display()
    );
    Ok(ExitCode::SUCCESS)
}
