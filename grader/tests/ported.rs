//! Correct locks in the style of published libraries pass every check: a lock
//! is not refused for using a Redis function, a second key, `MSETNX` and
//! `GETRANGE`, `TIME`, `INFO replication` or `WAIT`.

use grader::checks::CHECKS;
use grader::report::Verdict;
use lock_catalogue::ported::ALL;

/// Every check of the exercises whose functions `name` has of its own.
fn passes(name: &str, exercises: &[&str]) {
    let lock = ALL
        .iter()
        .find(|l| l.name == name)
        .unwrap_or_else(|| panic!("no port {name:?}"));
    let mut ran = 0;
    for check in CHECKS.iter().filter(|c| {
        exercises
            .iter()
            .any(|e| c.name.split("::").next() == Some(*e))
    }) {
        let verdict = check
            .run(lock)
            .unwrap_or_else(|e| panic!("{}: {e}", check.name));
        if let Verdict::Fail(report) = &verdict {
            panic!("the correct port {name:?} failed:\n{report}");
        }
        assert_eq!(verdict, Verdict::Pass, "{name:?} on {}", check.name);
        ran += 1;
    }
    assert!(ran > 0, "no check of {exercises:?}");
}

#[test]
fn release_and_extend_as_redis_functions() {
    passes(
        "release and extend as Redis functions",
        &["release", "extend", "keeper", "scenarios"],
    );
}

#[test]
fn release_that_signals_waiters_on_a_list() {
    passes(
        "release that signals waiters on a list",
        &["release", "scenarios"],
    );
}

#[test]
fn msetnx_acquire_that_may_take_over_its_own_token() {
    passes(
        "MSETNX acquire that may take over its own token",
        &["acquire", "scenarios"],
    );
}

#[test]
fn extend_timed_by_redis_s_clock() {
    passes("extend timed by Redis's clock", &["extend", "keeper"]);
}

#[test]
fn acquire_that_waits_for_its_replicas() {
    passes(
        "acquire that waits for its replicas",
        &["acquire", "scenarios"],
    );
}

#[test]
fn acquire_that_asks_a_millisecond_more() {
    passes(
        "acquire that asks a millisecond more",
        &["acquire", "fencing", "scenarios"],
    );
}

#[test]
fn acquire_timed_by_redis_s_clock_with_pxat() {
    passes(
        "acquire timed by Redis's clock, with PXAT",
        &["acquire", "scenarios"],
    );
}

#[test]
fn acquire_timed_by_redis_s_clock_pxat_in_a_script() {
    passes(
        "acquire timed by Redis's clock, PXAT in a script",
        &["acquire", "scenarios"],
    );
}

#[test]
fn acquire_in_a_transaction_asking_a_millisecond_more() {
    passes(
        "acquire in a transaction asking a millisecond more",
        &["acquire", "scenarios"],
    );
}

#[test]
fn acquire_in_a_transaction_ended_by_a_pipeline_asking_a_millisecond_more() {
    passes(
        "acquire in a transaction ended by a pipeline, a millisecond more",
        &["acquire", "scenarios"],
    );
}

#[test]
fn acquire_that_cleans_up_with_its_own_token_when_refused() {
    passes(
        "acquire that cleans up with its own token when refused",
        &["acquire", "scenarios"],
    );
}

#[test]
fn base_62_tokens() {
    passes("22 base-62 digits as tokens", &["token"]);
}

#[test]
fn every_port_has_a_test_above() {
    assert_eq!(ALL.len(), 12, "a new port needs its own test in this file");
}
