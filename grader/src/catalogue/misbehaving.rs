//! Code that does not return properly: each must be reported for its own
//! check, within the time limit, while the other checks go on.
//!
//! The locks from [`EXITS`] on go further: they end, abort, stop or starve
//! the whole process, or print lines that look like the test harness's. No
//! grader in the same process can report them; the harness, which runs each
//! check in a process of its own, must fail the check and name the cause.
//! Only run them through the harness (the `grade-lock` binary does).

use std::time::Duration;

use redis::{ConnectionLike, RedisResult};

use crate::lock::Lock;
use crate::reference::LOCK as REFERENCE;

/// An `acquire` that panics (`unwrap()` on a missing reply).
pub const PANICS: Lock = Lock {
    name: "acquire that panics",
    acquire: panics,
    ..REFERENCE
};
/// An `acquire` that never returns and sends nothing.
pub const SPINS: Lock = Lock {
    name: "acquire that spins",
    acquire: spins,
    ..REFERENCE
};
/// An `acquire` that retries for ever, hammering Redis.
pub const HAMMERS: Lock = Lock {
    name: "acquire that retries for ever",
    acquire: hammers,
    ..REFERENCE
};
/// An `acquire` whose command Redis refuses.
pub const ERRS: Lock = Lock {
    name: "acquire with a typo",
    acquire: errs,
    ..REFERENCE
};

/// An `acquire` that ends the process with status 0, as if all went well.
pub const EXITS: Lock = Lock {
    name: "acquire that exits the process",
    acquire: exits,
    ..REFERENCE
};
/// An `acquire` that aborts the process.
pub const ABORTS: Lock = Lock {
    name: "acquire that aborts",
    acquire: aborts,
    ..REFERENCE
};
/// An `acquire` that prints the test harness's result lines, then exits
/// with status 0, so that a reader counting lines would see a full pass.
pub const FAKES_RESULTS: Lock = Lock {
    name: "acquire that prints fake results",
    acquire: fakes_results,
    ..REFERENCE
};
/// An `acquire` that panics, and panics again while unwinding (in a `Drop`),
/// which aborts the process.
pub const PANICS_WHILE_UNWINDING: Lock = Lock {
    name: "acquire that panics while unwinding",
    acquire: panics_while_unwinding,
    ..REFERENCE
};
/// An `acquire` that allocates without bound. The blocks are zeroed pages
/// that are never touched, so they cost address space, not memory.
pub const HOGS_MEMORY: Lock = Lock {
    name: "acquire that allocates without bound",
    acquire: hogs_memory,
    ..REFERENCE
};
/// An `acquire` that stops its own process (as Ctrl-Z does) for good.
pub const STOPS: Lock = Lock {
    name: "acquire that stops its process",
    acquire: stops,
    ..REFERENCE
};

/// The fake lines [`FAKES_RESULTS`] prints.
pub const FAKE_RESULT_LINES: &[&str] = &[
    "test acquire::takes_a_free_lock ... ok",
    "test result: ok. 34 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.50s",
];

fn exits<C: ConnectionLike>(_: &mut C, _: &str, _: &str, _: Duration) -> RedisResult<bool> {
    std::process::exit(0)
}

fn aborts<C: ConnectionLike>(_: &mut C, _: &str, _: &str, _: Duration) -> RedisResult<bool> {
    std::process::abort()
}

fn fakes_results<C: ConnectionLike>(_: &mut C, _: &str, _: &str, _: Duration) -> RedisResult<bool> {
    for line in FAKE_RESULT_LINES {
        println!("{line}");
        // A carriage return would bring it to the start of a terminal's line.
        eprintln!("\r{line}");
    }
    std::process::exit(0)
}

/// Panics when dropped: during the unwinding of another panic, that aborts.
struct PanicsOnDrop;

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        panic!("a second panic, in a Drop, while the first one unwinds");
    }
}

fn panics_while_unwinding<C: ConnectionLike>(
    _: &mut C,
    _: &str,
    _: &str,
    _: Duration,
) -> RedisResult<bool> {
    let _guard = PanicsOnDrop;
    panic!("the first panic");
}

fn hogs_memory<C: ConnectionLike>(_: &mut C, _: &str, _: &str, _: Duration) -> RedisResult<bool> {
    let mut hoard: Vec<Vec<u8>> = Vec::new();
    loop {
        hoard.push(vec![0u8; 64 << 20]);
        std::hint::black_box(&hoard);
    }
}

fn stops<C: ConnectionLike>(_: &mut C, _: &str, _: &str, _: Duration) -> RedisResult<bool> {
    // SAFETY: a plain system call.
    unsafe { libc::raise(libc::SIGSTOP) };
    Ok(true)
}

fn panics<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    _ttl: Duration,
) -> RedisResult<bool> {
    let reply: Option<String> = redis::cmd("SET")
        .arg(key)
        .arg(token)
        .arg("NX")
        .arg("PX")
        .arg(0)
        .query(con)
        .ok();
    let reply = reply.unwrap();
    Ok(!reply.is_empty())
}

#[allow(clippy::empty_loop)]
fn spins<C: ConnectionLike>(
    _con: &mut C,
    _key: &str,
    _token: &str,
    _ttl: Duration,
) -> RedisResult<bool> {
    loop {
        std::hint::spin_loop();
    }
}

fn hammers<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    _token: &str,
    _ttl: Duration,
) -> RedisResult<bool> {
    loop {
        // Waits for a lock that a holder keeps: "not yet, try again".
        let _: Option<String> = redis::cmd("GET").arg(key).query(con)?;
        let _: Option<String> = redis::cmd("SET").arg(key).arg("someone-else").query(con)?;
    }
}

fn errs<C: ConnectionLike>(
    con: &mut C,
    key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<bool> {
    let reply: Option<String> = redis::cmd("SET")
        .arg(key)
        .arg(token)
        .arg("NX")
        .arg("PXX")
        .arg(ttl.as_millis() as u64)
        .query(con)?;
    Ok(reply.is_some())
}
