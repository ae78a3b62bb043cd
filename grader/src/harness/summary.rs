//! The run as libtest prints it, from the verdicts received.
//!
//! A line per check (or a character with `-q`) in the checks' own order, then
//! the report of each failed check with what its process printed, indented
//! behind a bar, then libtest's summary line, whose counts come from verdicts:
//! `passed` counts passing verdicts, and every selected check without one is
//! `failed`. Cargo, CI scripts and editors read this shape.

use std::io::{self, Write};
use std::time::Duration;

use super::outcome::Outcome;
use super::supervise::Finished;

/// How the learner's output is set off from the harness's lines.
const BAR: &str = "  │ ";
/// Checks per line with `-q`, as libtest.
const QUIET_WIDTH: usize = 88;

/// Prints the run as it goes.
pub(super) struct Printer<'a> {
    /// One character per check.
    pub quiet: bool,
    /// Show what passing checks printed, too.
    pub show_output: bool,
    /// The lock's name, for reports the harness writes itself.
    pub lock: &'a str,
    /// How many results are printed so far.
    printed: usize,
    /// How many checks the run selected.
    total: usize,
}

/// The counts of the summary line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts {
    /// Checks that sent a passing verdict and exited cleanly.
    pub passed: usize,
    /// Selected checks that did not.
    pub failed: usize,
    /// Checks the filters left out.
    pub filtered_out: usize,
}

impl<'a> Printer<'a> {
    /// A printer for a run of `total` selected checks.
    pub(super) fn new(lock: &'a str, quiet: bool, show_output: bool, total: usize) -> Self {
        Printer {
            quiet,
            show_output,
            lock,
            printed: 0,
            total,
        }
    }

    /// The opening lines.
    pub(super) fn start(&self, out: &mut impl Write) -> io::Result<()> {
        let s = if self.total == 1 { "" } else { "s" };
        writeln!(out)?;
        writeln!(out, "running {} test{s}", self.total)
    }

    /// One check's result line (or character).
    pub(super) fn result(
        &mut self,
        out: &mut impl Write,
        name: &str,
        finished: &Finished,
    ) -> io::Result<()> {
        self.printed += 1;
        let passed = finished.outcome.passed();
        if self.quiet {
            write!(out, "{}", if passed { '.' } else { 'F' })?;
            if self.printed.is_multiple_of(QUIET_WIDTH) {
                write!(out, " {}/{}", self.printed, self.total)?;
                writeln!(out)?;
            }
            return out.flush();
        }
        writeln!(
            out,
            "test {name} ... {}",
            if passed { "ok" } else { "FAILED" }
        )
    }

    /// The reports, the list of failures and the summary line.
    pub(super) fn finish(
        &self,
        out: &mut impl Write,
        results: &[(&str, Finished)],
        filtered_out: usize,
        took: Duration,
    ) -> io::Result<Counts> {
        if self.quiet && !self.printed.is_multiple_of(QUIET_WIDTH) {
            writeln!(out)?;
        }
        let (passes, failures): (Vec<_>, Vec<_>) =
            results.iter().partition(|(_, f)| f.outcome.passed());
        if self.show_output {
            let shown: Vec<_> = passes
                .iter()
                .filter(|(_, f)| !f.output.is_empty())
                .collect();
            if !shown.is_empty() {
                writeln!(out, "\nsuccesses:\n")?;
                for (name, finished) in &shown {
                    writeln!(out, "---- {name} ----")?;
                    write!(out, "{}", printed_block(finished))?;
                    writeln!(out)?;
                }
                writeln!(out, "\nsuccesses:")?;
                for (name, _) in &shown {
                    writeln!(out, "    {name}")?;
                }
            }
        }
        if !failures.is_empty() {
            writeln!(out, "\nfailures:\n")?;
            for (name, finished) in &failures {
                writeln!(out, "---- {name} ----")?;
                write!(out, "{}", self.body(name, &finished.outcome))?;
                if !finished.output.is_empty() {
                    writeln!(out)?;
                    write!(out, "{}", printed_block(finished))?;
                }
                writeln!(out)?;
            }
            writeln!(out, "\nfailures:")?;
            for (name, _) in &failures {
                writeln!(out, "    {name}")?;
            }
        }
        let counts = Counts {
            passed: passes.len(),
            failed: self.total - passes.len(),
            filtered_out,
        };
        writeln!(out)?;
        writeln!(out, "{}", summary_line(counts, took))?;
        writeln!(out)?;
        out.flush()?;
        Ok(counts)
    }

    /// What a failed check's report says.
    fn body(&self, name: &str, outcome: &Outcome) -> String {
        let text = match outcome {
            Outcome::Passed => String::new(),
            Outcome::NotStarted { message } => message.clone(),
            Outcome::Failed { report } => report.clone(),
            Outcome::NotRun { reason } => reason.clone(),
            Outcome::Crashed { cause } => {
                let exercise = name.split("::").next().unwrap_or(name);
                format!(
                    "✗ {name} (lock: {})\n\n  {}.\n\n  Re-run: cargo test -p exercises {exercise}::",
                    self.lock,
                    capitalised(&cause.to_string())
                )
            }
        };
        format!("{}\n", text.trim_end())
    }
}

/// libtest's summary line: `test result: ok. 34 passed; 0 failed; …`.
pub fn summary_line(counts: Counts, took: Duration) -> String {
    let result = if counts.failed == 0 { "ok" } else { "FAILED" };
    format!(
        "test result: {result}. {} passed; {} failed; 0 ignored; 0 measured; {} filtered out; \
         finished in {:.2}s",
        counts.passed,
        counts.failed,
        counts.filtered_out,
        took.as_secs_f64()
    )
}

/// What a check's process printed, set off behind the bar.
fn printed_block(finished: &Finished) -> String {
    format!(
        "  What the check's process printed (stdout and stderr):\n{}",
        finished.output.indented(BAR)
    )
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
