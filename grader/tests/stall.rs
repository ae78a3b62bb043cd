//! A machine that stalls is not a broken lock: when real time jumps between
//! two steps of a check (here: the test's own code sleeps, as a process
//! stopped with Ctrl-Z would, while a lock has less than the stall left to
//! live), the grader notices, runs the check again, and gives no verdict on
//! the lock if it keeps stalling.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use grader::error::GradeError;
use grader::reference::LOCK as REFERENCE;
use grader::report::Verdict;
use grader::world::World;
use grader::{Lock, Wire, checks};
use redis::RedisResult;

/// A lock found with less than this left (virtual ms) is about to expire.
const ABOUT_TO_EXPIRE_MS: i64 = 1_700;

/// How long the "machine" stands still once it finds a lock with `left_ms`
/// to live: longer than that and the clock's floor together, so that the
/// lock's real expiry comes meanwhile, whichever it is.
fn stall(left_ms: i64) -> Duration {
    Duration::from_millis(left_ms.max(0) as u64 + grader::clock::FLOOR_MS + 200)
}

/// How many calls of [`stall_then_acquire`] stall (the rest do not).
static STALLS_LEFT: AtomicUsize = AtomicUsize::new(0);

/// The reference acquire, after a stall at the worst moment (someone's lock
/// about to expire) while [`STALLS_LEFT`] allows.
fn stall_then_acquire(con: &mut Wire, key: &str, token: &str, ttl: Duration) -> RedisResult<bool> {
    let left: i64 = redis::cmd("PTTL").arg(key).query(con)?;
    let worst = (0..ABOUT_TO_EXPIRE_MS).contains(&left);
    if worst
        && STALLS_LEFT
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
    {
        std::thread::sleep(stall(left));
    }
    (REFERENCE.acquire)(con, key, token, ttl)
}

const STALLING: Lock = Lock {
    name: "reference that stalls",
    acquire: stall_then_acquire,
    ..REFERENCE
};

/// The slow job: B tries for the lock while A's runs out, second by second.
fn run_check() -> Result<Verdict, GradeError> {
    checks::named("scenarios::slow_job")
        .expect("a check")
        .run(&STALLING)
}

/// One test, so that the two cases never share [`STALLS_LEFT`].
#[test]
fn a_stall_is_run_again_and_a_lasting_one_is_no_verdict() {
    STALLS_LEFT.store(1, Ordering::SeqCst);
    let once = run_check();
    assert!(
        matches!(once, Ok(Verdict::Pass)),
        "one stall, then a clean run: {once:?}"
    );
    assert_eq!(STALLS_LEFT.load(Ordering::SeqCst), 0, "the stall happened");

    STALLS_LEFT.store(usize::MAX, Ordering::SeqCst);
    let always = run_check();
    STALLS_LEFT.store(0, Ordering::SeqCst);
    let Err(e @ GradeError::Stalled(_)) = always else {
        panic!("a verdict on a lock that is not to blame: {always:?}")
    };
    let message = e.to_string();
    assert!(
        message.starts_with("the machine stalled (")
            && message.contains("same in 4 runs of the check")
            && message.ends_with("not a verdict on your lock; run again"),
        "{message}"
    );
}

/// The same between two steps of the grader's own: a lock with 1 s of
/// virtual time left, then real time in which nothing happens, half a second
/// longer than that second and the clock's floor together.
#[test]
fn a_lock_that_real_time_took_away_is_a_stall_not_a_free_lock() {
    let mut world = World::open().expect("a world");
    let lock = world.keys.lock.clone();
    redis::cmd("SET")
        .arg(&lock)
        .arg("A")
        .arg("NX")
        .arg("PX")
        .arg(10_000)
        .exec(world.con())
        .expect("A takes the lock");
    world.settle().expect("the clock notes A's TTL");
    world.advance_to(9_000).expect("9 s later");
    std::thread::sleep(Duration::from_millis(1_000 + grader::clock::FLOOR_MS + 500));
    match world.lock_value() {
        Err(GradeError::Stalled(what)) => assert!(what.contains("real expiry"), "{what}"),
        // Still there at virtual 9 s is right too; gone is what must not be.
        other => assert!(
            matches!(&other, Ok(Some(holder)) if holder == "A"),
            "at virtual 9 s of a 10 s lock: {other:?}"
        ),
    }
}
