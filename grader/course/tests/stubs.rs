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
    extend: exercises::extend::extend,
    keep_alive: exercises::keeper::keep_alive,
    acquire_fenced: exercises::fencing::acquire_fenced,
    fenced_write: exercises::storage::fenced_write,
    fenced_read: exercises::storage::fenced_read,
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
    use course::grade::{self, Options};
    use course::results::Results;
    use grader::harness::Outcome;

    let mut options = Options::this_course();
    options.judge = env!("CARGO_BIN_EXE_course").into();
    let server = grader::server::shared().unwrap_or_else(|e| panic!("no Redis: {e}"));
    options.env = server.child_env();
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

/// The learner's first grading as `cargo test -p exercises` prints it: the
/// judge (the `course` binary) on the stubs built into the runner. Each
/// exercise not started is one line naming its file, no check of them has a
/// report of its own, and the run ends with the exercise to begin and its
/// chapter; the notes about Redis are one line each, printed once.
#[test]
fn the_first_grading_is_a_line_per_exercise_and_where_to_begin() {
    use course::grade::{self, Options};
    use grader::exercise::{EXERCISES, SCENARIOS};
    use grader::harness::groups::untouched_line;

    let options = Options::this_course();
    let runner = grade::build(&options)
        .unwrap_or_else(|e| panic!("cargo runs: {e}"))
        .unwrap_or_else(|output| panic!("the stubs compile:\n{output}"));
    let server = grader::server::shared().unwrap_or_else(|e| panic!("no Redis: {e}"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_course"))
        .current_dir(options.workspace.join("exercises"))
        .env(grader::remote::RUNNER_VAR, &runner)
        .envs(server.child_env())
        .output()
        .expect("the judge runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(101), "{stdout}\n{stderr}");

    let checks_of = |exercise: &str| {
        CHECKS
            .iter()
            .filter(|c| grader::exercise::of_check(c.name) == exercise)
            .count()
    };
    let mut expected: Vec<String> = EXERCISES
        .iter()
        .map(|e| untouched_line(e.name, checks_of(e.name)))
        .collect();
    expected.push(untouched_line(SCENARIOS, checks_of(SCENARIOS)));
    let lines: Vec<&str> = stdout.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with("running "))
        .unwrap_or_else(|| panic!("no opening line:\n{stdout}"));
    assert_eq!(
        lines[start + 1..start + 1 + expected.len()],
        expected.iter().map(String::as_str).collect::<Vec<_>>()[..],
        "{stdout}"
    );
    assert!(
        expected[1] == "acquire: 8 checks, not started — fill in exercises/src/acquire.rs",
        "{stdout}"
    );
    assert!(!stdout.contains("... FAILED"), "{stdout}");
    assert!(!stdout.contains("\n---- "), "no report per stub:\n{stdout}");
    assert!(
        stdout.contains(
            "\nBegin with token, in exercises/src/token.rs. Read chapter 1, Why a lock, and the \
             single-instance lock — http://localhost:3000/single-instance.html \
             (offline: book/src/single-instance.md).\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "test result: FAILED. 0 passed; {} failed;",
            CHECKS.len()
        )),
        "{stdout}"
    );
    assert!(stdout.lines().count() < 25, "{stdout}");

    // The notes on stderr: each once, each one line of a readable length.
    let notes: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("grader:"))
        .collect();
    assert!(
        notes
            .iter()
            .any(|l| l.starts_with("grader: redis via url: ")),
        "{stderr}"
    );
    for note in &notes {
        assert_eq!(notes.iter().filter(|n| *n == note).count(), 1, "{stderr}");
        assert!(note.chars().count() < 240, "a long note: {note}");
    }
    assert_eq!(
        stderr.lines().count(),
        notes.len(),
        "nothing but the notes on stderr:\n{stderr}"
    );
}
