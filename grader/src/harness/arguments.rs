//! The test binary's command line, as libtest reads it.
//!
//! `cargo test -p exercises release::` hands the filter to the test binary,
//! and readers, editors and CI tools pass libtest's options (`--list --format
//! terse`, `--exact`, `--test-threads 1`, `-q`, `--nocapture`…). The harness
//! honours the ones that mean something for checks in processes of their own,
//! and accepts the others with a note on stderr instead of failing the run.

use std::num::NonZeroUsize;

/// What the command line asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Arguments {
    /// Run only the checks whose name contains one of these (all when empty).
    pub filters: Vec<String>,
    /// Leave out the checks whose name contains one of these.
    pub skip: Vec<String>,
    /// Filters and skips match whole names only.
    pub exact: bool,
    /// List the checks instead of running them.
    pub list: bool,
    /// One character per check instead of one line (`-q`, `--format terse`).
    pub quiet: bool,
    /// Show the output of passing checks too (`--nocapture`, `--show-output`).
    pub show_output: bool,
    /// Run only ignored checks (`--ignored`): there are none.
    pub ignored_only: bool,
    /// How many checks may run at once (`--test-threads`).
    pub jobs: Option<NonZeroUsize>,
    /// Print the usage and stop.
    pub help: bool,
    /// Options accepted but without effect, to mention on stderr.
    pub ignored_options: Vec<String>,
}

/// libtest's options that take a value and that the harness accepts without
/// acting on them.
const IGNORED_WITH_VALUE: &[&str] = &["--color", "--logfile", "--shuffle-seed", "-Z"];

/// libtest's options without a value that the harness accepts without acting on them.
const IGNORED_FLAGS: &[&str] = &[
    "--include-ignored",
    "--force-run-in-process",
    "--exclude-should-panic",
    "--test",
    "--bench",
    "--report-time",
    "--ensure-time",
    "--shuffle",
];

impl Arguments {
    /// Reads the arguments (without the program's name) and the environment
    /// variables libtest reads (`RUST_TEST_THREADS`, `RUST_TEST_NOCAPTURE`).
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Arguments, String> {
        let mut parsed = Arguments {
            jobs: std::env::var("RUST_TEST_THREADS")
                .ok()
                .and_then(|v| v.parse().ok()),
            show_output: std::env::var("RUST_TEST_NOCAPTURE").is_ok_and(|v| v != "0"),
            ..Arguments::default()
        };
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let (name, inline) = match arg.split_once('=') {
                Some((name, value)) if name.starts_with("--") => {
                    (name.to_string(), Some(value.to_string()))
                }
                _ => (arg.clone(), None),
            };
            let mut value = |what: &str| {
                inline
                    .clone()
                    .or_else(|| args.next())
                    .ok_or_else(|| format!("{name} needs {what}"))
            };
            match name.as_str() {
                "--list" => parsed.list = true,
                "--exact" => parsed.exact = true,
                "-q" | "--quiet" => parsed.quiet = true,
                "--nocapture" | "--no-capture" | "--show-output" => parsed.show_output = true,
                "--ignored" => parsed.ignored_only = true,
                "-h" | "--help" => parsed.help = true,
                "--skip" => parsed.skip.push(value("a name")?),
                "--test-threads" => {
                    let n = value("a number")?;
                    parsed.jobs = Some(n.parse().map_err(|_| {
                        format!("--test-threads needs a number above 0, not {n:?}")
                    })?);
                }
                "--format" => match value("a format")?.as_str() {
                    "terse" => parsed.quiet = true,
                    "pretty" => {}
                    other => parsed
                        .ignored_options
                        .push(format!("--format {other} (the output stays as it is)")),
                },
                option if IGNORED_WITH_VALUE.contains(&option) => {
                    let v = value("a value")?;
                    parsed.ignored_options.push(format!("{option} {v}"));
                }
                option if IGNORED_FLAGS.contains(&option) => {
                    parsed.ignored_options.push(option.to_string());
                }
                option if option.starts_with('-') => parsed.ignored_options.push(arg),
                _ => parsed.filters.push(arg),
            }
        }
        Ok(parsed)
    }

    /// Whether the check `name` is selected.
    pub fn selects(&self, name: &str) -> bool {
        if self.ignored_only {
            return false;
        }
        let matches = |pattern: &String| {
            if self.exact {
                name == pattern
            } else {
                name.contains(pattern.as_str())
            }
        };
        (self.filters.is_empty() || self.filters.iter().any(matches))
            && !self.skip.iter().any(matches)
    }
}

/// What `--help` prints.
pub const USAGE: &str = "\
Usage: cargo test -p exercises [FILTER...] [-- OPTIONS]

Runs every check whose name contains one of the FILTERs (all checks without
one), each in a process of its own, and prints a report for each that fails.

Options:
    --exact             a FILTER must be the whole name
    --skip FILTER       leave out the checks whose name contains FILTER
    --list              list the checks instead of running them
    --format terse      with --list: names only; otherwise like -q
    -q, --quiet         one character per check
    --nocapture, --show-output
                        show what passing checks printed too
    --test-threads N    run at most N checks at once (default: twice the cores)
    -h, --help          this text

Other options of Rust's test harness are accepted and have no effect.
Environment: GRADER_CHECK_TIME_LIMIT=SECONDS, the real time a check may take.
";

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Arguments {
        Arguments::parse(args.iter().map(|s| s.to_string())).expect("parses")
    }

    #[test]
    fn filters_select_by_substring_and_any_of_several() {
        let args = parse(&["release::", "token::unique"]);
        assert!(args.selects("release::slow_job"));
        assert!(args.selects("token::unique"));
        assert!(!args.selects("token::unguessable"));
    }

    #[test]
    fn exact_and_skip() {
        let args = parse(&["--exact", "release::slow_job", "--skip=acquire"]);
        assert!(args.selects("release::slow_job"));
        assert!(!args.selects("scenarios::slow_job"));
        let args = parse(&["slow_job", "--skip", "scenarios::"]);
        assert!(args.selects("release::slow_job"));
        assert!(!args.selects("scenarios::slow_job"));
    }

    #[test]
    fn cargo_s_list_and_other_options() {
        let args = parse(&[
            "--list",
            "--format",
            "terse",
            "--color=always",
            "-Zunstable-options",
        ]);
        assert!(args.list && args.quiet);
        assert_eq!(
            args.ignored_options,
            ["--color always", "-Zunstable-options"]
        );
        assert_eq!(parse(&["--test-threads=3"]).jobs, NonZeroUsize::new(3));
        assert!(Arguments::parse(["--test-threads".to_string(), "0".to_string()]).is_err());
        assert!(!parse(&["--ignored"]).selects("token::unique"));
    }
}
