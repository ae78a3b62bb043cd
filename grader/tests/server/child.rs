//! The child processes of the server tests: the same test binary run again, with the
//! environment of a case, reporting on stdout what `grader::server` gave it.
//!
//! A child prints `child: key=value` lines (pid, kind, url, display, owned, or error and
//! error_kind) and then `child: ready`; in `hold` mode it then waits to be killed.

use std::io::{BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use grader::server::{self, ServerKind};

/// What a child process was asked to do, read by [`child_process_entry`].
const CHILD_MODE: &str = "SERVER_TEST_CHILD";

/// Bound on how long a child may take to report: a container start plus a cold image cache.
const CHILD_TIMEOUT: Duration = Duration::from_secs(120);

/// Bound on how long a stopped server may take to let go of its port.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// Not a test of its own: the other tests run it in a child process (with `--ignored`).
#[test]
#[ignore = "helper that other tests run in a child process"]
fn child_process_entry() {
    let Ok(mode) = std::env::var(CHILD_MODE) else {
        panic!("run by the other tests of this file, with {CHILD_MODE} set");
    };
    // The harness has printed "test child_process_entry ... " without a newline.
    println!();
    println!("child: pid={}", std::process::id());
    match server::shared() {
        Ok(server) => {
            println!("child: kind={}", server.kind().name());
            println!("child: url={}", server.url());
            println!("child: display={server}");
            if let ServerKind::Container { .. } = server.kind() {
                let owned = server::containers_owned_by(std::process::id())
                    .unwrap_or_else(|e| panic!("{e}"));
                println!("child: owned={}", owned.len());
            }
        }
        Err(error) => {
            if matches!(error, server::ServerError::ImageUnavailable { .. }) {
                println!("child: error_kind=image_unavailable");
            }
            println!("child: error={}", error.to_string().replace('\n', " | "));
        }
    }
    println!("child: ready");
    if mode == "hold" {
        // Wait to be killed; end-of-file means the parent is gone, so go too.
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
    }
}

/// What a child reported, as `key=value` pairs.
#[derive(Debug)]
pub struct Report(Vec<(String, String)>);

impl Report {
    pub fn get(&self, key: &str) -> &str {
        match self.find(key) {
            Some(value) => value,
            None => match self.find("error") {
                Some(error) => panic!("the child has no server: {error}"),
                None => panic!("the child reported no {key}: {self:?}"),
            },
        }
    }

    pub fn find(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

fn child_command(mode: &str, set: &[(&str, &str)], unset: &[&str]) -> Command {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
    let mut command = Command::new(exe);
    command
        .args([
            "child::child_process_entry",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .args(["--test-threads", "1"])
        .env(CHILD_MODE, mode)
        .stdout(Stdio::piped());
    for name in unset {
        command.env_remove(name);
    }
    for (name, value) in set {
        command.env(name, value);
    }
    command
}

/// Reads the child's report lines up to "ready", within [`CHILD_TIMEOUT`].
fn read_report(child: &mut Child) -> Report {
    let Some(stdout) = child.stdout.take() else {
        panic!("no stdout from the child");
    };
    let (sender, receiver) = mpsc::channel();
    // The reader drains the pipe to the end: a child whose stdout closed early would fail on
    // its next write.
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = sender.send(line);
        }
    });
    let deadline = Instant::now() + CHILD_TIMEOUT;
    let mut pairs = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match receiver.recv_timeout(left) {
            Ok(line) if line == "child: ready" => return Report(pairs),
            Ok(line) => {
                if let Some((key, value)) =
                    line.strip_prefix("child: ").and_then(|l| l.split_once('='))
                {
                    pairs.push((key.to_owned(), value.to_owned()));
                }
            }
            Err(_) => {
                let _ = child.kill();
                panic!("the child did not report within {CHILD_TIMEOUT:?}: {pairs:?}");
            }
        }
    }
}

/// Runs a child to its end and returns what it reported.
pub fn run_child(set: &[(&str, &str)], unset: &[&str]) -> Report {
    let mut child = child_command("report", set, unset)
        .stdin(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run the child: {e}"));
    let report = read_report(&mut child);
    let status = child.wait().unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success(), "the child failed ({status}): {report:?}");
    report
}

/// Runs a child that holds its server, SIGKILLs it once it has reported, and returns its pid and
/// report. `unusable` says why the report rules the test out, if it does (a container source
/// without its image, say): then the child goes and the test fails, saying so.
pub fn run_child_and_kill(
    set: &[(&str, &str)],
    unusable: impl Fn(&Report) -> Option<String>,
) -> (u32, Report) {
    let mut child = child_command("hold", set, &["REDIS_URL"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run the child: {e}"));
    let report = read_report(&mut child);
    if let Some(why) = unusable(&report) {
        let _ = child.kill();
        let _ = child.wait();
        panic!("cannot run here: {why}");
    }
    if let Some(error) = report.find("error") {
        let _ = child.kill();
        panic!("the child has no server: {error}");
    }
    child
        .kill()
        .unwrap_or_else(|e| panic!("cannot kill the child: {e}"));
    let status = child.wait().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !status.success(),
        "the child was to be killed, but exited: {status}"
    );
    (child.id(), report)
}

/// Where a server the grader started is reached: the Unix socket of a `redis-server` it started
/// (`redis+unix:///PATH?pass=PASSWORD`), or the address of a `redis://[:PASSWORD@]IP:PORT` URL.
#[derive(Debug)]
pub enum Address {
    Unix(PathBuf),
    Tcp(SocketAddr),
}

impl Address {
    pub fn of(url: &str) -> Address {
        if let Some(rest) = url.strip_prefix("redis+unix://") {
            let path = rest.split_once('?').map_or(rest, |(path, _)| path);
            return Address::Unix(PathBuf::from(path));
        }
        url.strip_prefix("redis://")
            .map(|rest| rest.rsplit_once('@').map_or(rest, |(_, address)| address))
            .and_then(|address| address.parse().ok())
            .map(Address::Tcp)
            .unwrap_or_else(|| panic!("neither a Unix socket's URL nor redis://IP:PORT: {url}"))
    }

    fn answers(&self) -> bool {
        match self {
            Address::Unix(path) => std::os::unix::net::UnixStream::connect(path).is_ok(),
            Address::Tcp(address) => {
                TcpStream::connect_timeout(address, Duration::from_millis(200)).is_ok()
            }
        }
    }
}

pub fn wait_until_closed(address: &Address, what: &str) {
    let deadline = Instant::now() + STOP_TIMEOUT;
    while address.answers() {
        assert!(
            Instant::now() < deadline,
            "{what} still answers on {address:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .unwrap_or_else(|e| panic!("no free port: {e}"))
}
