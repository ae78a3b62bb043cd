//! A [`Spec`] turned into bubblewrap's command line, and where `bwrap` is.
//!
//! Every protection is one of these arguments: bubblewrap is "not a complete,
//! ready-made sandbox", it does exactly what its command line says. The root
//! is an empty tmpfs, made read-only once the mount points are in place;
//! nothing of this machine is visible but what is bound in.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::spec::{Bind, Spec};
use crate::sys::STATUS_FD;

/// The system directories bound read-only (or re-created as the symlinks
/// they are, on a merged-`/usr` system): programs, the dynamic loader and
/// its libraries, `cc` and the linker, Rust's toolchain when a distribution
/// installed it under `/usr`.
const SYSTEM: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// The pieces of `/etc` that programs, the dynamic loader and `cc` read
/// (Debian's `cc` is a symlink through `/etc/alternatives`), bound only if
/// present. Not the rest: no `shadow`, no `ssh`, no machine secrets.
const ETC: &[&str] = &[
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/hosts",
    "/etc/localtime",
];

/// What this `bwrap` can do, found by [`super::Isolation::detect`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Features {
    /// `--unshare-user --disable-userns`: the sandbox cannot make user
    /// namespaces of its own (with which it would regain capabilities, if
    /// only inside them). Not available to a setuid `bwrap`, nor before 0.8.
    pub(crate) disable_userns: bool,
}

/// The first `bwrap` on `PATH`, else `/usr/bin/bwrap`.
pub(crate) fn find() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/bin")])
        .map(|dir| dir.join("bwrap"))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// One mount of the sandbox, before sorting.
enum Mount {
    Bind(Bind),
    Tmpfs { dest: PathBuf, size: Option<u64> },
    Proc,
    Dev,
    Symlink { target: PathBuf, dest: PathBuf },
}

impl Mount {
    fn dest(&self) -> &Path {
        match self {
            Mount::Bind(b) => &b.dest,
            Mount::Tmpfs { dest, .. } | Mount::Symlink { dest, .. } => dest,
            Mount::Proc => Path::new("/proc"),
            Mount::Dev => Path::new("/dev"),
        }
    }
}

/// The arguments of `bwrap` for `spec`, the program and its arguments last.
pub(crate) fn args(spec: &Spec, features: Features) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    let mut push = |items: &[&std::ffi::OsStr]| args.extend(items.iter().map(|s| s.to_os_string()));
    // New namespaces: mount, pid (bwrap adds a reaping pid 1; when it dies
    // the kernel kills every process in the namespace), network (loopback
    // only), ipc (no shared memory with the judge), uts (own hostname),
    // cgroup (this process's cgroup paths are not shown), user.
    push(&["--unshare-all".as_ref()]);
    if features.disable_userns {
        push(&["--unshare-user".as_ref(), "--disable-userns".as_ref()]);
    }
    push(&[
        // SIGKILL to the sandbox when the thread that started bwrap ends.
        "--die-with-parent".as_ref(),
        // setsid(): no controlling terminal, so no TIOCSTI typing into the
        // judge's terminal (CVE-2017-5226).
        "--new-session".as_ref(),
        // No capabilities, even for a root inside (bwrap keeps them for
        // uid 0 otherwise); with PR_SET_NO_NEW_PRIVS, which bwrap always
        // sets, no setuid program gives any back.
        "--cap-drop".as_ref(),
        "ALL".as_ref(),
        "--hostname".as_ref(),
        "sandbox".as_ref(),
        // Only the variables set below.
        "--clearenv".as_ref(),
    ]);

    let mut mounts = Vec::new();
    for dir in SYSTEM {
        let path = Path::new(dir);
        match path.symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => {
                if let Ok(target) = path.read_link() {
                    mounts.push(Mount::Symlink {
                        target,
                        dest: path.to_path_buf(),
                    });
                }
            }
            Ok(m) if m.is_dir() => mounts.push(Mount::Bind(ro(path))),
            _ => {}
        }
    }
    mounts.extend(
        ETC.iter()
            .map(Path::new)
            .filter(|p| p.exists())
            .map(|p| Mount::Bind(ro(p))),
    );
    mounts.push(Mount::Proc);
    mounts.push(Mount::Dev);
    mounts.push(Mount::Tmpfs {
        dest: "/tmp".into(),
        size: Some(spec.limits.tmp_size),
    });
    mounts.extend(spec.tmpfs.iter().map(|dest| Mount::Tmpfs {
        dest: dest.clone(),
        size: None,
    }));
    mounts.push(Mount::Bind(spec.scratch.clone()));
    mounts.extend(spec.binds.iter().cloned().map(Mount::Bind));
    // Outer directories before the ones inside them, whatever the order the
    // caller gave (a bind under /tmp after /tmp's tmpfs, the registry after
    // the cargo home's tmpfs); equal depths keep their order.
    mounts.sort_by_key(|m| m.dest().components().count());

    for mount in &mounts {
        match mount {
            Mount::Bind(b) => {
                let flag = if b.writable { "--bind" } else { "--ro-bind" };
                push(&[flag.as_ref(), b.source.as_os_str(), b.dest.as_os_str()]);
            }
            Mount::Tmpfs { dest, size } => {
                let size = size.map(|s| s.to_string());
                if let Some(size) = &size {
                    push(&["--size".as_ref(), size.as_ref()]);
                }
                push(&["--tmpfs".as_ref(), dest.as_os_str()]);
            }
            Mount::Proc => push(&["--proc".as_ref(), "/proc".as_ref()]),
            Mount::Dev => push(&["--dev".as_ref(), "/dev".as_ref()]),
            Mount::Symlink { target, dest } => {
                push(&["--symlink".as_ref(), target.as_os_str(), dest.as_os_str()])
            }
        }
    }
    // The root tmpfs read-only now that every mount point exists in it: the
    // sandbox cannot fill memory with files at /, nor plant files there.
    push(&["--remount-ro".as_ref(), "/".as_ref()]);

    let cwd = spec
        .cwd
        .clone()
        .unwrap_or_else(|| spec.scratch.dest.clone());
    push(&["--chdir".as_ref(), cwd.as_os_str()]);

    let mut path: Vec<PathBuf> = spec.path.clone();
    path.extend(["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from));
    let path = std::env::join_paths(&path).unwrap_or_else(|_| "/usr/bin:/bin".into());
    let mut env: Vec<(OsString, OsString)> = vec![
        ("PATH".into(), path),
        ("HOME".into(), spec.scratch.dest.clone().into()),
        ("TMPDIR".into(), "/tmp".into()),
        ("LANG".into(), "C.UTF-8".into()),
    ];
    // The caller's variables come last: bwrap applies them in order, so
    // they win over the defaults.
    env.extend(spec.env.iter().cloned());
    for (key, value) in &env {
        push(&["--setenv".as_ref(), key.as_os_str(), value.as_os_str()]);
    }

    // bwrap writes `{"child-pid": N}` there (the sandbox's pid 1, as this
    // machine numbers it), and `{"exit-code": N}` once the command is done,
    // only if the sandbox was set up: a setup failure is told apart from
    // the command's own exit status 1.
    let fd = STATUS_FD.to_string();
    push(&["--json-status-fd".as_ref(), fd.as_ref()]);
    push(&["--".as_ref(), spec.program.as_os_str()]);
    args.extend(spec.args.iter().cloned());
    args
}

fn ro(path: &Path) -> Bind {
    Bind {
        source: path.to_path_buf(),
        dest: path.to_path_buf(),
        writable: false,
    }
}
