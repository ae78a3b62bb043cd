//! Learner code reaches only its check's namespace: each hostile lock of the
//! catalogue leaves every foreign key intact, fails its check with the refused
//! command named, and is reported as a refusal, never as a broken rule or the
//! grader's problem; a key named outside the namespace is one of its own, a
//! function library is the check's own, and `TIME` runs on the virtual clock.

use grader::report::{Problem, Verdict};
use grader::world::World;
use grader::{Wire, acl, checks, prefix, server};
use lock_catalogue::misbehaving::{HOSTILE, SCRIPT_OUTSIDE_KEYS, foreign_target};
use redis::{Commands, ConnectionLike};

/// How many foreign keys each test puts next to the grader's.
const FOREIGN: usize = 200;

/// Foreign keys under the course prefix (so that a Redis user limited to it
/// can create them), in a namespace of their own; removed on drop.
struct Foreign {
    con: redis::Connection,
    keys: Vec<String>,
}

impl Foreign {
    fn plant(tag: &str) -> Foreign {
        let mut con = server::shared()
            .expect("a Redis")
            .connect()
            .expect("a connection");
        let mut bytes = [0u8; 6];
        getrandom::fill(&mut bytes).expect("random");
        let ns: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let mut keys: Vec<String> = (0..FOREIGN)
            .map(|i| format!("{}foreign-{tag}-{ns}:{i}", prefix::course()))
            .collect();
        keys.push(foreign_target());
        let mut pipe = redis::pipe();
        for key in &keys {
            pipe.cmd("SET")
                .arg(key)
                .arg("precious")
                .arg("PX")
                .arg(600_000);
        }
        pipe.exec(&mut con).expect("SET the foreign keys");
        Foreign { con, keys }
    }

    fn intact(&mut self) -> usize {
        let values: Vec<Option<String>> = redis::cmd("MGET")
            .arg(&self.keys)
            .query(&mut self.con)
            .expect("MGET");
        values
            .iter()
            .filter(|v| v.as_deref() == Some("precious"))
            .count()
    }
}

impl Drop for Foreign {
    fn drop(&mut self) {
        let _ = redis::cmd("DEL").arg(&self.keys).exec(&mut self.con);
    }
}

/// Whether Redis itself confines scripts here (the grader may create users).
fn scripts_confined() -> bool {
    // The first wire tells: it creates a user, or learns that it may not.
    let world = World::open().expect("a world").shared();
    drop(Wire::open(&world).expect("a wire"));
    acl::confines_scripts()
}

#[test]
fn every_hostile_lock_is_refused_reported_and_spoils_nothing() {
    let confined = scripts_confined();
    for (command, lock) in HOSTILE {
        // A test that did not test is not a pass: say why, and fail.
        assert!(
            lock.name != SCRIPT_OUTSIDE_KEYS.name || confined,
            "cannot run here: {command} inside a Lua script, as this Redis user may not create users: the grader's tests need a server where they may (unset REDIS_URL, or set GRADER_REDIS=process)"
        );
        let mut foreign = Foreign::plant("hostile");
        let verdict = checks::named("acquire::takes_a_free_lock")
            .expect("a check")
            .run(lock)
            .unwrap_or_else(|e| panic!("{}: the grader failed: {e}", lock.name));
        let Verdict::Fail(report) = verdict else {
            panic!("{} passed: {verdict:?}", lock.name)
        };
        let text = report.to_string();
        assert!(
            matches!(&report.problem, Problem::Refused { command: c, .. } if c == command),
            "{}:\n{text}",
            lock.name
        );
        assert!(
            text.contains(&format!(
                "your code sent {command}, which the grader did not send on"
            )) && (text.contains("→ (refused by the grader)") || text.contains("Redis refused it")),
            "{}:\n{text}",
            lock.name
        );
        assert!(!text.contains("grader problem"), "{}:\n{text}", lock.name);
        assert_eq!(foreign.intact(), FOREIGN + 1, "{} spoiled keys", lock.name);
    }
}

#[test]
fn script_flush_appears_in_the_record() {
    let lock = lock_catalogue::misbehaving::SCRIPT_FLUSH;
    let verdict = checks::named("acquire::takes_a_free_lock")
        .expect("a check")
        .run(&lock)
        .expect("the grader runs");
    let Verdict::Fail(report) = verdict else {
        panic!("SCRIPT FLUSH passed")
    };
    assert!(
        report
            .to_string()
            .contains("1. SCRIPT FLUSH → (refused by the grader)"),
        "{report}"
    );
}

#[test]
fn the_clock_s_books_are_out_of_a_script_s_reach() {
    assert!(
        scripts_confined(),
        "cannot run here: scripts are not confined, as this Redis user may not create users: the grader's tests need a server where they may (unset REDIS_URL, or set GRADER_REDIS=process)"
    );
    let world = World::open().expect("a world").shared();
    let book = {
        let keys = &grader::world::enter(&world).keys;
        keys.clock.clone()
    };
    let mut wire = Wire::open(&world).expect("a wire");
    let read: redis::RedisResult<Option<String>> = redis::cmd("EVAL")
        .arg("return redis.call('HGET', ARGV[1], 'started')")
        .arg(0)
        .arg(&book)
        .query(&mut wire);
    let e = read.expect_err("a script read the clock's books");
    assert!(e.to_string().contains("can't access"), "{e}");
    // The lock key itself is still the script's to use.
    let lock = grader::world::enter(&world).keys.lock.clone();
    let set: Option<String> = redis::cmd("EVAL")
        .arg("return redis.call('SET', KEYS[1], 'x')")
        .arg(1)
        .arg(&lock)
        .query(&mut wire)
        .expect("a script on its own key");
    assert_eq!(set.as_deref(), Some("OK"));
}

#[test]
fn the_readme_gives_the_acl_line_the_grader_needs() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    let line = acl::instructor_line("grader", "dlcourse:");
    assert!(
        readme.contains(&format!("\n{line}\n")),
        "README.md's section \"Grading on a shared Redis\" must give, on a line of its own:\n{line}"
    );
}

#[test]
fn a_key_named_outside_the_namespace_is_one_of_its_own() {
    // A foreign key of this test's own: the hostile locks' test counts
    // `foreign_target()`, which this one must leave alone.
    let mut admin = server::shared()
        .expect("a Redis")
        .connect()
        .expect("a connection");
    let target = format!(
        "{}someone-elses-named-{}",
        prefix::course(),
        std::process::id()
    );
    let _: () = admin
        .set_ex(&target, "precious", 600)
        .expect("SET the foreign key");
    let world = World::open().expect("a world").shared();
    let namespace = grader::world::enter(&world).keys.namespace().to_owned();
    let mut wire = Wire::open(&world).expect("a wire");
    let _: () = redis::cmd("SET")
        .arg(&target)
        .arg("mine")
        .query(&mut wire)
        .expect("a SET on a key of any name");
    let deleted: i64 = redis::cmd("DEL")
        .arg(&target)
        .query(&mut wire)
        .expect("a DEL on a key of any name");
    assert_eq!(deleted, 1, "the DEL found the key the SET made");
    // A script's KEYS are brought in the same way.
    let set: Option<String> = redis::cmd("EVAL")
        .arg("return redis.call('SET', KEYS[1], 'x')")
        .arg(1)
        .arg(&target)
        .query(&mut wire)
        .expect("a script on a key of any name");
    assert_eq!(set.as_deref(), Some("OK"));
    let foreign: Option<String> = admin.get(&target).expect("GET");
    let _: () = admin.del(&target).expect("DEL");
    assert_eq!(
        foreign.as_deref(),
        Some("precious"),
        "the foreign key was reached"
    );
    let inside: Option<String> = grader::world::enter(&world)
        .con()
        .get(format!("{namespace}{target}"))
        .expect("GET");
    assert_eq!(inside.as_deref(), Some("x"));
}

#[test]
fn each_check_s_function_libraries_are_its_own() {
    let library = |answer: u8| {
        format!(
            "#!lua name=samename\nredis.register_function('answer', function() return {answer} end)"
        )
    };
    let world = World::open().expect("a world").shared();
    let mut wires = [
        Wire::open(&world).expect("a wire"),
        Wire::open(&world).expect("a wire"),
    ];
    for (answer, wire) in (1u8..).zip(wires.iter_mut()) {
        let loaded: String = redis::cmd("FUNCTION")
            .arg("LOAD")
            .arg("REPLACE")
            .arg(library(answer))
            .query(wire)
            .expect("FUNCTION LOAD");
        assert_eq!(
            loaded, "samename",
            "the reply names the library as the lock did"
        );
    }
    for (answer, wire) in (1i64..).zip(wires.iter_mut()) {
        let got: i64 = redis::cmd("FCALL")
            .arg("answer")
            .arg(0)
            .query(wire)
            .expect("FCALL");
        assert_eq!(got, answer, "one library replaced the other's");
    }
    // A function registered around the wrapper is refused, and its library removed.
    let sneaky = "#!lua name=sneaky\nlocal r = redis\nr['register_function']('outside', function() return 0 end)";
    let refused = redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg(sneaky)
        .query::<String>(&mut wires[0])
        .expect_err("a function outside the check's names");
    assert!(
        refused.to_string().contains("outside the check's own"),
        "{refused}"
    );
    let left: redis::Value = grader::world::enter(&world)
        .con()
        .req_command(
            redis::cmd("FUNCTION")
                .arg("LIST")
                .arg("LIBRARYNAME")
                .arg("*sneaky"),
        )
        .expect("FUNCTION LIST");
    assert_eq!(left, redis::Value::Array(vec![]), "{left:?}");
}

#[test]
fn time_is_the_virtual_clock_s() {
    let world = World::open().expect("a world").shared();
    let mut wire = Wire::open(&world).expect("a wire");
    let now = |wire: &mut Wire| -> u64 {
        let (secs, micros): (u64, u64) = redis::cmd("TIME").query(wire).expect("TIME");
        secs * 1_000 + micros / 1_000
    };
    let before = now(&mut wire);
    grader::world::enter(&world)
        .advance_by(40_000)
        .expect("40 s pass");
    assert_eq!(now(&mut wire) - before, 40_000);
}

#[test]
fn an_expiry_computed_from_time_holds_on_the_virtual_clock() {
    let world = World::open().expect("a world").shared();
    let lock = grader::world::enter(&world).keys.lock.clone();
    let mut wire = Wire::open(&world).expect("a wire");
    let (secs, micros): (u64, u64) = redis::cmd("TIME").query(&mut wire).expect("TIME");
    let now = secs * 1_000 + micros / 1_000;
    let set: Option<String> = redis::cmd("SET")
        .arg(&lock)
        .arg("token")
        .arg("NX")
        .arg("PXAT")
        .arg(now + 1_500)
        .query(&mut wire)
        .expect("SET");
    assert_eq!(set.as_deref(), Some("OK"));
    // Read back on the line it was written on, to the millisecond.
    let at: u64 = redis::cmd("PEXPIRETIME")
        .arg(&lock)
        .query(&mut wire)
        .expect("PEXPIRETIME");
    assert_eq!(at, now + 1_500);
    let left: u64 = redis::cmd("PTTL")
        .arg(&lock)
        .query(&mut wire)
        .expect("PTTL");
    assert_eq!(left, 1_500);
    grader::world::enter(&world)
        .advance_by(1_400)
        .expect("time passes");
    let still: Option<String> = wire.get(&lock).expect("GET");
    assert_eq!(still.as_deref(), Some("token"));
    grader::world::enter(&world)
        .advance_by(100)
        .expect("time passes");
    let gone: Option<String> = wire.get(&lock).expect("GET");
    assert_eq!(gone, None);
}
