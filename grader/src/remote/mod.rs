//! The learner's lock, one process away: the judge's side of the runner.
//!
//! The learner's code is built into a program of its own, the runner
//! (`lock-runner` plus the `exercises` crate: its `runner` binary), and
//! never into the judge. [`LOCK`] is the learner's lock as the checks see it:
//! a [`Lock`] like any other, whose every function sends the call to the
//! runner ([`lock_runner::protocol`]) and, while the runner works, serves the
//! learner's Redis commands through the wire the check handed over
//! ([`serve`]). So every check, model, explorer and probe works on the
//! learner's lock unchanged, while no byte of learner code runs in a process
//! that makes or sends a verdict.
//!
//! What the runner answers is only what the learner's function returned; the
//! checks judge it, and the effects they see in Redis through their own
//! connections, as they always did. A runner that dies ends its check as a
//! failure that says how it died ([`on_end`]); one that breaks the protocol
//! fails the call it was in.
//!
//! Each check's process starts its runner ([`process`]) the first time a check
//! calls a learner function, from the path in [`lock_runner::RUNNER_VAR`].

mod process;
mod serve;

use std::collections::HashMap;
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::thread;
use std::time::Duration;

use lock_runner::protocol::{Answer, Call, Order};
use redis::RedisResult;

use crate::isolation::Isolation;
use crate::lock::{ExtendFn, Lock};
use crate::outcome::{Cause, Outcome};
use crate::wire::{OverBudget, Wire};
use process::{Gone, Link, Process};
use serve::Served;

pub use lock_runner::RUNNER_VAR;

/// The environment variable that says whether runners run in a sandbox:
/// `bwrap` (they must; a check fails to run without one), `none` (they run
/// as plain processes), or unset (in one when bubblewrap works here).
pub const SANDBOX_VAR: &str = "GRADER_SANDBOX";

/// How the harness hands its checks the sandbox it detected: `checked:` and
/// [`Isolation::hand_down`]'s line.
const HANDED_DOWN: &str = "checked:";

/// The sandbox runners run in, as [`SANDBOX_VAR`] asks.
fn sandbox() -> Result<Option<Isolation>, String> {
    match std::env::var(SANDBOX_VAR).as_deref() {
        Ok("none") => Ok(None),
        // What the harness detected for its checks, handed down.
        Ok(line) if line.starts_with(HANDED_DOWN) => {
            Isolation::handed_down(&line[HANDED_DOWN.len()..])
                .map(Some)
                .ok_or_else(|| format!("{SANDBOX_VAR}={line:?} is not a sandbox this grader handed down"))
        }
        Ok("bwrap") => Isolation::detect().map(Some).map_err(|e| {
            format!("{SANDBOX_VAR}=bwrap asks for a sandbox for the learner's code, and there is none: {e}")
        }),
        Ok(other) => Err(format!(
            "{SANDBOX_VAR}={other:?} is neither `bwrap` nor `none`: set one, or unset it"
        )),
        Err(_) => Ok(Isolation::detect().ok()),
    }
}

/// What the harness says once, before the results, about where the learner's
/// code runs; and the value of [`SANDBOX_VAR`] for its checks' processes.
pub fn sandbox_note() -> (String, String) {
    match std::env::var(SANDBOX_VAR).as_deref() {
        Ok("none") => (
            format!(
                "grader: your code runs without a sandbox ({SANDBOX_VAR}=none), as your own user"
            ),
            "none".to_string(),
        ),
        Ok("bwrap") => match Isolation::detect() {
            Ok(i) => (
                format!("grader: your code runs in a sandbox ({})", i.version()),
                format!("{HANDED_DOWN}{}", i.hand_down()),
            ),
            // Asked for and missing: every check says why, none runs without it.
            Err(e) => (
                format!("grader: {SANDBOX_VAR}=bwrap, but there is no sandbox: {e}"),
                "bwrap".to_string(),
            ),
        },
        _ => match Isolation::detect() {
            Ok(i) => (
                format!("grader: your code runs in a sandbox ({})", i.version()),
                format!("{HANDED_DOWN}{}", i.hand_down()),
            ),
            Err(e) => (
                format!(
                    "grader: your code runs without a sandbox, as your own user (no bubblewrap: {}); \
                     that only matters to code that cheats",
                    first_line(&e.to_string())
                ),
                "none".to_string(),
            ),
        },
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}

/// The learner's lock, in the runner the environment names.
pub const LOCK: Lock = Lock {
    name: "your lock",
    new_token,
    acquire,
    release,
    acquire_fenced,
    fenced_write,
    fenced_read,
    extend,
    keep_alive,
    redlock_acquire,
    redlock_release,
};

/// A learner function's panic, as the runner told it: the sandbox names it
/// ("not started" for a `todo!()`) as it names a panic in the judge's process.
#[derive(Debug)]
pub struct RemotePanic {
    /// The panic's message.
    pub message: String,
    /// Where it happened, as `file:line`, when known.
    pub location: Option<String>,
}

/// What ends a check early: called with the check's outcome, never returns
/// (no value of `Infallible` can be made).
pub type OnEnd = Box<dyn Fn(Outcome) -> std::convert::Infallible + Send + Sync>;

static ON_END: OnceLock<OnEnd> = OnceLock::new();
static RUNNER: OnceLock<Result<Runner, String>> = OnceLock::new();

/// Says what ends the check when the runner dies or cannot start: the harness
/// sends that outcome as the check's verdict and exits.
pub fn on_end(f: OnEnd) {
    let _ = ON_END.set(f);
}

/// Ends the runner, if one was started, and removes its socket.
pub fn stop() {
    if let Some(Ok(runner)) = RUNNER.get() {
        runner.process.stop();
    }
}

/// Forgets the link of a wire that is gone, here and in the runner.
pub(crate) fn forget(wire: u64) {
    if let Some(Ok(runner)) = RUNNER.get() {
        let link = runner.links().remove(&wire);
        if let Some(link) = link {
            let _ = runner.process.order(&Order::Close { link: link.name });
        }
    }
}

/// The runner of this process, and the links it holds for the check's wires.
struct Runner {
    process: Process,
    /// The link of each wire (by [`Wire::id`]) while no call uses it.
    links: Mutex<HashMap<u64, Link>>,
    /// Links with no wire, for the answers of calls that have none of their own.
    homes: Mutex<Vec<Link>>,
}

/// Starts the runner now, on the calling thread, which must live as long as
/// the check: the runner dies with the thread that started it (so that a
/// check's process never leaves one behind), and a call's own thread ends.
pub fn start() {
    runner();
}

fn runner() -> &'static Runner {
    let started = RUNNER.get_or_init(|| {
        let exe = std::env::var_os(RUNNER_VAR)
            .map(PathBuf::from)
            .ok_or_else(|| {
                format!("{RUNNER_VAR} is not set, so there is no learner code to run")
            })?;
        let sandbox = sandbox()?;
        let process = Process::start(&exe, sandbox.as_ref()).map_err(|e| {
            format!(
                "could not start the learner's runner {}: {e}",
                exe.display()
            )
        })?;
        Ok(Runner {
            process,
            links: Mutex::default(),
            homes: Mutex::default(),
        })
    });
    match started {
        Ok(runner) => runner,
        Err(reason) => end(Outcome::NotRun {
            reason: format!("the grader could not run this check: {reason}"),
        }),
    }
}

/// Ends the check with `outcome`, through the harness's hook.
fn end(outcome: Outcome) -> ! {
    match ON_END.get() {
        Some(f) => match f(outcome) {},
        // Not under the harness: nobody to tell but the caller.
        None => panic::panic_any(RemotePanic {
            message: format!("the learner's runner ended the check: {outcome:?}"),
            location: None,
        }),
    }
}

/// Fails the current call with `message`, as a panic of the learner's function would.
fn fail(message: String) -> ! {
    panic::panic_any(RemotePanic {
        message,
        location: None,
    })
}

impl Runner {
    fn links(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Link>> {
        self.links.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What the check does about a runner that is gone: the runner's death
    /// ends the check; a broken link fails the call.
    fn gone(&self, gone: Gone) -> ! {
        match gone {
            Gone::Ended(end) => self::end(Outcome::Crashed {
                cause: Cause::CodeEnded { end },
            }),
            Gone::Broken(why) => fail(why),
        }
    }

    /// The link of the wire `id`, opened when it has none yet.
    fn link_of(&self, id: u64) -> Link {
        let kept = self.links().remove(&id);
        match kept {
            Some(link) => link,
            None => self.process.open().unwrap_or_else(|g| self.gone(g)),
        }
    }

    fn home(&self) -> Link {
        let spare = self
            .homes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        match spare {
            Some(link) => link,
            None => self.process.open().unwrap_or_else(|g| self.gone(g)),
        }
    }

    /// What serving a call's home link came to, as the call's answer.
    fn answer(&self, served: Served) -> Answer {
        match served {
            Served::Answer(answer) => answer,
            Served::Closed => self.gone(self.process.gone()),
            Served::Ended => fail("the runner ended a call without answering it".to_string()),
            Served::Unreadable(why) => {
                fail(format!("the runner broke the grader's protocol: {why}"))
            }
        }
    }

    /// Calls a learner function of one connection, served through `wire`;
    /// `extend` answers a keeper's renewals.
    fn on_wire(&self, wire: &mut Wire, call: Call, extend: Option<ExtendFn>) -> Answer {
        let id = wire.id();
        let mut link = self.link_of(id);
        let order = Order::Call {
            home: link.name.clone(),
            nodes: Vec::new(),
            call,
        };
        self.process.order(&order).unwrap_or_else(|g| self.gone(g));
        let served = serve::serve(&mut link, Some(wire), None, extend);
        let answer = self.answer(served);
        // A renewal with the learner's own extend was a call of its own on
        // this wire, on a link of its own, kept for the wire meanwhile: one
        // link a wire is enough.
        if let Some(spare) = self.links().insert(id, link) {
            let _ = self.process.order(&Order::Close { link: spare.name });
        }
        answer
    }

    /// Calls a learner function with no connection (`new_token`).
    fn alone(&self, call: Call) -> Answer {
        let mut home = self.home();
        let order = Order::Call {
            home: home.name.clone(),
            nodes: Vec::new(),
            call,
        };
        self.process.order(&order).unwrap_or_else(|g| self.gone(g));
        let answer = self.answer(serve::serve(&mut home, None, None, None));
        self.homes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(home);
        answer
    }

    /// Calls a Redlock function: each node's commands through its wire, on a
    /// thread of its own (the learner may ask the nodes at once), the clock
    /// and the answer on a home link of the call's own.
    fn on_nodes(&self, nodes: &mut [Wire], clock: &dyn Fn() -> Duration, call: Call) -> Answer {
        let mut home = self.home();
        let mut links: Vec<Link> = nodes.iter().map(|n| self.link_of(n.id())).collect();
        let order = Order::Call {
            home: home.name.clone(),
            nodes: links.iter().map(|l| l.name.clone()).collect(),
            call,
        };
        self.process.order(&order).unwrap_or_else(|g| self.gone(g));
        let over_budget = AtomicBool::new(false);
        let home_handle = home.handle().ok();
        let served = thread::scope(|scope| {
            for (link, node) in links.iter_mut().zip(nodes.iter_mut()) {
                let (over_budget, home_handle) = (&over_budget, &home_handle);
                scope.spawn(move || {
                    let served = panic::catch_unwind(AssertUnwindSafe(|| {
                        serve::serve(link, Some(node), None, None)
                    }));
                    if let Err(payload) = served {
                        over_budget.fetch_or(payload.is::<OverBudget>(), Ordering::Relaxed);
                        // The home link waits for an answer that will not come: end it.
                        if let Some(home) = home_handle {
                            let _ = home.shutdown(std::net::Shutdown::Both);
                        }
                    }
                });
            }
            serve::serve(&mut home, None, Some(clock), None)
        });
        if over_budget.load(Ordering::Relaxed) {
            panic::panic_any(OverBudget);
        }
        let answer = self.answer(served);
        let mut kept = self.links();
        for (node, link) in nodes.iter().zip(links) {
            kept.insert(node.id(), link);
        }
        drop(kept);
        self.homes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(home);
        answer
    }
}

/// The runner answered a call with an answer for another kind of function.
fn mismatch(function: &str, answer: Answer) -> ! {
    match answer {
        Answer::Panicked { message, location } => {
            panic::panic_any(RemotePanic { message, location })
        }
        other => fail(format!(
            "the runner answered a call of `{function}` with {other:?}, which is not what \
             `{function}` returns"
        )),
    }
}

fn new_token() -> String {
    match runner().alone(Call::NewToken) {
        Answer::Token(token) => token,
        other => mismatch("new_token", other),
    }
}

fn flag(function: &str, answer: Answer) -> RedisResult<bool> {
    match answer {
        Answer::Bool(result) => result.map_err(|f| f.error()),
        other => mismatch(function, other),
    }
}

fn acquire(w: &mut Wire, key: &str, token: &str, ttl: Duration) -> RedisResult<bool> {
    let call = Call::Acquire {
        key: key.into(),
        token: token.into(),
        ttl,
    };
    flag("acquire", runner().on_wire(w, call, None))
}

fn release(w: &mut Wire, key: &str, token: &str) -> RedisResult<bool> {
    let call = Call::Release {
        key: key.into(),
        token: token.into(),
    };
    flag("release", runner().on_wire(w, call, None))
}

fn acquire_fenced(
    w: &mut Wire,
    key: &str,
    fence_key: &str,
    token: &str,
    ttl: Duration,
) -> RedisResult<Option<u64>> {
    let call = Call::AcquireFenced {
        key: key.into(),
        fence_key: fence_key.into(),
        token: token.into(),
        ttl,
    };
    match runner().on_wire(w, call, None) {
        Answer::Fence(result) => result.map_err(|f| f.error()),
        other => mismatch("acquire_fenced", other),
    }
}

fn fenced_write(w: &mut Wire, row: &str, fencing_token: u64, value: i64) -> RedisResult<bool> {
    let call = Call::FencedWrite {
        row: row.into(),
        fencing_token,
        value,
    };
    flag("fenced_write", runner().on_wire(w, call, None))
}

fn fenced_read(w: &mut Wire, row: &str, fencing_token: u64) -> RedisResult<Option<i64>> {
    let call = Call::FencedRead {
        row: row.into(),
        fencing_token,
    };
    match runner().on_wire(w, call, None) {
        Answer::Read(result) => result.map_err(|f| f.error()),
        other => mismatch("fenced_read", other),
    }
}

fn extend(w: &mut Wire, key: &str, token: &str, ttl: Duration) -> RedisResult<bool> {
    let call = Call::Extend {
        key: key.into(),
        token: token.into(),
        ttl,
    };
    flag("extend", runner().on_wire(w, call, None))
}

fn keep_alive(
    w: &mut Wire,
    extend: ExtendFn,
    key: &str,
    token: &str,
    ttl: Duration,
    now: Duration,
    renewed_at: &mut Duration,
    lost: &std::sync::atomic::AtomicBool,
) -> RedisResult<()> {
    let call = Call::KeepAlive {
        key: key.into(),
        token: token.into(),
        ttl,
        now,
        renewed_at: *renewed_at,
        lost: lost.load(Ordering::SeqCst),
    };
    // The learner's keeper renews through the judge, with `extend`: the
    // reference's in a check of the keeper, the learner's own in a scenario.
    match runner().on_wire(w, call, Some(extend)) {
        Answer::Kept {
            result,
            renewed_at: after,
            lost: now_lost,
        } => {
            // The in-out arguments, as the learner's function left them.
            *renewed_at = after;
            lost.store(now_lost, Ordering::SeqCst);
            result.map_err(|f| f.error())
        }
        other => mismatch("keep_alive", other),
    }
}

fn redlock_acquire(
    nodes: &mut [Wire],
    clock: &dyn Fn() -> Duration,
    key: &str,
    token: &str,
    ttl: Duration,
) -> Option<Duration> {
    let call = Call::RedlockAcquire {
        key: key.into(),
        token: token.into(),
        ttl,
    };
    match runner().on_nodes(nodes, clock, call) {
        Answer::Validity(validity) => validity,
        other => mismatch("redlock_acquire", other),
    }
}

fn redlock_release(nodes: &mut [Wire], key: &str, token: &str) -> usize {
    let call = Call::RedlockRelease {
        key: key.into(),
        token: token.into(),
    };
    match runner().on_nodes(nodes, &|| Duration::ZERO, call) {
        Answer::Released(n) => n,
        other => mismatch("redlock_release", other),
    }
}
