//! One check in a process of its own, watched from outside.
//!
//! The harness starts the test binary again with the name of one check. The
//! child's output goes into a pipe the harness reads (and shows only under a
//! failing check); its verdict goes into a second, private pipe, on a file
//! descriptor of its own, prefixed with a random nonce the child reads from
//! its standard input before any code under test runs. Printing a verdict,
//! exiting early, aborting, or being killed therefore cannot produce one. The
//! learner's code is not in the check's process at all, but in its runner,
//! which never sees the nonce, the channel or this process's memory.
//!
//! The child runs in a process group of its own, with a limit on its memory,
//! and is killed (with everything it started) when it overruns the time
//! limit ([`crate::deadline`]); the harness then names what happened from the
//! exit status.

use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::Signal;

use super::capture::Output;
use super::child::{CHECK_VAR, VERDICT_FD, VERDICT_FD_VAR};
use crate::deadline;
use crate::limits::memory_limit;
use crate::outcome::{Cause, End, Outcome};
use crate::recording::{self, RUNS_DIR_VAR};
use crate::sys::{self, ChildSetup};

/// SIGABRT, as an exit status names it: what a failed allocation ends in.
const SIGABRT: i32 = Signal::ABORT.as_raw();

/// How often a running child is looked at.
const POLL: Duration = Duration::from_millis(4);
/// The most the private channel may carry: one verdict, with room to spare.
const CHANNEL_MAX: u64 = 4 * 1024 * 1024;

/// What a check's process may use.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Real time, from start to exit.
    pub time: Duration,
    /// Address space, in bytes.
    pub memory: u64,
}

/// One check, run.
#[derive(Clone, Debug)]
pub struct Finished {
    /// How it ended.
    pub outcome: Outcome,
    /// What its process printed.
    pub output: Output,
    /// The real time its process took, from start to verdict or end: for the
    /// reports that show durations (never for a verdict, which is on virtual time).
    pub took: Duration,
}

/// Runs the check `check` in a child process of `exe`, with `env` added to its
/// environment, and says how it ended.
pub(super) fn run(exe: &Path, check: &str, env: &[(String, String)], limits: Limits) -> Finished {
    let started = Instant::now();
    match supervise(exe, check, env, limits) {
        Ok(finished) => Finished {
            took: started.elapsed(),
            ..finished
        },
        Err(e) => Finished {
            outcome: Outcome::Crashed {
                cause: Cause::NotStarted {
                    error: e.to_string(),
                },
            },
            output: Output::default(),
            took: started.elapsed(),
        },
    }
}

fn supervise(
    exe: &Path,
    check: &str,
    env: &[(String, String)],
    limits: Limits,
) -> io::Result<Finished> {
    let nonce = nonce()?;
    // The tag of the folders the check's process makes, which the harness removes after it.
    let tag = crate::folder::new_tag()?;
    let (channel, channel_end) = io::pipe()?;
    let (output, output_end) = io::pipe()?;
    let mut command = Command::new(exe);
    // Where a failed story's run is kept, unless the caller says.
    if std::env::var_os(RUNS_DIR_VAR).is_none()
        && let Some(runs) = recording::beside(exe)
    {
        command.env(RUNS_DIR_VAR, runs);
    }
    command
        .env(CHECK_VAR, check)
        .env(crate::folder::TAG_VAR, &tag)
        .env(VERDICT_FD_VAR, VERDICT_FD.to_string())
        .envs(env.iter().map(|(k, v)| (k, v)))
        // Only the harness writes the run's results.
        .env_remove(super::results::RESULTS_FILE_VAR)
        .stdin(Stdio::piped())
        .stdout(output_end.try_clone()?)
        .stderr(output_end)
        // Its own group, so that whatever it starts is killed with it.
        .process_group(0);
    // The private channel onto its agreed descriptor, the memory limit, and
    // death with the harness.
    let setup = ChildSetup {
        rlimits: vec![memory_limit(limits.memory)],
        descriptors: vec![(OwnedFd::from(channel_end), VERDICT_FD)],
        die_with: Some(std::process::id()),
        ..ChildSetup::default()
    };
    sys::install(&mut command, setup)?;
    let mut child = command.spawn()?;
    // Only the child may hold the write ends now, or the reads never end.
    drop(command);

    let output = thread::spawn(move || Output::read(output));
    let channel = thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = channel.take(CHANNEL_MAX).read_to_end(&mut bytes);
        bytes
    });
    if let Some(mut stdin) = child.stdin.take() {
        // A child that is already gone cannot read it, and will have no verdict.
        let _ = stdin.write_all(format!("{nonce}\n").as_bytes());
    }
    let status = deadline::wait(&mut child, Some(limits.time), POLL);
    // Its servers' and its runner's folders, which its exit left.
    crate::folder::sweep_tagged(&tag);
    let status = status?;
    let output = output.join().unwrap_or_default();
    let channel = channel.join().unwrap_or_default();

    let end = match status {
        None => End::TimedOut {
            limit_secs: limits.time.as_secs(),
        },
        Some(status) => end_of(status, &output, limits),
    };
    let outcome = in_plain_words(judge(end, &channel, &nonce), &output, limits);
    Ok(Finished {
        outcome,
        output,
        took: Duration::ZERO,
    })
}

/// A runner aborted by a failed allocation ran out of memory: the check's
/// process saw only the signal, the harness sees what the runner printed.
fn in_plain_words(outcome: Outcome, output: &Output, limits: Limits) -> Outcome {
    match outcome {
        Outcome::Crashed {
            cause:
                Cause::CodeEnded {
                    end: End::Signaled { signal: SIGABRT },
                },
        } if output.tells_of_allocation_failure() => Outcome::Crashed {
            cause: Cause::CodeEnded {
                end: End::OutOfMemory {
                    limit_mib: limits.memory / (1024 * 1024),
                },
            },
        },
        other => other,
    }
}

/// How the child ended, from its exit status.
fn end_of(status: ExitStatus, output: &Output, limits: Limits) -> End {
    match (status.code(), status.signal()) {
        (Some(code), _) => End::Exited { code },
        (None, Some(SIGABRT)) if output.tells_of_allocation_failure() => End::OutOfMemory {
            limit_mib: limits.memory / (1024 * 1024),
        },
        (None, Some(signal)) => End::Signaled { signal },
        // Neither a status nor a signal: not on Unix.
        (None, None) => End::Exited { code: -1 },
    }
}

/// The outcome, from how the child ended and what its channel carried.
///
/// A verdict counts only if it is the one line that starts with the nonce,
/// and the process then exited normally.
fn judge(end: End, channel: &[u8], nonce: &str) -> Outcome {
    let text = String::from_utf8_lossy(channel);
    let prefix = format!("{nonce} ");
    let verdicts: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix(&prefix))
        .collect();
    let outcome = match verdicts.as_slice() {
        [] => {
            return Outcome::Crashed {
                cause: Cause::NoVerdict { end },
            };
        }
        [one] => serde_json::from_str::<Outcome>(one),
        _ => {
            return Outcome::Crashed {
                cause: Cause::Unreadable {
                    problem: format!("{} verdicts instead of one", verdicts.len()),
                },
            };
        }
    };
    match (outcome, end) {
        (Ok(outcome), End::Exited { code: 0 }) => outcome,
        (Ok(_), end) => Outcome::Crashed {
            cause: Cause::EndedAfterVerdict { end },
        },
        (Err(e), _) => Outcome::Crashed {
            cause: Cause::Unreadable {
                problem: e.to_string(),
            },
        },
    }
}

/// 128 random bits, as hex.
fn nonce() -> io::Result<String> {
    crate::random::hex::<16>().map_err(|e| io::Error::other(format!("no random nonce: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONCE: &str = "0123456789abcdef";
    const CLEAN: End = End::Exited { code: 0 };

    fn line(outcome: &Outcome) -> String {
        format!(
            "{NONCE} {}\n",
            serde_json::to_string(outcome).expect("serialises")
        )
    }

    #[test]
    fn a_verdict_with_the_nonce_and_a_clean_exit_counts() {
        assert_eq!(
            judge(CLEAN, line(&Outcome::Passed).as_bytes(), NONCE),
            Outcome::Passed
        );
    }

    #[test]
    fn silence_is_a_failure_that_says_how_the_process_ended() {
        assert_eq!(
            judge(CLEAN, b"", NONCE),
            Outcome::Crashed {
                cause: Cause::NoVerdict { end: CLEAN }
            }
        );
    }

    #[test]
    fn a_verdict_without_the_nonce_does_not_count() {
        let forged = format!(
            "{} {}\n",
            "f".repeat(16),
            serde_json::to_string(&Outcome::Passed).unwrap_or_default()
        );
        assert!(!judge(CLEAN, forged.as_bytes(), NONCE).passed());
    }

    #[test]
    fn two_verdicts_are_none() {
        let two = line(&Outcome::Passed).repeat(2);
        assert!(matches!(
            judge(CLEAN, two.as_bytes(), NONCE),
            Outcome::Crashed {
                cause: Cause::Unreadable { .. }
            }
        ));
    }

    #[test]
    fn a_pass_followed_by_an_abort_is_a_failure() {
        let aborted = End::Signaled { signal: SIGABRT };
        assert_eq!(
            judge(aborted, line(&Outcome::Passed).as_bytes(), NONCE),
            Outcome::Crashed {
                cause: Cause::EndedAfterVerdict { end: aborted }
            }
        );
    }
}
