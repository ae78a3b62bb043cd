//! JUnit XML: one `testcase` per check, for CI systems that show test reports.
//!
//! One `testsuites` holding one `testsuite` per exercise; each check is a
//! `testcase` (`classname` the exercise, `name` the check, `time` the real
//! seconds it took; a suite's `time` is its checks' sum). A check that did
//! not pass has a `failure` (the learner's code failed it) or an `error` (it
//! could not run), whose `message` is the report's first line and whose text
//! is the whole report; what the check's process printed goes in
//! `system-out`. When the exercises did not compile, cargo's text is the
//! `system-err` of the run, and every check is an `error`.

use std::fmt::Write;

use super::super::grade::Results;
use super::{Row, Status};

/// The JUnit XML for `results`.
pub fn render(results: &Results, rows: &[Row]) -> String {
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let count = |status: Status| rows.iter().filter(|r| r.status == status).count();
    let _ = writeln!(
        xml,
        "<testsuites name=\"exercises\" tests=\"{}\" failures=\"{}\" errors=\"{}\">",
        rows.len(),
        count(Status::Fail),
        count(Status::Error)
    );
    let mut exercises: Vec<&str> = Vec::new();
    for row in rows {
        if !exercises.contains(&row.exercise.as_str()) {
            exercises.push(&row.exercise);
        }
    }
    for exercise in exercises {
        let suite: Vec<&Row> = rows.iter().filter(|r| r.exercise == exercise).collect();
        let count = |status: Status| suite.iter().filter(|r| r.status == status).count();
        let time: std::time::Duration = suite.iter().map(|r| r.duration).sum();
        let _ = writeln!(
            xml,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"0\" \
             time=\"{:.3}\">",
            escape(exercise),
            suite.len(),
            count(Status::Fail),
            count(Status::Error),
            super::seconds(time)
        );
        for row in suite {
            testcase(&mut xml, row);
        }
        let _ = writeln!(xml, "  </testsuite>");
    }
    if let Results::CompileError { output, .. } = results {
        let _ = writeln!(xml, "  <system-err>{}</system-err>", escape(output));
    }
    xml.push_str("</testsuites>\n");
    xml
}

fn testcase(xml: &mut String, row: &Row) {
    let _ = write!(
        xml,
        "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
        escape(&row.exercise),
        escape(&row.name),
        super::seconds(row.duration)
    );
    let element = match row.status {
        Status::Pass if row.printed.is_empty() => {
            xml.push_str("/>\n");
            return;
        }
        Status::Pass => None,
        Status::Fail => Some("failure"),
        Status::Error => Some("error"),
    };
    xml.push_str(">\n");
    if let Some(element) = element {
        let first = row
            .message
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        let _ = writeln!(
            xml,
            "      <{element} message=\"{}\" type=\"{}\">{}</{element}>",
            escape(first.trim()),
            row.outcome,
            escape(&row.message)
        );
    }
    if !row.printed.is_empty() {
        let _ = writeln!(
            xml,
            "      <system-out>{}</system-out>",
            escape(&row.printed)
        );
    }
    xml.push_str("    </testcase>\n");
}

/// `text` as XML character data or an attribute value: markup escaped, and
/// the characters XML 1.0 cannot hold at all (most control characters, such
/// as a terminal's escape) spelled out.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c.is_control() || c == '\u{FFFE}' || c == '\u{FFFF}' => {
                out.extend(c.escape_default());
            }
            c => out.push(c),
        }
    }
    out
}
