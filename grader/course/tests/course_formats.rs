//! `cargo course grade --format …` on results made by hand: each format in the
//! shape its reader expects (the Classroom reporter's fields, Exercism's
//! version 3, JUnit read back by an XML parser), points from the one table,
//! and a pass only for a check that passed.

use course::Format;
use course::format::{self, exercism};
use course::grade::exit_code;
use course::results::{CheckResult, Results};
use grader::harness::{Cause, End, Outcome};

fn check(name: &str, outcome: Outcome) -> CheckResult {
    CheckResult {
        name: name.to_string(),
        outcome,
        printed: String::new(),
        duration_ms: 0,
    }
}

/// One check of each kind of outcome.
fn mixed() -> Results {
    Results::Graded {
        checks: vec![
            check("token::unique", Outcome::Passed),
            check(
                "token::unguessable",
                Outcome::NotStarted {
                    message: "not started: `new_token` <still> says todo!(\"…\")".into(),
                },
            ),
            check(
                "acquire::refuses_a_held_lock",
                Outcome::Failed {
                    report: "✗ acquire::refuses_a_held_lock (lock: your lock)\n\n  Broken rule:   \
                             acquire never takes a lock someone else holds.\n"
                        .into(),
                },
            ),
            CheckResult {
                printed: "bye \u{1b}[2K".into(),
                ..check(
                    "acquire::explored",
                    Outcome::Crashed {
                        cause: Cause::NoVerdict {
                            end: End::Exited { code: 0 },
                        },
                    },
                )
            },
            check(
                "scenarios::race",
                Outcome::NotRun {
                    reason: "no Redis".into(),
                },
            ),
        ],
    }
}

fn json(format: Format, results: &Results) -> serde_json::Value {
    serde_json::from_str(&format::render(format, results, &format::Places::default()).text)
        .expect("valid JSON")
}

#[test]
fn github_has_the_reporters_fields_and_scores_from_the_table() {
    let value = json(Format::Github, &mixed());
    assert_eq!(value["version"], 1);
    assert_eq!(value["status"], "fail");
    // 3 + 3 + 3 + 5 + 2, the checks' points in their descriptors.
    assert_eq!(value["max_score"], 16);
    let tests = value["tests"].as_array().expect("tests");
    assert_eq!(tests.len(), 5);
    for test in tests {
        for field in ["name", "status", "score", "message"] {
            assert!(test.get(field).is_some(), "{field} missing in {test}");
        }
    }
    let statuses: Vec<&str> = tests
        .iter()
        .map(|t| t["status"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(statuses, ["pass", "fail", "fail", "fail", "error"]);
    let scores: Vec<u64> = tests
        .iter()
        .map(|t| t["score"].as_u64().unwrap_or(99))
        .collect();
    assert_eq!(scores, [3, 0, 0, 0, 0]);
    assert!(
        tests[3]["message"]
            .as_str()
            .unwrap_or("")
            .contains("std::process::exit")
    );
}

#[test]
fn github_points_each_check_at_the_line_of_its_function_in_the_learners_file() {
    let root = course::grade::course_root();
    let places = format::Places::read(&root);
    let text = format::render(Format::Github, &mixed(), &places).text;
    let value: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    let tests = value["tests"].as_array().expect("tests");
    let mut seen = 0;
    for test in tests {
        let name = test["name"].as_str().expect("name");
        let file = test["filename"].as_str().expect("filename");
        let line = test["line_no"].as_u64().expect("line_no") as usize;
        if name.starts_with("scenarios::") {
            assert_eq!((file, line), ("exercises/tests/grade.rs", 1), "{name}");
            continue;
        }
        let exercise =
            grader::exercise::named(name.split("::").next().unwrap_or("")).expect("an exercise");
        assert_eq!(file, exercise.stub(), "{name}");
        let source = std::fs::read_to_string(root.join(file)).expect("the stub");
        let at = source.lines().nth(line - 1).unwrap_or("");
        assert!(
            at.trim_start()
                .starts_with(&format!("pub fn {}", exercise.functions[0])),
            "{name} points at {file}:{line}, which is {at:?}"
        );
        seen += 1;
    }
    assert_eq!(seen, 4, "every check but the story's points into a stub");
}

#[test]
fn exercism_is_version_3_with_task_ids_and_messages_for_failures() {
    let value = json(Format::Exercism, &mixed());
    assert_eq!(value["version"], 3);
    assert_eq!(value["status"], "fail");
    let tests = value["tests"].as_array().expect("tests");
    let ids: Vec<u64> = tests
        .iter()
        .map(|t| t["task_id"].as_u64().unwrap_or(0))
        .collect();
    assert_eq!(ids, [1, 1, 2, 2, 9]);
    assert!(tests[0].get("message").is_none(), "a pass has no message");
    assert!(
        tests[1]["message"]
            .as_str()
            .unwrap_or("")
            .starts_with("not started")
    );
    assert!(tests.iter().all(|t| t["test_code"].is_string()));
    // The book's order: storage comes after the renewals and fencing.
    assert_eq!(exercism::task_id("storage"), 7);
    assert_eq!(exercism::task_id("scenarios"), 9);
}

#[test]
fn a_compile_error_is_an_error_everywhere_and_no_check_passes() {
    let results = Results::CompileError {
        output: "error[E0425]: cannot find value `x`".into(),
        not_run: vec!["token::unique".into(), "token::unguessable".into()],
    };
    let exercism = json(Format::Exercism, &results);
    assert_eq!(exercism["status"], "error");
    assert!(exercism["message"].as_str().unwrap_or("").contains("E0425"));
    assert!(exercism.get("tests").is_none());
    let github = json(Format::Github, &results);
    assert_eq!(github["status"], "error");
    assert_eq!(github["max_score"], 6);
    assert!(
        github["tests"]
            .as_array()
            .expect("tests")
            .iter()
            .all(|t| t["score"] == 0 && t["status"] == "error")
    );
    let course = json(Format::Json, &results);
    assert_eq!(course["status"], "error");
    assert_eq!(course["score"], 0);
    assert!(
        course["compile_error"]
            .as_str()
            .unwrap_or("")
            .contains("E0425")
    );
    let junit = format::render(Format::Junit, &results, &format::Places::default()).text;
    let doc = roxmltree::Document::parse(&junit).expect("parses");
    let errors = doc
        .descendants()
        .filter(|n| n.has_tag_name("error"))
        .count();
    assert_eq!(errors, 2);
    // Cargo's text is where a JUnit reader looks for a suite's output.
    let suites: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    assert!(!suites.is_empty(), "{junit}");
    for suite in suites {
        let err = suite
            .children()
            .find(|c| c.has_tag_name("system-err"))
            .and_then(|c| c.text())
            .unwrap_or("");
        assert!(err.contains("cannot find value `x`"), "{junit}");
    }
}

#[test]
fn junit_reads_back_with_one_testcase_per_check() {
    let text = format::render(Format::Junit, &mixed(), &format::Places::default()).text;
    let doc = roxmltree::Document::parse(&text).expect("the JUnit report is well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    assert_eq!(root.attribute("tests"), Some("5"));
    assert_eq!(root.attribute("failures"), Some("3"));
    assert_eq!(root.attribute("errors"), Some("1"));
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    let names: Vec<&str> = cases.iter().filter_map(|c| c.attribute("name")).collect();
    assert_eq!(
        names,
        [
            "token::unique",
            "token::unguessable",
            "acquire::refuses_a_held_lock",
            "acquire::explored",
            "scenarios::race"
        ]
    );
    assert!(
        cases[0].children().all(|c| !c.is_element()),
        "a pass has no failure"
    );
    let failure = cases[2]
        .children()
        .find(|c| c.has_tag_name("failure"))
        .expect("a failure");
    assert!(failure.text().unwrap_or("").contains("Broken rule:"));
    assert_eq!(
        failure.attribute("message"),
        Some("✗ acquire::refuses_a_held_lock (lock: your lock)")
    );
    // The markup in a message and the terminal escape in the output survive as text.
    assert!(
        cases[1]
            .descendants()
            .any(|n| n.text().is_some_and(|t| t.contains("<still>")))
    );
    let out = cases[3]
        .children()
        .find(|c| c.has_tag_name("system-out"))
        .expect("output");
    assert!(out.text().unwrap_or("").contains("bye \\u{1b}[2K"));
}

#[test]
fn exercism_exits_0_whatever_the_results_and_the_others_fail_unless_all_passed() {
    let passed = Results::Graded {
        checks: vec![check("token::unique", Outcome::Passed)],
    };
    let compile_error = Results::CompileError {
        output: "error[E0425]".into(),
        not_run: vec!["token::unique".into()],
    };
    for format in [Format::Github, Format::Junit, Format::Json] {
        assert_eq!(exit_code(format, &passed), 0, "{format:?}");
        assert_eq!(exit_code(format, &mixed()), 1, "{format:?}");
        assert_eq!(exit_code(format, &compile_error), 1, "{format:?}");
    }
    for results in [&passed, &mixed(), &compile_error] {
        assert_eq!(exit_code(Format::Exercism, results), 0);
    }
}

#[test]
fn every_format_that_has_a_duration_carries_the_checks_own() {
    let results = Results::Graded {
        checks: vec![
            CheckResult {
                duration_ms: 1234,
                ..check("token::unique", Outcome::Passed)
            },
            CheckResult {
                duration_ms: 250,
                ..check(
                    "token::unguessable",
                    Outcome::Failed {
                        report: "✗ broke".into(),
                    },
                )
            },
        ],
    };
    let github = json(Format::Github, &results);
    assert_eq!(github["tests"][0]["duration"], 1.234, "{github}");
    assert_eq!(github["tests"][1]["duration"], 0.25, "{github}");
    let course = json(Format::Json, &results);
    assert_eq!(course["checks"][0]["duration"], 1.234, "{course}");

    let junit = format::render(Format::Junit, &results, &format::Places::default()).text;
    let doc = roxmltree::Document::parse(&junit).expect("JUnit XML parses");
    let times: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .filter_map(|n| n.attribute("time"))
        .collect();
    assert_eq!(times, ["1.234", "0.250"], "{junit}");
    let suite = doc
        .descendants()
        .find(|n| n.has_tag_name("testsuite"))
        .and_then(|n| n.attribute("time"));
    assert_eq!(suite, Some("1.484"), "{junit}");
}

#[test]
fn the_summary_on_stderr_collapses_an_exercise_not_started_and_says_where_to_begin() {
    let stub = || Outcome::NotStarted {
        message: "not started: `acquire` in exercises/src/acquire.rs still says todo!(…)".into(),
    };
    let results = Results::Graded {
        checks: vec![
            check("token::unique", Outcome::Passed),
            check("token::unguessable", Outcome::Passed),
            check("acquire::takes_a_free_lock", stub()),
            check("acquire::refuses_a_held_lock", stub()),
        ],
    };
    let text = course::grade::summary(&results);
    assert!(
        text.contains("acquire: 2 checks, not started — fill in exercises/src/acquire.rs\n"),
        "{text}"
    );
    assert!(!text.contains("acquire::takes_a_free_lock"), "{text}");
    assert!(text.contains("     ok  token::unique\n"), "{text}");
    assert!(
        text.contains("Begin with acquire, in exercises/src/acquire.rs. Read chapter 1,"),
        "{text}"
    );
    assert!(text.contains("2 of 4 checks passed"), "{text}");
}
