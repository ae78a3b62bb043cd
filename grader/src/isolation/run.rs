//! One sandboxed command, from the fork to the last process's death.
//!
//! `bwrap` is started with its limits and cgroup already in place (set by
//! the forked child before it executes `bwrap`), and tells on a pipe which
//! process is the sandbox's pid 1. The wait is a `poll` on a pidfd of
//! `bwrap` and on that pipe, woken every [`TICK`] to look at the clock and at
//! the tree's CPU time. At a limit, pid 1 is killed: the kernel then kills
//! every process of the pid namespace, whatever session or process group it
//! made, whatever signals it ignores. The teardown does that in every case
//! (a daemon left behind by a command that exited is killed the same way)
//! and returns only when pid 1 has exited, which the kernel allows only once
//! the namespace is empty; the cgroup, when there is one, is checked empty
//! too.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::Signal;

use super::capture::{self, Captured};
use super::cgroup::Group;
use super::error::IsolationError;
use super::limits::{Enforcement, Limit, Mechanism};
use super::spec::Spec;
use super::{Isolation, Outcome, bwrap};
use crate::sys::{self, ChildSetup};

/// How often the clock and the tree's CPU time are looked at. An exit is
/// seen at once (the pidfd wakes the poll), so this adds no latency.
const TICK: Duration = Duration::from_millis(100);

/// How long a killed sandbox may take to be gone before it is an error.
const GRACE: Duration = Duration::from_secs(5);

/// Runs `spec` under `isolation`; see [`Isolation::run`]. When `stop`
/// becomes readable (its write end written to or closed), the sandbox is
/// killed as at a limit, though no limit was hit.
pub(crate) fn run(
    isolation: &Isolation,
    spec: &Spec,
    stop: Option<BorrowedFd<'_>>,
) -> Result<Outcome, IsolationError> {
    check_paths(spec)?;
    let limits = &spec.limits;
    let started = Instant::now();

    let (group, enforcement) = match &isolation.cgroups {
        Ok(hierarchy) => match hierarchy.create(limits) {
            Ok(group) => {
                let mechanism = Mechanism::Cgroup {
                    version: group.version,
                };
                let cpu = if group.cpu_time().is_some() {
                    mechanism
                } else {
                    Mechanism::NotEnforced("no cpuacct controller")
                };
                let enforcement = Enforcement {
                    memory: mechanism,
                    processes: mechanism,
                    cpu_total: cpu,
                    cgroup_note: None,
                };
                (Some(group), enforcement)
            }
            Err(e) => (
                None,
                Enforcement::without_cgroup(format!("could not make one: {e}")),
            ),
        },
        Err(why) => (None, Enforcement::without_cgroup(why.clone())),
    };

    let (status_read, status_write) = sys::pipe()?;
    let mut cgroup_procs = Vec::new();
    if let Some(group) = &group {
        for file in group.procs_files()? {
            cgroup_procs.push(sys::high(OwnedFd::from(file).as_fd())?);
        }
    }
    let mut command = Command::new(&isolation.bwrap);
    command
        .args(bwrap::args(spec, isolation.features))
        // bwrap's own environment too: nothing of the judge's reaches it.
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let setup = ChildSetup {
        cgroup_procs,
        rlimits: limits.rlimits(&enforcement),
        descriptors: vec![(status_write, sys::STATUS_FD)],
        die_with: None,
    };
    sys::install(&mut command, setup)?;
    let spawned = command.spawn();
    // Closes our copies of the status pipe's write end and of the cgroup
    // files, held by the hook: the pipe ends when bwrap closes it.
    drop(command);
    let mut child = spawned?;
    let bwrap_pid = child.id();
    let bwrap_fd = match sys::pidfd_open(bwrap_pid) {
        Ok(fd) => fd,
        Err(e) => {
            // Without it we cannot wait safely; the kernel is older than the
            // detection allowed. Stop bwrap (pid 1 follows it) and say so.
            let _ = child.kill();
            let _ = child.wait();
            return Err(IsolationError::Spawn { source: e });
        }
    };
    let stdout = capture::spawn(child.stdout.take(), limits.output);
    let stderr = capture::spawn(child.stderr.take(), limits.output);

    let mut status = Status::new(status_read);
    let mut hits = BTreeSet::new();
    let mut killed: Option<Instant> = None;
    let deadline = started + limits.wall_time;
    let mut stopped = false;
    loop {
        let now = Instant::now();
        if killed.is_none() {
            if now >= deadline {
                hits.insert(Limit::WallTime);
            } else if group
                .as_ref()
                .and_then(Group::cpu_time)
                .is_some_and(|cpu| cpu > limits.cpu_time)
            {
                hits.insert(Limit::CpuTime);
            }
            if !hits.is_empty() || stopped {
                kill(&status, &mut child);
                killed = Some(now);
            }
        } else if killed.is_some_and(|at| now > at + GRACE) {
            // bwrap itself did not end: it cannot ignore SIGKILL, so this is
            // a process stuck in the kernel; try again and keep waiting.
            let _ = child.kill();
        }
        let timeout = if killed.is_some() {
            TICK
        } else {
            deadline.saturating_duration_since(now).min(TICK)
        };
        let mut fds = vec![bwrap_fd.as_fd()];
        fds.extend(status.pipe.as_ref().map(|p| p.as_fd()));
        let stop_at = fds.len();
        fds.extend(stop.filter(|_| killed.is_none()));
        let ready = sys::poll(&fds, timeout);
        if status.pipe.is_some() && ready.get(1) == Some(&true) {
            status.read();
        }
        stopped = stop.is_some() && ready.get(stop_at) == Some(&true);
        if ready[0] {
            break;
        }
    }
    // Reaped before the teardown, which must happen whatever this says.
    let reaped = sys::wait4(bwrap_pid);
    status.drain();

    // The teardown: the namespace's pid 1 killed and waited for, whatever
    // happened before. Its exit means the namespace is empty.
    let mut leftover = Vec::new();
    if let Some(pid1) = &status.pid1 {
        let _ = sys::pidfd_kill(pid1.as_fd());
        if !sys::poll(&[pid1.as_fd()], GRACE)[0] {
            leftover.push(status.pid1_number.unwrap_or(0));
        }
    }
    if let Some(group) = &group {
        leftover.extend(group.empty(GRACE));
    }
    if !leftover.is_empty() {
        // The capture threads would wait for these processes: leave them.
        return Err(IsolationError::Leftover { pids: leftover });
    }
    let reaped = reaped?;
    // Every writer of the pipes is dead now, so they end at once; a bound
    // all the same, so that a bug here cannot hang the judge.
    let (Some(stdout), Some(stderr)) = (stdout.finish(GRACE), stderr.finish(GRACE)) else {
        return Err(IsolationError::Leftover { pids: Vec::new() });
    };

    let bwrap_code = (reaped.status & 0x7f == 0).then_some((reaped.status >> 8) & 0xff);
    if status.exit_code.is_none()
        && killed.is_none()
        && bwrap_code == Some(1)
        && stderr.text.starts_with("bwrap: ")
    {
        return Err(IsolationError::Setup {
            said: stderr.text.trim().to_string(),
        });
    }
    if let Some(group) = &group {
        if group.oom_kills() > 0 {
            hits.insert(Limit::Memory);
        }
        if group.forks_refused() > 0 {
            hits.insert(Limit::Processes);
        }
    } else if looks_out_of_memory(&stderr) {
        hits.insert(Limit::Memory);
    }
    match status.exit_code {
        Some(code) if code == 128 + Signal::XFSZ.as_raw() => {
            hits.insert(Limit::FileSize);
        }
        Some(code) if code == 128 + Signal::XCPU.as_raw() => {
            hits.insert(Limit::CpuTime);
        }
        _ => {}
    }
    let outcome = Outcome {
        exit_code: status.exit_code,
        limits_hit: hits.into_iter().collect(),
        stdout,
        stderr,
        wall_time: started.elapsed(),
        cpu_time: group
            .as_ref()
            .and_then(Group::cpu_time)
            .or(Some(reaped.cpu)),
        peak_memory: group.as_ref().and_then(Group::peak_memory),
        enforcement,
    };
    // Dropping the group removes its directories.
    drop(group);
    Ok(outcome)
}

/// Under RLIMIT_DATA an allocation fails rather than a process being killed:
/// Rust's allocator then aborts with this message.
fn looks_out_of_memory(stderr: &Captured) -> bool {
    stderr.text.contains("memory allocation of ") && stderr.text.contains(" failed")
}

/// Kills the whole sandbox: pid 1 of its namespace when known (the kernel
/// then kills every member), and bwrap (whose death kills pid 1 too, through
/// `--die-with-parent`, should pid 1 not be known yet).
fn kill(status: &Status, child: &mut std::process::Child) {
    if let Some(pid1) = &status.pid1 {
        let _ = sys::pidfd_kill(pid1.as_fd());
    }
    let _ = child.kill();
}

fn check_paths(spec: &Spec) -> Result<(), IsolationError> {
    if !spec.scratch.source.is_dir() {
        return Err(IsolationError::MissingPath {
            what: "scratch directory",
            path: spec.scratch.source.clone(),
        });
    }
    for bind in &spec.binds {
        if !bind.source.exists() {
            return Err(IsolationError::MissingPath {
                what: "bind",
                path: bind.source.clone(),
            });
        }
    }
    Ok(())
}

/// What bwrap writes on its JSON status pipe, read as it comes.
struct Status {
    pipe: Option<File>,
    buffer: Vec<u8>,
    /// A pidfd of the sandbox's pid 1.
    pid1: Option<OwnedFd>,
    pid1_number: Option<u32>,
    /// The command's exit code (128 + N for a signal N), once it has ended.
    exit_code: Option<i32>,
}

impl Status {
    fn new(pipe: OwnedFd) -> Status {
        Status {
            pipe: Some(File::from(pipe)),
            buffer: Vec::new(),
            pid1: None,
            pid1_number: None,
            exit_code: None,
        }
    }

    /// Reads what is there (the poll said something is), and parses the
    /// complete lines.
    fn read(&mut self) {
        let Some(pipe) = &mut self.pipe else { return };
        let mut chunk = [0u8; 4096];
        match pipe.read(&mut chunk) {
            Ok(0) | Err(_) => self.pipe = None,
            Ok(n) => self.buffer.extend_from_slice(&chunk[..n]),
        }
        while let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.buffer.drain(..=end).collect();
            self.parse(&line);
        }
    }

    /// Reads to the end, after bwrap has exited. Nothing else should hold
    /// the write end (bwrap closes it in the sandbox), but a read never
    /// waits more than a second.
    fn drain(&mut self) {
        while let Some(pipe) = &self.pipe {
            match sys::poll(&[pipe.as_fd()], Duration::from_secs(1)) {
                ready if ready[0] => self.read(),
                _ => self.pipe = None,
            }
        }
        let rest = std::mem::take(&mut self.buffer);
        self.parse(&rest);
    }

    fn parse(&mut self, line: &[u8]) {
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(line) else {
            return;
        };
        if let Some(pid) = value.get("child-pid").and_then(serde_json::Value::as_i64) {
            let Ok(pid) = u32::try_from(pid) else {
                return;
            };
            self.pid1_number = Some(pid);
            self.pid1 = sys::pidfd_open(pid)
                .ok()
                .filter(|_| !same_pid_namespace(pid));
        }
        if let Some(code) = value.get("exit-code").and_then(serde_json::Value::as_i64) {
            self.exit_code = Some(code as i32);
        }
    }
}

/// True when `pid` is in this process's own pid namespace: then it is not
/// the sandbox's pid 1 but a stranger that took a reused number (the sandbox
/// must have been gone already), and must not be signalled. Unknown (the
/// link cannot be read) counts as not the same.
fn same_pid_namespace(pid: u32) -> bool {
    let theirs = std::fs::read_link(Path::new("/proc").join(pid.to_string()).join("ns/pid"));
    let ours = std::fs::read_link("/proc/self/ns/pid");
    matches!((theirs, ours), (Ok(a), Ok(b)) if a == b)
}
