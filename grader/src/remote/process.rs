//! The runner's process, seen from the judge: started, ordered, watched.
//!
//! A check's process starts the learner's runner once, before the check. The
//! runner gets an empty environment (no `REDIS_URL`, no credential, nothing of
//! the harness's), limits, death with the check's process, and one way to
//! reach the judge: a Unix socket in a folder only this check's process made,
//! where it listens. Where bubblewrap is at hand ([`crate::isolation`]) the
//! runner runs in a sandbox of its own: no network, its own pid namespace, a
//! read-only view of its binary and of the socket's folder, what it writes
//! kept in the sandbox's memory, limits for the whole tree, and nothing of it
//! left once the check is over.
//!
//! The runner's first link is the control link, which carries the judge's
//! orders. Each connection the learner's code will use is another *link*: the
//! judge orders the runner to open one ([`Order::Open`]), accepts it, and
//! reads the link's name from its first message, so links never get mixed up.

use std::io::{self, BufReader, BufWriter, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use lock_runner::protocol::{self, CONTROL, HELLO, Order, SOCKET_VAR};
use redis::Parser;

use crate::folder::PrivateFolder;
use crate::isolation::{self, Isolation, Limit, Spec};
use crate::limits::{MEMORY_LIMIT, memory_limit};
use crate::outcome::End;
use crate::sandbox::CALL_LIMIT;
use crate::sys::{self, ChildSetup, Signal};

/// The only variables of the judge's environment a runner sees: which lock of
/// the catalogue a `grade-lock` runner plays (the grader's own tests). No
/// address, credential or setting of the judge's is among them.
const PASSED_ON: &[&str] = &["GRADER_LOCK"];

/// The runner's `PATH`: what a plain program needs to find its tools.
const PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// How long the judge waits for a runner whose link closed to be seen gone.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// How long the judge waits for a stopped sandbox to be torn down.
const STOP_GRACE: Duration = Duration::from_secs(10);

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
    running: Running,
    control: Mutex<Option<Link>>,
    listener: Mutex<UnixListener>,
    /// The socket's folder, kept until the process's handle goes, and removed with it.
    _folder: PrivateFolder,
    links: AtomicU64,
}

/// The runner as it was started: a plain child, or a sandbox's.
enum Running {
    Plain(Mutex<Child>),
    Sandboxed(Sandboxed),
}

/// A runner in a bubblewrap sandbox, watched by a thread that lives as long
/// as the check's process (bubblewrap dies with the thread that started it).
struct Sandboxed {
    /// How it ended, with what it printed, once it has.
    ended: Arc<(Mutex<Option<Ended>>, Condvar)>,
    /// Closing this ends the sandbox, whatever the runner is doing.
    stop: Mutex<Option<OwnedFd>>,
}

/// A sandboxed runner's end, and what it printed (the sandbox kept it).
#[derive(Clone)]
struct Ended {
    end: End,
    printed: Option<(String, String)>,
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
    /// Starts the runner at `exe`, with a socket of its own to reach this
    /// process, in `sandbox` when there is one. Call it on a thread that lives
    /// as long as the check: a plain runner dies with that thread.
    pub(super) fn start(exe: &Path, sandbox: Option<&Isolation>) -> io::Result<Process> {
        let folder = PrivateFolder::new("judge")?;
        let socket = folder.path().join("judge.sock");
        let listener = UnixListener::bind(&socket)?;
        listener.set_nonblocking(true)?;
        let passed: Vec<(&str, std::ffi::OsString)> = PASSED_ON
            .iter()
            .filter_map(|k| std::env::var_os(k).map(|v| (*k, v)))
            .collect();
        let running = match sandbox {
            None => {
                let mut command = Command::new(exe);
                command
                    .env_clear()
                    .env(SOCKET_VAR, &socket)
                    .env("PATH", PATH)
                    .envs(passed)
                    .current_dir(folder.path())
                    .stdin(Stdio::null())
                    // What it prints goes where the check's own output goes: under the check.
                    .stdout(Stdio::inherit())
                    .stderr(Stdio::inherit());
                let setup = ChildSetup {
                    rlimits: vec![memory_limit(MEMORY_LIMIT)],
                    die_with: Some(std::process::id()),
                    ..ChildSetup::default()
                };
                sys::install(&mut command, setup)?;
                Running::Plain(Mutex::new(command.spawn()?))
            }
            Some(isolation) => {
                // The socket's folder, read-only (connecting needs no more), and whatever the
                // runner writes kept in memory, never on this machine's disk.
                let mut spec = Spec::new(exe, folder.path())
                    .in_memory()
                    .ro(exe)
                    .env(SOCKET_VAR, &socket)
                    .env("PATH", PATH)
                    .limits(isolation::Limits::run());
                for (k, v) in passed {
                    spec = spec.env(k, v);
                }
                Running::Sandboxed(Sandboxed::start(isolation.clone(), spec)?)
            }
        };
        let process = Process {
            running,
            control: Mutex::new(None),
            listener: Mutex::new(listener),
            _folder: folder,
            links: AtomicU64::new(0),
        };
        let control = process
            .accept(CONTROL)
            .map_err(|gone| io::Error::other(format!("the runner did not start: {gone:?}")))?;
        *process
            .control
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(control);
        Ok(process)
    }

    /// Sends one order on the control link.
    pub(super) fn order(&self, order: &Order) -> Result<(), Gone> {
        let mut control = self.control.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(control) = control.as_mut() else {
            return Err(self.gone());
        };
        protocol::write_message(&mut control.writer, &order.parts())
            .and_then(|()| control.writer.flush())
            .map_err(|_| self.gone())
    }

    /// Has the runner open a new link, and accepts it.
    pub(super) fn open(&self) -> Result<Link, Gone> {
        // One link opened at a time, so the one accepted is the one ordered.
        let listener = self.listener.lock().unwrap_or_else(PoisonError::into_inner);
        let name = format!("link-{}", self.links.fetch_add(1, Ordering::Relaxed));
        self.order(&Order::Open { link: name.clone() })?;
        self.accept_on(&listener, &name)
    }

    fn accept(&self, name: &str) -> Result<Link, Gone> {
        let listener = self.listener.lock().unwrap_or_else(PoisonError::into_inner);
        self.accept_on(&listener, name)
    }

    /// Accepts the next connection on the socket, which must say it is `name`.
    fn accept_on(&self, listener: &UnixListener, name: &str) -> Result<Link, Gone> {
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
            name: name.to_string(),
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
        match &self.running {
            Running::Plain(child) => {
                let mut child = child.lock().unwrap_or_else(PoisonError::into_inner);
                match child.try_wait() {
                    Ok(Some(status)) => Some(end_of(status)),
                    _ => None,
                }
            }
            Running::Sandboxed(sandboxed) => sandboxed.ended().map(|e| e.end),
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

    /// Ends the runner and shows what a sandboxed one printed; its socket's
    /// folder goes with the handle.
    pub(super) fn stop(&self) {
        // Without its control link the runner exits by itself.
        self.control
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        match &self.running {
            Running::Plain(child) => {
                let mut child = child.lock().unwrap_or_else(PoisonError::into_inner);
                let _ = child.kill();
                let _ = child.wait();
            }
            Running::Sandboxed(sandboxed) => {
                if let Some(Ended {
                    printed: Some((stdout, stderr)),
                    ..
                }) = sandboxed.stop()
                {
                    // Where a plain runner's output goes by itself: under the check.
                    print!("{stdout}");
                    eprint!("{stderr}");
                    let _ = io::stdout().flush();
                }
            }
        }
    }
}

impl Sandboxed {
    /// Starts `spec` under `isolation` on a thread of its own, which outlives the check.
    fn start(isolation: Isolation, spec: Spec) -> io::Result<Sandboxed> {
        let (stop_read, stop_write) = io::pipe()?;
        let stop_read = OwnedFd::from(stop_read);
        let ended: Arc<(Mutex<Option<Ended>>, Condvar)> = Arc::default();
        let slot = Arc::clone(&ended);
        thread::Builder::new()
            .name("runner-sandbox".into())
            .spawn(move || {
                let outcome = isolation.run_until(&spec, stop_read.as_fd());
                let ended = match outcome {
                    Ok(outcome) => Ended {
                        end: sandboxed_end(&outcome),
                        printed: Some((outcome.stdout.to_string(), outcome.stderr.to_string())),
                    },
                    Err(e) => {
                        eprintln!("grader: the runner's sandbox failed: {e}");
                        Ended {
                            end: End::Exited { code: -1 },
                            printed: None,
                        }
                    }
                };
                let (lock, changed) = &*slot;
                *lock.lock().unwrap_or_else(PoisonError::into_inner) = Some(ended);
                changed.notify_all();
                // Park for good: the check's process ends by exiting.
                loop {
                    thread::park();
                }
            })?;
        Ok(Sandboxed {
            ended,
            stop: Mutex::new(Some(OwnedFd::from(stop_write))),
        })
    }

    fn ended(&self) -> Option<Ended> {
        self.ended
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Ends the sandbox and waits (a bounded time) for it to be torn down.
    fn stop(&self) -> Option<Ended> {
        self.stop
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let (lock, changed) = &*self.ended;
        let guard = lock.lock().unwrap_or_else(PoisonError::into_inner);
        let (guard, _) = changed
            .wait_timeout_while(guard, STOP_GRACE, |ended| ended.is_none())
            .unwrap_or_else(PoisonError::into_inner);
        guard.clone()
    }
}

/// How a sandboxed runner ended, from its sandbox's outcome.
fn sandboxed_end(outcome: &isolation::Outcome) -> End {
    if outcome.hit(Limit::Memory) {
        return End::OutOfMemory {
            limit_mib: isolation::Limits::run().memory / (1024 * 1024),
        };
    }
    match (outcome.exit_code, outcome.signal()) {
        (_, Some(signal)) => End::Signaled { signal },
        (Some(code), None) => End::Exited { code },
        // Killed at a limit, or by the kernel with its namespace.
        (None, None) => End::Signaled {
            signal: Signal::KILL.as_raw(),
        },
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
