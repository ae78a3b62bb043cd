//! Why a sandbox cannot be had on this machine ([`Unavailable`]), or why one
//! sandboxed command could not be run to its end ([`IsolationError`]). Each
//! message names the remedy. A command that fails, overruns a limit or is
//! killed is not an error: that is an [`super::Outcome`].

use std::io;
use std::path::PathBuf;

/// bubblewrap cannot isolate anything here. Whether to refuse to grade or to
/// go on without a sandbox is the caller's decision.
#[derive(Debug, thiserror::Error)]
pub enum Unavailable {
    /// No `bwrap` on `PATH` (nor in `/usr/bin`).
    #[error(
        "bubblewrap is not installed: no `bwrap` on PATH or in /usr/bin \
         (install it: `apt-get install bubblewrap`, `dnf install bubblewrap`, `pacman -S bubblewrap`)"
    )]
    NotInstalled,
    /// `bwrap` exists but could not be started.
    #[error("could not run `{}`: {source} (is it executable? reinstall it: `apt-get install --reinstall bubblewrap`)", bwrap.display())]
    Spawn {
        /// The binary.
        bwrap: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// `bwrap` ran but could not make a sandbox, with what it said and the
    /// remedy that matches it.
    #[error("`{}` cannot create a sandbox here: {said}\n{remedy}", bwrap.display())]
    Refused {
        /// The binary.
        bwrap: PathBuf,
        /// What it printed.
        said: String,
        /// What to do about it.
        remedy: String,
    },
    /// The kernel lacks something the teardown relies on.
    #[error("{what} (Linux 5.3 or newer is needed: {source})")]
    Kernel {
        /// What is missing.
        what: &'static str,
        /// The operating system's error.
        source: io::Error,
    },
}

/// The remedy for what `bwrap` printed when it could not make a sandbox.
pub(crate) fn remedy(said: &str) -> String {
    let userns = "setting up uid map"; // AppArmor's restriction on Ubuntu 23.10 and later
    if said.contains(userns) || said.contains("No permissions to creating new namespace") {
        "User namespaces are restricted for unprivileged processes (Ubuntu 23.10 and later): \
         `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` (put it in /etc/sysctl.d/ \
         to keep it), or an AppArmor profile for /usr/bin/bwrap that allows `userns,`, or run \
         the judge as root. On older Debian: `sudo sysctl -w kernel.unprivileged_userns_clone=1`."
            .into()
    } else if said.contains("Creating new namespace failed")
        || said.contains("Operation not permitted")
    {
        "The kernel refused a new namespace: check `sysctl user.max_user_namespaces` (must be > 0) \
         and, in a container, run it with `--security-opt seccomp=unconfined \
         --security-opt apparmor=unconfined` (or on the host)."
            .into()
    } else if said.contains("Unknown option") || said.contains("requires") {
        "This bubblewrap is too old: 0.8.0 or newer is needed (--disable-userns, --json-status-fd, --size)."
            .into()
    } else {
        "Run `bwrap --unshare-all --ro-bind / / true` by hand to see what is missing.".into()
    }
}

/// One sandboxed command could not be run to its end.
#[derive(Debug, thiserror::Error)]
pub enum IsolationError {
    /// A path the sandbox should bind does not exist.
    #[error("the sandbox's {what} {} does not exist (create it before running the sandbox)", path.display())]
    MissingPath {
        /// Which path: "scratch directory", "bind".
        what: &'static str,
        /// The path on this machine.
        path: PathBuf,
    },
    /// `bwrap` could not be started.
    #[error("could not start bubblewrap: {source}")]
    Spawn {
        /// The operating system's error.
        #[from]
        source: io::Error,
    },
    /// `bwrap` started but could not set the sandbox up (a bind it could not
    /// make, a program it could not find); its message.
    #[error("bubblewrap could not set up the sandbox: {said} (check the spec's binds and program)")]
    Setup {
        /// What bwrap printed.
        said: String,
    },
    /// Processes of the sandbox were still alive after the teardown. This
    /// would be a bug of the module or the kernel; the caller should stop.
    #[error(
        "processes of a sandbox outlived its teardown (pids {pids:?}; none known if empty, but its \
         output pipe is still held open): stop grading and report it (end them with `kill -9`)"
    )]
    Leftover {
        /// Their pids, as this machine sees them.
        pids: Vec<u32>,
    },
    /// The toolchain for a build could not be found.
    #[error(
        "the Rust toolchain for the sandbox: {problem} (is rustup's or the distribution's Rust installed?)"
    )]
    Toolchain {
        /// What went wrong.
        problem: String,
    },
}
