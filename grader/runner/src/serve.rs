//! The runner at work: orders in, answers out, one call at a time per link.
//!
//! The runner's first link to the judge is the control link ([`CONTROL`]),
//! where the judge writes its orders. `OPEN` makes a
//! new link to the judge's socket; `CALL` runs one of your functions on a
//! thread of its own, with the links the order names as its connections, and
//! sends the function's answer on the call's home link once it returns. A
//! panic (a `todo!()` among them) is caught and sent as an answer too, with
//! where it happened, and nothing of it is printed: the judge's report says it.
//!
//! Calls on different links may run at the same time (three clients racing for
//! one lock); the judge never gives one link to two calls at once. When the
//! judge closes the control link, its check is over and the runner exits.

use std::cell::RefCell;
use std::collections::HashMap;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;

use crate::connection::{Clock, Connection};
use crate::protocol::{Answer, CONTROL, Call, Fault, Order};
use crate::{Lock, panics};

/// The name of the threads that run your functions.
const CALL_THREAD: &str = "lock-call";

/// The links by name, while no call holds them.
type Links = Arc<Mutex<HashMap<String, Connection>>>;

/// Serves the judge's orders until it closes the control link, then exits.
pub(crate) fn serve(lock: Lock, socket: PathBuf) -> ! {
    panics::quiet_on(CALL_THREAD);
    let links: Links = Arc::default();
    let mut control = match Connection::open(&socket, CONTROL) {
        Ok(control) => control,
        Err(e) => {
            eprintln!("lock-runner: could not reach the judge's socket: {e}");
            std::process::exit(1)
        }
    };
    loop {
        let order = match control.receive() {
            Ok(Some(parts)) => Order::parse(&parts),
            // The judge is done with this runner (or gone).
            Ok(None) | Err(_) => std::process::exit(0),
        };
        match order {
            Ok(Order::Open { link }) => open(&socket, &links, link),
            Ok(Order::Close { link }) => {
                lock_links(&links).remove(&link);
            }
            Ok(Order::Call { home, nodes, call }) => {
                let links = Arc::clone(&links);
                let spawned = thread::Builder::new()
                    .name(CALL_THREAD.into())
                    .spawn(move || run_call(lock, &links, home, nodes, call));
                if let Err(e) = spawned {
                    eprintln!("lock-runner: could not start a thread for a call: {e}");
                }
            }
            Err(e) => eprintln!("lock-runner: {e}"),
        }
    }
}

fn open(socket: &Path, links: &Links, link: String) {
    match Connection::open(socket, &link) {
        Ok(connection) => {
            lock_links(links).insert(link, connection);
        }
        Err(e) => eprintln!("lock-runner: could not reach the judge's socket: {e}"),
    }
}

fn lock_links(links: &Links) -> std::sync::MutexGuard<'_, HashMap<String, Connection>> {
    links.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs one call with its links, answers on its home link, and gives the links back.
fn run_call(lock: Lock, links: &Links, home: String, nodes: Vec<String>, call: Call) {
    let (home_link, node_links) = {
        let mut all = lock_links(links);
        let home_link = all.remove(&home);
        let node_links: Vec<(String, Option<Connection>)> = nodes
            .into_iter()
            .map(|n| (n.clone(), all.remove(&n)))
            .collect();
        (home_link, node_links)
    };
    let Some(mut home_link) = home_link else {
        eprintln!("lock-runner: the judge asked for a call on a link it never opened");
        return;
    };
    let mut names = Vec::new();
    let mut node_connections = Vec::new();
    for (name, connection) in node_links {
        match connection {
            Some(c) => {
                names.push(name);
                node_connections.push(c);
            }
            None => eprintln!("lock-runner: the judge named a node link it never opened"),
        }
    }
    let answer = panic::catch_unwind(AssertUnwindSafe(|| {
        call_function(lock, &call, &mut home_link, &mut node_connections)
    }))
    .unwrap_or_else(|payload| {
        let location = panics::take_location();
        Answer::Panicked {
            message: panics::message(payload.as_ref()),
            location,
        }
    });
    // The links go back before the judge hears the answer (under the same
    // lock), so that its next call, which may come at once, finds them.
    let mut all = lock_links(links);
    // Every node link first: the judge stops serving each at its END, then reads the answer.
    for node in &mut node_connections {
        let _ = node.send(&[b"END".to_vec()]);
    }
    let _ = home_link.send(&answer.parts());
    all.insert(home, home_link);
    all.extend(names.into_iter().zip(node_connections));
}

/// Calls the learner's function that `call` names.
fn call_function(
    lock: Lock,
    call: &Call,
    home: &mut Connection,
    nodes: &mut [Connection],
) -> Answer {
    let fault = |e: redis::RedisError| Fault::of(&e);
    match call.clone() {
        Call::NewToken => Answer::Token((lock.new_token)()),
        Call::Acquire { key, token, ttl } => {
            Answer::Bool((lock.acquire)(home, &key, &token, ttl).map_err(fault))
        }
        Call::Release { key, token } => {
            Answer::Bool((lock.release)(home, &key, &token).map_err(fault))
        }
        Call::AcquireFenced {
            key,
            fence_key,
            token,
            ttl,
        } => {
            Answer::Fence((lock.acquire_fenced)(home, &key, &fence_key, &token, ttl).map_err(fault))
        }
        Call::FencedWrite {
            row,
            fencing_token,
            value,
        } => Answer::Bool((lock.fenced_write)(home, &row, fencing_token, value).map_err(fault)),
        Call::FencedRead { row, fencing_token } => {
            Answer::Read((lock.fenced_read)(home, &row, fencing_token).map_err(fault))
        }
        Call::Extend { key, token, ttl } => {
            Answer::Bool((lock.extend)(home, &key, &token, ttl).map_err(fault))
        }
        Call::KeepAlive {
            key,
            token,
            ttl,
            now,
            renewed_at,
            lost,
        } => {
            let mut renewed_at = renewed_at;
            let lost = AtomicBool::new(lost);
            // The keeper renews through the judge, which runs the extend the
            // check chose (the reference's when the check grades the keeper).
            let result = (lock.keep_alive)(
                home,
                Connection::extend,
                &key,
                &token,
                ttl,
                now,
                &mut renewed_at,
                &lost,
            );
            Answer::Kept {
                result: result.map_err(fault),
                renewed_at,
                lost: lost.load(Ordering::SeqCst),
            }
        }
        Call::RedlockAcquire { key, token, ttl } => {
            let clock = Clock(RefCell::new(home));
            Answer::Validity((lock.redlock_acquire)(
                nodes,
                &|| clock.now(),
                &key,
                &token,
                ttl,
            ))
        }
        Call::RedlockRelease { key, token } => {
            Answer::Released((lock.redlock_release)(nodes, &key, &token))
        }
    }
}
