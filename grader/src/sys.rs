//! The system calls the grader makes that the standard library does not
//! offer, in one place: signals to a process or a process group, process file
//! descriptors (pidfds) to signal and wait for a process without racing
//! against the reuse of its pid, `poll`, `wait4` (for the CPU time of a whole
//! tree), waiting for a child without reaping it, and what a child does
//! between `fork` and `exec` (cgroup membership, resource limits, descriptors
//! at agreed numbers, death with its parent).
//!
//! Most are safe functions of `rustix`. The few that are not (`wait4`, the
//! hook that runs between `fork` and `exec`, taking ownership of a descriptor
//! a parent handed down) are the only `unsafe` code of the crate, each with
//! the reason it is sound.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::io::{Errno, FdFlags};
use rustix::process::{Pid, WaitId, WaitIdOptions};

pub use rustix::process::{Resource, Signal};

/// The descriptor number `bwrap` is told to write its JSON status to.
pub const STATUS_FD: RawFd = 3;

/// Descriptors we hand to the child are moved at or above this number first,
/// so that none of them can sit on 0–2 or on a number a child expects.
const HIGH_FD: RawFd = 10;

/// `pid` as rustix takes it; `None` for 0 or a number no process can have.
fn pid(pid: u32) -> Option<Pid> {
    i32::try_from(pid).ok().and_then(Pid::from_raw)
}

/// A copy of `fd` at a number of [`HIGH_FD`] or more, close-on-exec.
pub fn high(fd: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    Ok(rustix::io::fcntl_dupfd_cloexec(fd, HIGH_FD)?)
}

/// A pipe whose two ends are close-on-exec (so that no other thread's child
/// inherits them) and numbered [`HIGH_FD`] or more: `(read, write)`.
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    Ok((high(r.as_fd())?, high(w.as_fd())?))
}

/// A pidfd for `pid`: it names that process and no later one with the same
/// number, so signalling through it cannot hit a stranger.
pub fn pidfd_open(process: u32) -> io::Result<OwnedFd> {
    let process = pid(process).ok_or_else(|| io::Error::from(Errno::SRCH))?;
    Ok(rustix::process::pidfd_open(
        process,
        rustix::process::PidfdFlags::empty(),
    )?)
}

/// Sends SIGKILL to the process `pidfd` names. A process already gone is not
/// an error.
pub fn pidfd_kill(pidfd: BorrowedFd<'_>) -> io::Result<()> {
    match rustix::process::pidfd_send_signal(pidfd, Signal::KILL) {
        Err(Errno::SRCH) => Ok(()),
        other => Ok(other?),
    }
}

/// Sends SIGKILL to `process`, for the members of a cgroup v1 (which has no
/// `cgroup.kill`). A pid read from a cgroup's `cgroup.procs` is a live or
/// zombie member of it, so it cannot have been reused yet. A process that has
/// just exited needs no handling.
pub fn kill(process: u32) {
    if let Some(process) = pid(process) {
        let _ = rustix::process::kill_process(process, Signal::KILL);
    }
}

/// Sends `signal` to `process`, a child of this process's that it has not reaped (a Redis
/// node's server: stopped, continued, killed), so that its pid cannot have been reused. A
/// process already gone is not an error.
pub fn send(process: u32, signal: Signal) {
    if let Some(process) = pid(process) {
        let _ = rustix::process::kill_process(process, signal);
    }
}

/// Whether a process `process` exists, whoever it belongs to (signal 0 sends nothing; a
/// process of another user answers "not permitted", which says that it exists).
pub fn exists(process: u32) -> bool {
    pid(process).is_some_and(|process| {
        matches!(
            rustix::process::test_kill_process(process),
            Ok(()) | Err(Errno::PERM)
        )
    })
}

/// This machine's host name (`uname`'s node name).
pub fn host_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// Runs `handler` when this process exits normally (`atexit`): a plain function that never
/// unwinds. Says whether it was registered.
pub fn at_exit(handler: extern "C" fn()) -> bool {
    // SAFETY: `handler` is a function of C ABI, valid for the whole life of the process; the
    // caller's doc holds it to never unwind.
    unsafe { libc::atexit(handler) == 0 }
}

/// Sends SIGKILL to every process of the group `group`. The caller holds the
/// group's leader unreaped (see [`has_ended`]), so that its id cannot have
/// been handed to another group. A group already empty needs no handling.
pub fn kill_group(group: u32) {
    if let Some(group) = pid(group) {
        let _ = rustix::process::kill_process_group(group, Signal::KILL);
    }
}

/// Stops this process (`SIGSTOP`), as a lock of the catalogue that freezes does.
///
/// The signal is raised on the calling thread (`raise`, a `tgkill` to itself), not
/// sent to this process's pid: sent with `kill` to its own pid, the runner that does
/// this went on at once when the grader's tests ran on one thread, and its check then
/// read a grant where it should have waited for a call that never returns.
pub fn stop_this_process() {
    // SAFETY: `raise` takes a signal number and touches no memory of ours.
    unsafe { libc::raise(libc::SIGSTOP) };
}

/// Whether the child `process` has ended, without reaping it: its pid, and
/// the id of the group it leads, stay its own until it is waited for.
pub fn has_ended(process: u32) -> io::Result<bool> {
    let process = pid(process).ok_or_else(|| io::Error::from(Errno::CHILD))?;
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
    match rustix::process::waitid(WaitId::Pid(process), options) {
        Ok(status) => Ok(status.is_some()),
        Err(Errno::INTR) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Waits until one of `fds` is readable (a pidfd becomes readable when its
/// process exits), or `timeout` has passed; says which are readable. A
/// failed poll (it can fail only for lack of memory) counts as a timeout,
/// after sleeping for it, so that the caller's loop goes on to its limits.
pub fn poll(fds: &[BorrowedFd<'_>], timeout: Duration) -> Vec<bool> {
    let mut polls: Vec<PollFd<'_>> = fds
        .iter()
        .map(|fd| PollFd::from_borrowed_fd(*fd, PollFlags::IN))
        .collect();
    // A timeout too long for a timespec is as good as none.
    let limit = Timespec::try_from(timeout).ok();
    match rustix::event::poll(&mut polls, limit.as_ref()) {
        Ok(_) => polls.iter().map(|p| !p.revents().is_empty()).collect(),
        Err(e) => {
            if e != Errno::INTR {
                std::thread::sleep(timeout);
            }
            vec![false; fds.len()]
        }
    }
}

/// What `wait4` tells about a child that has ended.
pub struct Reaped {
    /// The raw wait status.
    pub status: i32,
    /// User plus system CPU time of the child and of every descendant it
    /// (or they, transitively) waited for.
    pub cpu: Duration,
}

/// Reaps the child `process`, blocking until it has ended. (rustix has no
/// `wait4`, whose resource usage is the CPU time of the whole tree.)
pub fn wait4(process: u32) -> io::Result<Reaped> {
    let process = i32::try_from(process).map_err(|_| io::Error::from(Errno::CHILD))?;
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to overwrite.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: valid pointers to a status int and a rusage struct.
        let ret = unsafe { libc::wait4(process, &mut status, 0, &mut usage) };
        if ret >= 0 {
            break;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    Ok(Reaped {
        status,
        cpu: tv(usage.ru_utime) + tv(usage.ru_stime),
    })
}

/// A resource limit a child sets on itself before its program runs; every
/// process it starts inherits it.
#[derive(Clone, Copy, Debug)]
pub struct Rlimit {
    /// Which resource.
    pub resource: Resource,
    /// The soft limit (the one that signals or fails a call).
    pub soft: u64,
    /// The hard limit (at most this; for CPU, SIGKILL).
    pub hard: u64,
}

/// What a forked child does before it executes its program, in this order.
#[derive(Default)]
pub struct ChildSetup {
    /// Open `cgroup.procs` files: writing `0` moves the writer itself in, so
    /// the program and all it starts are members before the first fork.
    pub cgroup_procs: Vec<OwnedFd>,
    /// Resource limits to set.
    pub rlimits: Vec<Rlimit>,
    /// Descriptors to hand down, each at the number paired with it (and not
    /// close-on-exec there). Each is first copied to [`HIGH_FD`] or more, so
    /// that none sits on another's number.
    pub descriptors: Vec<(OwnedFd, RawFd)>,
    /// Dies by SIGKILL when the thread that spawned it ends, and refuses to
    /// start if its parent, this process, is gone already: with this
    /// process's id.
    pub die_with: Option<u32>,
}

/// Installs `setup` to run in the child of `command` between `fork` and
/// `exec`. Only async-signal-safe system calls run there (write, setrlimit,
/// dup2, prctl, getppid): the judge is multi-threaded, and the child of a
/// fork may not allocate or lock.
pub fn install(command: &mut Command, setup: ChildSetup) -> io::Result<()> {
    let ChildSetup {
        cgroup_procs,
        rlimits,
        descriptors,
        die_with,
    } = setup;
    let mut handed = Vec::with_capacity(descriptors.len());
    for (fd, number) in descriptors {
        handed.push((high(fd.as_fd())?, number));
    }
    let parent = die_with.map(|parent| pid(parent).ok_or_else(|| io::Error::from(Errno::SRCH)));
    let parent = parent.transpose()?;
    let hook = move || -> io::Result<()> {
        for fd in &cgroup_procs {
            rustix::io::write(fd, b"0\n")?;
        }
        for limit in &rlimits {
            set_rlimit(limit)?;
        }
        for (fd, number) in &handed {
            // SAFETY: dup2 onto `number`; `fd` is HIGH_FD or more, so this is
            // never a no-op and the copy is not close-on-exec, as the program
            // needs. Whatever was at `number` in the child is closed: nothing
            // of the child's runs after the exec but its program.
            if unsafe { libc::dup2(fd.as_raw_fd(), *number) } == -1 {
                return Err(io::Error::last_os_error());
            }
        }
        if let Some(parent) = parent {
            die_with_parent(parent)?;
        }
        Ok(())
    };
    // SAFETY: the hook only makes async-signal-safe system calls on data
    // prepared before the fork (no allocation, no locks), and owns the
    // descriptors it uses until the exec.
    unsafe { command.pre_exec(hook) };
    Ok(())
}

/// Sets `limit` on the calling process: a system call, no allocation, so
/// that a child may call it between `fork` and `exec`.
pub fn set_rlimit(limit: &Rlimit) -> io::Result<()> {
    let value = rustix::process::Rlimit {
        current: Some(limit.soft),
        maximum: Some(limit.hard),
    };
    Ok(rustix::process::setrlimit(limit.resource, value)?)
}

/// Makes the calling process die by SIGKILL when the thread that started it
/// ends (a parent stopped by Ctrl-C can no longer enforce a time limit: the
/// child goes with it); fails when its parent is no longer `parent`, which
/// is then gone already. System calls only, for a child between `fork` and
/// `exec`: the error carries no message, which would allocate.
pub fn die_with_parent(parent: Pid) -> io::Result<()> {
    rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
    if rustix::process::getppid() != Some(parent) {
        return Err(Errno::SRCH.into());
    }
    Ok(())
}

/// Takes the descriptor `fd` a parent handed down (its number read from the
/// environment) as a file of this process's own, close-on-exec from now on
/// so that no program this process starts inherits it; `None` when no such
/// descriptor is open. Called once, at the start, before this process opens
/// anything that could sit at that number.
pub fn handed_down(fd: RawFd) -> Option<File> {
    if fd <= 2 {
        return None;
    }
    // SAFETY: a descriptor number the parent gave this process; it is only
    // borrowed for the fcntl, which fails if it is not open.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    rustix::io::fcntl_setfd(borrowed, FdFlags::CLOEXEC).ok()?;
    // SAFETY: the descriptor is open (fcntl succeeded) and nothing else in
    // this process owns it: it was inherited, not opened here.
    Some(unsafe { File::from_raw_fd(fd) })
}

/// The uid this process runs as.
pub fn uid() -> u32 {
    rustix::process::getuid().as_raw()
}
