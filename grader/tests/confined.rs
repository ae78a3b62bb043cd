//! Learner code reaches only the keys its check hands over, with only the
//! commands the exercises need: each hostile lock of the catalogue leaves
//! every foreign key intact, fails its check with the refused command named,
//! and is reported as the lock's doing, never as the grader's problem.

use grader::catalogue::misbehaving::{HOSTILE, SCRIPT_OUTSIDE_KEYS, foreign_target};
use grader::report::{Problem, Verdict};
use grader::verdict::Property;
use grader::world::World;
use grader::{Wire, acl, checks, prefix, server};

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
        assert_eq!(
            report.property(),
            Some(Property::KeepsToItsKeys),
            "{}:\n{text}",
            lock.name
        );
        assert!(
            text.contains(&format!(
                "your code sent {command}, which the grader refused"
            )) && (text.contains("→ (refused by the grader)") || text.contains("Redis refused it")),
            "{}:\n{text}",
            lock.name
        );
        assert!(!text.contains("grader problem"), "{}:\n{text}", lock.name);
        assert!(
            !matches!(report.problem, Problem::Failed { .. }),
            "{}:\n{text}",
            lock.name
        );
        assert_eq!(foreign.intact(), FOREIGN + 1, "{} spoiled keys", lock.name);
    }
}

#[test]
fn script_flush_appears_in_the_record() {
    let lock = grader::catalogue::misbehaving::SCRIPT_FLUSH;
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
