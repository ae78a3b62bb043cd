//! How much a sandbox may take, and how each limit is enforced here.
//!
//! bubblewrap sets no limits of its own, so they come from two kernel
//! mechanisms. A cgroup counts the whole tree of processes, whatever they
//! fork: memory (page cache and the files of `/tmp` and `/dev/shm` included)
//! and the number of tasks (processes and threads). When no cgroup can be
//! made (no root, no delegated subtree), resource limits (rlimits) stand in;
//! they are inherited by every process but counted per process (memory as
//! address space), or per user (processes), so a tree can go further than one
//! process could. A file's size and a process's CPU time are rlimits in
//! either case; the wall time is the caller's timer, which kills the whole
//! sandbox. [`Enforcement`] says which mechanism holds each limit, so a
//! caller can print it or refuse to go on.

use std::fmt;
use std::time::Duration;

use crate::sys::{Resource, Rlimit};

/// The limits of one sandboxed command. Every field applies to everything
/// the command starts, not only to the command itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Memory in bytes, for the whole tree when a cgroup holds it
    /// ([`Mechanism::Cgroup`]), else allocated memory per process
    /// (RLIMIT_DATA: what a process allocates, touched or not, without the
    /// address space that glibc only reserves for each thread's arena).
    pub memory: u64,
    /// Processes and threads at once, for the whole tree (pids cgroup), else
    /// RLIMIT_NPROC.
    pub processes: u64,
    /// The largest file any process may write, in bytes (RLIMIT_FSIZE): a
    /// write past it fails and the writer gets SIGXFSZ.
    pub file_size: u64,
    /// CPU time: per process (RLIMIT_CPU), and for the whole tree when a
    /// cgroup counts it (then the sandbox is killed when the sum passes it).
    pub cpu_time: Duration,
    /// Real time from the start; then the whole sandbox is killed.
    pub wall_time: Duration,
    /// How much of standard output, and again of standard error, is kept;
    /// the rest is read and dropped, with a note of how much.
    pub output: usize,
    /// The size of the sandbox's fresh `/tmp` (a tmpfs; it counts towards
    /// the memory limit too).
    pub tmp_size: u64,
}

const MIB: u64 = 1 << 20;

impl Limits {
    /// Limits for building a submission (`cargo build`): rustc and the
    /// linker need memory, cargo runs a few rustc at once with many threads
    /// each, a binary with debug information can be hundreds of megabytes.
    pub fn build() -> Limits {
        Limits {
            memory: 4096 * MIB,
            processes: 512,
            file_size: 2048 * MIB,
            cpu_time: Duration::from_secs(600),
            wall_time: Duration::from_secs(600),
            output: MIB as usize,
            tmp_size: 1024 * MIB,
        }
    }

    /// Limits for one run of the learner's runner binary.
    pub fn run() -> Limits {
        Limits {
            memory: 512 * MIB,
            processes: 64,
            file_size: 16 * MIB,
            cpu_time: Duration::from_secs(60),
            wall_time: Duration::from_secs(120),
            output: MIB as usize,
            tmp_size: 64 * MIB,
        }
    }

    /// The rlimits the child sets before `bwrap` runs, given which limits a
    /// cgroup already holds.
    pub(crate) fn rlimits(&self, enforcement: &Enforcement) -> Vec<Rlimit> {
        let cpu = self.cpu_time.as_secs().max(1);
        let mut limits = vec![
            // The soft limit sends SIGXFSZ and fails the write; same hard
            // limit, so a process cannot raise it again.
            rlimit(Resource::Fsize, self.file_size, self.file_size),
            // SIGXCPU at the soft limit, SIGKILL one second later for a
            // process that handles SIGXCPU.
            rlimit(Resource::Cpu, cpu, cpu + 1),
            // No core files: they would be written into the scratch dir.
            rlimit(Resource::Core, 0, 0),
        ];
        if enforcement.memory == Mechanism::Rlimit {
            limits.push(rlimit(Resource::Data, self.memory, self.memory));
        }
        if enforcement.processes == Mechanism::Rlimit {
            limits.push(rlimit(Resource::Nproc, self.processes, self.processes));
        }
        limits
    }
}

fn rlimit(resource: Resource, soft: u64, hard: u64) -> Rlimit {
    Rlimit {
        resource,
        soft,
        hard,
    }
}

/// One of the limits, as named in [`super::Outcome::limits_hit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Limit {
    /// [`Limits::memory`]: the kernel killed a process for memory.
    Memory,
    /// [`Limits::processes`]: a fork or a thread was refused.
    Processes,
    /// [`Limits::file_size`]: the command died of SIGXFSZ.
    FileSize,
    /// [`Limits::cpu_time`]: the command died of SIGXCPU, or the tree's CPU
    /// time passed the limit and the sandbox was killed.
    CpuTime,
    /// [`Limits::wall_time`]: the sandbox was killed at its deadline.
    WallTime,
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Limit::Memory => "memory limit",
            Limit::Processes => "process limit",
            Limit::FileSize => "file size limit",
            Limit::CpuTime => "CPU time limit",
            Limit::WallTime => "time limit",
        })
    }
}

/// How one limit is enforced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mechanism {
    /// By a cgroup made for this sandbox: the whole tree counts together.
    Cgroup {
        /// 1 or 2.
        version: u8,
    },
    /// By an rlimit, inherited by every process but counted per process
    /// (memory, CPU, file size) or per user (processes).
    Rlimit,
    /// Not at all, with the reason.
    NotEnforced(&'static str),
}

/// Which mechanism holds each limit, for one sandbox (or, from
/// [`super::Isolation::enforcement`], for those to come).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Enforcement {
    /// [`Limits::memory`].
    pub memory: Mechanism,
    /// [`Limits::processes`].
    pub processes: Mechanism,
    /// [`Limits::cpu_time`] for the whole tree (an rlimit holds each process
    /// in any case).
    pub cpu_total: Mechanism,
    /// Why no cgroup holds the limits, when none does.
    pub cgroup_note: Option<String>,
}

impl Enforcement {
    /// The enforcement when no cgroup could be made, for `why`.
    pub(crate) fn without_cgroup(why: String) -> Enforcement {
        let processes = if crate::sys::uid() == 0 {
            // The kernel exempts root (and a user namespace's root mapped to
            // it) from RLIMIT_NPROC.
            Mechanism::NotEnforced(
                "RLIMIT_NPROC does not apply to root; the wall time still ends a fork bomb",
            )
        } else {
            Mechanism::Rlimit
        };
        Enforcement {
            memory: Mechanism::Rlimit,
            processes,
            cpu_total: Mechanism::NotEnforced(
                "no cgroup counts the tree's CPU time; RLIMIT_CPU holds each process",
            ),
            cgroup_note: Some(why),
        }
    }

    /// True when memory and processes are held for the whole tree.
    pub fn whole_tree(&self) -> bool {
        matches!(self.memory, Mechanism::Cgroup { .. })
            && matches!(self.processes, Mechanism::Cgroup { .. })
    }
}

impl fmt::Display for Enforcement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let line = |f: &mut fmt::Formatter<'_>, what: &str, m: &Mechanism, rlimit: &str| match m {
            Mechanism::Cgroup { version } => {
                writeln!(f, "{what}: cgroup v{version}, for the whole tree")
            }
            Mechanism::Rlimit => writeln!(f, "{what}: {rlimit}"),
            Mechanism::NotEnforced(why) => writeln!(f, "{what}: not enforced ({why})"),
        };
        line(
            f,
            "memory",
            &self.memory,
            "RLIMIT_DATA, per process (memory allocated, touched or not)",
        )?;
        line(
            f,
            "processes",
            &self.processes,
            "RLIMIT_NPROC, counting every process of this user",
        )?;
        writeln!(f, "file size: RLIMIT_FSIZE, per file")?;
        line(f, "CPU time of the tree", &self.cpu_total, "")?;
        writeln!(f, "CPU time of each process: RLIMIT_CPU")?;
        write!(
            f,
            "wall time: the caller's timer, which kills the whole sandbox"
        )?;
        if let Some(note) = &self.cgroup_note {
            write!(f, "\n(no cgroup: {note})")?;
        }
        Ok(())
    }
}
