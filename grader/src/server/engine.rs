//! The Docker engine, as the grader reaches it: through its helper program, `course-docker`.
//!
//! The grader links no Docker client. Its Docker calls are requests to a helper of its own
//! (`grader/docker`, see `course-docker-protocol`), started once per process on first need and
//! spoken to over two pipes, one JSON line each way. The helper is found where
//! [`HELPER_VAR`] says (the harness passes it to the checks it runs, so that cargo is asked
//! once per run) or built beside the grader, as the learner's test builds the grader
//! (`lock_runner::beside`). A machine with no Docker engine to talk to is told without
//! building anything: a learner who grades against a local `redis-server` never compiles it.
//!
//! The helper removes every container and network it started when its standard input ends,
//! which happens however this process ends, SIGKILL included. It runs in a process group of
//! its own, so that a Ctrl-C or a kill of this process's group leaves it the time to. At a
//! normal exit an `atexit` handler closes that input and waits for the helper, so that the
//! containers are gone when the process is.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Mutex, Once, OnceLock};
use std::time::Duration;

use course_docker_protocol::{Answer, Failure, FailureKind, Reply, Request};

use super::{ServerError, env_nonempty, note};

/// How long a Docker call may take before the engine counts as not answering.
pub(crate) const DOCKER_CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// The environment variable that names the helper's binary, built already.
pub const HELPER_VAR: &str = "GRADER_DOCKER_HELPER";

/// How long the helper may take to answer beyond the bounds of its own calls.
const ANSWER_MARGIN: Duration = Duration::from_secs(30);

/// How long an exit waits for the helper to remove what it started.
const EXIT_PATIENCE: Duration = Duration::from_secs(60);

/// The helper of this process, once started (or why it could not be).
static HELPER: OnceLock<Mutex<Option<Result<Helper, ServerError>>>> = OnceLock::new();

/// A running helper: its input, its answers, the process.
struct Helper {
    input: Option<ChildStdin>,
    answers: Receiver<String>,
    child: Child,
}

/// Asks the helper to do `request`, waiting up to `bound` (plus a margin) for its answer. A
/// helper that cannot be had is its own error; what the engine refused, or a helper that stops
/// answering, is told by `failed`.
pub(crate) fn call(
    request: &Request,
    bound: Duration,
    failed: impl FnOnce(Failure) -> ServerError,
) -> Result<Reply, ServerError> {
    let unavailable = |message: String| Failure {
        kind: FailureKind::Unavailable,
        message,
    };
    let slot = HELPER.get_or_init(|| Mutex::new(None));
    let mut slot = slot.lock().unwrap_or_else(|p| p.into_inner());
    let helper = match slot.get_or_insert_with(Helper::start) {
        Ok(helper) => helper,
        Err(e) => return Err(e.clone()),
    };
    let answer = helper
        .ask(request, bound + ANSWER_MARGIN)
        .map_err(unavailable);
    match answer.and_then(|answer| {
        serde_json::from_str::<Answer>(&answer)
            .map_err(|e| unavailable(format!("the Docker helper's answer is unreadable: {e}")))
    }) {
        Ok(Ok(reply)) => Ok(reply),
        Ok(Err(failure)) | Err(failure) => Err(failed(failure)),
    }
}

/// The usual reading of a failed call: the engine is not usable, in `doing`.
pub(crate) fn unusable(doing: &str) -> impl FnOnce(Failure) -> ServerError + '_ {
    move |failure| ServerError::DockerUnavailable {
        cause: format!("{doing} failed: {}", failure.message),
    }
}

/// A reply that is not the one `call` asked for: a helper out of step with this grader.
pub(crate) fn unexpected(reply: &Reply) -> ServerError {
    ServerError::DockerUnavailable {
        cause: format!("the Docker helper answered out of turn: {reply:?}"),
    }
}

/// Whether a Docker engine answers here (`Ok`), or why not. The container source needs one;
/// tools and tests ask before they rely on it. Builds the grader's Docker helper on first need,
/// unless no engine can be here at all.
pub fn docker_available() -> Result<(), ServerError> {
    call(&Request::Check, 2 * DOCKER_CALL_TIMEOUT, |failure| {
        ServerError::DockerUnavailable {
            cause: failure.message,
        }
    })
    .map(drop)
}

/// Whether the engine holds the image `image` already (`Ok(false)`: a start
/// would have to pull it), or why the engine could not say. Pulls nothing.
pub fn image_present(image: &str) -> Result<bool, ServerError> {
    let request = Request::ImagePresent {
        image: image.to_owned(),
    };
    let failed = |failure: course_docker_protocol::Failure| ServerError::DockerUnavailable {
        cause: failure.message,
    };
    match call(&request, DOCKER_CALL_TIMEOUT, failed)? {
        Reply::Present(here) => Ok(here),
        other => Err(unexpected(&other)),
    }
}

impl Helper {
    fn start() -> Result<Helper, ServerError> {
        no_engine_here()?;
        let path = helper_path()?;
        let unusable = |cause: String| ServerError::DockerHelper {
            cause,
            remedy: format!("Build it with `cargo build -p {HELPER_PACKAGE}`"),
        };
        let mut child = Command::new(&path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // A Ctrl-C in the terminal, or a kill of this process's group, must leave the helper
            // alive to remove its containers when its input ends.
            .process_group(0)
            .spawn()
            .map_err(|e| unusable(format!("{} does not start: {e}", path.display())))?;
        let (input, output) = (child.stdin.take(), child.stdout.take());
        let Some(output) = output else {
            return Err(unusable("no pipe from the helper".to_owned()));
        };
        let (send, answers) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(output).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        register_exit_handler();
        Ok(Helper {
            input,
            answers,
            child,
        })
    }

    /// Writes one request and reads its answer line, within `bound`.
    fn ask(&mut self, request: &Request, bound: Duration) -> Result<String, String> {
        let line = serde_json::to_string(request).map_err(|e| e.to_string())?;
        let input = self.input.as_mut().ok_or("the Docker helper was stopped")?;
        writeln!(input, "{line}")
            .and_then(|()| input.flush())
            .map_err(|e| format!("the Docker helper is gone: {e}"))?;
        self.answers.recv_timeout(bound).map_err(|_| {
            format!(
                "the Docker helper did not answer within {} s",
                bound.as_secs()
            )
        })
    }
}

/// The package and binary of the helper.
const HELPER_PACKAGE: &str = "course-docker";

/// The helper's binary: where [`HELPER_VAR`] names it, or built beside this program on the
/// first call of the process (later calls get the same answer).
pub fn helper_path() -> Result<PathBuf, ServerError> {
    static PATH: OnceLock<Result<PathBuf, ServerError>> = OnceLock::new();
    PATH.get_or_init(|| {
        if let Some(path) = env_nonempty(HELPER_VAR) {
            return Ok(PathBuf::from(path));
        }
        // The grader's own workspace, as the running cargo names it or as it was built.
        let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
            .join("Cargo.toml");
        let program = lock_runner::beside::Program {
            package: HELPER_PACKAGE,
            bin: HELPER_PACKAGE,
            what: "the grader's Docker helper",
            profile: "dev",
            // 155 packages (testcontainers): 4 min 28 s at a load of 3 to 8.
            first_build: "about 5 minutes on two cores",
        };
        lock_runner::beside::build_beside(program, &manifest).map_err(|cause| {
            ServerError::DockerHelper {
                cause,
                remedy: "Or set GRADER_REDIS=process to grade against a local redis-server"
                    .to_owned(),
            }
        })
    })
    .clone()
}

/// Fails when nothing here could be a Docker engine: no `DOCKER_HOST`, and none of the sockets
/// where testcontainers looks for one. Building the helper would only find that out later.
fn no_engine_here() -> Result<(), ServerError> {
    if env_nonempty("DOCKER_HOST").is_some() {
        return Ok(());
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let runtime = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from);
    let sockets = [
        Some(PathBuf::from("/var/run/docker.sock")),
        runtime.map(|dir| dir.join(".docker/run/docker.sock")),
        home.as_ref().map(|dir| dir.join(".docker/run/docker.sock")),
        home.map(|dir| dir.join(".docker/desktop/docker.sock")),
    ];
    if sockets.iter().flatten().any(|socket| Path::exists(socket)) {
        return Ok(());
    }
    Err(ServerError::DockerUnavailable {
        cause: "DOCKER_HOST is not set and no Docker socket is here (/var/run/docker.sock)"
            .to_owned(),
    })
}

fn register_exit_handler() {
    static REGISTERED: Once = Once::new();
    REGISTERED.call_once(|| {
        // The handler catches every unwind: it never unwinds itself.
        if !crate::sys::at_exit(stop_at_exit) {
            note(
                "could not register the exit handler: the Docker helper removes this run's \
                 containers when it notices the end",
            );
        }
    });
}

extern "C" fn stop_at_exit() {
    // Unwinding out of an atexit handler would abort the process mid-exit.
    let _ = std::panic::catch_unwind(stop);
}

/// Closes the helper's input and waits, within [`EXIT_PATIENCE`], for it to remove what it
/// started and exit.
fn stop() {
    let Some(slot) = HELPER.get() else { return };
    let mut slot = slot.lock().unwrap_or_else(|p| p.into_inner());
    let Some(Ok(helper)) = slot.as_mut() else {
        return;
    };
    helper.input = None;
    let deadline = std::time::Instant::now() + EXIT_PATIENCE;
    while std::time::Instant::now() < deadline {
        match helper.child.try_wait() {
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            _ => return,
        }
    }
    note("the Docker helper is still removing this run's containers");
}
