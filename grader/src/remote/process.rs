//! The runner's process, seen from the judge: started, ordered, watched.
//!
//! A check's process starts the learner's runner once, the first time the
//! check calls a learner function. The runner gets an empty environment (no
//! `REDIS_URL`, no credential, nothing of the harness's), a limit on its
//! address space, death with the check's process, and one way to reach the
//! judge: a Unix socket in a folder only this check's process made, where it
//! listens. Each connection the learner's code will use is a *link*: the
//! judge orders the runner to open one ([`Order::Open`]), accepts it, and
//! reads the link's name from its first message, so links never get mixed up.

use std::io::{self, BufReader, BufWriter, Write};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use lock_runner::protocol::{self, HELLO, Order, SOCKET_VAR};
use redis::Parser;

use crate::harness::End;
use crate::sandbox::CALL_LIMIT;

/// The address space the runner may use: as much as a check's process.
const MEMORY_LIMIT: u64 = crate::harness::MEMORY_LIMIT;

/// The only variables of the judge's environment a runner sees: which lock of
/// the catalogue a `grade-lock` runner plays (the grader's own tests). No
/// address, credential or setting of the judge's is among them.
const PASSED_ON: &[&str] = &["GRADER_LOCK"];

/// How long the judge waits for a runner whose link closed to be seen gone.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// One connection of the runner's, from the judge's end.
pub(super) struct Link {
    pub(super) name: String,
    pub(super) reader: BufReader<UnixStream>,
    pub(super) writer: BufWriter<UnixStream>,
    pub(super) parser: Parser,
}

impl Link {
    /// Reads the runner's next message on this link: `None` when it closed.
    pub(super) fn read(&mut self) -> io::Result<Option<Vec<Vec<u8>>>> {
        protocol::read_message(&mut self.parser, &mut self.reader)
    }

    /// A handle that can shut the link down from another thread.
    pub(super) fn handle(&self) -> io::Result<UnixStream> {
        self.writer.get_ref().try_clone()
    }
}

/// The runner's process, and the socket it reaches the judge by.
pub(super) struct Process {
    child: Mutex<Child>,
    orders: Mutex<BufWriter<ChildStdin>>,
    listener: Mutex<UnixListener>,
    folder: PathBuf,
    links: AtomicU64,
}

/// The runner is gone, or cannot be used: how it ended, when it did.
#[derive(Debug)]
pub(super) enum Gone {
    /// Its process ended.
    Ended(End),
    /// It is running but broke the protocol, or the judge could not reach it.
    Broken(String),
}

impl Process {
    /// Starts the runner at `exe`, with a socket of its own to reach this process.
    pub(super) fn start(exe: &Path) -> io::Result<Process> {
        let folder = private_folder()?;
        let socket = folder.join("judge.sock");
        let listener = UnixListener::bind(&socket)?;
        listener.set_nonblocking(true)?;
        let mut command = Command::new(exe);
        command
            .env_clear()
            .env(SOCKET_VAR, &socket)
            // Only what a plain program needs to find its tools.
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .envs(
                PASSED_ON
                    .iter()
                    .filter_map(|k| std::env::var_os(k).map(|v| (k, v))),
            )
            .current_dir(&folder)
            .stdin(Stdio::piped())
            // What it prints goes where the check's own output goes: under the check.
            .stdout(Stdio::inherit())
            .stderr(Stdio::inherit());
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: between fork and exec only async-signal-safe calls, no allocation.
        unsafe {
            command.pre_exec(move || limit_the_runner(parent));
        }
        let mut child = command.spawn()?;
        let orders = child
            .stdin
            .take()
            .ok_or_else(|| io::Error::other("no stdin"))?;
        Ok(Process {
            child: Mutex::new(child),
            orders: Mutex::new(BufWriter::new(orders)),
            listener: Mutex::new(listener),
            folder,
            links: AtomicU64::new(0),
        })
    }

    /// Sends one order on the runner's standard input.
    pub(super) fn order(&self, order: &Order) -> Result<(), Gone> {
        let mut orders = self.orders.lock().unwrap_or_else(PoisonError::into_inner);
        protocol::write_message(&mut *orders, &order.parts())
            .and_then(|()| orders.flush())
            .map_err(|_| self.gone())
    }

    /// Has the runner open a new link, and accepts it.
    pub(super) fn open(&self) -> Result<Link, Gone> {
        // One link opened at a time, so the one accepted is the one ordered.
        let listener = self.listener.lock().unwrap_or_else(PoisonError::into_inner);
        let name = format!("link-{}", self.links.fetch_add(1, Ordering::Relaxed));
        self.order(&Order::Open { link: name.clone() })?;
        let started = Instant::now();
        let stream = loop {
            match listener.accept() {
                Ok((stream, _)) => break stream,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if let Some(end) = self.ended() {
                        return Err(Gone::Ended(end));
                    }
                    if started.elapsed() > CALL_LIMIT {
                        return Err(Gone::Broken(format!(
                            "the runner did not connect to the grader within {} s",
                            CALL_LIMIT.as_secs()
                        )));
                    }
                    thread::sleep(Duration::from_micros(200));
                }
                Err(e) => {
                    return Err(Gone::Broken(format!(
                        "could not accept the runner's link: {e}"
                    )));
                }
            }
        };
        let broken = |e: io::Error| Gone::Broken(format!("the runner's link failed: {e}"));
        stream.set_nonblocking(false).map_err(broken)?;
        let mut link = Link {
            name: name.clone(),
            reader: BufReader::new(stream.try_clone().map_err(broken)?),
            writer: BufWriter::new(stream),
            parser: Parser::new(),
        };
        match link.read() {
            Ok(Some(parts))
                if parts.len() == 2
                    && parts[0] == HELLO.as_bytes()
                    && parts[1] == name.as_bytes() =>
            {
                Ok(link)
            }
            Ok(None) | Err(_) => Err(self.gone()),
            Ok(Some(_)) => Err(Gone::Broken(
                "the runner's new link did not say its name first".to_string(),
            )),
        }
    }

    /// How the runner ended, if it has.
    fn ended(&self) -> Option<End> {
        let mut child = self.child.lock().unwrap_or_else(PoisonError::into_inner);
        match child.try_wait() {
            Ok(Some(status)) => Some(end_of(status)),
            _ => None,
        }
    }

    /// What became of a runner that stopped answering: its end, once it is
    /// seen to have ended, or a broken protocol if it still runs.
    pub(super) fn gone(&self) -> Gone {
        let started = Instant::now();
        while started.elapsed() < EXIT_GRACE {
            if let Some(end) = self.ended() {
                return Gone::Ended(end);
            }
            thread::sleep(Duration::from_millis(2));
        }
        Gone::Broken("the runner closed its link to the grader but went on running".to_string())
    }

    /// Ends the runner and removes its socket's folder.
    pub(super) fn stop(&self) {
        let mut child = self.child.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = child.kill();
        let _ = child.wait();
        let _ = std::fs::remove_dir_all(&self.folder);
    }
}

/// How the runner's process ended, from its exit status.
fn end_of(status: ExitStatus) -> End {
    match (status.code(), status.signal()) {
        (Some(code), _) => End::Exited { code },
        (None, Some(signal)) => End::Signaled { signal },
        (None, None) => End::Exited { code: -1 },
    }
}

/// A folder of this process's own (mode 0700), for the socket.
fn private_folder() -> io::Result<PathBuf> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(e.to_string()))?;
    let name: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let folder = std::env::temp_dir().join(format!("grader-judge-{}-{name}", std::process::id()));
    std::fs::DirBuilder::new().mode(0o700).create(&folder)?;
    Ok(folder)
}

/// Runs in the runner between fork and exec: its memory limit, and death with the judge.
fn limit_the_runner(parent: libc::pid_t) -> io::Result<()> {
    // SAFETY: plain system calls on this process only.
    unsafe {
        let limit = libc::rlimit {
            rlim_cur: MEMORY_LIMIT as libc::rlim_t,
            rlim_max: MEMORY_LIMIT as libc::rlim_t,
        };
        let _ = libc::setrlimit(libc::RLIMIT_AS, &limit);
        #[cfg(target_os = "linux")]
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 || libc::getppid() != parent {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        #[cfg(not(target_os = "linux"))]
        let _ = parent;
    }
    Ok(())
}
