//! The few system calls the sandbox needs that the standard library does not
//! offer, each wrapped once, so that every `unsafe` of the module is in this
//! file: process file descriptors (pidfds) to signal and wait for a process
//! without racing against the reuse of its pid, `poll`, `wait4` (for the CPU
//! time of a whole tree), and the hook that runs in the forked child just
//! before `bwrap` is executed (cgroup membership, resource limits, the status
//! pipe's descriptor number).

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

/// The descriptor number `bwrap` is told to write its JSON status to.
pub const STATUS_FD: RawFd = 3;

/// Descriptors we hand to the child are moved at or above this number first,
/// so that none of them can sit on 0–2 or on [`STATUS_FD`].
const HIGH_FD: RawFd = 10;

/// Turns a `-1` return value into the thread's `errno`.
fn check(ret: libc::c_long) -> io::Result<libc::c_long> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// A copy of `fd` at a number of [`HIGH_FD`] or more, close-on-exec.
pub fn high(fd: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC on a descriptor we borrow returns a new
    // descriptor that nothing else owns; we take ownership of it at once.
    let new = check(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, HIGH_FD) }.into())?;
    // SAFETY: `new` is a fresh descriptor owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(new as RawFd) })
}

/// A pipe whose two ends are close-on-exec (so that no other thread's child
/// inherits them) and numbered [`HIGH_FD`] or more: `(read, write)`.
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds: [RawFd; 2] = [-1, -1];
    // SAFETY: `fds` is a valid array of two ints for pipe2 to fill.
    check(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }.into())?;
    // SAFETY: pipe2 succeeded, so both descriptors are new and ours alone.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok((high(r.as_fd())?, high(w.as_fd())?))
}

/// A pidfd for `pid`: it names that process and no later one with the same
/// number, so signalling through it cannot hit a stranger.
pub fn pidfd_open(pid: libc::pid_t) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor
    // (close-on-exec by definition) or -1.
    let fd = check(unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) })?;
    // SAFETY: the descriptor is new and ours alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Sends SIGKILL to the process `pidfd` names. A process already gone is not
/// an error.
pub fn pidfd_kill(pidfd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: pidfd_send_signal with a valid pidfd, a signal number, no
    // siginfo (null) and no flags.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            libc::SIGKILL,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    match check(ret) {
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Ok(()),
        other => other.map(drop),
    }
}

/// Sends SIGKILL to `pid`, for the members of a cgroup v1 (which has no
/// `cgroup.kill`). A pid read from a cgroup's `cgroup.procs` is a live or
/// zombie member of it, so it cannot have been reused yet.
pub fn kill(pid: libc::pid_t) {
    // SAFETY: a plain system call; an error (the process has just exited)
    // needs no handling.
    unsafe { libc::kill(pid, libc::SIGKILL) };
}

/// Waits until one of `fds` is readable (a pidfd becomes readable when its
/// process exits), or `timeout` has passed; says which are readable. A
/// failed poll (it can fail only for lack of memory) counts as a timeout,
/// after sleeping for it, so that the caller's loop goes on to its limits.
pub fn poll(fds: &[BorrowedFd<'_>], timeout: Duration) -> Vec<bool> {
    let mut polls: Vec<libc::pollfd> = fds
        .iter()
        .map(|fd| libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
    // SAFETY: `polls` is a valid array of `polls.len()` pollfd structs.
    let ret = unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, ms) };
    if ret < 0 {
        if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            std::thread::sleep(timeout);
        }
        return vec![false; fds.len()];
    }
    polls.iter().map(|p| p.revents != 0).collect()
}

/// What `wait4` tells about a child that has ended.
pub struct Reaped {
    /// The raw wait status.
    pub status: i32,
    /// User plus system CPU time of the child and of every descendant it
    /// (or they, transitively) waited for.
    pub cpu: Duration,
}

/// Reaps the child `pid`, blocking until it has ended.
pub fn wait4(pid: libc::pid_t) -> io::Result<Reaped> {
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to overwrite.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: valid pointers to a status int and a rusage struct.
        let ret = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
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

/// The type `setrlimit` takes its resource as (glibc and musl differ).
#[cfg(target_env = "gnu")]
pub type Resource = libc::__rlimit_resource_t;
/// The type `setrlimit` takes its resource as (glibc and musl differ).
#[cfg(not(target_env = "gnu"))]
pub type Resource = libc::c_int;

/// A resource limit the child sets on itself before `bwrap` runs; every
/// process in the sandbox inherits it.
#[derive(Clone, Copy, Debug)]
pub struct Rlimit {
    /// `libc::RLIMIT_*`.
    pub resource: Resource,
    /// The soft limit (the one that signals or fails a call).
    pub soft: u64,
    /// The hard limit (at most this; for CPU, SIGKILL).
    pub hard: u64,
}

/// What the forked child does before it executes `bwrap`.
pub struct ChildSetup {
    /// Open `cgroup.procs` files: writing `0` moves the writer itself in, so
    /// `bwrap` and all it starts are members before the first fork.
    pub cgroup_procs: Vec<OwnedFd>,
    /// Resource limits to set.
    pub rlimits: Vec<Rlimit>,
    /// The write end of the status pipe, to be numbered [`STATUS_FD`].
    pub status: OwnedFd,
}

/// Installs `setup` to run in the child between `fork` and `exec`. Only
/// async-signal-safe calls run there (write, setrlimit, dup2): the judge is
/// multi-threaded, and the child of a fork may not allocate or lock.
pub fn install(command: &mut Command, setup: ChildSetup) {
    let ChildSetup {
        cgroup_procs,
        rlimits,
        status,
    } = setup;
    let procs: Vec<RawFd> = cgroup_procs.iter().map(AsRawFd::as_raw_fd).collect();
    let status_raw = status.as_raw_fd();
    let hook = move || -> io::Result<()> {
        // Keep the descriptors alive (owned by the closure) until the exec.
        let _owned = (&cgroup_procs, &status);
        for &fd in &procs {
            // SAFETY: writing two bytes from a static buffer to a descriptor
            // the closure owns.
            check(unsafe { libc::write(fd, b"0\n".as_ptr().cast(), 2) } as libc::c_long)?;
        }
        for limit in &rlimits {
            let value = libc::rlimit {
                rlim_cur: limit.soft,
                rlim_max: limit.hard,
            };
            // SAFETY: a valid rlimit struct for a valid resource number.
            check(unsafe { libc::setrlimit(limit.resource, &value) }.into())?;
        }
        // SAFETY: dup2 onto STATUS_FD; `status_raw` is >= HIGH_FD, so this is
        // never a no-op and the copy is not close-on-exec, as bwrap needs.
        check(unsafe { libc::dup2(status_raw, STATUS_FD) }.into())?;
        Ok(())
    };
    // SAFETY: the hook only makes async-signal-safe system calls on data
    // prepared before the fork (no allocation, no locks).
    unsafe { command.pre_exec(hook) };
}

/// The uid this process runs as.
pub fn uid() -> u32 {
    // SAFETY: getuid cannot fail.
    unsafe { libc::getuid() }
}
