//! Code that panics, spins or hammers Redis fails its own check, within the
//! time limit, with a message that says what happened; the checks after it
//! still run.

use std::time::{Duration, Instant};

use grader::checks;
use grader::reference::LOCK as REFERENCE;
use grader::report::{Problem, Verdict};
use grader::sandbox::{CALL_LIMIT, Failure};
use lock_catalogue::misbehaving::{
    ERRS, HAMMERS, PANICS, REDLOCK_SCRIPT_SPINS, SCRIPT_SPINS, SPINS,
};

/// Held by every test of this file: they share one Redis server, which a script that never
/// ends holds, for everyone, until the grader stops it.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
}

fn failure_of(check: &str, lock: &grader::Lock) -> (Failure, String) {
    let verdict = checks::named(check)
        .expect("a check")
        .run(lock)
        .expect("the grader runs");
    let Verdict::Fail(report) = verdict else {
        panic!("{check} should fail for {:?}, got {verdict:?}", lock.name)
    };
    match &report.problem {
        Problem::Failed { failure, .. } => (failure.clone(), report.to_string()),
        Problem::Broken(v) => panic!("expected a failed call, got a broken rule: {v}"),
        Problem::Refused { command, .. } => panic!("expected a failed call, got {command} refused"),
    }
}

#[test]
fn a_panic_is_reported_with_its_place() {
    let _serial = one_at_a_time();
    let (failure, report) = failure_of("acquire::takes_a_free_lock", &PANICS);
    let Failure::Panicked { message, location } = failure else {
        panic!("got {failure:?}")
    };
    assert!(message.contains("unwrap"), "{message}");
    assert!(
        location.is_some_and(|l| l.contains("misbehaving.rs")),
        "{report}"
    );
    assert!(report.contains("Your `acquire` panicked at"), "{report}");
}

#[test]
fn an_endless_loop_is_cut_off_at_the_time_limit_and_the_next_check_runs() {
    let _serial = one_at_a_time();
    let started = Instant::now();
    let (failure, report) = failure_of("acquire::takes_a_free_lock", &SPINS);
    assert_eq!(failure, Failure::TimedOut { commands: 0 }, "{report}");
    assert!(
        started.elapsed() < CALL_LIMIT + Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    assert!(report.contains("sent no Redis command for 3 s"), "{report}");
    // The spinning thread is still running; the grader goes on regardless.
    let next = checks::named("release::releases_its_own_lock")
        .expect("a check")
        .run(&REFERENCE)
        .expect("runs");
    assert_eq!(next, Verdict::Pass);
}

#[test]
fn a_script_that_never_ends_is_stopped_and_the_next_check_runs() {
    let _serial = one_at_a_time();
    // Redis runs one script at a time: one that never ends would hold the server, and every
    // check after it, until the grading ends. The grader stops it when it gives up on the call.
    let started = Instant::now();
    let (failure, report) = failure_of("acquire::takes_a_free_lock", &SCRIPT_SPINS);
    assert_eq!(failure, Failure::TimedOut { commands: 0 }, "{report}");
    let next = checks::named("release::releases_its_own_lock")
        .expect("a check")
        .run(&REFERENCE)
        .expect("runs");
    assert_eq!(next, Verdict::Pass, "the server is free again");
    assert!(
        started.elapsed() < CALL_LIMIT + Duration::from_secs(15),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn a_script_that_never_ends_on_a_node_is_stopped_and_the_next_check_runs() {
    let _serial = one_at_a_time();
    let started = Instant::now();
    let (failure, report) = failure_of("redlock::release_frees_every_node", &REDLOCK_SCRIPT_SPINS);
    assert!(matches!(failure, Failure::TimedOut { .. }), "{report}");
    let next = checks::named("redlock::release_spares_another_holder")
        .expect("a check")
        .run(&REFERENCE)
        .expect("runs");
    assert_eq!(next, Verdict::Pass, "the nodes are free again");
    assert!(
        started.elapsed() < CALL_LIMIT + Duration::from_secs(15),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn a_command_loop_is_stopped_by_the_command_budget() {
    let _serial = one_at_a_time();
    let (failure, report) = failure_of("acquire::refuses_a_held_lock", &HAMMERS);
    assert_eq!(failure, Failure::TooManyCommands, "{report}");
    assert!(report.contains("more than 1000 Redis commands"), "{report}");
}

#[test]
fn a_redis_error_is_reported_with_the_command_that_caused_it() {
    let _serial = one_at_a_time();
    let (failure, report) = failure_of("acquire::takes_a_free_lock", &ERRS);
    assert!(matches!(failure, Failure::Error { .. }), "{failure:?}");
    assert!(
        report.contains("SET lock token-of-A NX PXX 10000 → (error)"),
        "{report}"
    );
}

/// An `acquire` that takes longer than the time limit in all, but keeps
/// talking to Redis: a GET every two seconds, then the reference's acquire.
fn slow_but_busy(
    con: &mut grader::Wire,
    key: &str,
    token: &str,
    ttl: Duration,
) -> redis::RedisResult<bool> {
    for _ in 0..2 {
        let _: Option<String> = redis::cmd("GET").arg(key).query(con)?;
        std::thread::sleep(CALL_LIMIT * 2 / 3);
    }
    (REFERENCE.acquire)(con, key, token, ttl)
}

#[test]
fn a_call_that_keeps_sending_commands_is_not_cut_off() {
    let _serial = one_at_a_time();
    // The limit is on quiet time, not on the whole call: a loop that keeps
    // sending commands is the command budget's to stop, whatever the load.
    let busy = grader::Lock {
        name: "acquire that is slow but busy",
        acquire: slow_but_busy,
        ..REFERENCE
    };
    let verdict = checks::named("acquire::takes_a_free_lock")
        .expect("a check")
        .run(&busy)
        .expect("the grader runs");
    assert!(matches!(verdict, Verdict::Pass), "{verdict:?}");
}
