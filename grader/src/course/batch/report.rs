//! What a batch writes: `results.csv` for spreadsheets and scripts, and
//! `summary.html` for the instructor.
//!
//! The CSV has one row per student and check: `student, check, status`
//! (`pass`, `fail`, `error`), `outcome` (as in the course's JSON, or
//! `not_graded` when the submission could not be graded at all), `points`,
//! `max_points`, and `changed_files`: the files the submission changed
//! outside `exercises/src/*.rs`, which the grade ignored, joined by `;`.
//! CSVs of several shards can be merged by keeping one header.
//!
//! The HTML page shows the same table with a column per check, then the
//! rules of a safe lock by how many students broke them (read from the
//! "Broken rule:" line of each failed check's report), then the checks by
//! how many students failed them.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::Path;

use super::super::error::CourseError;
use super::super::format::{Row, Status, rows};
use super::super::grade::selected;
use super::Graded;

/// The CSV's file name.
pub const CSV: &str = "results.csv";
/// The HTML summary's file name.
pub const HTML: &str = "summary.html";
/// The CSV's header line.
pub const HEADER: &str = "student,check,status,outcome,points,max_points,changed_files";

/// A student's rows: the graded checks, or every selected check as not graded.
pub fn student_rows(graded: &Graded, filters: &[String]) -> Vec<Row> {
    match &graded.results {
        Ok(results) => rows(results),
        Err(why) => selected(filters)
            .into_iter()
            .map(|name| Row {
                exercise: super::super::grade::exercise_of(&name).to_string(),
                max_points: super::super::points::of(&name),
                name,
                status: Status::Error,
                outcome: "not_graded",
                points: 0,
                message: why.clone(),
                printed: String::new(),
            })
            .collect(),
    }
}

/// A name a student chose (a folder, a file), as it may be shown.
fn named(text: &str) -> String {
    crate::harness::spelled_out(text, &[])
}

/// One line per student, printed as each ends.
pub fn line(graded: &Graded) -> String {
    let rows = student_rows(graded, &[]);
    let mut line = match &graded.results {
        Ok(_) => format!(
            "{}: {}/{} points, {}/{} checks passed ({:.1} s)",
            named(&graded.student),
            rows.iter().map(|r| r.points).sum::<u32>(),
            rows.iter().map(|r| r.max_points).sum::<u32>(),
            rows.iter().filter(|r| r.status == Status::Pass).count(),
            rows.len(),
            graded.took.as_secs_f64()
        ),
        Err(why) => format!("{}: not graded: {}", named(&graded.student), named(why)),
    };
    if let Ok(super::super::grade::Results::CompileError { .. }) = &graded.results {
        line.push_str(" [did not compile]");
    }
    if !graded.changed.is_empty() {
        line.push_str(&format!(
            " [changed: {}]",
            named(&graded.changed.join(", "))
        ));
    }
    line
}

/// The CSV for `graded`.
pub fn csv(graded: &[Graded], filters: &[String]) -> String {
    let mut out = format!("{HEADER}\n");
    for one in graded {
        let changed = named(&one.changed.join(";"));
        for row in student_rows(one, filters) {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{}",
                field(&named(&one.student)),
                field(&row.name),
                row.status.as_str(),
                row.outcome,
                row.points,
                row.max_points,
                field(&changed)
            );
        }
    }
    out
}

/// A CSV field, quoted when it must be (RFC 4180), and never read as a
/// formula by a spreadsheet.
fn field(text: &str) -> String {
    let text = if text.starts_with(['=', '+', '-', '@']) {
        format!("'{text}")
    } else {
        text.to_string()
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

/// The rule a failed check's report names, if it names one.
pub fn broken_rule(message: &str) -> Option<String> {
    message.lines().find_map(|line| {
        line.trim()
            .strip_prefix("Broken rule:")
            .map(|rule| rule.trim().trim_end_matches('.').to_string())
    })
}

/// The HTML summary for `graded`.
pub fn html(graded: &[Graded], filters: &[String]) -> String {
    let all: Vec<(&Graded, Vec<Row>)> = graded
        .iter()
        .map(|g| (g, student_rows(g, filters)))
        .collect();
    let checks: Vec<String> = selected(filters);
    let mut rules: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    let mut failed: BTreeMap<&str, usize> = BTreeMap::new();
    for (one, rows) in &all {
        for row in rows {
            if row.status != Status::Pass {
                *failed.entry(row.name.as_str()).or_default() += 1;
            }
            if let Some(rule) = broken_rule(&row.message) {
                rules.entry(rule).or_default().insert(&one.student);
            }
        }
    }
    let mut h = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>Distributed Locks with Redis: batch results</title>\n<style>\
         body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;margin-bottom:2em}\
         td,th{border:1px solid #ccc;padding:2px 6px;text-align:center}\
         th.check{writing-mode:vertical-rl;font-weight:normal;font-size:85%}\
         td.pass{background:#dfd}td.fail{background:#fdd}td.error{background:#eee}\
         td.left,th.left{text-align:left}.flag{color:#a00}</style></head><body>\n",
    );
    let _ = writeln!(h, "<h1>Batch results: {} submissions</h1>", graded.len());
    h.push_str(
        "<h2>Students by check</h2>\n<table><tr><th class=\"left\">student</th><th>points</th>",
    );
    for check in &checks {
        let _ = write!(h, "<th class=\"check\">{}</th>", escape(check));
    }
    h.push_str("<th class=\"left\">changed files (ignored by the grade)</th></tr>\n");
    for (one, rows) in &all {
        let points: u32 = rows.iter().map(|r| r.points).sum();
        let max: u32 = rows.iter().map(|r| r.max_points).sum();
        let _ = write!(
            h,
            "<tr><td class=\"left\">{}</td><td>{points}/{max}</td>",
            escape(&one.student)
        );
        for check in &checks {
            match rows.iter().find(|r| &r.name == check) {
                Some(row) => {
                    let mark = match row.status {
                        Status::Pass => "✓",
                        Status::Fail => "✗",
                        Status::Error => "!",
                    };
                    let _ = write!(
                        h,
                        "<td class=\"{}\" title=\"{}\">{mark}</td>",
                        row.status.as_str(),
                        escape(row.outcome)
                    );
                }
                None => h.push_str("<td></td>"),
            }
        }
        let _ = writeln!(
            h,
            "<td class=\"left flag\">{}</td></tr>",
            escape(&one.changed.join(", "))
        );
    }
    h.push_str("</table>\n<h2>Rules broken, by how many students</h2>\n");
    let mut by_count: Vec<(&String, &BTreeSet<&str>)> = rules.iter().collect();
    by_count.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
    if by_count.is_empty() {
        h.push_str("<p>No student broke a rule.</p>\n");
    } else {
        h.push_str("<table><tr><th class=\"left\">rule</th><th>students</th><th class=\"left\">who</th></tr>\n");
        for (rule, students) in by_count {
            let who: Vec<&str> = students.iter().copied().collect();
            let _ = writeln!(
                h,
                "<tr><td class=\"left\">{}</td><td>{}</td><td class=\"left\">{}</td></tr>",
                escape(rule),
                students.len(),
                escape(&who.join(", "))
            );
        }
        h.push_str("</table>\n");
    }
    h.push_str("<h2>Checks not passed, by how many students</h2>\n<table><tr><th class=\"left\">check</th><th>students</th></tr>\n");
    let mut by_check: Vec<(&&str, &usize)> = failed.iter().collect();
    by_check.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (check, n) in by_check {
        let _ = writeln!(
            h,
            "<tr><td class=\"left\">{}</td><td>{n}</td></tr>",
            escape(check)
        );
    }
    h.push_str("</table>\n</body></html>\n");
    h
}

/// `text` as HTML text or attribute value.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Writes `results.csv` and `summary.html` into `out`.
pub fn write(out: &Path, graded: &[Graded], filters: &[String]) -> Result<(), CourseError> {
    let files = [(CSV, csv(graded, filters)), (HTML, html(graded, filters))];
    std::fs::create_dir_all(out).map_err(|source| CourseError::File {
        what: "could not create",
        path: out.to_path_buf(),
        source,
    })?;
    for (name, text) in files {
        let path = out.join(name);
        std::fs::write(&path, text).map_err(|source| CourseError::File {
            what: "could not write",
            path,
            source,
        })?;
    }
    Ok(())
}
