//! `summary.html`: a class at a glance, for the instructor.
//!
//! What an instructor with two hundred students looks for first comes first:
//! the rules the class breaks most, with a link to the chapter that explains
//! each; then the students who are working, one row each and one column per
//! exercise, whose cell holds the exercise's points and, on a click, its
//! checks; then those who have submitted nothing yet (every check still on a
//! stub), apart from those who struggle; then the submissions that could not
//! be graded, and the checks by how many students fail them. A check not
//! started (`○`) is never drawn as a failure (`✗`).
//!
//! The page has no script and no outside resource. Its columns share the
//! page's width, and below 700 px every student becomes a block of wrapped
//! cells, so that nothing is wider than the screen, at 1280 px or on a phone
//! (`grader/course/tests/batch_summary.rs` measures it in Chromium).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use super::super::format::{Row, Status};
use super::Graded;
use super::standing::{Standing, broken_rule, standing, student_rows};
use crate::grade::selected;
use grader::exercise::{self, Chapter};
use grader::harness::groups;
use grader::timeline::html::escape;
use grader::verdict::Property;

/// Where the chapter links point when no other book is named: `book/serve`'s.
pub const DEFAULT_BOOK: &str = exercise::SERVED_BOOK;

/// A check's mark and the class of its cell: passed, failed, not started, or
/// not run.
fn mark(row: &Row) -> (&'static str, &'static str) {
    match (row.status, row.outcome) {
        (Status::Pass, _) => ("✓", "pass"),
        (_, "not_started") => ("○", "todo"),
        (Status::Fail, _) => ("✗", "fail"),
        (Status::Error, _) => ("!", "error"),
    }
}

/// The page's style, in a file of its own.
const STYLE: &str = include_str!("summary.css");

/// The HTML summary for `graded`; chapter links point into the book at
/// `book` (a URL ending in `/`).
pub fn html(graded: &[Graded], filters: &[String], book: &str) -> String {
    let checks = selected(filters);
    let exercises: Vec<(&str, usize)> = groups::by_exercise(&checks, |c| c.as_str())
        .into_iter()
        .map(|(x, of)| (x, of.len()))
        .collect();
    let students: Vec<(&Graded, Standing, Vec<Row>)> = graded
        .iter()
        .map(|g| (g, standing(g), student_rows(g, filters)))
        .collect();
    let working: Vec<&(&Graded, Standing, Vec<Row>)> = students
        .iter()
        .filter(|(_, s, _)| *s == Standing::Working)
        .collect();
    let count = |standing: Standing| students.iter().filter(|(_, s, _)| *s == standing).count();

    let mut h = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>Distributed Locks with Redis: the class</title>\n<style>",
    );
    h.push_str(STYLE);
    h.push_str("</style></head><body>\n");
    let _ = writeln!(
        h,
        "<h1>Distributed Locks with Redis: {} submissions</h1>\n<p>{} working · {} submitted \
         nothing yet · {} did not compile · {} could not be graded</p>",
        graded.len(),
        working.len(),
        count(Standing::NothingSubmitted),
        count(Standing::DidNotCompile),
        count(Standing::NotGraded)
    );

    rules_broken(&mut h, &working, book);
    class_table(&mut h, &working, &exercises);
    names(
        &mut h,
        "Submitted nothing yet",
        "every check still stops at a stub's todo!()",
        &students,
        Standing::NothingSubmitted,
    );
    not_graded(&mut h, &students);
    checks_not_passed(&mut h, &working);
    h.push_str("</body></html>\n");
    h
}

/// The rules of a safe lock by how many working students broke them.
fn rules_broken(h: &mut String, working: &[&(&Graded, Standing, Vec<Row>)], book: &str) {
    let mut rules: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for (one, _, rows) in working {
        for row in rows {
            if let Some(rule) = broken_rule(&row.message) {
                rules.entry(rule).or_default().insert(&one.student);
            }
        }
    }
    let mut by_count: Vec<(&String, &BTreeSet<&str>)> = rules.iter().collect();
    by_count.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
    h.push_str("<h2>The rules the class breaks most</h2>\n");
    if by_count.is_empty() {
        h.push_str("<p>No student broke a rule.</p>\n");
        return;
    }
    // The most broken first; past the first few, the others on a click.
    const SHOWN: usize = 8;
    let (first, others) = by_count.split_at(by_count.len().min(SHOWN));
    rules_table(h, first, book);
    if !others.is_empty() {
        let _ = writeln!(
            h,
            "<details><summary>{} other rules broken</summary>",
            others.len()
        );
        rules_table(h, others, book);
        h.push_str("</details>\n");
    }
}

/// A table of rules with how many students broke each, and who.
fn rules_table(h: &mut String, rules: &[(&String, &BTreeSet<&str>)], book: &str) {
    h.push_str(
        "<table><thead><tr><th>rule, and the chapter that explains it</th>\
         <th class=\"n\">students</th><th class=\"who\">who</th></tr></thead><tbody>\n",
    );
    for (rule, who) in rules {
        let chapter = Property::ALL
            .into_iter()
            .find(|p| p.rule() == rule.as_str())
            .map(|p| chapter_link(p.row().chapter, book))
            .unwrap_or_default();
        let who: Vec<&str> = who.iter().copied().collect();
        let _ = writeln!(
            h,
            "<tr><td>{}{chapter}</td><td class=\"n\" data-label=\"students\">{}</td>\
             <td class=\"who\">{}</td></tr>",
            escape(rule),
            who.len(),
            a_few_then_all(&who)
        );
    }
    h.push_str("</tbody></table>\n");
}

/// The names, the first few shown and the others on a click: a rule that
/// two hundred students broke keeps its row short.
fn a_few_then_all(names: &[&str]) -> String {
    const SHOWN: usize = 4;
    let all = escape(&names.join(", "));
    if names.len() <= SHOWN {
        return all;
    }
    format!(
        "<details><summary>{}, and {} more</summary>{all}</details>",
        escape(&names[..SHOWN].join(", ")),
        names.len() - SHOWN
    )
}

/// ` (<a href="…/releasing.html">chapter 2</a>)`: the chapter's page in the
/// book served at `book`.
fn chapter_link(chapter: &Chapter, book: &str) -> String {
    format!(
        " (<a href=\"{}{}\">chapter {}</a>)",
        escape(book),
        escape(&chapter.page()),
        escape(chapter.number)
    )
}

/// The working students, a row each and a column per exercise.
fn class_table(
    h: &mut String,
    working: &[&(&Graded, Standing, Vec<Row>)],
    exercises: &[(&str, usize)],
) {
    h.push_str("<h2>Students at work</h2>\n");
    if working.is_empty() {
        h.push_str("<p>No student has graded code yet.</p>\n");
        return;
    }
    h.push_str(
        "<p class=\"legend\">Each cell: the exercise's points; click it for its checks \
         (✓ passes, ✗ fails, ○ not started, ! could not run).</p>\n<table class=\"class\">\
         <thead><tr><th class=\"student\">student</th><th class=\"total\">points</th>",
    );
    for (exercise, _) in exercises {
        let _ = write!(h, "<th>{}</th>", escape(exercise));
    }
    h.push_str("<th class=\"changed\">files changed (ignored)</th></tr></thead><tbody>\n");
    for (one, _, rows) in working {
        let points: u32 = rows.iter().map(|r| r.points).sum();
        let max: u32 = rows.iter().map(|r| r.max_points).sum();
        let _ = write!(
            h,
            "<tr><td class=\"student\">{}</td><td data-label=\"points\">{points}/{max}</td>",
            escape(&one.student)
        );
        for (exercise, _) in exercises {
            let of: Vec<&Row> = rows.iter().filter(|r| r.exercise == *exercise).collect();
            exercise_cell(h, exercise, &of);
        }
        let changed = one.changed.join(", ");
        let label = if changed.is_empty() {
            String::new()
        } else {
            " data-label=\"changed\"".to_string()
        };
        let _ = writeln!(
            h,
            "<td class=\"flag\"{label}>{}</td></tr>",
            escape(&changed)
        );
    }
    h.push_str("</tbody></table>\n");
}

/// One exercise's cell: its points, and its checks on demand.
fn exercise_cell(h: &mut String, exercise: &str, rows: &[&Row]) {
    let passed = rows.iter().filter(|r| r.status == Status::Pass).count();
    let untouched = !rows.is_empty() && rows.iter().all(|r| r.outcome == "not_started");
    let class = if untouched {
        "todo"
    } else if passed == rows.len() {
        "done"
    } else if passed > 0 {
        "some"
    } else {
        "none"
    };
    let points: u32 = rows.iter().map(|r| r.points).sum();
    let max: u32 = rows.iter().map(|r| r.max_points).sum();
    let summary = if untouched {
        "not started".to_string()
    } else {
        format!("{points}/{max}")
    };
    let _ = write!(
        h,
        "<td class=\"x {class}\" data-label=\"{}\"><details><summary>{summary}</summary><ul>",
        escape(exercise)
    );
    for row in rows {
        let (mark, class) = mark(row);
        let check = row
            .name
            .split_once("::")
            .map_or(row.name.as_str(), |(_, c)| c);
        let _ = write!(h, "<li class=\"{class}\">{mark} {}</li>", escape(check));
    }
    h.push_str("</ul></details></td>");
}

/// A list of the students of one standing, with what it means.
fn names(
    h: &mut String,
    title: &str,
    meaning: &str,
    students: &[(&Graded, Standing, Vec<Row>)],
    standing: Standing,
) {
    let who: Vec<String> = students
        .iter()
        .filter(|(_, s, _)| *s == standing)
        .map(|(g, _, _)| flagged(g))
        .collect();
    if who.is_empty() {
        return;
    }
    let _ = writeln!(
        h,
        "<h2>{title} ({})</h2>\n<p>{meaning}: {}</p>",
        who.len(),
        who.join(", ")
    );
}

/// The student's name, and the files they changed outside their exercises
/// (which the grade ignored), flagged.
fn flagged(graded: &Graded) -> String {
    let mut shown = escape(&graded.student);
    if !graded.changed.is_empty() {
        let _ = write!(
            shown,
            " <span class=\"flag\">(changed, ignored: {})</span>",
            escape(&graded.changed.join(", "))
        );
    }
    shown
}

/// The submissions that did not compile or could not be graded, and why.
fn not_graded(h: &mut String, students: &[(&Graded, Standing, Vec<Row>)]) {
    let broken: Vec<&(&Graded, Standing, Vec<Row>)> = students
        .iter()
        .filter(|(_, s, _)| matches!(s, Standing::DidNotCompile | Standing::NotGraded))
        .collect();
    if broken.is_empty() {
        return;
    }
    let _ = writeln!(
        h,
        "<h2>Not graded ({})</h2>\n<table><thead><tr><th class=\"student\">student</th>\
         <th>why</th></tr></thead><tbody>",
        broken.len()
    );
    for (one, standing, _) in broken {
        let why = match (&one.results, standing) {
            (Err(why), _) => why.lines().next().unwrap_or_default().to_string(),
            _ => "the exercises did not compile (cargo's message is in the student's results)"
                .to_string(),
        };
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td></tr>",
            flagged(one),
            escape(&why)
        );
    }
    h.push_str("</tbody></table>\n");
}

/// The checks by how many working students fail them, and how many have not
/// started them.
fn checks_not_passed(h: &mut String, working: &[&(&Graded, Standing, Vec<Row>)]) {
    let mut counts: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (_, _, rows) in working {
        for row in rows.iter().filter(|r| r.status != Status::Pass) {
            let entry = counts.entry(row.name.as_str()).or_default();
            if row.outcome == "not_started" {
                entry.1 += 1;
            } else {
                entry.0 += 1;
            }
        }
    }
    let mut by_count: Vec<(&str, (usize, usize))> =
        counts.into_iter().filter(|(_, (f, _))| *f > 0).collect();
    by_count.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(b.0)));
    h.push_str("<h2>Checks failed, by how many students at work</h2>\n");
    if by_count.is_empty() {
        h.push_str("<p>No working student fails a check.</p>\n");
        return;
    }
    h.push_str(
        "<table><thead><tr><th>check</th><th class=\"n\">failed</th>\
         <th class=\"n\">not started</th></tr></thead><tbody>\n",
    );
    for (check, (failed, todo)) in by_count {
        let file = exercise::file_of(exercise::of_check(check)).unwrap_or_default();
        let _ = writeln!(
            h,
            "<tr><td>{}<br><small>{}</small></td><td class=\"n\" data-label=\"failed\">\
             {failed}</td><td class=\"n\" data-label=\"not started\">{todo}</td></tr>",
            escape(check),
            escape(&file)
        );
    }
    h.push_str("</tbody></table>\n");
}
