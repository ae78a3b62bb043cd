//! A cgroup of its own for each sandbox, when this machine lets us make one:
//! it holds memory and the number of tasks for the whole tree (what rlimits
//! cannot), counts the tree's CPU time, says afterwards whether the kernel
//! killed for memory or refused a fork, and lists every member, so that the
//! teardown can check none is left.
//!
//! Both versions are handled. cgroup v1 (one hierarchy per controller):
//! `memory.limit_in_bytes`, `pids.max`, `cpuacct.usage`. cgroup v2 (one
//! hierarchy): `memory.max`, `memory.swap.max`, `memory.oom.group` (an OOM
//! kills the whole sandbox, not one process of it), `pids.max`, `cpu.stat`,
//! `cgroup.kill`. Groups are made under the cgroup this process is in (v1),
//! or under the first of: a parent the caller names, this process's cgroup
//! or its parent when it delegates `memory` and `pids` to its children, the
//! root (v2). A
//! process joins by writing `0` to `cgroup.procs` before it executes `bwrap`
//! (see [`crate::sys::install`]), so no fork escapes the count.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::limits::Limits;

/// The prefix of every group we make: `grader-isolation-PID-N`.
const PREFIX: &str = "grader-isolation-";

/// Where this machine lets us make sandbox cgroups.
#[derive(Clone, Debug)]
pub(crate) enum Hierarchy {
    /// cgroup v1: a parent per controller (`cpuacct` only counts).
    V1 {
        memory: PathBuf,
        pids: PathBuf,
        cpuacct: Option<PathBuf>,
    },
    /// cgroup v2: one parent.
    V2 { parent: PathBuf },
}

impl Hierarchy {
    /// Finds the hierarchy and a parent we may write to; `parent` (v2) is
    /// the caller's choice of a delegated cgroup. The reason when none.
    pub(crate) fn detect(parent: Option<&Path>) -> Result<Hierarchy, String> {
        let mounts = fs::read_to_string("/proc/self/mountinfo")
            .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
        let own = fs::read_to_string("/proc/self/cgroup")
            .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
        let mut v1 = Vec::new();
        let mut v2 = None;
        for line in mounts.lines() {
            // `ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS…] - FSTYPE SOURCE SUPER`
            let Some((left, right)) = line.split_once(" - ") else {
                continue;
            };
            let left: Vec<&str> = left.split(' ').collect();
            let right: Vec<&str> = right.split(' ').collect();
            let (Some(root), Some(point), Some(fstype)) = (left.get(3), left.get(4), right.first())
            else {
                continue;
            };
            match *fstype {
                "cgroup" => v1.push((
                    root.to_string(),
                    PathBuf::from(point),
                    right.get(2).unwrap_or(&"").to_string(),
                )),
                "cgroup2" => v2 = Some((root.to_string(), PathBuf::from(point))),
                _ => {}
            }
        }
        // The directory of this process's cgroup in a mount of `root`.
        let dir_in = |point: &Path, root: &str, path: &str| {
            let rel = path
                .strip_prefix(root)
                .unwrap_or(path)
                .trim_start_matches('/');
            point.join(rel)
        };
        let own_path = |controller: &str| {
            own.lines().find_map(|l| {
                let mut parts = l.splitn(3, ':');
                let (_, names, path) = (parts.next()?, parts.next()?, parts.next()?);
                names
                    .split(',')
                    .any(|n| n == controller)
                    .then(|| path.to_string())
            })
        };
        let v1_dir = |controller: &str| {
            let (root, point, _) = v1
                .iter()
                .find(|(_, _, opts)| opts.split(',').any(|o| o == controller))?;
            Some(dir_in(point, root, &own_path(controller)?))
        };
        if let (Some(memory), Some(pids)) = (v1_dir("memory"), v1_dir("pids")) {
            return Ok(Hierarchy::V1 {
                memory,
                pids,
                cpuacct: v1_dir("cpuacct"),
            });
        }
        if v1_dir("memory").is_some() {
            return Err("cgroup v1 without a pids controller".into());
        }
        let Some((root, point)) = v2 else {
            return Err("no cgroup file system is mounted".into());
        };
        let delegates = |dir: &Path| {
            let control =
                fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
            let has = |c: &str| control.split_whitespace().any(|w| w == c);
            has("memory") && has("pids")
        };
        if let Some(parent) = parent {
            return if delegates(parent) {
                Ok(Hierarchy::V2 {
                    parent: parent.to_path_buf(),
                })
            } else {
                Err(format!(
                    "{} does not delegate the memory and pids controllers",
                    parent.display()
                ))
            };
        }
        let own_dir = own
            .lines()
            .find_map(|l| l.strip_prefix("0::"))
            .map(|path| dir_in(&point, &root, path));
        // A cgroup with processes cannot delegate (cgroup v2's "no internal
        // processes" rule), so a delegated one (systemd's `Delegate=yes`)
        // holds this process in a child of its own: try that parent too.
        let candidates = own_dir
            .iter()
            .flat_map(|d| [Some(d.as_path()), d.parent()])
            .flatten();
        for dir in candidates.filter(|d| d.starts_with(&point) && *d != point.as_path()) {
            if delegates(dir) {
                return Ok(Hierarchy::V2 {
                    parent: dir.to_path_buf(),
                });
            }
        }
        // The root cgroup may hold processes and enable controllers at once.
        if !delegates(&point) {
            let _ = fs::write(point.join("cgroup.subtree_control"), "+memory +pids");
        }
        if delegates(&point) {
            return Ok(Hierarchy::V2 { parent: point });
        }
        Err(format!(
            "cgroup v2, but neither this process's cgroup nor {} delegates memory and pids \
             (run the judge as root, or in a systemd unit with Delegate=yes and name its cgroup)",
            point.display()
        ))
    }

    /// Removes empty groups left by judges that were killed.
    pub(crate) fn remove_stale(&self) {
        let parents = match self {
            Hierarchy::V1 {
                memory,
                pids,
                cpuacct,
            } => vec![memory.clone(), pids.clone()]
                .into_iter()
                .chain(cpuacct.clone())
                .collect(),
            Hierarchy::V2 { parent } => vec![parent.clone()],
        };
        for parent in parents {
            let Ok(entries) = fs::read_dir(&parent) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let Some(pid) = name
                    .strip_prefix(PREFIX)
                    .and_then(|rest| rest.split('-').next())
                else {
                    continue;
                };
                if !Path::new("/proc").join(pid).exists() {
                    // Fails, harmlessly, on a group that still has members.
                    let _ = fs::remove_dir(entry.path());
                }
            }
        }
    }

    /// Makes a group for one sandbox, with `limits` written into it.
    pub(crate) fn create(&self, limits: &Limits) -> io::Result<Group> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "{PREFIX}{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut group = Group {
            version: 1,
            dirs: Vec::new(),
            memory: PathBuf::new(),
            pids: PathBuf::new(),
            cpu: None,
        };
        // On an error the group's Drop removes the directories made so far.
        let make = |dir: PathBuf, group: &mut Group| -> io::Result<PathBuf> {
            fs::create_dir(&dir)?;
            group.dirs.push(dir.clone());
            Ok(dir)
        };
        match self {
            Hierarchy::V1 {
                memory,
                pids,
                cpuacct,
            } => {
                group.memory = make(memory.join(&name), &mut group)?;
                write(&group.memory, "memory.limit_in_bytes", limits.memory)?;
                // Absent without swap accounting; then there is no swap to count.
                let _ = write(&group.memory, "memory.memsw.limit_in_bytes", limits.memory);
                group.pids = make(pids.join(&name), &mut group)?;
                write(&group.pids, "pids.max", limits.processes)?;
                if let Some(cpuacct) = cpuacct {
                    if cpuacct != memory && cpuacct != pids {
                        group.cpu = make(cpuacct.join(&name), &mut group).ok();
                    } else {
                        group.cpu = Some(cpuacct.join(&name));
                    }
                }
            }
            Hierarchy::V2 { parent } => {
                group.version = 2;
                let dir = make(parent.join(&name), &mut group)?;
                write(&dir, "memory.max", limits.memory)?;
                let _ = write(&dir, "memory.swap.max", 0);
                let _ = write(&dir, "memory.oom.group", 1);
                write(&dir, "pids.max", limits.processes)?;
                group.memory = dir.clone();
                group.pids = dir.clone();
                group.cpu = Some(dir);
            }
        }
        Ok(group)
    }
}

fn write(dir: &Path, file: &str, value: u64) -> io::Result<()> {
    fs::write(dir.join(file), value.to_string())
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.join(file).display())))
}

/// The cgroup (v2) or cgroups (v1, one per controller) of one sandbox,
/// removed on drop after killing anything still in them.
#[derive(Debug)]
pub(crate) struct Group {
    /// 1 or 2.
    pub(crate) version: u8,
    /// Every directory made, to remove.
    dirs: Vec<PathBuf>,
    memory: PathBuf,
    pids: PathBuf,
    cpu: Option<PathBuf>,
}

/// A `key N` line of a flat-keyed cgroup file.
fn keyed(path: &Path, key: &str) -> Option<u64> {
    let text = fs::read_to_string(path).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.trim().parse().ok())
}

fn number(path: &Path) -> Option<u64> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

impl Group {
    /// The `cgroup.procs` files a process writes to, to join.
    pub(crate) fn procs_files(&self) -> io::Result<Vec<fs::File>> {
        let mut dirs: Vec<&PathBuf> = self.dirs.iter().collect();
        dirs.dedup();
        dirs.iter()
            .map(|d| {
                fs::OpenOptions::new()
                    .write(true)
                    .open(d.join("cgroup.procs"))
            })
            .collect()
    }

    /// How many times the kernel's OOM killer killed in this group.
    pub(crate) fn oom_kills(&self) -> u64 {
        let file = if self.version == 1 {
            "memory.oom_control"
        } else {
            "memory.events"
        };
        keyed(&self.memory.join(file), "oom_kill ").unwrap_or(0)
    }

    /// How many forks or clones the pids limit refused.
    pub(crate) fn forks_refused(&self) -> u64 {
        keyed(&self.pids.join("pids.events"), "max ").unwrap_or(0)
    }

    /// The most memory the tree used at once, when the kernel says.
    pub(crate) fn peak_memory(&self) -> Option<u64> {
        let file = if self.version == 1 {
            "memory.max_usage_in_bytes"
        } else {
            "memory.peak"
        };
        number(&self.memory.join(file))
    }

    /// The CPU time the tree has used so far.
    pub(crate) fn cpu_time(&self) -> Option<Duration> {
        let dir = self.cpu.as_ref()?;
        if self.version == 1 {
            number(&dir.join("cpuacct.usage")).map(Duration::from_nanos)
        } else {
            keyed(&dir.join("cpu.stat"), "usage_usec ").map(Duration::from_micros)
        }
    }

    fn members(&self) -> Vec<u32> {
        let mut pids: Vec<u32> = self
            .dirs
            .iter()
            .filter_map(|d| fs::read_to_string(d.join("cgroup.procs")).ok())
            .flat_map(|t| {
                t.lines()
                    .filter_map(|l| l.trim().parse().ok())
                    .collect::<Vec<_>>()
            })
            .collect();
        pids.sort_unstable();
        pids.dedup();
        pids
    }

    /// Kills every member and waits until there is none, for at most
    /// `grace`; the members still there after it.
    pub(crate) fn empty(&self, grace: Duration) -> Vec<u32> {
        let deadline = Instant::now() + grace;
        loop {
            let members = self.members();
            if members.is_empty() || Instant::now() >= deadline {
                return members;
            }
            if self.version == 2 && fs::write(self.memory.join("cgroup.kill"), "1").is_ok() {
                // Kills the whole subtree at once, forks in flight included.
            } else {
                for pid in &members {
                    crate::sys::kill(*pid);
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.empty(Duration::from_secs(2));
        for dir in self.dirs.iter().rev() {
            // The kernel may take a moment to let go of the last member.
            for _ in 0..50 {
                match fs::remove_dir(dir) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => {
                        std::thread::sleep(Duration::from_millis(10))
                    }
                    _ => break,
                }
            }
        }
    }
}
