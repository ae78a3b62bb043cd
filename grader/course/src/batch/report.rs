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
//! The HTML page is the class at a glance ([`super::summary`]).

use std::fmt::Write;
use std::path::Path;

use super::super::error::CourseError;
use super::Graded;
use super::standing::{Standing, standing, student_rows};
use crate::format::Status;

/// The CSV's file name.
pub const CSV: &str = "results.csv";
/// The HTML summary's file name.
pub const HTML: &str = "summary.html";
/// The CSV's header line.
pub const HEADER: &str = "student,check,status,outcome,points,max_points,changed_files";

/// A name a student chose (a folder, a file), as it may be shown.
fn named(text: &str) -> String {
    grader::harness::spelled_out(text, &[])
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
    match standing(graded) {
        Standing::DidNotCompile => line.push_str(" [did not compile]"),
        Standing::NothingSubmitted => {
            line.push_str(" [submitted nothing: every check is on a stub]");
        }
        _ => {}
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

/// Writes `results.csv` and `summary.html` into `out`; the summary's chapter
/// links point into the book at `book`.
pub fn write(
    out: &Path,
    graded: &[Graded],
    filters: &[String],
    book: &str,
) -> Result<(), CourseError> {
    let files = [
        (CSV, csv(graded, filters)),
        (HTML, super::summary::html(graded, filters, book)),
    ];
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
