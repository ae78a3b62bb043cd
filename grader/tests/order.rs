//! One order for the exercises, written once: the table of
//! `grader/src/exercise/mod.rs`. That order is the book's (an exercise comes
//! where the chapter that explains it comes in `book/src/SUMMARY.md`), and
//! every text that numbers or lists the exercises agrees with the table: the
//! book's exercise boxes and its introduction, the learner's crate, and any
//! sentence of the book, the READMEs or the stubs that lists three exercises
//! or more. (The READMEs' counts and tables are `tests/readme.rs`'s.)

use std::fs;
use std::path::Path;

use grader::exercise::{EXERCISES, Exercise, chapter, holding};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn read(path: &str) -> String {
    fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

/// The book's chapters, as `SUMMARY.md` lists and numbers them.
#[derive(Debug)]
struct Entry {
    /// Its number as mdBook shows it: `3.1`.
    number: String,
    title: String,
    file: String,
}

/// The numbered chapters of `book/src/SUMMARY.md`, in order: the nested
/// list between the introduction (a prefix chapter) and the `---` before the
/// suffix chapters.
fn summary() -> Vec<Entry> {
    let mut entries = Vec::new();
    let mut counters: Vec<usize> = Vec::new();
    for line in read("book/src/SUMMARY.md").lines() {
        if line.trim() == "---" {
            break;
        }
        let Some(item) = line.trim_start().strip_prefix("- [") else {
            continue;
        };
        let depth = (line.len() - line.trim_start().len()) / 4;
        counters.truncate(depth + 1);
        counters.resize(depth + 1, 0);
        counters[depth] += 1;
        let (title, rest) = item
            .split_once("](")
            .unwrap_or_else(|| panic!("SUMMARY.md: {line:?} is not `- [Title](file.md)`"));
        let file = rest
            .strip_suffix(')')
            .unwrap_or_else(|| panic!("SUMMARY.md: {line:?} has no closing parenthesis"));
        let number: Vec<String> = counters.iter().map(usize::to_string).collect();
        entries.push(Entry {
            number: number.join("."),
            title: title.to_string(),
            file: file.to_string(),
        });
    }
    entries
}

/// Where the book's table of contents puts the chapter in `file`.
fn place_in_book(summary: &[Entry], file: &str) -> usize {
    summary
        .iter()
        .position(|e| e.file == file)
        .unwrap_or_else(|| panic!("{file} is not a numbered chapter of book/src/SUMMARY.md"))
}

#[test]
fn every_chapter_the_grader_names_is_the_books() {
    let summary = summary();
    let mut last = None;
    for c in chapter::ALL {
        let at = place_in_book(&summary, c.file);
        let entry = &summary[at];
        assert_eq!(
            (entry.number.as_str(), entry.title.as_str()),
            (c.number, c.title),
            "{}: the grader's chapter differs from SUMMARY.md's",
            c.file
        );
        assert!(
            last < Some(at),
            "chapter::ALL must follow the book: {} comes too early",
            c.file
        );
        last = Some(at);
    }
}

#[test]
fn the_exercises_come_in_the_books_order() {
    let summary = summary();
    let places: Vec<(usize, &str)> = EXERCISES
        .iter()
        .map(|e| (place_in_book(&summary, e.chapter.file), e.name))
        .collect();
    for pair in places.windows(2) {
        let [(a, first), (b, second)] = pair else {
            continue;
        };
        assert!(
            a <= b,
            "{first} comes before {second} in the table of exercises, but its chapter \
             ({}) comes after {second}'s ({}) in the book",
            summary[*a].number,
            summary[*b].number
        );
    }
}

/// A box `> **Exercise N: `exercises/src/X.rs`**`: its number and exercise.
fn exercise_box(line: &str) -> Option<(usize, &str)> {
    let rest = line.strip_prefix("> **Exercise ")?;
    let (number, rest) = rest.split_once(": `exercises/src/")?;
    let name = rest.strip_suffix(".rs`**")?;
    Some((number.parse().ok()?, name))
}

#[test]
fn every_exercise_has_one_box_with_its_number_in_its_chapter() {
    let mut boxes = Vec::new();
    for entry in summary() {
        let text = read(&format!("book/src/{}", entry.file));
        for line in text.lines() {
            if line.starts_with("> **Exercise") {
                let (number, name) = exercise_box(line).unwrap_or_else(|| {
                    panic!(
                        "{}: {line:?} is not `> **Exercise N: `exercises/src/X.rs`**`",
                        entry.file
                    )
                });
                boxes.push((entry.file.clone(), number, name.to_string()));
            }
        }
    }
    let expected: Vec<(String, usize, String)> = EXERCISES
        .iter()
        .map(|e| (e.chapter.file.to_string(), e.number(), e.name.to_string()))
        .collect();
    assert_eq!(
        boxes, expected,
        "the book's exercise boxes, in reading order, must be the table's exercises, each \
         with its number, in the chapter the table names"
    );
}

/// Every `exercise N` (or `Exercise N`, `exercises N`) in `text`: N.
fn exercise_numbers(text: &str) -> Vec<usize> {
    let lower = text.to_lowercase();
    let mut numbers = Vec::new();
    for (at, _) in lower.match_indices("exercise") {
        let rest = &lower[at + "exercise".len()..];
        let rest = rest.strip_prefix('s').unwrap_or(rest);
        let Some(rest) = rest.strip_prefix(' ') else {
            continue;
        };
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if let Ok(n) = digits.parse() {
            numbers.push(n);
        }
    }
    numbers
}

/// A number names an exercise only where this test can hold it to the
/// table: in the chapter that holds that exercise, and in the heading of the
/// exercise's own stub (and solution, which `tests/layout.rs` keeps the
/// same). Elsewhere a text names the exercise, so that a new order leaves no
/// stale number behind.
#[test]
fn a_number_names_an_exercise_only_where_it_is_checked() {
    for entry in summary() {
        let path = format!("book/src/{}", entry.file);
        let here: Vec<usize> = EXERCISES
            .iter()
            .filter(|e| e.chapter.file == entry.file)
            .map(Exercise::number)
            .collect();
        for n in exercise_numbers(&read(&path)) {
            assert!(
                here.contains(&n),
                "{path} names exercise {n}, which is not one of its own ({here:?}): name it \
                 by its file instead"
            );
        }
    }
    for path in [
        "README.md",
        "exercises/README.md",
        "book/src/introduction.md",
    ] {
        let numbers = exercise_numbers(&read(path));
        assert!(
            numbers.is_empty(),
            "{path} numbers exercises ({numbers:?}): name them by their files instead"
        );
    }
    for e in EXERCISES {
        let stub = read(&e.stub());
        let heading = format!("//! Exercise {}: ", e.number());
        assert!(
            stub.starts_with(&heading),
            "{} must open with {heading:?}, exercise {}'s place in the table",
            e.stub(),
            e.name
        );
        let numbers = exercise_numbers(&stub);
        assert_eq!(
            numbers,
            [e.number()],
            "{} numbers exercises beyond its heading: name them instead",
            e.stub()
        );
    }
}

#[test]
fn the_learners_crate_lists_its_files_in_the_tables_order() {
    let lib = read("exercises/src/lib.rs");
    let listed: Vec<(usize, &str)> = lib
        .lines()
        .filter_map(|l| {
            let (number, rest) = l.strip_prefix("//! ")?.split_once(". `")?;
            let (file, _) = rest.split_once(".rs`")?;
            Some((number.parse().ok()?, file))
        })
        .collect();
    let expected: Vec<(usize, &str)> = EXERCISES.iter().map(|e| (e.number(), e.name)).collect();
    assert_eq!(listed, expected, "exercises/src/lib.rs's numbered list");
}

/// The introduction's table of chapters says what the reader writes in each:
/// the functions, chapter by chapter, are the table's in its order, each in
/// the row of its chapter (or of the chapter its section belongs to).
#[test]
fn the_introductions_table_gives_each_chapter_its_functions() {
    let intro = read("book/src/introduction.md");
    let mut written = Vec::new();
    for row in intro.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (Some(number), Some(functions)) = (cells.get(1), cells.get(3)) else {
            continue;
        };
        if number.parse::<u32>().is_err() && !number.contains('.') {
            continue;
        }
        for function in functions.split('`').skip(1).step_by(2) {
            let e = holding(function)
                .unwrap_or_else(|| panic!("the introduction names `{function}`, no exercise's"));
            let chapter = e.chapter.number;
            assert!(
                chapter == *number || chapter.starts_with(&format!("{number}.")),
                "the introduction writes `{function}` in chapter {number}; the table says {chapter}"
            );
            written.push(function.to_string());
        }
    }
    let functions: Vec<String> = EXERCISES
        .iter()
        .flat_map(|e| e.functions.iter().map(|f| f.to_string()))
        .collect();
    assert_eq!(written, functions, "the introduction's table of chapters");
}

/// The exercise a word of prose names, if it names one: `fencing`,
/// `` `fencing.rs` ``, `src/fencing.rs` and `fencing,` all do.
fn named_in(word: &str) -> Option<&'static str> {
    let core = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
    let core = core.rsplit('/').next().unwrap_or(core);
    let core = core.strip_suffix(".rs").unwrap_or(core);
    EXERCISES.iter().map(|e| e.name).find(|n| *n == core)
}

/// The lists of three exercises or more in `text`, in the order it gives
/// them: runs of names joined by `,` and `and`.
fn lists_of_exercises(text: &str) -> Vec<Vec<&'static str>> {
    let mut lists = Vec::new();
    let mut run: Vec<&'static str> = Vec::new();
    // Whether the word before could lead on to another name: a name with a
    // comma after it, or `and` after a name.
    let mut joined = false;
    for word in text.split_whitespace() {
        if word == "and" && !run.is_empty() {
            joined = true;
            continue;
        }
        match named_in(word) {
            Some(name) if run.is_empty() || joined => run.push(name),
            found => {
                if run.len() >= 3 {
                    lists.push(std::mem::take(&mut run));
                }
                run = found.into_iter().collect();
            }
        }
        joined = word.ends_with(',') && !run.is_empty();
    }
    if run.len() >= 3 {
        lists.push(run);
    }
    lists
}

#[test]
fn every_list_of_exercises_in_prose_follows_the_table() {
    let mut texts = vec![
        "README.md".to_string(),
        "exercises/README.md".to_string(),
        "exercises/src/lib.rs".to_string(),
    ];
    texts.extend(EXERCISES.iter().map(Exercise::stub));
    texts.extend(summary().iter().map(|e| format!("book/src/{}", e.file)));
    texts.push("book/src/introduction.md".into());
    let place = |name: &str| EXERCISES.iter().position(|e| e.name == name);
    let mut seen = 0;
    for path in &texts {
        for list in lists_of_exercises(&read(path)) {
            seen += 1;
            let places: Vec<Option<usize>> = list.iter().map(|n| place(n)).collect();
            assert!(
                places.windows(2).all(|w| w[0] < w[1]),
                "{path} lists {list:?}, not in the table's order"
            );
        }
    }
    // The learner's door's and the introduction's lists of files, and the
    // README's list of explored exercises, at least.
    assert!(seen >= 3, "only {seen} lists found: the scan has lost them");
}

#[test]
fn a_list_is_found_wherever_it_is_written() {
    assert_eq!(
        lists_of_exercises("in `release.rs`, `extend.rs`, `fencing.rs` and `redlock.rs` in"),
        [["release", "extend", "fencing", "redlock"]]
    );
    assert_eq!(
        lists_of_exercises("order: `token.rs`, `acquire.rs`,\n`redlock.rs`. Then"),
        [["token", "acquire", "redlock"]]
    );
    assert_eq!(
        lists_of_exercises("histories, acquire, release, fencing and storage, 124 s"),
        [["acquire", "release", "fencing", "storage"]]
    );
    // Prose that mentions a token, a release and a keeper is no list.
    assert!(lists_of_exercises("a random token, a safe release, a keeper").is_empty());
    assert!(lists_of_exercises("token and acquire").is_empty());
}
