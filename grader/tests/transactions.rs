//! What a learner reads when redis-rs, rather than their own code, ends a call:
//! a transaction Redis aborted or refused, or a panic inside redis-rs. Each is
//! told as what happened, with the reply or the call to look at.

use grader::checks;
use grader::reference::LOCK as REFERENCE;
use grader::report::{Problem, Verdict};
use grader::sandbox::Failure;
use redis::{ConnectionLike, RedisResult};

/// The report of `release::releases_its_own_lock` for the reference lock with `release`.
fn report_with(release: grader::lock::ReleaseFn) -> (Failure, String) {
    let lock = grader::Lock {
        name: "a release under test",
        release,
        ..REFERENCE
    };
    let check = checks::named("release::releases_its_own_lock").expect("a check");
    let verdict = check.run(&lock).unwrap_or_else(|e| panic!("{e}"));
    let Verdict::Fail(report) = verdict else {
        panic!("the release should fail, got {verdict:?}");
    };
    match &report.problem {
        Problem::Failed { failure, .. } => (failure.clone(), report.to_string()),
        Problem::Broken(v) => panic!("expected a failed call, got a broken rule: {v}"),
        Problem::Refused { command, .. } => panic!("expected a failed call, got {command} refused"),
    }
}

/// WATCH, then the key changes (here, by the same client), so EXEC answers nil;
/// the code reads that nil into a tuple.
fn aborted_exec<C: ConnectionLike>(con: &mut C, key: &str, _token: &str) -> RedisResult<bool> {
    redis::cmd("WATCH").arg(key).exec(con)?;
    redis::cmd("SET").arg(key).arg("changed").exec(con)?;
    let (deleted,): (i64,) = redis::pipe().atomic().del(key).query(con)?;
    Ok(deleted == 1)
}

/// A command Redis refuses when queued (DEL without a key) makes it refuse the whole EXEC.
fn refused_transaction<C: ConnectionLike>(con: &mut C, key: &str, _: &str) -> RedisResult<bool> {
    let (deleted,): (i64,) = redis::pipe()
        .atomic()
        .cmd("DEL")
        .cmd("GET")
        .arg(key)
        .query(con)?;
    Ok(deleted == 1)
}

/// redis-rs panics on an argument added to a pipeline before any command.
fn redis_rs_panics<C: ConnectionLike>(con: &mut C, key: &str, _: &str) -> RedisResult<bool> {
    let deleted: i64 = redis::pipe().arg(key).query(con)?;
    Ok(deleted == 1)
}

#[test]
fn an_aborted_transaction_read_into_a_tuple_is_explained() {
    let (failure, report) = report_with(aborted_exec::<grader::Wire>);
    assert!(matches!(failure, Failure::Error { .. }), "{failure:?}");
    assert!(report.contains("EXEC\" → [(nil)]"), "{report}");
    assert!(report.contains("Redis answered nil"), "{report}");
    assert!(report.contains("a WATCHed key changed"), "{report}");
    assert!(report.contains("`Option<(i64,)>`"), "{report}");
}

#[test]
fn a_transaction_refused_as_a_whole_is_explained() {
    let (failure, report) = report_with(refused_transaction::<grader::Wire>);
    assert!(matches!(failure, Failure::Error { .. }), "{failure:?}");
    assert!(
        report.contains("wrong number of arguments for 'del'"),
        "{report}"
    );
    assert!(
        report.contains("Redis refused the whole transaction (EXECABORT)"),
        "{report}"
    );
}

#[test]
fn a_panic_inside_redis_rs_is_told_as_such_without_a_backtrace() {
    let (failure, report) = report_with(redis_rs_panics::<grader::Wire>);
    let Failure::Panicked { message, location } = &failure else {
        panic!("got {failure:?}");
    };
    assert_eq!(message, "No command on stack");
    assert!(
        location
            .as_deref()
            .is_some_and(|at| at.contains("/src/pipeline.rs:")),
        "{failure:?}"
    );
    assert!(
        report.contains("made redis-rs panic (at redis-"),
        "the location is shown from the crate's folder: {report}"
    );
    assert!(report.contains("in redis-rs's code, not yours"), "{report}");
    assert!(!report.contains("backtrace"), "{report}");
    assert!(!report.contains(".cargo/registry"), "{report}");
}

/// A transaction sent command by command (`MULTI`, `DEL`, `EXEC`), its reply
/// read into a tuple of one.
fn multi_by_hand<C: ConnectionLike>(con: &mut C, key: &str, _: &str) -> RedisResult<bool> {
    redis::cmd("MULTI").exec(con)?;
    redis::cmd("DEL").arg(key).exec(con)?;
    let (deleted,): (i64,) = redis::cmd("EXEC").query(con)?;
    Ok(deleted == 1)
}

/// The wire times each command by sending `TIME`s around it; behind a `MULTI`
/// the lock's code sent on its own, they would be queued in its transaction
/// and answered by its `EXEC`. So none goes behind it: `EXEC` answers the
/// lock's own commands, and a release made so passes.
#[test]
fn a_transaction_sent_command_by_command_gets_only_its_own_replies() {
    let lock = grader::Lock {
        name: "a release by hand",
        release: multi_by_hand::<grader::Wire>,
        ..REFERENCE
    };
    let check = checks::named("release::releases_its_own_lock").expect("a check");
    let verdict = check.run(&lock).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(verdict, Verdict::Pass), "{verdict:?}");
}
