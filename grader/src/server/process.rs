//! The process source: a local `redis-server`, started for this test process on a free loopback
//! port with persistence off and a password of its own (`server/password.rs`), and stopped when
//! the process ends, however it ends.
//!
//! The server runs under a small `sh` watchdog whose standard input is a pipe held open by this
//! process only. The kernel closes it when this process ends in any way, `SIGKILL` included; the
//! watchdog then reads end-of-file and stops the server. (`PR_SET_PDEATHSIG` would not do: it
//! fires when the spawning *thread* ends, and test threads end early.)

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::password::Password;
use super::probe::{ProbeError, probe};
use super::{RedisServer, ServerError, ServerKind, env_nonempty};

/// How long a local `redis-server` may take to answer its first `PING`.
const PROCESS_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs the server `$1` with the options that follow `$2`, under the data limit `$2` (KiB,
/// `ulimit -d`), and stops it when standard input reaches end-of-file, i.e. when the process
/// holding the pipe's other end has ended, however it ended.
/// The stop is followed by a `SIGCONT`, so that a server a fault left paused (`SIGSTOP`, see
/// `crate::nodes`) stops too. The watcher reads a copy on fd 3 because a background job's own
/// standard input is /dev/null. When the server exits by itself, the watcher is stopped too so it
/// can never signal a reused pid later.
///
/// The first line on standard input is the server's password. It reaches the server as a line
/// of configuration on the server's standard input (`redis-server -`), never as an argument:
/// anyone on the machine can read a process's arguments (`ps`), and this shell lives as long as
/// the server. `$!` of a pipeline is the pid of its last command, the server.
const WATCHDOG: &str = r#"exec 3<&0 </dev/null
IFS= read -r password <&3 || exit 64
server_path=$1
shift
data_limit=$1
shift
ulimit -d "$data_limit" 2>/dev/null
printf 'requirepass %s\n' "$password" 3<&- | "$server_path" - "$@" 3<&- 2>&1 &
server=$!
unset password
{ read -r _ <&3; kill "$server" 2>/dev/null; kill -CONT "$server" 2>/dev/null; } &
watcher=$!
exec 3<&-
wait "$server"
status=$?
kill "$watcher" 2>/dev/null
exit "$status"
"#;

/// How many of the server's last log lines an error shows.
const LOG_LINES_KEPT: usize = 20;

/// A running `redis-server` under the watchdog. Dropping it (or ending the process) closes the
/// watchdog's standard input, which stops the server.
#[derive(Debug)]
pub(super) struct ProcessGuard {
    watchdog: Child,
    _stdin: ChildStdin,
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

/// Starts the shared server: a `redis-server` on a free loopback port, with a fresh password.
pub(super) fn start_process() -> Result<RedisServer, ServerError> {
    start_process_on(None, &Password::fresh()?)
}

/// Starts a `redis-server` as [`start_process`] does, requiring `password`, on `port` when given
/// (a node restarted where it was, with the password it had, see `crate::nodes`), else on a free
/// port.
pub(crate) fn start_process_on(
    port: Option<u16>,
    password: &Password,
) -> Result<RedisServer, ServerError> {
    let path = local_redis_server()?;
    // The free port is found by binding and releasing it, so another program may take it first:
    // a server that then fails to bind is retried on a fresh port.
    let mut attempts = 0;
    loop {
        attempts += 1;
        match start_process_once(&path, port, password) {
            Err(ServerError::ProcessFailed { log, .. })
                if attempts < 3 && log.contains("Address already in use") =>
            {
                continue;
            }
            result => return result,
        }
    }
}

fn start_process_once(
    path: &Path,
    port: Option<u16>,
    password: &Password,
) -> Result<RedisServer, ServerError> {
    let failed = |cause: String, log: &LogTail| ServerError::ProcessFailed {
        path: path.to_owned(),
        cause,
        // A configuration error quotes the line it refused: never the password's.
        log: password.hide_in(&log.render()),
    };
    let no_log = LogTail::default();
    let port = match port {
        Some(port) => port,
        None => free_loopback_port().map_err(|e| failed(format!("no free port: {e}"), &no_log))?,
    };
    let mut watchdog = Command::new("/bin/sh")
        .arg("-c")
        .arg(WATCHDOG)
        .arg("redis-watchdog")
        .arg(path)
        .arg(super::SERVER_DATA_LIMIT_KIB.to_string())
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        .args(super::SERVER_BOUNDS)
        // Nothing is written, but the server's working directory is where it would be.
        .arg("--dir")
        .arg(std::env::temp_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| failed(format!("cannot run /bin/sh: {e}"), &no_log))?;
    let (Some(mut stdin), Some(stdout)) = (watchdog.stdin.take(), watchdog.stdout.take()) else {
        return Err(failed("no pipes to the watchdog".to_owned(), &no_log));
    };
    let log = LogTail::collect(stdout);
    // The watchdog's first line: the password, which it hands to the server (see WATCHDOG).
    // The pipe stays open after it, as the watchdog's sign that this process lives.
    let handed = writeln!(stdin, "{}", password.expose()).and_then(|()| stdin.flush());
    let mut guard = ProcessGuard {
        watchdog,
        _stdin: stdin,
    };
    if let Err(e) = handed {
        return Err(failed(
            format!("cannot hand the watchdog its password: {e}"),
            &log,
        ));
    }

    let url = password.url("127.0.0.1", port);
    let deadline = Instant::now() + PROCESS_STARTUP_TIMEOUT;
    loop {
        if let Ok(Some(status)) = guard.watchdog.try_wait() {
            // Let the reader catch the last lines the server wrote before it exited.
            std::thread::sleep(Duration::from_millis(50));
            return Err(failed(format!("it exited ({status})"), &log));
        }
        match probe(&url) {
            Ok(version) => {
                return Ok(RedisServer {
                    url,
                    kind: ServerKind::Process {
                        path: path.to_owned(),
                    },
                    version,
                    _process: Some(guard),
                    _container: None,
                    passed_over: None,
                });
            }
            // Dropping the guard on these returns stops the server.
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
                        "no answer on port {port} within {} s ({cause})",
                        PROCESS_STARTUP_TIMEOUT.as_secs()
                    ),
                    &log,
                ));
            }
            Err(ProbeError::Unusable(_)) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

fn free_loopback_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// The last lines a server wrote, kept for error messages. A reader thread drains the pipe for
/// the server's whole life so that the server never blocks on a full pipe.
#[derive(Clone, Default)]
struct LogTail(Arc<Mutex<VecDeque<String>>>);

impl LogTail {
    fn collect(stdout: impl std::io::Read + Send + 'static) -> Self {
        let tail = LogTail::default();
        let lines = Arc::clone(&tail.0);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let mut lines = lines.lock().unwrap_or_else(|e| e.into_inner());
                if lines.len() == LOG_LINES_KEPT {
                    lines.pop_front();
                }
                lines.push_back(line);
            }
        });
        tail
    }

    fn render(&self) -> String {
        let lines = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if lines.is_empty() {
            String::new()
        } else {
            let joined: Vec<&str> = lines.iter().map(String::as_str).collect();
            format!("; its last output:\n{}", joined.join("\n"))
        }
    }
}
