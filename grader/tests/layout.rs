//! The learner's crate and the reference solutions stay in step: the test
//! file hands every function to the runner, each stub has its solution file
//! with the same signatures, and each stub still holds a todo!().

use std::fs;
use std::path::{Path, PathBuf};

use grader::checks::CHECKS;
use grader::exercise::EXERCISES;

/// The workspace's root folder.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &str) -> String {
    fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

#[test]
fn the_learners_runner_holds_every_function_once_and_the_test_none() {
    let grade = read("exercises/runner/main.rs");
    for exercise in EXERCISES {
        for function in exercise.functions {
            let line = format!("{function}: exercises::{}::{function},", exercise.name);
            assert_eq!(
                grade.matches(&line).count(),
                1,
                "exercises/runner/main.rs must hand `{line}` to the runner once"
            );
        }
    }
    let handed = grade.matches(": exercises::").count();
    let functions: usize = EXERCISES.iter().map(|e| e.functions.len()).sum();
    assert_eq!(
        handed, functions,
        "runner/main.rs hands over a function no exercise has"
    );
    // The runner holds nothing of the grader, and the test cargo runs holds none of the
    // learner's code: it only starts the judge with the runner.
    assert!(
        !grade.contains("grader::"),
        "runner/main.rs must not link the grader"
    );
    let test = read("exercises/tests/grade.rs");
    assert!(
        !test.contains("exercises::"),
        "tests/grade.rs must hold none of the learner's code"
    );
}

/// The fields of `pub struct Lock` in the file at `path`, in order.
fn lock_fields(path: &str) -> Vec<String> {
    let source = read(path);
    let body = source
        .split_once("pub struct Lock {")
        .and_then(|(_, rest)| rest.split_once("\n}"))
        .map(|(body, _)| body)
        .unwrap_or_else(|| panic!("{path} declares no `pub struct Lock {{`"));
    body.lines()
        .filter_map(|l| l.trim().strip_prefix("pub ")?.split_once(':'))
        .map(|(field, _)| field.to_string())
        .collect()
}

/// The tables of functions that cannot read the exercises' descriptors (the
/// learner compiles them, and they must not link the grader) hold the
/// descriptors' functions, in the course's order: the runner's `Lock`, the
/// learner's `YOURS`, the stubs' lock of `grader/course/tests/stubs.rs`, and the grader's
/// own `Lock` (which also has a name).
#[test]
fn every_table_of_functions_is_the_descriptors() {
    let functions: Vec<String> = EXERCISES
        .iter()
        .flat_map(|e| e.functions.iter().map(|f| f.to_string()))
        .collect();
    assert_eq!(
        lock_fields("grader/runner/src/lib.rs"),
        functions,
        "grader/runner/src/lib.rs: `Lock` must hold the exercises' functions, in order"
    );
    let mut graders = lock_fields("grader/src/lock.rs");
    assert_eq!(graders.first().map(String::as_str), Some("name"));
    graders.remove(0);
    assert_eq!(
        graders, functions,
        "grader/src/lock.rs: `Lock` must hold its name, then the exercises' functions, in order"
    );
    // The learner's runner, and the grader's test that links the stubs themselves.
    for path in ["exercises/runner/main.rs", "grader/course/tests/stubs.rs"] {
        let handed: Vec<String> = read(path)
            .lines()
            .filter_map(|l| l.trim().split_once(": exercises::"))
            .map(|(field, _)| field.to_string())
            .collect();
        assert_eq!(
            handed, functions,
            "{path}: its lock must hand over the exercises' functions, in order"
        );
    }
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
    for row in EXERCISES {
        let exercise = row.name;
        let stub = read(&row.stub());
        let solution = read(&row.solution());
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

/// The table of exercises is the course's: the learner's crate has a module
/// per exercise, in order, each with the functions the table names; the
/// checks are grouped by exercise in the table's order (the `scenarios::`
/// ones last); the chapter the table names opens with its title.
#[test]
fn the_table_of_exercises_is_the_courses() {
    let modules: Vec<String> = read("exercises/src/lib.rs")
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod ")?.strip_suffix(';'))
        .map(str::to_string)
        .collect();
    let mut names: Vec<&str> = EXERCISES.iter().map(|e| e.name).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(
        modules, sorted,
        "exercises/src/lib.rs must declare one module per exercise of grader/src/exercise/mod.rs"
    );
    for row in EXERCISES {
        let stub = signatures(&read(&row.stub()));
        let declared: Vec<&str> = stub
            .iter()
            .filter_map(|s| s.split(['(', '<']).next())
            .collect();
        assert_eq!(
            declared, row.functions,
            "{}: the table names other functions than the stub declares",
            row.name
        );
        let chapter = read(&row.chapter.path());
        assert!(
            chapter
                .lines()
                .next()
                .is_some_and(|l| l.contains(row.chapter.title)),
            "{} does not open with the title {:?} the table gives exercise {}",
            row.chapter.path(),
            row.chapter.title,
            row.name
        );
    }
    let mut prefixes: Vec<&str> = Vec::new();
    for check in CHECKS {
        let prefix = check.name.split("::").next().unwrap_or_default();
        if prefixes.last() != Some(&prefix) {
            prefixes.push(prefix);
        }
    }
    names.push("scenarios");
    assert_eq!(
        prefixes, names,
        "the checks must come exercise by exercise, in the table's order, then the scenarios"
    );
}

/// `.ci/learner-path` has no list of exercises of its own: it reads the table.
#[test]
fn the_learner_path_reads_the_table() {
    let script = read(".ci/learner-path");
    assert!(script.contains("--bin exercise-table"));
    for row in EXERCISES {
        assert!(
            !script.contains(&format!(" {} ", row.name)),
            ".ci/learner-path names the exercise {} itself",
            row.name
        );
    }
}

/// Every report ends with "Read: chapter N, Title — URL (offline: book/src/file.md)":
/// the file must be a chapter of the book, its title the chapter's heading,
/// and the URL the page mdBook makes of that file where `book/serve` serves it.
#[test]
fn every_rule_points_at_a_chapter_that_exists() {
    for wrong in lock_catalogue::every_wrong() {
        let chapter = wrong.breaks.chapter();
        let (title, url, path) = chapter
            .split_once(" — ")
            .and_then(|(title, rest)| {
                let (url, path) = rest.split_once(" (offline: ")?;
                Some((title, url, path.strip_suffix(')')?))
            })
            .unwrap_or_else(|| panic!("{chapter:?} is not \"N, Title — URL (offline: path)\""));
        let text = read(path);
        let title = title.split_once(", ").map_or(title, |(_, title)| title);
        assert!(
            text.lines().next().is_some_and(|l| l.contains(title)),
            "{path} does not open with the heading {title:?} that {:?} names",
            wrong.breaks
        );
        let page = path
            .strip_prefix("book/src/")
            .and_then(|file| file.strip_suffix(".md"))
            .map(|stem| format!("{}{stem}.html", grader::exercise::chapter::SERVED_BOOK));
        assert_eq!(
            page.as_deref(),
            Some(url),
            "{:?} names a page that is not {path}'s",
            wrong.breaks
        );
    }
}

/// The doc comments of `source`, one text with single spaces.
fn doc_text(source: &str) -> String {
    source
        .lines()
        .filter_map(|l| l.trim().strip_prefix("///"))
        .flat_map(str::split_whitespace)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A check that makes a function's commands fail quotes what the doc text says the function
/// must answer then: the exercise's descriptor names those sentences, and its stub and its
/// solution both say them, in those words.
#[test]
fn every_check_of_failed_commands_quotes_the_doc() {
    for exercise in EXERCISES {
        for sentence in exercise.says_on_failure {
            for path in [exercise.stub(), exercise.solution()] {
                assert!(
                    doc_text(&read(&path)).contains(sentence),
                    "{path} must say, in its doc comments: {sentence}"
                );
            }
        }
    }
    // Every exercise whose functions send commands has its checks make them fail.
    let quiet: Vec<&str> = EXERCISES
        .iter()
        .filter(|e| e.says_on_failure.is_empty())
        .map(|e| e.name)
        .collect();
    assert_eq!(
        quiet,
        ["token"],
        "exercises that quote no doc on a failed command"
    );
}

/// The lines of `source`, outside its tests and comments, that judge a rule themselves: they
/// build a `Violation`, or name one rule (`Property::OneWinner`, but not every rule,
/// `Property::ALL`, nor a rule's row, `Property::OneWinner.row()`).
fn judgements(source: &str) -> Vec<String> {
    let names_a_rule = |line: &str| {
        line.match_indices("Property::").any(|(i, m)| {
            let rest = &line[i + m.len()..];
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric()).collect();
            name.chars().nth(1).is_some_and(char::is_lowercase)
                && !rest[name.len()..].starts_with(".row(")
        })
    };
    let builds = |line: &str| {
        line.contains("Violation::at(")
            || line.contains("Violation::anytime(")
            || (line.contains("Violation {") && !line.contains("-> Violation {"))
    };
    let code = source.split("#[cfg(test)]").next().unwrap_or(source);
    code.lines()
        .map(|l| l.split("//").next().unwrap_or(l))
        .filter(|l| names_a_rule(l) || builds(l))
        .map(|l| l.trim().to_owned())
        .collect()
}

/// Every `.rs` file under `dir`, from `grader/src/`, but for the folders `skip`.
fn sources(dir: &Path, from: &Path, skip: &[&str], into: &mut Vec<String>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {dir:?}: {e}"));
    for entry in entries.map(|e| e.expect("a directory entry")) {
        let path = entry.path();
        let rel = path
            .strip_prefix(from)
            .expect("under grader/src")
            .to_string_lossy()
            .replace('\\', "/");
        if path.is_dir() && !skip.contains(&rel.as_str()) {
            sources(&path, from, skip, into);
        } else if rel.ends_with(".rs") {
            into.push(rel);
        }
    }
}

/// Each rule is judged in one place, `grader/src/judge/`: a check gathers what happened and
/// hands it to a judge, and builds no violation and names no rule of its own.
#[test]
fn rules_are_judged_in_the_judge_only() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &src, &["judge", "verdict", "model"], &mut files);
    files.sort();
    assert!(files.iter().any(|f| f == "checks/extend.rs"), "{files:?}");
    let mut wrong = Vec::new();
    for file in &files {
        let found = judgements(&read(&format!("grader/src/{file}")));
        if !found.is_empty() {
            wrong.push(format!(
                "grader/src/{file}: {} lines judge a rule:\n    {}",
                found.len(),
                found.join("\n    ")
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "judge these in grader/src/judge/ and call the judge:\n{}",
        wrong.join("\n")
    );
}

/// Every crate of the judge's build and the features cargo turns on in it, for the host, as
/// `cargo tree` resolves them when it builds `package` alone.
fn features_of(package: &str) -> std::collections::BTreeMap<String, String> {
    let out = std::process::Command::new(env!("CARGO"))
        .args(["tree", "--quiet", "--locked", "--offline", "-p", package])
        .args(["-e", "normal,build", "--prefix", "none", "-f", "{p}|{f}"])
        .current_dir(root())
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo tree -p {package}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.trim_end_matches(" (*)").split_once('|'))
        .map(|(crate_, features)| (crate_.to_owned(), features.to_owned()))
        .collect()
}

/// `cargo course` (the course crate) and the judge that `cargo test -p exercises` builds (the
/// grader crate alone) are two cargo commands, and cargo settles features per command: a crate
/// both use with different features is compiled twice, and so is everything above it, the
/// grader included. grader/Cargo.toml asks for what the course's dependencies turn on.
#[test]
fn the_judge_and_cargo_course_share_one_build() {
    let judge = features_of("grader");
    let course = features_of("course");
    let differ: Vec<String> = judge
        .iter()
        .filter_map(|(crate_, features)| {
            let theirs = course.get(crate_)?;
            (theirs != features).then(|| {
                format!("{crate_}: the judge alone [{features}], with `cargo course` [{theirs}]")
            })
        })
        .collect();
    assert!(
        differ.is_empty(),
        "crates the judge would build twice; ask for their features in grader/Cargo.toml:\n{}",
        differ.join("\n")
    );
}
