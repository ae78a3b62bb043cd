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
//! The child runs in a process group of its own, with a limit on its address
//! space, and is killed (with everything it started) when it overruns the time
//! limit; the harness then names what happened from the exit status.

use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use super::capture::Output;
use super::child::{CHECK_VAR, VERDICT_FD, VERDICT_FD_VAR};
use super::outcome::{Cause, End, Outcome};

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
    let (channel, channel_end) = io::pipe()?;
    let (output, output_end) = io::pipe()?;
    let mut command = Command::new(exe);
    command
        .env(CHECK_VAR, check)
        .env(VERDICT_FD_VAR, VERDICT_FD.to_string())
        .envs(env.iter().map(|(k, v)| (k, v)))
        // Only the harness writes the run's results.
        .env_remove(super::results::RESULTS_FILE_VAR)
        .stdin(Stdio::piped())
        .stdout(output_end.try_clone()?)
        .stderr(output_end)
        // Its own group, so that whatever it starts is killed with it.
        .process_group(0);
    let channel_fd = channel_end.as_raw_fd();
    let memory = limits.memory;
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: between fork and exec the closure calls only async-signal-safe
    // functions (fcntl, dup2, setrlimit, prctl, getppid) and allocates nothing.
    unsafe {
        command.pre_exec(move || in_the_child(channel_fd, memory, parent));
    }
    let mut child = command.spawn()?;
    // Only the child may hold the write ends now, or the reads never end.
    drop(command);
    drop(channel_end);

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
    let status = wait(&mut child, limits.time)?;
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
                    end:
                        End::Signaled {
                            signal: libc::SIGABRT,
                        },
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

/// Runs in the child between fork and exec: the private channel onto its
/// agreed descriptor, the memory limit, and (on Linux) death with the harness.
fn in_the_child(channel_fd: i32, memory: u64, parent: libc::pid_t) -> io::Result<()> {
    // SAFETY: plain system calls on descriptors this process owns.
    unsafe {
        if channel_fd == VERDICT_FD {
            // dup2 onto itself would keep close-on-exec set.
            if libc::fcntl(channel_fd, libc::F_SETFD, 0) == -1 {
                return Err(io::Error::last_os_error());
            }
        } else if libc::dup2(channel_fd, VERDICT_FD) == -1 {
            return Err(io::Error::last_os_error());
        }
    }
    limit_and_tie(memory, parent)
}

/// Runs in a child between fork and exec, after what is its own: a limit on
/// its memory and (on Linux) death with this process's thread that started it.
/// Used for a check's process and for a learner's runner alike.
///
/// The limit is on the data segment and private writable mappings
/// (`RLIMIT_DATA`), not on the address space (`RLIMIT_AS`): glibc reserves
/// 64 MiB of address space for the malloc arena of each thread that meets
/// contention, so eight busy threads reach 512 MiB of address space with a few
/// MiB in use, and a check with five node links failed so under load. A
/// reservation is not writable until it is used, so it does not count here,
/// while every block a process allocates does, touched or not.
pub(crate) fn limit_and_tie(memory: u64, parent: libc::pid_t) -> io::Result<()> {
    // SAFETY: plain system calls on the calling process only; no allocation.
    unsafe {
        let limit = libc::rlimit {
            rlim_cur: memory as libc::rlim_t,
            rlim_max: memory as libc::rlim_t,
        };
        // Where the system has no such limit, the time limit still holds.
        let _ = libc::setrlimit(libc::RLIMIT_DATA, &limit);
        // A parent stopped by Ctrl-C can no longer enforce the time limit:
        // the child goes with it. The signal comes when the thread that
        // started the child ends, and that thread waits for the child.
        #[cfg(target_os = "linux")]
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 || libc::getppid() != parent {
            // The parent is gone already. (No allocation here: no message.)
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        #[cfg(not(target_os = "linux"))]
        let _ = parent;
    }
    Ok(())
}

/// Waits for `child` to end, then kills whatever it started; `None` when it
/// overran `limit` and was killed.
fn wait(child: &mut Child, limit: Duration) -> io::Result<Option<ExitStatus>> {
    let pid = child.id() as libc::pid_t;
    let started = Instant::now();
    let timed_out = loop {
        if has_ended(pid)? {
            break false;
        }
        if started.elapsed() >= limit {
            break true;
        }
        thread::sleep(POLL);
    };
    // The child is not reaped yet, so its group's id cannot have been reused:
    // this reaches only the child and what it started, which would otherwise
    // hold the pipes open.
    // SAFETY: a plain system call on the child's own group.
    unsafe { libc::killpg(pid, libc::SIGKILL) };
    let status = child.wait()?;
    Ok((!timed_out).then_some(status))
}

/// Whether the child `pid` has ended, without reaping it.
fn has_ended(pid: libc::pid_t) -> io::Result<bool> {
    // SAFETY: waitid fills in the zeroed siginfo_t; with WNOHANG, si_pid stays
    // 0 while the child runs.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
        if libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags) == -1 {
            let error = io::Error::last_os_error();
            if error.kind() == io::ErrorKind::Interrupted {
                return Ok(false);
            }
            return Err(error);
        }
        Ok(info.si_pid() != 0)
    }
}

/// How the child ended, from its exit status.
fn end_of(status: ExitStatus, output: &Output, limits: Limits) -> End {
    match (status.code(), status.signal()) {
        (Some(code), _) => End::Exited { code },
        (None, Some(libc::SIGABRT)) if output.tells_of_allocation_failure() => End::OutOfMemory {
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
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(format!("no random nonce: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
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
        let aborted = End::Signaled {
            signal: libc::SIGABRT,
        };
        assert_eq!(
            judge(aborted, line(&Outcome::Passed).as_bytes(), NONCE),
            Outcome::Crashed {
                cause: Cause::EndedAfterVerdict { end: aborted }
            }
        );
    }
}
