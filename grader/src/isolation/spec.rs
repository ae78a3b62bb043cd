//! What one sandboxed command sees: its program and arguments, the one
//! directory it may write, the other directories bound in, its environment,
//! and its [`Limits`]; and the Rust toolchain a build needs, found on this
//! machine rather than written down.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use super::error::IsolationError;
use super::limits::Limits;

/// A directory (or file) of this machine made visible inside the sandbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bind {
    /// The path on this machine.
    pub source: PathBuf,
    /// The path inside the sandbox.
    pub dest: PathBuf,
    /// Whether the sandbox may write to it.
    pub writable: bool,
}

/// One command to run in a sandbox. Build it with [`Spec::new`] and the
/// methods that follow; nothing is visible inside but the system's
/// directories (`/usr`, the pieces of `/etc` the linker and `cc` read), the
/// scratch directory, and what [`Spec::ro`], [`Spec::rw`] and
/// [`Spec::toolchain`] add.
#[derive(Clone, Debug)]
pub struct Spec {
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
    pub(crate) scratch: Bind,
    pub(crate) binds: Vec<Bind>,
    pub(crate) tmpfs: Vec<PathBuf>,
    pub(crate) env: Vec<(OsString, OsString)>,
    pub(crate) path: Vec<PathBuf>,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) limits: Limits,
}

impl Spec {
    /// Runs `program` (a path inside the sandbox, or a name looked up on the
    /// sandbox's `PATH`) with `scratch` as its only writable directory, bound
    /// at the same path, which is also its working directory and `HOME`.
    /// The limits are [`Limits::run`] until [`Spec::limits`] says otherwise.
    pub fn new(program: impl AsRef<OsStr>, scratch: impl AsRef<Path>) -> Spec {
        let scratch = scratch.as_ref().to_path_buf();
        Spec {
            program: program.as_ref().to_os_string(),
            args: Vec::new(),
            scratch: Bind {
                source: scratch.clone(),
                dest: scratch,
                writable: true,
            },
            binds: Vec::new(),
            tmpfs: Vec::new(),
            env: Vec::new(),
            path: Vec::new(),
            cwd: None,
            limits: Limits::run(),
        }
    }

    /// Adds one argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Spec {
        self.args.push(arg.as_ref().to_os_string());
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Spec
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self
    }

    /// Sets one environment variable. The environment is otherwise empty but
    /// for `PATH`, `HOME` (the scratch directory), `TMPDIR=/tmp` and `LANG`:
    /// nothing of the judge's own (tokens, `REDIS_URL`) reaches the sandbox.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Spec {
        self.env
            .push((key.as_ref().to_os_string(), value.as_ref().to_os_string()));
        self
    }

    /// Binds `path` read-only at the same path. Binds are made in the order
    /// they are added, after the scratch directory, so one may sit inside
    /// another (its mount point must then exist in the outer one).
    pub fn ro(self, path: impl AsRef<Path>) -> Spec {
        let path = path.as_ref();
        self.ro_at(path, path)
    }

    /// Binds `source` read-only at `dest` inside the sandbox.
    pub fn ro_at(mut self, source: impl AsRef<Path>, dest: impl AsRef<Path>) -> Spec {
        self.binds.push(bind(source, dest, false));
        self
    }

    /// Binds `path` read-write at the same path, e.g. a second output
    /// directory. For the directory of a Unix socket the judge listens on,
    /// [`Spec::ro`] is enough and better: connecting needs write permission
    /// on the socket, which a read-only mount does not take away from a
    /// socket (only from files, directories and links), and the sandbox then
    /// cannot put files there or replace the socket. Bind the directory, not
    /// the socket: a socket bound in is pinned, so a judge that binds it
    /// again would not be reached.
    pub fn rw(mut self, path: impl AsRef<Path>) -> Spec {
        let path = path.as_ref();
        self.binds.push(bind(path, path, true));
        self
    }

    /// Runs the command in `dir` (a path inside the sandbox) instead of the
    /// scratch directory.
    pub fn cwd(mut self, dir: impl AsRef<Path>) -> Spec {
        self.cwd = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Keeps everything the command writes in memory: the scratch directory
    /// is bound read-only, and the command's home and working directory are
    /// the sandbox's own `/tmp`, a tmpfs of [`Limits::tmp_size`] that its
    /// memory limit counts too. Nothing it writes reaches this machine's
    /// disk, where a file-size limit alone bounds no count of files, and
    /// nothing is left once the sandbox is gone, however it ended.
    pub fn in_memory(mut self) -> Spec {
        self.scratch.writable = false;
        self.cwd = Some(PathBuf::from("/tmp"));
        self.env.push(("HOME".into(), "/tmp".into()));
        self
    }

    /// Sets the limits.
    pub fn limits(mut self, limits: Limits) -> Spec {
        self.limits = limits;
        self
    }

    /// Makes `toolchain` usable inside: its sysroot and the cargo registry
    /// bound read-only, its `bin` first on `PATH`, `CARGO_HOME` on a fresh
    /// tmpfs (cargo writes lock files there), `CARGO_NET_OFFLINE=true`.
    pub fn toolchain(mut self, toolchain: &Toolchain) -> Spec {
        // The tmpfs is mounted before the binds, which then sit inside it.
        self.tmpfs.push(toolchain.cargo_home.clone());
        self.binds.extend(toolchain.binds());
        self.path.insert(0, toolchain.sysroot.join("bin"));
        self.env
            .push(("CARGO_HOME".into(), toolchain.cargo_home.clone().into()));
        self.env.push(("CARGO_NET_OFFLINE".into(), "true".into()));
        self.env.push(("RUSTC".into(), toolchain.rustc().into()));
        self.env.push(("CARGO".into(), toolchain.cargo().into()));
        self
    }
}

fn bind(source: impl AsRef<Path>, dest: impl AsRef<Path>, writable: bool) -> Bind {
    Bind {
        source: source.as_ref().to_path_buf(),
        dest: dest.as_ref().to_path_buf(),
        writable,
    }
}

/// The Rust toolchain a build inside the sandbox uses: the one `rustc`
/// resolves to in the course's directory (rustup's overrides included), and
/// the cargo home whose registry holds the course's dependencies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toolchain {
    /// `rustc --print sysroot`: holds `bin/cargo`, `bin/rustc` and the
    /// standard library.
    pub sysroot: PathBuf,
    /// `$CARGO_HOME`, else `~/.cargo`. Only its `registry/` and `git/` are
    /// bound in, and its `config.toml` (for a source replacement, such as a
    /// vendored or local registry): never `credentials.toml`.
    pub cargo_home: PathBuf,
}

impl Toolchain {
    /// Finds the toolchain `rustc` resolves to when run in `dir`.
    pub fn detect(dir: &Path) -> Result<Toolchain, IsolationError> {
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        let output = Command::new(&rustc)
            .args(["--print", "sysroot"])
            .current_dir(dir)
            .output()
            .map_err(|source| IsolationError::Toolchain {
                problem: format!("could not run `{}`: {source}", rustc.to_string_lossy()),
            })?;
        let sysroot = String::from_utf8_lossy(&output.stdout).trim().to_string();
        if !output.status.success() || sysroot.is_empty() {
            return Err(IsolationError::Toolchain {
                problem: format!(
                    "`rustc --print sysroot` failed: {}",
                    String::from_utf8_lossy(&output.stderr).trim()
                ),
            });
        }
        let cargo_home = match std::env::var_os("CARGO_HOME") {
            Some(home) if !home.is_empty() => PathBuf::from(home),
            _ => match std::env::var_os("HOME") {
                Some(home) => Path::new(&home).join(".cargo"),
                None => {
                    return Err(IsolationError::Toolchain {
                        problem: "neither CARGO_HOME nor HOME is set: where is the cargo registry?"
                            .into(),
                    });
                }
            },
        };
        Ok(Toolchain {
            sysroot: PathBuf::from(sysroot),
            cargo_home,
        })
    }

    /// The toolchain's own `cargo` (not rustup's proxy, which would need
    /// `~/.rustup` and its settings).
    pub fn cargo(&self) -> PathBuf {
        self.sysroot.join("bin/cargo")
    }

    /// The toolchain's `rustc`.
    pub fn rustc(&self) -> PathBuf {
        self.sysroot.join("bin/rustc")
    }

    /// The binds a build needs; missing ones are left out when the sandbox
    /// is made (a cargo home without `git/` is common).
    fn binds(&self) -> Vec<Bind> {
        let mut binds = vec![bind(&self.sysroot, &self.sysroot, false)];
        for name in ["registry", "git", "config.toml", "config"] {
            let path = self.cargo_home.join(name);
            if path.exists() {
                binds.push(bind(&path, &path, false));
            }
        }
        binds
    }
}
