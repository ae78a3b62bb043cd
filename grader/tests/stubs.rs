//! The learner's crate as handed out: every check says "not started" and
//! names the function to write, and nothing panics past the grader.

use grader::Lock;
use grader::checks::CHECKS;
use grader::report::Verdict;

const STUBS: Lock = Lock {
    name: "the stubs",
    new_token: exercises::token::new_token,
    acquire: exercises::acquire::acquire,
    release: exercises::release::release,
    acquire_fenced: exercises::fencing::acquire_fenced,
    fenced_write: exercises::storage::fenced_write,
    fenced_read: exercises::storage::fenced_read,
    extend: exercises::extend::extend,
    keep_alive: exercises::keeper::keep_alive,
    redlock_acquire: exercises::redlock::redlock_acquire,
    redlock_release: exercises::redlock::redlock_release,
};

#[test]
fn every_check_reports_the_stubs_as_not_started() {
    for check in CHECKS {
        let verdict = check
            .run(&STUBS)
            .unwrap_or_else(|e| panic!("{}: {e}", check.name));
        let Verdict::NotStarted { function, message } = &verdict else {
            panic!("{} should say not started, got {verdict:?}", check.name);
        };
        let exercise = check.name.split("::").next().unwrap_or_default();
        let expected = match exercise {
            "token" => "new_token",
            "acquire" => "acquire",
            "release" => "release",
            "fencing" => "acquire_fenced",
            // Every Redlock check, the stories too, calls the acquire first.
            "redlock" => {
                if *function == "redlock_release" {
                    "redlock_release"
                } else {
                    "redlock_acquire"
                }
            }
            "storage" => {
                if *function == "fenced_read" {
                    "fenced_read"
                } else {
                    "fenced_write"
                }
            }
            "extend" => "extend",
            "keeper" => "keep_alive",
            // The scenarios need the whole lock; the first stub they meet is the token.
            _ => "new_token",
        };
        assert_eq!(*function, expected, "{}", check.name);
        assert!(
            !message.is_empty(),
            "{}: a stub's todo!() should say what to do",
            check.name
        );
    }
}

/// The learner's first grading, as `cargo course grade` does it: cargo builds
/// the stubs into the runner, the judge (the `course` binary) plays every
/// check through it, and each check says "not started" and names a stub.
#[test]
fn through_the_runner_every_check_reports_the_stubs_as_not_started() {
    use grader::course::grade::{self, Options, Results};
    use grader::harness::Outcome;

    let mut options = Options::this_course();
    options.judge = env!("CARGO_BIN_EXE_course").into();
    let server = grader::server::shared().unwrap_or_else(|e| panic!("no Redis: {e}"));
    options.env = vec![
        ("GRADER_REDIS".into(), "url".into()),
        ("REDIS_URL".into(), server.url().to_string()),
    ];
    let results = grade::run(&options).unwrap_or_else(|e| panic!("grading runs: {e}"));
    let Results::Graded { checks } = &results else {
        panic!("the stubs compile: {results:?}");
    };
    assert_eq!(checks.len(), CHECKS.len());
    for result in checks {
        let Outcome::NotStarted { message } = &result.outcome else {
            panic!(
                "{} should say not started, got {:?}",
                result.name, result.outcome
            );
        };
        assert!(
            message.starts_with("not started: `") && message.contains("exercises/src/"),
            "{}: {message}",
            result.name
        );
    }
}
