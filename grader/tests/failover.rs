//! The stories of replication and failover rest on real Redis behaviour, which these tests
//! show on the grader's own primary and replica: a write the primary acknowledged after its
//! replica was cut off is missing from the replica once promoted (and present when nothing was
//! cut off), and `WAIT 1` answers 0 with the replica cut off and 1 without. Then the stories
//! themselves: the reference lock passes both checks, a release with a plain `DEL` fails the
//! lost-lock story with its own report, and each story records the same timeline twice.

use grader::checks;
use grader::reference::LOCK as REFERENCE;
use grader::replication::{self, Pair};
use grader::report::Verdict;
use grader::scenario;
use grader::verdict::Property;
use lock_catalogue::wrong::ALL;
use redis::Connection;

const KEY: &str = "dlcourse:failover-test:lock";

fn primary(pair: &Pair) -> Connection {
    pair.connect_primary().expect("the primary answers")
}

fn set(con: &mut Connection) {
    redis::cmd("SET")
        .arg(KEY)
        .arg("A")
        .exec(con)
        .expect("the primary takes the write");
}

fn get(con: &mut Connection) -> Option<String> {
    redis::cmd("GET").arg(KEY).query(con).expect("GET answers")
}

fn wait(con: &mut Connection, timeout_ms: u64) -> u64 {
    redis::cmd("WAIT")
        .arg(1)
        .arg(timeout_ms)
        .query(con)
        .expect("WAIT answers")
}

/// Kills the primary and promotes the replica; returns whether the new primary holds [`KEY`].
fn fail_over(pair: &mut Pair) -> Option<String> {
    pair.kill_primary();
    pair.promote().expect("the replica is promoted");
    get(&mut primary(pair))
}

#[test]
fn a_write_acknowledged_after_the_cut_is_missing_from_the_promoted_replica() {
    let mut pair = replication::lease().expect("a primary and its replica");
    pair.cut_off_replica().expect("the replica is cut off");
    set(&mut primary(&pair));
    assert_eq!(get(&mut primary(&pair)).as_deref(), Some("A"));
    assert_eq!(fail_over(&mut pair), None);
}

#[test]
fn a_write_the_replica_copied_survives_the_failover() {
    let mut pair = replication::lease().expect("a primary and its replica");
    set(&mut primary(&pair));
    pair.in_step(pair.replica())
        .expect("the replica catches up");
    assert_eq!(fail_over(&mut pair).as_deref(), Some("A"));
}

#[test]
fn wait_answers_1_with_a_linked_replica_and_0_with_a_cut_off_one() {
    let mut pair = replication::lease().expect("a primary and its replica");
    let mut con = primary(&pair);
    set(&mut con);
    assert_eq!(wait(&mut con, 5_000), 1);
    pair.cut_off_replica().expect("the replica is cut off");
    set(&mut con);
    assert_eq!(wait(&mut con, 100), 0);
    // WAIT's 0 undoes nothing: the write stays on the primary.
    assert_eq!(get(&mut con).as_deref(), Some("A"));
}

#[test]
fn the_reference_lock_passes_both_failover_checks() {
    for name in ["scenarios::failover_lost_lock", "scenarios::failover_wait"] {
        let check = checks::named(name).expect("a check");
        let verdict = check.run(&REFERENCE).expect("the check runs");
        assert_eq!(verdict, Verdict::Pass, "{name}");
    }
}

#[test]
fn a_plain_del_release_fails_the_lost_lock_story_with_its_own_report() {
    let plain_del = ALL
        .iter()
        .find(|w| w.lock.name == "plain DEL release")
        .expect("in the catalogue");
    let verdict = checks::named("scenarios::failover_lost_lock")
        .expect("a check")
        .run(&plain_del.lock)
        .expect("the check runs");
    let Verdict::Fail(report) = verdict else {
        panic!("a plain DEL release should fail the story, but got {verdict:?}");
    };
    assert_eq!(
        report.property(),
        Some(Property::ReleaseSparesOthers),
        "{report}"
    );
    insta::with_settings!({ prepend_module_to_snapshot => false }, {
        insta::assert_snapshot!("failover_plain_del_report", report.to_string());
    });
}

#[test]
fn each_failover_story_records_the_same_timeline_twice() {
    for name in ["failover-lost-lock", "failover-wait", "failover-wait-limit"] {
        let story = scenario::named(name).expect("a scenario");
        let once = grader::run::run(&story, &REFERENCE).expect("a run");
        let twice = grader::run::run(&story, &REFERENCE).expect("a run");
        assert_eq!(once.timeline.to_json(), twice.timeline.to_json(), "{name}");
        assert!(once.violations.is_empty(), "{name}: {:?}", once.violations);
    }
}

#[test]
fn wait_answers_1_at_once_when_the_old_primary_rejoins_after_a_wait_that_found_none() {
    let mut pair = replication::lease().expect("a primary and its replica");
    pair.cut_off_replica().expect("the replica is cut off");
    fail_over(&mut pair);
    let mut con = primary(&pair);
    set(&mut con);
    assert_eq!(
        wait(&mut con, 100),
        0,
        "the promoted node has no replica yet"
    );
    pair.rejoin().expect("the old primary rejoins");
    set(&mut con);
    // Well under the replica's once-a-second report: the answer to the primary's request.
    assert_eq!(wait(&mut con, 250), 1);
}
