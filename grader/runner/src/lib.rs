//! The runner: the small program your lock is built into.
//!
//! The grader is two programs. The **judge** (the `grader` crate) holds the
//! checks, the models, the virtual clock, the faults and the reports, and it
//! alone decides whether a check passed. The **runner** is this crate plus your
//! `exercises` crate, built into the `runner` binary: it only answers the
//! judge's calls ("acquire(key, token, ttl)") by calling your functions, one
//! call at a time per connection, and sends back what they returned.
//!
//! Your code never shares a process with the judge, so nothing it does (exit,
//! abort, print, read its own memory, run code before `main`) can write a
//! verdict: at worst a check fails, with the cause named. Its Redis
//! connections are links to the judge's proxy ([`Connection`]), which is where
//! the judge watches each command, keeps it to the check's keys, and steps in
//! between two of them; your code is never told where Redis is.
//!
//! Two functions are the whole interface: `exercises/runner/main.rs` fills a
//! [`Lock`] with your functions and calls [`main`], which serves the judge
//! that started it ([`serve`]); `exercises/tests/grade.rs`, which holds none of
//! your code, calls [`launch`], which builds the judge and hands over to it.
//!
//! The protocol between the two is in [`protocol`]: RESP, as Redis speaks it,
//! so the runner needs nothing but `redis` to build.

use std::time::Duration;

use redis::RedisResult;

pub mod beside;
#[cfg(unix)]
mod connection;
mod launch;
pub mod panics;
pub mod protocol;
#[cfg(unix)]
mod serve;

#[cfg(unix)]
pub use connection::Connection;
pub use launch::{RUNNER_VAR, launch};

/// The connection type on a system without Unix sockets, where the judge does
/// not run: it exists so that your crate builds everywhere, and is never made.
#[cfg(not(unix))]
pub enum Connection {}

#[cfg(not(unix))]
impl redis::ConnectionLike for Connection {
    fn req_packed_command(&mut self, _: &[u8]) -> RedisResult<redis::Value> {
        match *self {}
    }
    fn req_packed_commands(
        &mut self,
        _: &[u8],
        _: usize,
        _: usize,
    ) -> RedisResult<Vec<redis::Value>> {
        match *self {}
    }
    fn get_db(&self) -> i64 {
        match *self {}
    }
    fn check_connection(&mut self) -> bool {
        match *self {}
    }
    fn is_open(&self) -> bool {
        match *self {}
    }
}

/// Your lock, function by function, at the runner's connection type.
///
/// Every field is one of your exercise functions; they are generic over
/// `C: ConnectionLike`, and a function item turns into these pointers at
/// `C = Connection` by itself.
#[derive(Clone, Copy)]
pub struct Lock {
    /// `exercises/src/token.rs`.
    pub new_token: fn() -> String,
    /// `exercises/src/acquire.rs`.
    pub acquire: fn(&mut Connection, &str, &str, Duration) -> RedisResult<bool>,
    /// `exercises/src/release.rs`.
    pub release: fn(&mut Connection, &str, &str) -> RedisResult<bool>,
    /// `exercises/src/extend.rs`.
    pub extend: fn(&mut Connection, &str, &str, Duration) -> RedisResult<bool>,
    /// `exercises/src/keeper.rs`: handed the `extend` to renew with, which
    /// the runner answers by asking the judge ([`Connection::extend`]).
    #[allow(clippy::type_complexity)]
    pub keep_alive: fn(
        &mut Connection,
        fn(&mut Connection, &str, &str, Duration) -> RedisResult<bool>,
        &str,
        &str,
        Duration,
        Duration,
        &mut Duration,
        &std::sync::atomic::AtomicBool,
    ) -> RedisResult<()>,
    /// `exercises/src/fencing.rs`.
    pub acquire_fenced: fn(&mut Connection, &str, &str, &str, Duration) -> RedisResult<Option<u64>>,
    /// `exercises/src/storage.rs`.
    pub fenced_write: fn(&mut Connection, &str, u64, i64) -> RedisResult<bool>,
    /// `exercises/src/storage.rs`.
    pub fenced_read: fn(&mut Connection, &str, u64) -> RedisResult<Option<i64>>,
    /// `exercises/src/redlock.rs`.
    #[allow(clippy::type_complexity)]
    pub redlock_acquire:
        fn(&mut [Connection], &dyn Fn() -> Duration, &str, &str, Duration) -> Option<Duration>,
    /// `exercises/src/redlock.rs`.
    pub redlock_release: fn(&mut [Connection], &str, &str) -> usize,
}

/// The `main` of the runner (`exercises/runner/main.rs`): serves the judge
/// that started it, or, run by hand (`cargo run -p exercises`), hands over to
/// the judge with itself as the runner.
pub fn main(lock: Lock) -> ! {
    match std::env::var_os(protocol::SOCKET_VAR) {
        #[cfg(unix)]
        Some(socket) => serve::serve(lock, socket.into()),
        _ => {
            let _ = lock;
            let me = std::env::current_exe().unwrap_or_default();
            launch(&me.to_string_lossy())
        }
    }
}
