//! `cargo course`: the learner's loop and the instructor's tools, over the
//! same harness as `cargo test -p exercises`.
//!
//! Everything here starts from one way of grading the learner's crate and
//! getting the results back as data ([`grade::run`]): it builds the
//! `exercises` test binary with cargo, runs it, and reads every check's
//! [`Outcome`](grader::harness::Outcome) from a file only the harness's own
//! process can write ([`grader::harness::results`]). A compile error comes back
//! as a result of its own, with cargo's text. The subcommands are views of
//! that data: the watch loop for the learner (the default, [`watch`], with
//! [`reset`] and [`open`]), results for
//! machines ([`format`](mod@format)), and the batch of a whole class ([`batch`]);
//! [`doctor`] says what grading needs and what is missing.

mod announce;
pub mod batch;
pub mod board;
pub mod doctor;
pub mod error;
pub mod format;
pub mod grade;
pub mod open;
mod process;
pub mod progress;
pub mod reset;
pub mod results;
pub mod screen;
mod slow_build;
mod terminal;
pub mod watch;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

pub use error::CourseError;

/// The command line of `cargo course`.
#[derive(Debug, Parser)]
#[command(
    name = "cargo course",
    bin_name = "cargo course",
    about = "The course's command: grades your exercises on every save, and more.",
    long_about = None
)]
pub struct Cli {
    /// What to do; without one, `watch`.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Grade on start and on every save of exercises/src/*.rs (the default).
    Watch,
    /// Grade once and write the results for a machine (CI, Classroom, Exercism).
    Grade(GradeArgs),
    /// Say which Redis grading would use, which tools are here, and what to install.
    Doctor,
    /// Grade every submission in a folder with this course's pristine grader.
    Batch(BatchArgs),
    /// Put an exercise's stub back, as last committed (asks first).
    Reset(ResetArgs),
    /// Step through a failed scenario's run in the book's player.
    Open(OpenArgs),
}

/// `cargo course reset`.
#[derive(Debug, clap::Args)]
pub struct ResetArgs {
    /// The exercise, as its file under exercises/src is named: its help
    /// names every exercise of the table ([`grader::exercise::names`]).
    #[arg(value_name = "EXERCISE", help = format!(
        "The exercise, as its file under exercises/src is named: {}",
        grader::exercise::names()
    ))]
    pub exercise: String,
    /// Do not ask first.
    #[arg(long)]
    pub yes: bool,
}

/// `cargo course open`.
#[derive(Debug, clap::Args)]
pub struct OpenArgs {
    /// The check whose run to open (`scenarios::gc_pause`, or `gc_pause`); the
    /// first failed run in the course's order without one.
    #[arg(value_name = "CHECK")]
    pub check: Option<String>,
}

/// `cargo course grade`.
#[derive(Debug, clap::Args)]
pub struct GradeArgs {
    /// The shape of the results.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    pub format: Format,
    /// Write the results into this folder (under the format's usual file name)
    /// instead of standard output.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Grade only the checks whose name contains one of these (all without one).
    #[arg(value_name = "FILTER")]
    pub filters: Vec<String>,
}

/// The shapes of results for machines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The JSON the GitHub Classroom grading reporter reads.
    Github,
    /// Exercism's results.json, version 3.
    Exercism,
    /// JUnit XML: one testcase per check.
    Junit,
    /// The course's own JSON.
    Json,
}

/// `cargo course batch`.
#[derive(Debug, clap::Args)]
pub struct BatchArgs {
    /// The folder that holds one submission (a folder or a git clone) per student.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The folder to write results.csv and summary.html into (default: beside
    /// DIR, named DIR-results; never inside DIR, where it would be read as a
    /// submission).
    #[arg(long, value_name = "OUT")]
    pub out: Option<PathBuf>,
    /// The book the summary's chapter links open (default: the one `book/serve`
    /// serves).
    #[arg(long, value_name = "URL", default_value = batch::summary::DEFAULT_BOOK)]
    pub book_url: String,
    /// How many submissions to grade at once (default: the number of cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// The real time one submission may take, in seconds, build included.
    #[arg(long, default_value_t = 600)]
    pub time_limit: u64,
    /// Grade only the checks whose name contains one of these (all without one).
    #[arg(value_name = "FILTER")]
    pub filters: Vec<String>,
    /// Grade only shard K of N: the submissions whose place in the sorted list,
    /// modulo N, is K (for a CI matrix that splits a class).
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub shard: Option<(usize, usize)>,
    /// The commit of this course whose stubs, tests and runner every submission
    /// is built with (never the work tree's uncommitted files).
    #[arg(long, value_name = "REV", default_value = "HEAD")]
    pub commit: String,
    /// Grade without a sandbox: every student's build and code then run as
    /// you, beside the others' (only for submissions you trust).
    #[arg(long)]
    pub no_sandbox: bool,
}

/// Reads `K/N` with `K < N`.
fn parse_shard(text: &str) -> Result<(usize, usize), String> {
    let parsed = text
        .split_once('/')
        .and_then(|(k, n)| Some((k.trim().parse().ok()?, n.trim().parse().ok()?)));
    match parsed {
        Some((k, n)) if k < n => Ok((k, n)),
        _ => Err(format!("{text:?} is not K/N with K < N, e.g. 0/4")),
    }
}

/// Runs the command line and says how the process should exit.
pub fn main(cli: Cli) -> ExitCode {
    let result = match cli.command.unwrap_or(Command::Watch) {
        Command::Watch => watch::run(grade::course_root()),
        Command::Reset(args) => reset::run(&grade::course_root(), &args.exercise, args.yes),
        Command::Open(args) => open::run(&grade::course_root(), args.check.as_deref()),
        Command::Grade(args) => grade::command(&args),
        Command::Doctor => Ok(doctor::command()),
        Command::Batch(args) => batch::command(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
