//! JUnit XML: one `testcase` per check, for CI systems that show test reports.
//!
//! One `testsuites` holding one `testsuite` per exercise; each check is a
//! `testcase` (`classname` the exercise, `name` the check, `time` the real
//! seconds it took; a suite's `time` is its checks' sum). A check that did
//! not pass has a `failure` (the learner's code failed it) or an `error` (it
//! could not run), whose `message` is the report's first line and whose text
//! is the whole report; what the check's process printed goes in
//! `system-out`. When the exercises did not compile, cargo's text is the
//! `system-err` of every suite, and every check is an `error`.
//!
//! The XML itself is written by `quick-junit`, the serializer nextest uses.
//! It drops the characters XML 1.0 cannot hold (a terminal's escape, most
//! control characters); they are spelled out first instead, so that a report
//! shows what the learner's code printed rather than a silent gap.

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use super::{Row, Status};
use crate::results::Results;
use grader::harness::spelled_out;

/// The JUnit XML for `results`.
pub fn render(results: &Results, rows: &[Row]) -> String {
    let mut report = Report::new("exercises");
    let mut exercises: Vec<&str> = Vec::new();
    for row in rows {
        if !exercises.contains(&row.exercise.as_str()) {
            exercises.push(&row.exercise);
        }
    }
    for exercise in exercises {
        let mut suite = TestSuite::new(xml_text(exercise));
        let cases: Vec<&Row> = rows.iter().filter(|r| r.exercise == exercise).collect();
        suite.set_time(cases.iter().map(|r| r.duration).sum());
        suite.add_test_cases(cases.into_iter().map(testcase));
        if let Results::CompileError { output, .. } = results {
            suite.set_system_err(xml_text(output));
        }
        report.add_test_suite(suite);
    }
    // Serialising into memory cannot fail; the fallback is never reached.
    report
        .to_string()
        .unwrap_or_else(|e| format!("<!-- the JUnit report could not be written: {e} -->\n"))
}

fn testcase(row: &Row) -> TestCase {
    let kind = match row.status {
        Status::Pass => None,
        Status::Fail => Some(NonSuccessKind::Failure),
        Status::Error => Some(NonSuccessKind::Error),
    };
    let status = match kind {
        None => TestCaseStatus::success(),
        Some(kind) => {
            let first = row
                .message
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            let mut status = TestCaseStatus::non_success(kind);
            status
                .set_message(xml_text(first.trim()))
                .set_type(row.outcome)
                .set_description(xml_text(&row.message));
            status
        }
    };
    let mut case = TestCase::new(xml_text(&row.name), status);
    case.set_classname(xml_text(&row.exercise))
        .set_time(row.duration);
    if !row.printed.is_empty() {
        case.set_system_out(xml_text(&row.printed));
    }
    case
}

/// `text` with the characters XML 1.0 cannot hold spelled out (`\u{1b}`):
/// the control characters but tab and line ends, and the two noncharacters
/// U+FFFE and U+FFFF. Markup is escaped by the serializer.
fn xml_text(text: &str) -> String {
    spelled_out(text, &['\t', '\n', '\r'])
        .replace('\u{FFFE}', "\\u{fffe}")
        .replace('\u{FFFF}', "\\u{ffff}")
}
