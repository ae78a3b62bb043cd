//! The process source: a local `redis-server`, started for this test process with persistence
//! off and a password of its own (`server/password.rs`), and stopped when the process ends,
//! however it ends.
//!
//! The grader reaches a server by a Unix socket in a folder of its own ([`PrivateFolder`]): no
//! other user may enter the folder, and a command costs less CPU over a Unix socket than over
//! loopback TCP, which matters to a check that sends hundreds of thousands. The server also
//! listens on a loopback port, for its peers alone: `REPLICAOF` names a primary by host and port.
//!
//! Every server is started by one thread of this process, which lives as long as the process,
//! with the parent-death signal set: the kernel kills the server (`SIGKILL`, which stops a paused
//! one too) when that thread ends, and it ends only with the process, whatever ended it. The
//! signal belongs to the thread that forked, not to the process, which is why one thread starts
//! them all: a server started from a test's own thread would die with that thread.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Sender, SyncSender};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::password::Password;
use super::probe::{ProbeError, probe};
use super::{RedisServer, ServerError, ServerKind, env_nonempty};
use crate::folder::PrivateFolder;
use crate::sys::{self, ChildSetup, Resource, Rlimit};

/// How long a local `redis-server` may take to say it is ready and answer its first `PING`.
const PROCESS_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// What a server prints once it listens (Redis 7.0 ends the line there; later versions add the
/// kind of socket).
const READY: &str = "Ready to accept connections";

/// How many of the server's last log lines an error shows.
const LOG_LINES_KEPT: usize = 20;

/// Where a server lives, kept across its restarts: a loopback port for its peers, and a private
/// folder with the grader's socket in it.
#[derive(Clone, Debug)]
pub(crate) struct Place {
    port: u16,
    folder: Arc<PrivateFolder>,
}

impl Place {
    /// A new place: a free loopback port and a folder of its own.
    fn fresh() -> std::io::Result<Place> {
        Ok(Place {
            port: free_loopback_port()?,
            folder: Arc::new(PrivateFolder::new("redis")?),
        })
    }

    /// The same folder, on another free port (the last one was taken before the server bound it).
    fn moved(&self) -> std::io::Result<Place> {
        Ok(Place {
            port: free_loopback_port()?,
            folder: Arc::clone(&self.folder),
        })
    }

    /// The loopback port the server's peers reach it at.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// The Unix socket the grader reaches the server by.
    fn socket(&self) -> PathBuf {
        self.folder.path().join("redis.sock")
    }

    /// The URL that signs in to the server here, by its socket, with `password`.
    pub(crate) fn url(&self, password: &Password) -> String {
        password.unix_url(&self.socket())
    }
}

/// A running `redis-server`. Dropping it kills the server and reaps it, so that when the drop
/// returns the server is gone and its sockets are closed.
#[derive(Debug)]
pub(super) struct ProcessGuard {
    child: Child,
    place: Place,
}

impl ProcessGuard {
    /// Where the server lives.
    pub(super) fn place(&self) -> &Place {
        &self.place
    }

    /// The server's process id.
    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for ProcessGuard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `redis-server` the process source would start (`REDIS_SERVER`, else the first on `PATH`),
/// or why there is none.
pub fn local_redis_server() -> Result<PathBuf, ServerError> {
    if let Some(path) = env_nonempty("REDIS_SERVER") {
        let path = PathBuf::from(path);
        return if is_executable(&path) {
            Ok(path)
        } else {
            Err(ServerError::ProcessNotFound {
                detail: format!("REDIS_SERVER={} is not an executable file", path.display()),
            })
        };
    }
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path_var)
        .map(|dir| dir.join("redis-server"))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| ServerError::ProcessNotFound {
            detail: "not on PATH, and REDIS_SERVER is not set".to_owned(),
        })
}

/// The version `path --version` reports (`Redis server v=7.0.15 …` gives
/// `7.0.15`), or `None` when it does not run or says no version.
pub fn redis_server_version(path: &Path) -> Option<String> {
    let output = Command::new(path).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.split_whitespace()
        .find_map(|word| word.strip_prefix("v="))
        .map(str::to_owned)
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// Starts the shared server: a `redis-server` in a place of its own, with a fresh password.
pub(super) fn start_process() -> Result<RedisServer, ServerError> {
    start_process_on(None, &Password::fresh()?)
}

/// Starts a `redis-server` as [`start_process`] does, requiring `password`, at `place` when given
/// (a node restarted where it was, with the password it had, see `crate::nodes`), else in a new
/// place.
pub(crate) fn start_process_on(
    place: Option<&Place>,
    password: &Password,
) -> Result<RedisServer, ServerError> {
    let path = local_redis_server()?;
    let Some(place) = place else {
        // The free port is found by binding and releasing it, so another program may take it
        // first: a server that then fails to bind is tried again on a fresh port.
        let mut place = Place::fresh().map_err(|e| cannot_place(&path, &e))?;
        let mut attempts = 0;
        loop {
            attempts += 1;
            match start_process_once(&path, &place, password) {
                Err(ServerError::ProcessFailed { log, .. })
                    if attempts < 3 && log.contains("Address already in use") =>
                {
                    place = place.moved().map_err(|e| cannot_place(&path, &e))?;
                }
                result => return result,
            }
        }
    };
    start_process_once(&path, place, password)
}

fn cannot_place(path: &Path, e: &std::io::Error) -> ServerError {
    ServerError::ProcessFailed {
        path: path.to_owned(),
        cause: format!("no free loopback port or private folder for it: {e}"),
        log: String::new(),
    }
}

fn start_process_once(
    path: &Path,
    place: &Place,
    password: &Password,
) -> Result<RedisServer, ServerError> {
    let failed = |cause: String, log: &LogTail| ServerError::ProcessFailed {
        path: path.to_owned(),
        cause,
        // A configuration error quotes the line it refused: never the password's.
        log: password.hide_in(&log.render()),
    };
    let no_log = LogTail::default();
    let socket = place.socket();
    // One pipe for both of its outputs, read by the log's thread. The write ends go with the
    // command, which the spawner drops once the server runs: the log then ends with the server.
    let (output, to_stdout) =
        std::io::pipe().map_err(|e| failed(format!("no pipe for its output: {e}"), &no_log))?;
    let to_stderr = to_stdout
        .try_clone()
        .map_err(|e| failed(format!("no pipe for its output: {e}"), &no_log))?;
    let mut command = Command::new(path);
    // `-` first: the configuration's first lines come from standard input, where the password
    // is, never from an argument, which anyone on the machine can read (`ps`).
    command
        .arg("-")
        .args(["--port", &place.port.to_string(), "--bind", "127.0.0.1"])
        .arg("--unixsocket")
        .arg(&socket)
        .args(["--unixsocketperm", "700"])
        .args(["--save", "", "--appendonly", "no"])
        .args(super::SERVER_BOUNDS)
        // Nothing is written, but the server's working directory is where it would be.
        .arg("--dir")
        .arg(place.folder.path())
        .stdin(Stdio::piped())
        .stdout(to_stdout)
        .stderr(to_stderr);
    // Lua's memory, which `maxmemory` does not count, is bounded by the process's own.
    let data = Rlimit {
        resource: Resource::Data,
        soft: super::SERVER_DATA_LIMIT,
        hard: super::SERVER_DATA_LIMIT,
    };
    let setup = ChildSetup {
        rlimits: vec![data],
        die_with: Some(std::process::id()),
        ..ChildSetup::default()
    };
    let mut child = sys::install(&mut command, setup)
        .and_then(|()| spawn_for_life(command))
        .map_err(|e| failed(format!("cannot start it: {e}"), &no_log))?;
    let log = LogTail::collect(output);
    // The password, as the one line of configuration on standard input; the end of the input
    // lets the server go on to its arguments.
    let handed = child
        .stdin
        .take()
        .map(|mut stdin| writeln!(stdin, "requirepass {}", password.expose()));
    let guard = ProcessGuard {
        child,
        place: place.clone(),
    };
    match handed {
        Some(Ok(())) => await_server(path, guard, password, &log, &failed),
        Some(Err(e)) => Err(failed(format!("cannot hand it its password: {e}"), &log)),
        None => Err(failed("no pipe to its input".to_owned(), &log)),
    }
}

/// Waits for the server of `guard` to say it is ready, then checks that the grader can use it.
/// Dropping the guard on an error return stops the server.
fn await_server(
    path: &Path,
    mut guard: ProcessGuard,
    password: &Password,
    log: &LogTail,
    failed: &dyn Fn(String, &LogTail) -> ServerError,
) -> Result<RedisServer, ServerError> {
    let url = guard.place.url(password);
    let deadline = Instant::now() + PROCESS_STARTUP_TIMEOUT;
    loop {
        // Its own word that it listens saves a probe that would find no socket yet; without
        // that word (another build, another log level) the probe tries every few milliseconds.
        log.wait_until_ready(Duration::from_millis(20));
        if let Ok(Some(status)) = guard.child.try_wait() {
            // Let the reader catch the last lines the server wrote before it exited.
            log.wait_closed(Duration::from_millis(200));
            return Err(failed(format!("it exited ({status})"), log));
        }
        match probe(&url) {
            Ok(version) => {
                return Ok(RedisServer {
                    url,
                    kind: ServerKind::Process {
                        path: path.to_owned(),
                    },
                    version,
                    process: Some(guard),
                    _container: None,
                    passed_over: None,
                });
            }
            Err(ProbeError::TooOld(version)) => {
                return Err(ServerError::TooOld {
                    server: path.display().to_string(),
                    version,
                    remedy: "Install a newer redis-server or set REDIS_SERVER to one.".to_owned(),
                });
            }
            Err(ProbeError::Refused {
                command,
                why,
                reply,
                remedy,
            }) => {
                return Err(ServerError::CommandRefused {
                    server: path.display().to_string(),
                    command: command.to_owned(),
                    why: why.to_owned(),
                    reply,
                    remedy: format!("{remedy} (set REDIS_SERVER to another redis-server)."),
                });
            }
            Err(ProbeError::Unusable(cause)) if Instant::now() >= deadline => {
                return Err(failed(
                    format!(
                        "no answer on its socket within {} s ({cause})",
                        PROCESS_STARTUP_TIMEOUT.as_secs()
                    ),
                    log,
                ));
            }
            Err(ProbeError::Unusable(_)) => std::thread::sleep(Duration::from_millis(2)),
        }
    }
}

/// Spawns `command` on the one thread of this process that starts servers, and lives as long
/// as the process (see the module's doc): the parent-death signal `command` carries then fires
/// only when the process ends.
fn spawn_for_life(command: Command) -> std::io::Result<Child> {
    type Request = (Command, SyncSender<std::io::Result<Child>>);
    static SPAWNER: OnceLock<Option<Sender<Request>>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (requests, incoming) = mpsc::channel::<Request>();
        std::thread::Builder::new()
            .name("redis-spawner".into())
            .spawn(move || {
                for (mut command, reply) in incoming {
                    let _ = reply.send(command.spawn());
                }
            })
            .ok()
            .map(|_| requests)
    });
    let gone = || std::io::Error::other("the thread that starts servers could not run");
    let spawner = spawner.as_ref().ok_or_else(gone)?;
    let (reply, answer) = mpsc::sync_channel(1);
    spawner.send((command, reply)).map_err(|_| gone())?;
    answer.recv().map_err(|_| gone())?
}

fn free_loopback_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// The last lines a server wrote, kept for error messages. A reader thread drains the pipe for
/// the server's whole life so that the server never blocks on a full pipe, and tells waiters
/// about every line.
#[derive(Clone, Default)]
struct LogTail(Arc<(Mutex<Lines>, Condvar)>);

/// What the reader has seen.
#[derive(Default)]
struct Lines {
    last: VecDeque<String>,
    /// A line said the server is [`READY`].
    ready: bool,
    /// The pipe reached its end: the server and everything holding its output are gone.
    closed: bool,
}

impl LogTail {
    fn collect(output: impl std::io::Read + Send + 'static) -> Self {
        let tail = LogTail::default();
        let shared = Arc::clone(&tail.0);
        std::thread::spawn(move || {
            let (lines, changed) = &*shared;
            for line in BufReader::new(output).lines() {
                let Ok(line) = line else { break };
                let mut lines = lines.lock().unwrap_or_else(|e| e.into_inner());
                lines.ready |= line.contains(READY);
                if lines.last.len() == LOG_LINES_KEPT {
                    lines.last.pop_front();
                }
                lines.last.push_back(line);
                changed.notify_all();
            }
            lines.lock().unwrap_or_else(|e| e.into_inner()).closed = true;
            changed.notify_all();
        });
        tail
    }

    /// Waits up to `limit` for the server to say it is [`READY`], or for the end of its output.
    fn wait_until_ready(&self, limit: Duration) {
        let (lines, changed) = &*self.0;
        let lines = lines.lock().unwrap_or_else(|e| e.into_inner());
        let _ = changed
            .wait_timeout_while(lines, limit, |l| !l.ready && !l.closed)
            .map_err(|e| e.into_inner());
    }

    /// Waits up to `limit` for the end of the output.
    fn wait_closed(&self, limit: Duration) {
        let (lines, changed) = &*self.0;
        let lines = lines.lock().unwrap_or_else(|e| e.into_inner());
        let _ = changed
            .wait_timeout_while(lines, limit, |l| !l.closed)
            .map_err(|e| e.into_inner());
    }

    fn render(&self) -> String {
        let lines = self.0.0.lock().unwrap_or_else(|e| e.into_inner());
        if lines.last.is_empty() {
            String::new()
        } else {
            let joined: Vec<&str> = lines.last.iter().map(String::as_str).collect();
            format!("; its last output:\n{}", joined.join("\n"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parent-death signal belongs to the thread that forked: a server started from a thread
    /// that then ends must still run, as a check's nodes do after the thread that first leased
    /// them is gone.
    #[test]
    fn a_server_outlives_the_thread_that_asked_for_it() {
        if let Err(e) = local_redis_server() {
            panic!("cannot run here: {e}; install redis-server or set REDIS_SERVER");
        }
        let server = std::thread::spawn(start_process)
            .join()
            .expect("the starting thread")
            .unwrap_or_else(|e| panic!("{e}"));
        std::thread::sleep(Duration::from_millis(300));
        let mut con = server.connect().unwrap_or_else(|e| panic!("{e}"));
        let pong: String = redis::cmd("PING").query(&mut con).expect("PING");
        assert_eq!(pong, "PONG");
        let pid = server.pid().expect("a process");
        drop(con);
        drop(server);
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "dropping the server kills and reaps it"
        );
    }
}
