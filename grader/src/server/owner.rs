//! Who owns a grader container, and whether that owner is gone.
//!
//! A container must not outlive the test process that started it, but a process killed by a
//! signal removes nothing, so the next start removes what such processes left. That needs an
//! owner identity that tells a dead run from a live one, and a process id alone does not: in a
//! pid namespace (a CI job in a container) the test process may well be pid 1 again in every run,
//! and pid 1 is always alive. So each container carries labels naming its owner run:
//!
//! - the host name, the pid, the pid namespace and the pid's start time (from `/proc`, in clock
//!   ticks since boot): an owner in this process's own pid namespace is gone when no process has
//!   its pid, or when the process that has it started at another time (the pid was reused);
//! - a random run id, which the owner also gives as its client name to a connection it keeps open
//!   to its container's Redis for as long as it lives (the *lease*, see [`lease_name`]). The kernel
//!   closes that connection however the process ends. An owner in another pid namespace, whose
//!   pid says nothing here, is gone when its container's Redis no longer lists that client.
//!
//! When neither can be told (no `/proc`, a container that cannot be reached), the container is
//! kept: removing a live run's server would fail every check of that run.

use std::time::Duration;

/// Labels that mark the grader's containers and tie them to the run that started them.
pub(super) const LABEL_PID: &str = "redis-course.grader.owner-pid";
pub(super) const LABEL_HOST: &str = "redis-course.grader.owner-host";
pub(super) const LABEL_PID_NS: &str = "redis-course.grader.owner-pid-ns";
pub(super) const LABEL_STARTED: &str = "redis-course.grader.owner-started";
pub(super) const LABEL_RUN: &str = "redis-course.grader.owner-run";
/// When a network was created, in seconds since the epoch. A network holds no Redis, so no lease:
/// an owner that its pid cannot judge has let go of it once it is past its start-up and empty.
pub(super) const LABEL_CREATED: &str = "redis-course.grader.created";

/// How long a lease check may wait for a container's Redis.
const LEASE_TIMEOUT: Duration = Duration::from_secs(2);

/// The owner of a container, as its labels describe it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Owner {
    pub pid: Option<u32>,
    pub pid_ns: Option<String>,
    pub started: Option<u64>,
    pub run: Option<String>,
}

impl Owner {
    /// This process, as the labels of a container it starts describe it.
    pub fn this_process() -> Owner {
        let pid = std::process::id();
        Owner {
            pid: Some(pid),
            pid_ns: pid_namespace(),
            started: start_time(pid),
            run: Some(run_id().to_owned()),
        }
    }

    /// Reads an owner back from a container's labels.
    pub fn from_labels(labels: &std::collections::HashMap<String, String>) -> Owner {
        let text = |name: &str| labels.get(name).filter(|v| !v.is_empty()).cloned();
        Owner {
            pid: text(LABEL_PID).and_then(|v| v.parse().ok()),
            pid_ns: text(LABEL_PID_NS),
            started: text(LABEL_STARTED).and_then(|v| v.parse().ok()),
            run: text(LABEL_RUN),
        }
    }

    /// The labels for a container this owner starts, this host's name among them.
    pub fn labels(&self) -> Vec<(&'static str, String)> {
        let mut labels = vec![(LABEL_HOST, host_name())];
        let optional = [
            (LABEL_PID, self.pid.map(|p| p.to_string())),
            (LABEL_PID_NS, self.pid_ns.clone()),
            (LABEL_STARTED, self.started.map(|s| s.to_string())),
            (LABEL_RUN, self.run.clone()),
        ];
        labels.extend(optional.into_iter().filter_map(|(k, v)| Some((k, v?))));
        labels
    }
}

/// The labels of a Docker network this process creates (Redlock's nodes live on one): its
/// owner's, as a container's, and the time it was created.
pub(crate) fn network_labels() -> std::collections::HashMap<String, String> {
    let created = now_s();
    Owner::this_process()
        .labels()
        .into_iter()
        .chain([(LABEL_CREATED, created.to_string())])
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
}

/// Now, in seconds since the epoch: the unit of the engine's `created` and of
/// [`LABEL_CREATED`].
pub(super) fn now_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

/// What this process can see of another process by its pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Seen {
    /// No process has the pid.
    Absent,
    /// A process has it, started at this time when known.
    Present(Option<u64>),
}

/// What the pid labels tell about an owner, seen from this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Judgement {
    Alive,
    Gone,
    /// Its pid means nothing here: ask the lease.
    Unknown,
}

/// Judges `owner` by its pid, from a process in pid namespace `my_ns`, where `look` says what
/// runs under a pid.
pub(super) fn judge_by_pid(
    owner: &Owner,
    my_ns: Option<&str>,
    look: impl Fn(u32) -> Seen,
) -> Judgement {
    let Some(pid) = owner.pid else {
        return Judgement::Unknown;
    };
    if owner.pid_ns.is_some() && owner.pid_ns.as_deref() != my_ns {
        return Judgement::Unknown;
    }
    match look(pid) {
        Seen::Absent => Judgement::Gone,
        Seen::Present(Some(now)) if owner.started.is_some_and(|then| then != now) => {
            Judgement::Gone
        }
        Seen::Present(_) => Judgement::Alive,
    }
}

/// What runs under `pid` in this process's pid namespace.
pub(super) fn look(pid: u32) -> Seen {
    if process_alive(pid) {
        Seen::Present(start_time(pid))
    } else {
        Seen::Absent
    }
}

/// The client name the owner `run` keeps connected to its container's Redis.
pub(super) fn lease_name(run: &str) -> String {
    format!("dlcourse-grader-owner-{run}")
}

/// Whether the owner `run` still holds its lease on the Redis at `url` (with the container's
/// password, which the sweep reads in its command): `None` when that Redis cannot be asked.
pub(super) fn lease_held(url: &str, run: &str) -> Option<bool> {
    let client = redis::Client::open(url).ok()?;
    let mut connection = client.get_connection_with_timeout(LEASE_TIMEOUT).ok()?;
    connection.set_read_timeout(Some(LEASE_TIMEOUT)).ok()?;
    let clients: String = redis::cmd("CLIENT")
        .arg("LIST")
        .query(&mut connection)
        .ok()?;
    let name = format!(" name={} ", lease_name(run));
    Some(
        clients
            .lines()
            .any(|line| format!("{line} ").contains(&name)),
    )
}

/// A random id for this run, the same for every container it starts.
pub(crate) fn run_id() -> &'static str {
    static RUN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    RUN.get_or_init(|| {
        // Without randomness the pid and the clock still tell most runs apart.
        crate::random::hex::<8>().unwrap_or_else(|_| {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            format!(
                "{:016x}",
                now.as_nanos() as u64 ^ u64::from(std::process::id())
            )
        })
    })
}

/// The pid namespace of this process, e.g. "pid:[4026531836]", where `/proc` shows it.
pub(super) fn pid_namespace() -> Option<String> {
    let link = std::fs::read_link("/proc/self/ns/pid").ok()?;
    Some(link.to_string_lossy().into_owned())
}

/// When process `pid` started, in clock ticks since boot (field 22 of `/proc/PID/stat`).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after its end.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

fn process_alive(pid: u32) -> bool {
    crate::sys::exists(pid)
}

/// This machine's host name, which scopes the sweep to containers this host's runs started.
pub(super) fn host_name() -> String {
    crate::sys::host_name()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(pid: u32, ns: &str, started: u64) -> Owner {
        Owner {
            pid: Some(pid),
            pid_ns: Some(ns.to_owned()),
            started: Some(started),
            run: Some("r".to_owned()),
        }
    }

    /// The case that used to leak: a killed run was pid 1, and so is the run looking now.
    #[test]
    fn a_reused_pid_with_another_start_time_is_gone() {
        let killed = owner(1, "pid:[7]", 100);
        let now_pid_1 = |_| Seen::Present(Some(250));
        assert_eq!(
            judge_by_pid(&killed, Some("pid:[7]"), now_pid_1),
            Judgement::Gone
        );
        let same_process = |_| Seen::Present(Some(100));
        assert_eq!(
            judge_by_pid(&killed, Some("pid:[7]"), same_process),
            Judgement::Alive
        );
        assert_eq!(
            judge_by_pid(&killed, Some("pid:[7]"), |_| Seen::Absent),
            Judgement::Gone
        );
    }

    #[test]
    fn an_owner_in_another_pid_namespace_is_left_to_the_lease() {
        let elsewhere = owner(1, "pid:[8]", 100);
        let pid_1_here = |_| Seen::Present(Some(100));
        assert_eq!(
            judge_by_pid(&elsewhere, Some("pid:[7]"), pid_1_here),
            Judgement::Unknown
        );
        assert_eq!(
            judge_by_pid(&elsewhere, Some("pid:[7]"), |_| Seen::Absent),
            Judgement::Unknown
        );
    }

    #[test]
    fn labels_read_back_as_the_same_owner() {
        let me = Owner::this_process();
        let labels = me
            .labels()
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        assert_eq!(Owner::from_labels(&labels), me);
        assert_eq!(me.started, look(std::process::id()).started());
    }

    /// The lease is held exactly as long as the owner's named connection is open.
    #[test]
    fn a_lease_lasts_as_long_as_its_connection() {
        let server = crate::server::shared().unwrap_or_else(|e| panic!("{e}"));
        let run = format!("test{}", std::process::id());
        assert_eq!(lease_held(server.url(), &run), Some(false));
        let mut holder = server.connect().unwrap_or_else(|e| panic!("{e}"));
        redis::cmd("CLIENT")
            .arg("SETNAME")
            .arg(lease_name(&run))
            .exec(&mut holder)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(lease_held(server.url(), &run), Some(true));
        drop(holder);
        // The server notices the closed connection on its next turn of the event loop.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while lease_held(server.url(), &run) != Some(false) {
            assert!(
                std::time::Instant::now() < deadline,
                "the lease outlived its connection"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let closed = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| format!("redis://127.0.0.1:{}", a.port()))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(lease_held(&closed, &run), None, "no server: no judgement");
    }

    impl Seen {
        fn started(self) -> Option<u64> {
            match self {
                Seen::Present(started) => started,
                Seen::Absent => None,
            }
        }
    }
}
