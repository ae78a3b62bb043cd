//! Running untrusted code (the build of a learner's submission, and each run
//! of the learner's runner binary) in a sandbox made by bubblewrap, with
//! limits, and with nothing it started left alive afterwards.
//!
//! **Why bubblewrap.** It is a small, audited, widely packaged tool (Flatpak
//! runs on it) that makes Linux namespaces for one command, without a daemon
//! and at about 25 ms per call here (a plain spawn: 1.6 ms); writing such a jail
//! ourselves would mean getting mount, pid and user namespaces right alone.
//! It protects exactly what its command line says, so the command line is
//! built in one place ([`bwrap`]), and what each argument buys is said there:
//! a new mount namespace whose root is an empty tmpfs with only `/usr`, the
//! toolchain, the pieces of `/etc` that `cc` needs, the course's pristine
//! tree and one scratch directory bound in (everything read-only but the
//! scratch directory and binds the caller marks writable); a new pid
//! namespace (the sandbox sees and signals only its own processes, and when
//! its pid 1 dies the kernel kills all of them, `setsid` or not); a new
//! network namespace with only a loopback of its own (no network at all, not
//! even the judge's 127.0.0.1; a Unix socket in a bound directory, even a
//! read-only one, still works, and is how the runner reaches the judge); new ipc and uts
//! namespaces; a user namespace in which it cannot make more
//! (`--disable-userns`); no capabilities (`--cap-drop ALL`) and
//! `no_new_privs`; a new session (no `TIOCSTI` into the judge's terminal);
//! an empty environment but for the variables given; a fresh `/tmp`, `/proc`
//! and `/dev`; SIGKILL for the sandbox if the judge dies.
//!
//! **Limits** ([`Limits`]) come from a cgroup per sandbox when this machine
//! allows one (memory and tasks for the whole tree), else from rlimits,
//! and always from rlimits for file size and CPU time per process, and from
//! the judge's timer for the wall time. [`Enforcement`] says which are in
//! force; [`Outcome::limits_hit`] which were hit.
//!
//! **What it does not protect against.** A kernel bug reachable by system
//! calls (there is no seccomp filter: a build needs most of them); whatever
//! is bound in, which the sandbox can use (the judge at the other end of a
//! socket must treat what comes in as hostile, and a directory bound
//! writable is writable); reading what is bound read-only (the course tree, the
//! registry: public anyway); using the CPU, memory bandwidth and disk I/O the
//! limits allow, which slows other work on the machine; timing side
//! channels. As root, without a cgroup, the number of processes is not held
//! (the kernel exempts root from RLIMIT_NPROC); only the wall time ends a
//! fork bomb then, so give the judge a cgroup (run it as root, or in a
//! systemd unit with `Delegate=yes`). Whether to go on without a sandbox
//! when [`Isolation::detect`] fails is the caller's decision.
//!
//! The judge's two uses: a submission built from a read-only tree into its
//! one writable directory, then the runner it built run in a fresh one, with
//! the directory of the judge's socket bound in.
//!
//! ```no_run
//! use std::path::Path;
//! use std::time::Duration;
//! use grader::isolation::{Isolation, Limits, Spec, Toolchain};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let isolation = Isolation::detect()?; // or go on without: the caller's choice
//! let (course, work) = (Path::new("/srv/alice/course"), Path::new("/srv/alice/work"));
//! let toolchain = Toolchain::detect(course)?;
//! let build = Spec::new(toolchain.cargo(), work)
//!     .args(["build", "--locked", "--offline", "--bin", "runner", "--manifest-path"])
//!     .arg(course.join("Cargo.toml"))
//!     .env("CARGO_TARGET_DIR", work.join("target"))
//!     .ro(course)
//!     .toolchain(&toolchain)
//!     .limits(Limits::build());
//! let built = isolation.run(&build)?;
//! if !built.success() {
//!     println!("the build {}:\n{}", built.describe(), built.stderr);
//! }
//!
//! let (runner, run_dir) = (work.join("target/debug/runner"), Path::new("/srv/alice/run-1"));
//! let sockets = Path::new("/srv/alice/sockets"); // the judge listens on sockets/judge.sock
//! let spec = Spec::new(&runner, run_dir)
//!     .ro(&runner)
//!     .ro(sockets) // connecting to a socket works through a read-only bind
//!     .env("JUDGE_SOCKET", sockets.join("judge.sock"))
//!     .limits(Limits { wall_time: Duration::from_secs(30), ..Limits::run() });
//! let ran = isolation.run(&spec)?;
//! println!("the runner {} ({:?} CPU); it said:\n{}", ran.describe(), ran.cpu_time, ran.stdout);
//! # Ok(())
//! # }
//! ```

mod bwrap;
mod capture;
mod cgroup;
pub mod error;
pub mod limits;
mod run;
pub mod spec;

use std::ffi::OsString;
use std::os::fd::BorrowedFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

pub use capture::Captured;
pub use error::{IsolationError, Unavailable};
pub use limits::{Enforcement, Limit, Limits, Mechanism};
pub use spec::{Bind, Spec, Toolchain};

use bwrap::Features;
use cgroup::Hierarchy;

use crate::sys;

/// A working bubblewrap, and how limits are enforced with it on this
/// machine. Made once by [`Isolation::detect`]; [`Isolation::run`] may then
/// be called from many threads at once.
#[derive(Clone, Debug)]
pub struct Isolation {
    bwrap: PathBuf,
    version: String,
    features: Features,
    cgroups: Result<Hierarchy, String>,
}

impl Isolation {
    /// Finds `bwrap` on `PATH` and checks that it can make a sandbox here, by
    /// running `true` in one with every option [`Isolation::run`] uses.
    pub fn detect() -> Result<Isolation, Unavailable> {
        Isolation::with_bwrap(bwrap::find().ok_or(Unavailable::NotInstalled)?)
    }

    /// As [`Isolation::detect`], with this `bwrap`.
    pub fn with_bwrap(bwrap: impl Into<PathBuf>) -> Result<Isolation, Unavailable> {
        let bwrap = bwrap.into();
        let version = Command::new(&bwrap)
            .arg("--version")
            .output()
            .map_err(|source| Unavailable::Spawn {
                bwrap: bwrap.clone(),
                source,
            })?;
        let version = String::from_utf8_lossy(&version.stdout).trim().to_string();
        // The teardown waits on pidfds (Linux 5.3).
        sys::pidfd_open(std::process::id()).map_err(|source| Unavailable::Kernel {
            what: "this kernel has no pidfd_open",
            source,
        })?;
        let cgroups = Hierarchy::detect(None);
        let mut isolation = Isolation {
            bwrap,
            version,
            features: Features {
                disable_userns: true,
            },
            cgroups,
        };
        isolation.check_cgroups();
        let probe = isolation.probe();
        match probe {
            Err(IsolationError::Setup { said })
                if said.contains("userns") || said.contains("unshare-user") =>
            {
                // A setuid or older bwrap: go on without --disable-userns.
                isolation.features.disable_userns = false;
                isolation.probe().map_err(|e| isolation.refused(e))?;
            }
            other => {
                other.map_err(|e| isolation.refused(e))?;
            }
        }
        Ok(isolation)
    }

    /// This isolation as a line of text, for the processes this one starts:
    /// [`Isolation::handed_down`] makes it again there without trying a
    /// sandbox first (a grading starts one process per check, and the trial
    /// costs as much as a sandbox).
    pub fn hand_down(&self) -> String {
        format!(
            "{}:{}",
            u8::from(self.features.disable_userns),
            self.bwrap.display()
        )
    }

    /// The isolation a parent process detected and handed down
    /// ([`Isolation::hand_down`]); `None` for a line it did not write.
    pub fn handed_down(line: &str) -> Option<Isolation> {
        let (userns, bwrap) = line.split_once(':')?;
        let disable_userns = match userns {
            "1" => true,
            "0" => false,
            _ => return None,
        };
        Some(Isolation {
            bwrap: PathBuf::from(bwrap),
            version: String::new(),
            features: Features { disable_userns },
            cgroups: Hierarchy::detect(None),
        })
    }

    /// Makes the sandboxes' cgroups (v2) under `dir`, a cgroup delegated to
    /// this process (e.g. a systemd unit's with `Delegate=yes`), instead of
    /// the one found. If `dir` does not delegate memory and pids, no cgroup is
    /// used, as [`Isolation::enforcement`] then says.
    pub fn with_cgroup_parent(mut self, dir: &Path) -> Isolation {
        self.cgroups = Hierarchy::detect(Some(dir));
        self.check_cgroups();
        self
    }

    /// Tries the hierarchy once, so that a machine where cgroups are
    /// mounted but not writable says so up front.
    fn check_cgroups(&mut self) {
        if let Ok(hierarchy) = &self.cgroups {
            hierarchy.remove_stale();
            if let Err(e) = hierarchy.create(&Limits::run()) {
                self.cgroups = Err(format!("cannot make a cgroup: {e}"));
            }
        }
    }

    /// Runs `true` in a sandbox of a scratch directory of its own.
    fn probe(&self) -> Result<Outcome, IsolationError> {
        let dir =
            std::env::temp_dir().join(format!("grader-isolation-probe-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let limits = Limits {
            wall_time: Duration::from_secs(30),
            ..Limits::run()
        };
        let outcome = self.run(&Spec::new("true", &dir).limits(limits));
        let _ = std::fs::remove_dir_all(&dir);
        match outcome {
            Ok(o) if o.success() => Ok(o),
            Ok(o) => Err(IsolationError::Setup {
                said: format!("`true` in a sandbox: {}; {}", o.describe(), o.stderr),
            }),
            Err(e) => Err(e),
        }
    }

    fn refused(&self, error: IsolationError) -> Unavailable {
        let said = error.to_string();
        let remedy = error::remedy(&said);
        Unavailable::Refused {
            bwrap: self.bwrap.clone(),
            said,
            remedy,
        }
    }

    /// The `bwrap` in use.
    pub fn bwrap(&self) -> &Path {
        &self.bwrap
    }

    /// What `bwrap --version` said, e.g. `bubblewrap 0.8.0`.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// How limits will be enforced, if the cgroup of each sandbox can be
    /// made as the detection's was (each [`Outcome`] says what was in force).
    pub fn enforcement(&self) -> Enforcement {
        match &self.cgroups {
            Ok(Hierarchy::V1 { cpuacct, .. }) => {
                let m = Mechanism::Cgroup { version: 1 };
                let cpu = if cpuacct.is_some() {
                    m
                } else {
                    Mechanism::NotEnforced("no cpuacct controller")
                };
                Enforcement {
                    memory: m,
                    processes: m,
                    cpu_total: cpu,
                    cgroup_note: None,
                }
            }
            Ok(Hierarchy::V2 { .. }) => {
                let m = Mechanism::Cgroup { version: 2 };
                Enforcement {
                    memory: m,
                    processes: m,
                    cpu_total: m,
                    cgroup_note: None,
                }
            }
            Err(why) => Enforcement::without_cgroup(why.clone()),
        }
    }

    /// bwrap's arguments for `spec`, for logs and for tests: running them
    /// without [`Isolation::run`] would give the namespaces but neither the
    /// limits nor the teardown.
    pub fn args(&self, spec: &Spec) -> Vec<OsString> {
        bwrap::args(spec, self.features)
    }

    /// Runs `spec` in a sandbox and waits for it: until the command ends or a
    /// limit stops it, and then until every process it started is gone. The
    /// calling thread blocks for the whole time (bwrap dies with the thread
    /// that started it, so it must not be a thread that ends earlier).
    ///
    /// A command that fails, crashes or overruns a limit is an `Ok`
    /// [`Outcome`]; an `Err` means the sandbox itself could not be had.
    pub fn run(&self, spec: &Spec) -> Result<Outcome, IsolationError> {
        run::run(self, spec, None)
    }

    /// Runs `spec` like [`Isolation::run`], and also ends it as soon as `stop`
    /// becomes readable: the judge closes the write end of a pipe to end a
    /// runner it no longer needs, whatever the runner is doing.
    pub fn run_until(&self, spec: &Spec, stop: BorrowedFd<'_>) -> Result<Outcome, IsolationError> {
        run::run(self, spec, Some(stop))
    }
}

/// How a sandboxed command ended.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The command's exit code; 128 + N when a signal N killed it (bwrap
    /// reports it as a shell does). `None` when it did not end by itself:
    /// the sandbox was killed at a limit, or the kernel killed its pid 1.
    pub exit_code: Option<i32>,
    /// The limits it ran into, in a fixed order; empty for a normal end.
    pub limits_hit: Vec<Limit>,
    /// Its standard output, up to [`Limits::output`].
    pub stdout: Captured,
    /// Its standard error, up to [`Limits::output`].
    pub stderr: Captured,
    /// From the start to the last process's death.
    pub wall_time: Duration,
    /// CPU time of the whole tree (from the cgroup, else from `wait4`).
    pub cpu_time: Option<Duration>,
    /// The most memory the tree used at once, when a cgroup counted it.
    pub peak_memory: Option<u64>,
    /// How the limits were enforced for this command.
    pub enforcement: Enforcement,
}

impl Outcome {
    /// Exited with 0 and hit no limit.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && self.limits_hit.is_empty()
    }

    /// Whether `limit` was hit.
    pub fn hit(&self, limit: Limit) -> bool {
        self.limits_hit.contains(&limit)
    }

    /// The signal that killed the command, read from a shell-style exit code
    /// (129–192). A program that exits with such a code by itself reads the
    /// same.
    pub fn signal(&self) -> Option<i32> {
        self.exit_code
            .filter(|c| (129..=192).contains(c))
            .map(|c| c - 128)
    }

    /// One line for a report: how it ended, and the limits hit.
    pub fn describe(&self) -> String {
        let end = match (self.exit_code, self.signal()) {
            (_, Some(signal)) => format!("killed by signal {signal}"),
            (Some(code), None) => format!("exited with {code}"),
            (None, None) => "was stopped".to_string(),
        };
        if self.limits_hit.is_empty() {
            end
        } else {
            let hits: Vec<String> = self.limits_hit.iter().map(Limit::to_string).collect();
            format!("{end}: {}", hits.join(", "))
        }
    }
}
