//! What the grader says when the Redis it is given cannot be used: each message names what is
//! wrong and what to do, instead of redis-rs's bare error.
//!
//! Each test starts a `redis-server` of its own (or a listener that is not Redis) with the fault
//! of its case, and checks it through [`server::at_url`], the same check `REDIS_URL` gets. They
//! need a `redis-server` on this machine; without one they fail, saying so.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use grader::server::{self, ServerError};
use rustix::process::{Pid, Signal};

/// A `redis-server` of the test's own on a free loopback port, stopped when dropped.
struct OwnServer {
    child: Child,
    port: u16,
}

impl OwnServer {
    /// Starts one with `config` (the contents of a configuration file) and `args`; fails the
    /// test, saying so, where this machine has no `redis-server`.
    fn start(test: &str, config: &str, args: &[&str]) -> OwnServer {
        let path = match server::local_redis_server() {
            Ok(path) => path,
            Err(e) => panic!("cannot run here: {test} needs a redis-server of its own: {e}"),
        };
        let port = free_port();
        let dir = std::env::temp_dir().join(format!(
            "grader-server-errors-{}-{port}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let config_file = dir.join("redis.conf");
        std::fs::write(&config_file, config).unwrap_or_else(|e| panic!("{e}"));
        let child = Command::new(path)
            .arg(&config_file)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&dir)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start redis-server: {e}"));
        let server = OwnServer { child, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "redis-server did not open port {port}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Sends `signal` to the server, and says whether it was sent.
    fn signal(&self, signal: Signal) -> bool {
        let Some(pid) = i32::try_from(self.child.id()).ok().and_then(Pid::from_raw) else {
            return false;
        };
        rustix::process::kill_process(pid, signal).is_ok()
    }
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        // Continued first, so that nothing of it stays stopped should the kill fail.
        self.signal(Signal::CONT);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The error `url` gets, as a person reads it.
fn error_at(url: &str) -> String {
    match server::at_url(url) {
        Ok(server) => panic!("{server} was accepted"),
        Err(e) => e.to_string(),
    }
}

fn admin(server: &OwnServer, password: Option<&str>) -> redis::Connection {
    let url = match password {
        Some(password) => format!("redis://:{password}@127.0.0.1:{}", server.port),
        None => server.url(),
    };
    redis::Client::open(url)
        .and_then(|client| client.get_connection())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A server stopped with SIGSTOP accepts the connection and never answers. Before, the message
/// was "Resource temporarily unavailable (os error 11)".
#[test]
fn a_paused_server_is_said_to_be_paused() {
    let own = OwnServer::start("a_paused_server_is_said_to_be_paused", "", &[]);
    assert!(server::at_url(&own.url()).is_ok(), "running, it is usable");
    assert!(own.signal(Signal::STOP), "cannot stop the server");
    let error = error_at(&own.url());
    // Within the bound of each reply redis-rs waits for while it sets the connection up.
    assert!(error.contains("did not answer within "), "{error}");
    assert!(error.contains(" s: it may be paused"), "{error}");
    assert!(error.contains("overloaded"), "{error}");
}

/// A service that is not Redis on the port. Before, the message was "Parse error at 1".
#[test]
fn a_service_that_is_not_redis_is_named_with_what_it_answered() {
    for (answer, shown) in [
        (
            "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
            "HTTP/1.1 400 Bad Request",
        ),
        (
            "hello from another service\r\n",
            "hello from another service",
        ),
    ] {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
        let port = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("{e}"))
            .port();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { break };
                let mut request = [0u8; 256];
                let _ = stream.read(&mut request);
                let _ = stream.write_all(answer.as_bytes());
            }
        });
        let error = error_at(&format!("redis://127.0.0.1:{port}"));
        assert!(
            error.contains("does not speak the Redis protocol"),
            "{error}"
        );
        assert!(error.contains("check the port"), "{error}");
        assert!(error.contains(shown), "{error}");
    }
}

/// NOAUTH and WRONGPASS name the URL syntax that carries a password.
#[test]
fn a_server_that_wants_a_password_names_the_url_syntax() {
    let test = "a_server_that_wants_a_password_names_the_url_syntax";
    let own = OwnServer::start(test, "requirepass s3cret\n", &[]);
    let port = own.port;
    for url in [own.url(), format!("redis://:wrong@127.0.0.1:{port}")] {
        let error = error_at(&url);
        assert!(error.contains("wants a password"), "{error}");
        assert!(error.contains("redis://:PASSWORD@HOST:PORT"), "{error}");
        assert!(error.contains("redis://USER:PASSWORD@HOST:PORT"), "{error}");
        assert!(!error.contains("wrong"), "the password is shown: {error}");
    }
    let right = format!("redis://:s3cret@127.0.0.1:{port}");
    assert!(
        server::at_url(&right).is_ok(),
        "the right password is accepted"
    );
}

/// A server whose PEXPIRETIME is renamed away is refused at once, naming the command, instead of
/// failing every check later.
#[test]
fn a_server_without_pexpiretime_is_refused_naming_it() {
    let test = "a_server_without_pexpiretime_is_refused_naming_it";
    let own = OwnServer::start(test, "rename-command PEXPIRETIME \"\"\n", &[]);
    let error = server::at_url(&own.url()).map(|s| s.to_string());
    let Err(ServerError::CommandRefused { command, .. }) = &error else {
        panic!("not refused for PEXPIRETIME: {error:?}");
    };
    assert_eq!(command, "PEXPIRETIME");
    let error = error_at(&own.url());
    assert!(error.contains("refuses PEXPIRETIME"), "{error}");
    assert!(error.contains("rename-command PEXPIRETIME"), "{error}");
}

/// An ACL user limited to the course's keys, allowed neither INFO nor PING, passes the probe,
/// which reads the version with HELLO; one that may not run PEXPIRETIME is told how to grant it.
#[test]
fn an_acl_user_limited_to_the_course_keys_is_enough() {
    let test = "an_acl_user_limited_to_the_course_keys_is_enough";
    let own = OwnServer::start(test, "", &[]);
    let mut admin = admin(&own, None);
    let mut setuser = |user: &str, rules: &[&str]| {
        redis::cmd("ACL")
            .arg("SETUSER")
            .arg(user)
            .arg(rules)
            .exec(&mut admin)
            .unwrap_or_else(|e| panic!("ACL SETUSER {user}: {e}"));
    };
    setuser(
        "course",
        &[
            "on",
            ">pw",
            "resetkeys",
            "~dlcourse:*",
            "-@all",
            "+pexpiretime",
            "+get",
            "+set",
        ],
    );
    setuser(
        "narrow",
        &[
            "on",
            ">pw",
            "resetkeys",
            "~dlcourse:*",
            "-@all",
            "+get",
            "+set",
        ],
    );

    let url = format!("redis://course:pw@127.0.0.1:{}", own.port);
    let mut as_course = redis::Client::open(url.as_str())
        .and_then(|client| client.get_connection())
        .unwrap_or_else(|e| panic!("{e}"));
    let info = redis::cmd("INFO")
        .arg("server")
        .query::<String>(&mut as_course);
    assert!(
        info.is_err(),
        "the user may run INFO, so this test shows nothing"
    );

    let found = server::at_url(&url).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        found.version().starts_with("7."),
        "version {:?}",
        found.version()
    );

    let error = error_at(&format!("redis://narrow:pw@127.0.0.1:{}", own.port));
    assert!(error.contains("refuses PEXPIRETIME"), "{error}");
    assert!(error.contains("ACL SETUSER USER +pexpiretime"), "{error}");
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .unwrap_or_else(|e| panic!("no free port: {e}"))
}
