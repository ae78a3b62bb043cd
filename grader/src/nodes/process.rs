//! A node as a local `redis-server` process on loopback, and its faults as signals.
//!
//! The process source of the one server ([`crate::server`]) starts it, under the same watchdog,
//! so it does not outlive the test process however that ends. A pause is `SIGSTOP`: the kernel
//! stops the process where it is, with its connections and data, until `SIGCONT`. A kill is
//! `SIGKILL`, and as the server runs without persistence it comes back empty on a fresh server
//! started on the same port, which keeps the node's address, and with the same password, which
//! the node keeps for it.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::server::{Password, RedisServer, ServerError, process};

/// How long a stopped or killed process may take to show it.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(5);

/// One `redis-server` process, the last one started for its node.
#[derive(Debug)]
pub(super) struct ProcessNode {
    /// The running server; `None` once killed, which also lets the watchdog go.
    server: Option<RedisServer>,
    port: u16,
    pid: i32,
    /// The node's own password, which every server started for it requires.
    password: Password,
}

impl ProcessNode {
    /// Starts a server with a fresh password on a free loopback port.
    pub(super) fn start() -> Result<ProcessNode, ServerError> {
        ProcessNode::start_on(None, Password::fresh()?)
    }

    /// Starts a server requiring `password`, on `port` or on a free loopback port.
    fn start_on(port: Option<u16>, password: Password) -> Result<ProcessNode, ServerError> {
        let server = process::start_process_on(port, &password)?;
        let port = port_of(server.url());
        let pid = pid_of(&server)?;
        Ok(ProcessNode {
            server: Some(server),
            port,
            pid,
            password,
        })
    }

    pub(super) fn port(&self) -> u16 {
        self.port
    }

    pub(super) fn pid(&self) -> i32 {
        self.pid
    }

    pub(super) fn password(&self) -> &Password {
        &self.password
    }

    /// `SIGSTOP`, then waits until the process shows as stopped where `/proc` tells.
    pub(super) fn pause(&self) {
        signal(self.pid, libc::SIGSTOP);
        let stat = format!("/proc/{}/stat", self.pid);
        let deadline = Instant::now() + SETTLE_TIMEOUT;
        while Instant::now() < deadline {
            match std::fs::read_to_string(&stat) {
                Ok(text)
                    if !text
                        .rsplit(')')
                        .next()
                        .is_some_and(|r| r.trim_start().starts_with('T')) =>
                {
                    std::thread::sleep(Duration::from_millis(1));
                }
                _ => break,
            }
        }
    }

    pub(super) fn resume(&self) {
        signal(self.pid, libc::SIGCONT);
    }

    /// `SIGKILL`, then waits until the port is closed.
    pub(super) fn kill(&mut self) {
        signal(self.pid, libc::SIGKILL);
        // A stopped process dies of SIGKILL too; the continue is for good measure.
        signal(self.pid, libc::SIGCONT);
        self.server = None;
        let deadline = Instant::now() + SETTLE_TIMEOUT;
        while TcpStream::connect(("127.0.0.1", self.port)).is_ok() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// A fresh, empty server on the same port, with the same password.
    pub(super) fn restart(&mut self) -> Result<(), ServerError> {
        *self = ProcessNode::start_on(Some(self.port), self.password.clone())?;
        Ok(())
    }
}

/// The port of a `redis://[:PASSWORD@]127.0.0.1:PORT` URL.
fn port_of(url: &str) -> u16 {
    url.rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_default()
}

/// The server's process id, as its `INFO server` reports it.
fn pid_of(server: &RedisServer) -> Result<i32, ServerError> {
    let unusable = |cause: String| ServerError::connect(server.url(), cause);
    let mut con = server.connect()?;
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query(&mut con)
        .map_err(|e| unusable(format!("INFO server failed: {e}")))?;
    info.lines()
        .find_map(|line| line.strip_prefix("process_id:"))
        .and_then(|pid| pid.trim().parse().ok())
        .ok_or_else(|| unusable("INFO server names no process_id".to_owned()))
}

fn signal(pid: i32, signal: libc::c_int) {
    if pid > 0 {
        // SAFETY: kill(2) on a pid this process started; a pid that has gone is harmless (ESRCH).
        unsafe {
            libc::kill(pid, signal);
        }
    }
}
