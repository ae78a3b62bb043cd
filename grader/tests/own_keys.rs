//! The grader touches only its own keys: a database given through
//! `REDIS_URL` keeps its other data, and nothing of the grader's stays
//! behind once a check is over (no key, no Redis user), not even when the
//! lock's code is still spinning in a thread the grader gave up on.

use grader::reference::LOCK as REFERENCE;
use grader::{acl, checks, prefix, run, scenario, server};

/// How many keys match `pattern`, or `None` where this Redis user may not
/// list keys (a user limited as the README's section for instructors says).
fn count_keys(con: &mut redis::Connection, pattern: &str) -> Option<usize> {
    match redis::cmd("KEYS").arg(pattern).query::<Vec<String>>(con) {
        Ok(keys) => Some(keys.len()),
        Err(e) if e.to_string().to_ascii_uppercase().contains("NOPERM") => None,
        Err(e) => panic!("KEYS {pattern}: {e}"),
    }
}

#[test]
fn other_data_survives_and_no_grader_key_is_left_behind() {
    let mut con = server::shared()
        .expect("a Redis")
        .connect()
        .expect("a connection");
    // Under the course prefix, where a user limited to it may write too; not
    // under this run's prefix, which is the grader's.
    let mine = format!(
        "{}someone-elses-data:{}",
        prefix::course(),
        std::process::id()
    );
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
    let spins = lock_catalogue::misbehaving::SPINS;
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
    let field: Option<String> = redis::cmd("HGET")
        .arg(format!("{mine}:lock"))
        .arg("f")
        .query(&mut con)
        .expect("HGET");
    assert_eq!(field.as_deref(), Some("v"));
    let run = prefix::run().expect("this run's prefix");
    match count_keys(&mut con, &format!("{run}*")) {
        Some(left) => assert_eq!(left, 0, "the grader left keys behind"),
        None => panic!(
            "cannot count the keys left behind: this Redis user may not use KEYS (unset \
             REDIS_URL, or set GRADER_REDIS=process)"
        ),
    }
    if acl::confines_scripts() {
        let users: Vec<String> = redis::cmd("ACL")
            .arg("USERS")
            .query(&mut con)
            .expect("ACL USERS");
        let id = prefix::run_id(run);
        let left: Vec<&String> = users.iter().filter(|u| u.contains(id)).collect();
        assert!(left.is_empty(), "the grader left users behind: {left:?}");
    }
    redis::cmd("DEL")
        .arg(&mine)
        .arg(format!("{mine}:lock"))
        .exec(&mut con)
        .expect("DEL");
}
