//! A node as a local `redis-server` process, and its faults as signals.
//!
//! The process source of the one server ([`crate::server`]) starts it, so it does not outlive
//! the test process however that ends. A pause is `SIGSTOP`: the kernel stops the process where
//! it is, with its connections and data, until `SIGCONT`. A kill is `SIGKILL`, and as the server
//! runs without persistence it comes back empty on a fresh server started in the same place (its
//! socket and its port, which keep the node's address) and with the same password, which the
//! node keeps for it.

use std::time::{Duration, Instant};

use crate::server::process::{Place, start_process_on};
use crate::server::{Password, RedisServer, ServerError};
use crate::sys::{self, Signal};

/// How long a stopped process may take to show it.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(5);

/// One `redis-server` process, the last one started for its node.
#[derive(Debug)]
pub(super) struct ProcessNode {
    /// The running server; `None` once killed.
    server: Option<RedisServer>,
    /// Where every server of this node lives.
    place: Place,
    pid: i32,
    /// The node's own password, which every server started for it requires.
    password: Password,
}

impl ProcessNode {
    /// Starts a server with a fresh password in a place of its own.
    pub(super) fn start() -> Result<ProcessNode, ServerError> {
        let password = Password::fresh()?;
        let server = start_process_on(None, &password)?;
        let place = server
            .place()
            .cloned()
            .ok_or_else(|| ServerError::connect(server.url(), "it has no place".to_owned()))?;
        ProcessNode::running(server, place, password)
    }

    /// The node of `server`, just started at `place`.
    fn running(
        server: RedisServer,
        place: Place,
        password: Password,
    ) -> Result<ProcessNode, ServerError> {
        let pid = server
            .pid()
            .and_then(|pid| i32::try_from(pid).ok())
            .ok_or_else(|| ServerError::connect(server.url(), "it has no process id".to_owned()))?;
        Ok(ProcessNode {
            server: Some(server),
            place,
            pid,
            password,
        })
    }

    /// The loopback port the node's peers reach it at.
    pub(super) fn port(&self) -> u16 {
        self.place.port()
    }

    /// The URL the grader reaches the node by (its Unix socket), with its password.
    pub(super) fn url(&self) -> String {
        self.place.url(&self.password)
    }

    pub(super) fn pid(&self) -> i32 {
        self.pid
    }

    pub(super) fn password(&self) -> &Password {
        &self.password
    }

    /// `SIGSTOP`, then waits until the process shows as stopped where `/proc` tells.
    pub(super) fn pause(&self) {
        signal(self.pid, Signal::STOP);
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
        signal(self.pid, Signal::CONT);
    }

    /// `SIGKILL`; returns once the process is gone and its sockets are closed (the server's
    /// handle kills it and reaps it when dropped).
    pub(super) fn kill(&mut self) {
        signal(self.pid, Signal::KILL);
        self.server = None;
    }

    /// A fresh, empty server in the same place, with the same password.
    pub(super) fn restart(&mut self) -> Result<(), ServerError> {
        let server = start_process_on(Some(&self.place), &self.password)?;
        *self = ProcessNode::running(server, self.place.clone(), self.password.clone())?;
        Ok(())
    }
}

fn signal(pid: i32, signal: Signal) {
    if let Ok(pid) = u32::try_from(pid) {
        sys::send(pid, signal);
    }
}
