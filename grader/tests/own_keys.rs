//! The grader touches only its own keys: a database given through
//! `REDIS_URL` keeps its other data, and nothing of the grader's stays
//! behind once a check is over, not even when the lock's code is still
//! spinning in a thread the grader gave up on.

use grader::reference::LOCK as REFERENCE;
use grader::{checks, run, scenario, server};

fn count_keys(con: &mut redis::Connection, pattern: &str) -> usize {
    let keys: Vec<String> = redis::cmd("KEYS").arg(pattern).query(con).expect("KEYS");
    keys.len()
}

#[test]
fn other_data_survives_and_no_grader_key_is_left_behind() {
    let mut con = server::shared()
        .expect("a Redis")
        .connect()
        .expect("a connection");
    let mine = format!("someone-elses-data:{}", std::process::id());
    redis::cmd("SET")
        .arg(&mine)
        .arg("precious")
        .exec(&mut con)
        .expect("SET");
    redis::cmd("HSET")
        .arg(format!("{mine}:lock"))
        .arg("f")
        .arg("v")
        .exec(&mut con)
        .expect("HSET");

    run::run(
        &scenario::named("long-pause").expect("a scenario"),
        &REFERENCE,
    )
    .expect("runs");
    let spins = grader::catalogue::misbehaving::SPINS;
    checks::named("acquire::takes_a_free_lock")
        .expect("a check")
        .run(&spins)
        .expect("runs");
    checks::named("release::never_deletes_a_lock_that_changed_hands")
        .expect("a check")
        .run(&REFERENCE)
        .expect("runs");

    let value: Option<String> = redis::cmd("GET").arg(&mine).query(&mut con).expect("GET");
    assert_eq!(value.as_deref(), Some("precious"));
    assert_eq!(count_keys(&mut con, &format!("{mine}*")), 2);
    let prefix = format!("dlcourse:{}:*", std::process::id());
    assert_eq!(
        count_keys(&mut con, &prefix),
        0,
        "the grader left keys behind"
    );
    redis::cmd("DEL")
        .arg(&mine)
        .arg(format!("{mine}:lock"))
        .exec(&mut con)
        .expect("DEL");
}
