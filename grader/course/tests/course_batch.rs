//! `cargo course batch` on prepared submissions, and the results of each in
//! every machine format: a correct one (the reference solutions), a tampered
//! one (its own `exercises/tests/grade.rs`, which would pass everything), one
//! whose `acquire` hangs, one whose `acquire` exits the process with status
//! 0, and one that does not compile. No format may show a pass for a check
//! that did not run.
//!
//! The batch builds in the course's `target/course-batch/` (the first run
//! builds the grader there once; later runs only the submissions).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use course::Format;
use course::batch::{self, Batch, Graded, report};
use course::format::{self, Status};
use course::results::Results;

/// The checks graded: one exercise's, to keep the run short.
const FILTER: &str = "acquire::";

fn course() -> PathBuf {
    course::grade::course_root()
}

/// The reference solution of `exercise`, with `insert` put at the start of the
/// body of its first function that returns a `RedisResult<bool>`.
fn reference(exercise: &str, insert: &str) -> String {
    let path = course().join(format!("grader/src/reference/{exercise}.rs"));
    let text = fs::read_to_string(&path).expect("the reference solution is readable");
    if insert.is_empty() {
        return text;
    }
    let anchor = ") -> RedisResult<bool> {\n";
    let at = text
        .find(anchor)
        .expect("acquire returns RedisResult<bool>")
        + anchor.len();
    format!("{}    {insert}\n{}", &text[..at], &text[at..])
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().expect("a parent")).expect("creates folders");
    fs::write(path, text).expect("writes");
}

/// A submission with the reference solutions, `acquire.rs` changed by `insert`.
fn solutions(dir: &Path, insert: &str) {
    for exercise in grader::exercise::EXERCISES.iter().map(|e| e.name) {
        let insert = if exercise == "acquire" { insert } else { "" };
        write(
            &dir.join(format!("exercises/src/{exercise}.rs")),
            &reference(exercise, insert),
        );
    }
}

fn prepare(root: &Path) {
    let _ = fs::remove_dir_all(root);
    solutions(&root.join("correct"), "");
    // The stubs, and a harness of its own that would report every check passed.
    write(
        &root.join("tampered/exercises/tests/grade.rs"),
        "fn main() { println!(\"test result: ok. 34 passed\"); }\n",
    );
    solutions(
        &root.join("hangs"),
        "std::thread::sleep(std::time::Duration::from_secs(3600));",
    );
    solutions(&root.join("exits"), "std::process::exit(0);");
    solutions(&root.join("broken"), "");
    write(
        &root.join("broken/exercises/src/token.rs"),
        "pub fn new_token() -> String { this does not compile }\n",
    );
}

fn of<'a>(graded: &'a [Graded], student: &str) -> &'a Results {
    let one = graded
        .iter()
        .find(|g| g.student == student)
        .unwrap_or_else(|| panic!("{student} was not graded"));
    one.results
        .as_ref()
        .unwrap_or_else(|e| panic!("{student} could not be graded: {e}"))
}

/// No format shows a pass, or a point, for `results`.
fn no_pass_anywhere(student: &str, results: &Results) {
    let rows = format::rows(results);
    assert!(!rows.is_empty(), "{student}: no rows");
    assert!(
        rows.iter()
            .all(|r| r.status != Status::Pass && r.points == 0),
        "{student}: {rows:?}"
    );

    let github: serde_json::Value = serde_json::from_str(
        &format::render(Format::Github, results, &format::Places::default()).text,
    )
    .expect("github JSON");
    assert_ne!(github["status"], "pass", "{student}: {github}");
    for test in github["tests"].as_array().expect("tests") {
        assert_ne!(test["status"], "pass", "{student}: {test}");
        assert_eq!(test["score"], 0, "{student}: {test}");
    }

    let exercism: serde_json::Value = serde_json::from_str(
        &format::render(Format::Exercism, results, &format::Places::default()).text,
    )
    .expect("exercism");
    assert_ne!(exercism["status"], "pass", "{student}: {exercism}");
    for test in exercism["tests"].as_array().into_iter().flatten() {
        assert_ne!(test["status"], "pass", "{student}: {test}");
    }

    let junit = format::render(Format::Junit, results, &format::Places::default()).text;
    let doc = roxmltree::Document::parse(&junit).expect("JUnit XML parses");
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(cases.len(), rows.len(), "{student}: one testcase per check");
    for case in cases {
        assert!(
            case.children()
                .any(|c| c.has_tag_name("failure") || c.has_tag_name("error")),
            "{student}: {:?} has neither failure nor error",
            case.attribute("name")
        );
    }

    let json: serde_json::Value = serde_json::from_str(
        &format::render(Format::Json, results, &format::Places::default()).text,
    )
    .expect("course JSON");
    assert_eq!(json["score"], 0, "{student}: {json}");
    assert_ne!(json["status"], "pass", "{student}: {json}");
}

#[test]
fn a_batch_grades_each_submission_with_the_pristine_grader() {
    let root = std::env::temp_dir().join(format!("course-batch-test-{}", std::process::id()));
    let submissions = root.join("submissions");
    prepare(&submissions);
    let mut batch = Batch::this_course();
    // The judge is the course's own binary; this test's binary is libtest's.
    batch.judge = env!("CARGO_BIN_EXE_course").into();
    // As `cargo course batch` grades: each build and each runner in a sandbox.
    batch.isolation =
        Some(grader::isolation::Isolation::detect().unwrap_or_else(|e| {
            panic!("a batch needs its sandbox (apt-get install bubblewrap): {e}")
        }));
    batch.filters = vec![FILTER.to_string()];
    batch.time_limit = Duration::from_secs(900);
    let graded = batch::grade_all(&batch, &submissions, |_| {}).expect("the batch runs");
    assert_eq!(graded.len(), 5);
    // The checks the filter selects, and what they are worth, from their descriptors.
    let selected: Vec<_> = grader::checks::CHECKS
        .iter()
        .filter(|c| c.name.starts_with(FILTER))
        .collect();
    let (n, worth) = (
        selected.len(),
        selected.iter().map(|c| u64::from(c.points)).sum::<u64>(),
    );

    // The reference solutions pass every selected check.
    let correct = of(&graded, "correct");
    assert_eq!(correct.checks().len(), n, "{correct:?}");
    assert!(correct.all_passed(), "{correct:?}");
    let github: serde_json::Value = serde_json::from_str(
        &format::render(Format::Github, correct, &format::Places::default()).text,
    )
    .expect("JSON");
    assert_eq!(github["status"], "pass");
    assert_eq!(github["max_score"], worth);
    let scores: u64 = github["tests"]
        .as_array()
        .expect("tests")
        .iter()
        .map(|t| t["score"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(scores, worth);

    // The tampered harness was not used, and the change is flagged.
    let tampered = graded
        .iter()
        .find(|g| g.student == "tampered")
        .expect("graded");
    assert_eq!(tampered.changed, ["exercises/tests/grade.rs"]);
    no_pass_anywhere("tampered", of(&graded, "tampered"));
    assert!(
        graded
            .iter()
            .filter(|g| g.student != "tampered")
            .all(|g| g.changed.is_empty())
    );

    // A hanging acquire and an exiting one pass nothing.
    no_pass_anywhere("hangs", of(&graded, "hangs"));
    let exits = of(&graded, "exits");
    no_pass_anywhere("exits", exits);
    assert!(
        exits
            .checks()
            .iter()
            .any(|c| format!("{:?}", c.outcome).contains("CodeEnded")),
        "{exits:?}"
    );

    // A compile error is a result of its own, with cargo's text.
    let broken = of(&graded, "broken");
    match broken {
        Results::CompileError { output, not_run } => {
            assert!(output.contains("error"), "{output}");
            assert_eq!(not_run.len(), n);
        }
        other => panic!("broken compiled: {other:?}"),
    }
    no_pass_anywhere("broken", broken);

    // The CSV and the summary.
    let out = root.join("out");
    report::write(&out, &graded, &batch.filters, batch::summary::DEFAULT_BOOK).expect("writes");
    let csv = fs::read_to_string(out.join(report::CSV)).expect("CSV");
    assert_eq!(csv.lines().next(), Some(report::HEADER));
    assert_eq!(csv.lines().count(), 1 + 5 * n);
    assert_eq!(
        csv.lines().filter(|l| l.contains(",pass,")).count(),
        n,
        "{csv}"
    );
    let html = fs::read_to_string(out.join(report::HTML)).expect("HTML");
    assert!(html.contains("exercises/tests/grade.rs"));
    let _ = fs::remove_dir_all(&root);
}
