//! Tests of the grader's Redis server module, `grader::server`.
//!
//! Most of what the module promises happens across processes: one server per process, a forced
//! source that fails instead of falling back, nothing left behind when a process exits or is
//! killed. So most tests run this same test binary again as a child process (the ignored test
//! `child::child_process_entry`) with the environment of the case, read what the child reports on
//! stdout, and check what remains after it has gone.
//!
//! Every test needs a Redis and fails with the module's own message when there is none. The
//! life-cycle tests of the container source need a Docker engine, those of the process source a
//! `redis-server`; on a machine with only one of the two, or with Docker but no image it can start
//! (not here, and no registry to pull it from), the other's are not run and say so on stderr (see
//! [`not_run`]), and CI, which has both, forces each source in turn so that none goes untested.

mod child;

use std::io::Write;
use std::sync::{Mutex, MutexGuard};

use grader::server::{self, RedisServer};

use child::{Address, Report, free_port, run_child, run_child_and_kill, wait_until_closed};

/// Whether this machine has the source `source` ("container" or "process").
///
/// `cargo test` must pass on a machine with Docker or with a `redis-server`,
/// not only with both. So the tests of one source's life cycle run where that
/// source exists, and say why they did not run where it does not (see
/// [`not_run`]); where that source is the one under test (`GRADER_REDIS=source`,
/// as in CI's run for it) a missing source fails them instead.
fn have(source: &str, test: &str) -> bool {
    let missing = match source {
        "container" => server::docker_available().err(),
        _ => server::local_redis_server().err(),
    };
    match missing {
        None => true,
        Some(e) => not_run(
            source,
            test,
            &format!("this machine has no {source} source ({e})"),
        ),
    }
}

/// Whether a child that was to start a container got one. Docker may answer
/// and still have no image to start: not here, and no registry to pull it from.
/// That is a machine without the container source, like one without Docker.
fn container_started(report: &Report, test: &str) -> bool {
    match report.find("error_kind") {
        Some("image_unavailable") => {
            not_run("container", test, report.find("error").unwrap_or_default())
        }
        _ => true,
    }
}

/// Says, where the person running the tests sees it, that `test` did not run
/// and why, and returns false; when `GRADER_REDIS` forces `source`, fails instead.
fn not_run(source: &str, test: &str, why: &str) -> bool {
    if std::env::var("GRADER_REDIS").as_deref() == Ok(source) {
        panic!("GRADER_REDIS={source}, but {why}");
    }
    // Straight to stderr: the harness captures eprintln! of a passing test.
    let _ = writeln!(
        std::io::stderr(),
        "not run: {test}: {why}; GRADER_REDIS={source} makes this a failure"
    );
    false
}

fn shared() -> &'static RedisServer {
    server::shared().unwrap_or_else(|e| panic!("the grader has no Redis server: {e}"))
}

#[test]
fn shared_server_answers_and_is_at_least_7_0() {
    let server = shared();
    let mut connection = server.connect().unwrap_or_else(|e| panic!("{e}"));
    let pong: String = redis::cmd("PING")
        .query(&mut connection)
        .unwrap_or_else(|e| panic!("PING to {server} failed: {e}"));
    assert_eq!(pong, "PONG");

    let major: u32 = server
        .version()
        .split('.')
        .next()
        .and_then(|major| major.parse().ok())
        .unwrap_or_else(|| panic!("unreadable version {:?}", server.version()));
    assert!(major >= 7, "{server} is older than 7.0");
    assert!(
        server
            .to_string()
            .starts_with(&format!("Redis {} ", server.version()))
    );

    // The reason for 7.0: the grader reads expiry times with PEXPIRETIME. The key is this
    // process's own, under the course prefix (a shared server's grader user may be limited to
    // it), and removed again, because a REDIS_URL server may hold other data.
    let key = format!(
        "{}server-test:{}",
        grader::prefix::course(),
        std::process::id()
    );
    let _: () = redis::cmd("SET")
        .arg(&key)
        .arg("v")
        .arg("PX")
        .arg(60_000)
        .query(&mut connection)
        .unwrap_or_else(|e| panic!("SET failed: {e}"));
    let expires_at: i64 = redis::cmd("PEXPIRETIME")
        .arg(&key)
        .query(&mut connection)
        .unwrap_or_else(|e| panic!("PEXPIRETIME failed: {e}"));
    let _: i64 = redis::cmd("DEL")
        .arg(&key)
        .query(&mut connection)
        .unwrap_or_else(|e| panic!("DEL failed: {e}"));
    assert!(expires_at > 0, "PEXPIRETIME answered {expires_at}");
}

/// CI runs the suite once per source with GRADER_REDIS set: this makes a run that silently used
/// another source fail.
#[test]
fn shared_server_is_the_forced_source() {
    let server = shared();
    match std::env::var("GRADER_REDIS").ok().filter(|v| !v.is_empty()) {
        Some(forced) => assert_eq!(
            server.kind().name(),
            forced,
            "GRADER_REDIS={forced} got {server}"
        ),
        None => eprintln!("GRADER_REDIS is not set; the grader chose {server}"),
    }
}

#[test]
fn concurrent_first_callers_share_one_server() {
    let servers: Vec<usize> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| scope.spawn(|| shared() as *const RedisServer as usize))
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|_| panic!("a caller panicked"))
            })
            .collect()
    });
    assert!(servers.windows(2).all(|pair| pair[0] == pair[1]));
}

#[test]
fn forced_process_source_starts_redis_server_and_stops_it_at_exit() {
    if !have(
        "process",
        "forced_process_source_starts_redis_server_and_stops_it_at_exit",
    ) {
        return;
    }
    let report = run_child(&[("GRADER_REDIS", "process")], &["REDIS_URL"]);
    assert_eq!(report.get("kind"), "process", "{report:?}");
    assert!(
        report.get("display").contains("as a local process"),
        "{report:?}"
    );
    let address = Address::of(report.get("url"));
    wait_until_closed(&address, "the redis-server of an exited process");
}

#[test]
fn forced_process_source_without_redis_server_fails_clearly() {
    let report = run_child(
        &[
            ("GRADER_REDIS", "process"),
            ("REDIS_SERVER", "/nonexistent/redis-server"),
        ],
        &["REDIS_URL"],
    );
    let error = report.get("error");
    assert!(
        error.contains("REDIS_SERVER=/nonexistent/redis-server"),
        "{error}"
    );
    assert!(error.contains("apt-get install redis-server"), "{error}");

    // An empty PATH hides every redis-server; forced, the module must not try Docker instead.
    let empty_dir = std::env::temp_dir().join(format!("grader-empty-path-{}", std::process::id()));
    std::fs::create_dir_all(&empty_dir).unwrap_or_else(|e| panic!("{e}"));
    let path = empty_dir.display().to_string();
    let report = run_child(
        &[("GRADER_REDIS", "process"), ("PATH", path.as_str())],
        &["REDIS_URL", "REDIS_SERVER"],
    );
    let _ = std::fs::remove_dir(&empty_dir);
    let error = report.get("error");
    assert!(
        error.contains("no redis-server found: not on PATH"),
        "{error}"
    );
}

#[test]
fn unknown_grader_redis_value_is_rejected() {
    let report = run_child(&[("GRADER_REDIS", "docker")], &[]);
    let error = report.get("error");
    assert!(error.contains("GRADER_REDIS=\"docker\""), "{error}");
    assert!(error.contains("url, container or process"), "{error}");
}

#[test]
fn forced_url_source_uses_the_given_server_only() {
    let server = shared();
    let report = run_child(&[("GRADER_REDIS", "url"), ("REDIS_URL", server.url())], &[]);
    assert_eq!(report.get("kind"), "url", "{report:?}");
    assert_eq!(report.get("url"), server.url());

    // Nothing listens on a port just released: the module must say so, not start a server.
    let closed = format!("redis://127.0.0.1:{}", free_port());
    let report = run_child(
        &[("GRADER_REDIS", "url"), ("REDIS_URL", closed.as_str())],
        &[],
    );
    let error = report.get("error");
    assert!(error.contains("cannot be used"), "{error}");
    assert!(error.contains(&closed), "{error}");

    let report = run_child(&[("GRADER_REDIS", "url")], &["REDIS_URL"]);
    assert!(
        report.get("error").contains("REDIS_URL is not set"),
        "{report:?}"
    );
}

/// Serializes the tests whose children start containers: each start removes the containers of
/// dead processes, which would race with a test that looks at a killed child's container.
fn one_container_test_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[test]
fn container_is_removed_when_its_process_exits() {
    const TEST: &str = "container_is_removed_when_its_process_exits";
    if !have("container", TEST) {
        return;
    }
    let _serial = one_container_test_at_a_time();
    let report = run_child(&[("GRADER_REDIS", "container")], &["REDIS_URL"]);
    if !container_started(&report, TEST) {
        return;
    }
    assert_eq!(report.get("kind"), "container", "{report:?}");
    assert_eq!(
        report.get("owned"),
        "1",
        "the child saw its container: {report:?}"
    );
    let pid: u32 = report.get("pid").parse().unwrap_or_else(|e| panic!("{e}"));
    let left = server::containers_owned_by(pid).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        left.is_empty(),
        "containers outlived process {pid}: {left:?}"
    );
}

/// A SIGKILLed process runs no exit handler, and yet leaves no container: the grader's Docker
/// helper sees its input end with the process and removes what it started, with no later start
/// (and no sweep) to help it.
#[test]
fn killed_process_leaves_no_container() {
    const TEST: &str = "killed_process_leaves_no_container";
    if !have("container", TEST) {
        return;
    }
    let _serial = one_container_test_at_a_time();
    let Some((pid, _report)) = run_child_and_kill(&[("GRADER_REDIS", "container")], |r| {
        container_started(r, TEST)
    }) else {
        return;
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let left = server::containers_owned_by(pid).unwrap_or_else(|e| panic!("{e}"));
        if left.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "a SIGKILLed process left its container behind: {left:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn killed_process_leaves_no_redis_server() {
    if !have("process", "killed_process_leaves_no_redis_server") {
        return;
    }
    let Some((_pid, report)) = run_child_and_kill(&[("GRADER_REDIS", "process")], |_| true) else {
        unreachable!("the process source is here");
    };
    let address = Address::of(report.get("url"));
    wait_until_closed(&address, "the redis-server of a SIGKILLed process");

    // Also by where it runs, where /proc exists: the server's working directory is the private
    // folder of its socket, so no process may be left there.
    let Address::Unix(socket) = &address else {
        panic!("a redis-server the grader starts is reached by its socket: {address:?}")
    };
    let folder = socket.parent().expect("the socket is in a folder");
    if std::path::Path::new("/proc").is_dir() {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while let Some(pid) = process_in(folder) {
            assert!(
                std::time::Instant::now() < deadline,
                "process {pid} still runs in {} 10 s after its socket closed",
                folder.display()
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

/// The id of a running process whose working directory is `folder`, if any.
fn process_in(folder: &std::path::Path) -> Option<String> {
    let entries = std::fs::read_dir("/proc").ok()?;
    entries.flatten().find_map(|entry| {
        let cwd = std::fs::read_link(entry.path().join("cwd")).ok()?;
        (cwd == folder).then(|| entry.file_name().to_string_lossy().into_owned())
    })
}
