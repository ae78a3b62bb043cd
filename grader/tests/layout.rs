//! The learner's crate and the reference solutions stay in step: the test
//! file lists every check, each stub has its solution file with the same
//! signatures, and each stub still holds a todo!().

use std::fs;
use std::path::Path;

use grader::checks::CHECKS;

fn read(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

#[test]
fn the_learners_test_file_lists_every_check_once() {
    let grade = read("exercises/tests/grade.rs");
    let body = grade
        .split("checks! {")
        .nth(1)
        .expect("grade.rs has a checks! { … } block");
    let mut listed = Vec::new();
    let mut exercise = String::new();
    for line in body.lines().map(str::trim) {
        if let Some(name) = line.strip_suffix(" {") {
            exercise = name.to_string();
        } else if let Some(check) = line.strip_suffix(',') {
            listed.push(format!("{exercise}::{check}"));
        }
    }
    let all: Vec<String> = CHECKS.iter().map(|c| c.name.to_string()).collect();
    assert_eq!(
        listed, all,
        "exercises/tests/grade.rs must list the checks of checks.rs, in order"
    );
}

/// The `pub fn` signatures of a file, whitespace folded.
fn signatures(source: &str) -> Vec<String> {
    let flat = source.split_whitespace().collect::<Vec<_>>().join(" ");
    flat.split("pub fn ")
        .skip(1)
        .map(|rest| rest.split(" {").next().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn every_stub_mirrors_its_solution() {
    for exercise in [
        "token", "acquire", "release", "fencing", "storage", "redlock",
    ] {
        let stub = read(&format!("exercises/src/{exercise}.rs"));
        let solution = read(&format!("grader/src/reference/{exercise}.rs"));
        assert_eq!(
            signatures(&stub),
            signatures(&solution),
            "{exercise}: the stub and its solution differ"
        );
        assert!(
            stub.contains("todo!(\""),
            "{exercise}: the stub should still hold a todo!(\"…\")"
        );
        assert!(
            stub.contains("// TODO:"),
            "{exercise}: the stub should mark what to change with // TODO:"
        );
        assert!(
            !solution.contains("todo!("),
            "{exercise}: the solution is unfinished"
        );
        let intro = |s: &str| {
            s.lines()
                .take_while(|l| l.starts_with("//!"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(
            intro(&stub),
            intro(&solution),
            "{exercise}: the story at the top should be the same"
        );
    }
}

/// Every report ends with "Read: chapter N, Title (book/src/file.md)": the
/// file must be a chapter of the book, and its title the chapter's heading.
#[test]
fn every_rule_points_at_a_chapter_that_exists() {
    use grader::catalogue::wrong::ALL;
    for wrong in ALL {
        let chapter = wrong.breaks.chapter();
        let (title, path) = chapter
            .split_once(" (")
            .and_then(|(title, rest)| Some((title, rest.strip_suffix(')')?)))
            .unwrap_or_else(|| panic!("{chapter:?} is not \"N, Title (path)\""));
        let text = read(path);
        let title = title.split_once(", ").map_or(title, |(_, title)| title);
        assert!(
            text.lines().next().is_some_and(|l| l.contains(title)),
            "{path} does not open with the heading {title:?} that {:?} names",
            wrong.breaks
        );
    }
}
