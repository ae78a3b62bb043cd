//! A killed run cannot remove the Redis users it made for its wires; the next
//! run removes those whose run's claim is gone, and leaves the others alone.
//! (A test binary of its own: the sweep happens once, at the first wire.)

use grader::world::World;
use grader::{Wire, acl, prefix, server};

#[test]
fn users_of_runs_whose_claim_is_gone_are_removed_at_the_first_wire() {
    let mut admin = server::shared()
        .expect("a Redis")
        .connect()
        .expect("a connection");
    let user_prefix: String = prefix::course()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let dead = format!("{user_prefix}00000000deadbeef-3");
    let alive_id = "00000000a11ce000";
    let alive = format!("{user_prefix}{alive_id}-3");
    for user in [&dead, &alive] {
        if let Err(e) = redis::cmd("ACL")
            .arg("SETUSER")
            .arg(user)
            .arg("off")
            .exec(&mut admin)
        {
            panic!(
                "cannot run here: {e}: this Redis user may not create users: the grader's tests need a server where they may (unset REDIS_URL, or set GRADER_REDIS=process)"
            );
        }
    }
    let claim = format!("{}{alive_id}", prefix::course());
    redis::cmd("SET")
        .arg(&claim)
        .arg("a live run")
        .arg("PX")
        .arg(60_000)
        .exec(&mut admin)
        .expect("SET");

    let world = World::open().expect("a world").shared();
    drop(Wire::open(&world).expect("a wire"));
    assert!(acl::confines_scripts());

    let users: Vec<String> = redis::cmd("ACL")
        .arg("USERS")
        .query(&mut admin)
        .expect("ACL USERS");
    let _ = redis::cmd("ACL")
        .arg("DELUSER")
        .arg(&alive)
        .arg(&dead)
        .exec(&mut admin);
    let _ = redis::cmd("DEL").arg(&claim).exec(&mut admin);
    assert!(
        !users.contains(&dead),
        "a dead run's user was kept: {users:?}"
    );
    assert!(
        users.contains(&alive),
        "a live run's user was removed: {users:?}"
    );
}
