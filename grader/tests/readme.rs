//! The READMEs as a newcomer reads them: the learner's door comes first, is
//! short and speaks the book's words, and every list or count of the
//! exercises agrees with the one table, `grader/src/exercise/mod.rs`. And
//! what the maintainer's door promises of the suite holds: a test that
//! cannot run here fails or is ignored with its reason, never passes by
//! printing that it did not run.

#[path = "readme/rust_source.rs"]
mod rust_source;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use grader::exercise::EXERCISES;
use rust_source::Source;

fn read(path: &str) -> String {
    let path = format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The text of the `## ` section whose heading starts with `heading`.
fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let start = text
        .find(&format!("\n## {heading}"))
        .unwrap_or_else(|| panic!("no section {heading:?}"));
    let rest = &text[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |e| e + 3);
    &rest[..end]
}

/// How a README writes a small count: "eight".
fn in_words(n: usize) -> &'static str {
    [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve",
    ]
    .get(n)
    .copied()
    .unwrap_or_else(|| panic!("{n} exercises: teach in_words a larger number"))
}

/// `text` with every run of white space one space: a sentence reads the
/// same however its lines are wrapped.
fn flat_readme(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn the_learners_door_comes_first_is_short_and_in_the_books_words() {
    let readme = read("README.md");
    let first = readme
        .lines()
        .find(|l| l.starts_with("## "))
        .expect("a section");
    assert!(
        first.starts_with("## Learn"),
        "the first door is the learner's: {first}"
    );
    let door = section(&readme, "Learn");
    let words = door.split_whitespace().count();
    assert!(words < 400, "the learner's door has {words} words:\n{door}");
    // Words a learner meets only later, in the exercises' own README.
    for later in ["explored", "seed", "histories", "judge", "runner"] {
        assert!(
            !door.to_lowercase().contains(later),
            "the learner's door says {later:?}:\n{door}"
        );
    }
    for command in ["book/serve", "cargo course", "cargo test -p exercises"] {
        assert!(
            door.contains(command),
            "the learner's door lacks `{command}`"
        );
    }
    assert!(
        readme.contains("## Teach") && readme.contains("## Maintain"),
        "the instructor's and the maintainer's doors"
    );
}

#[test]
fn every_readme_lists_the_exercises_of_the_table_in_its_order() {
    let count = in_words(EXERCISES.len());
    let files: Vec<String> = EXERCISES
        .iter()
        .map(|e| format!("`{}.rs`", e.name))
        .collect();

    let readme = read("README.md");
    let door = section(&readme, "Learn");
    assert!(
        door.contains(&format!("{count} files, one exercise each")),
        "the learner's door counts {count} exercises"
    );
    let listed = files.join(", ");
    let flat = flat_readme(door);
    assert!(
        flat.contains(&listed),
        "the learner's door lists {listed} in that order:\n{door}"
    );

    let maintain = section(&readme, "Maintain");
    assert!(
        maintain.contains(&format!("{count} files of stubs")),
        "the maintainer's door counts {count} exercises"
    );
    let (first, last) = (EXERCISES[0].name, EXERCISES[EXERCISES.len() - 1].name);
    let task_ids = format!(
        "(its number: 1 `{first}` … {} `{last}`, then {} for the `scenarios`)",
        EXERCISES.len(),
        EXERCISES.len() + 1
    );
    assert!(
        flat_readme(&readme).contains(&task_ids),
        "the Exercism format's task ids: {task_ids}"
    );

    let exercises = read("exercises/README.md");
    let capitalised = format!("{}{}", count[..1].to_uppercase(), &count[1..]);
    assert!(
        exercises.contains(&format!("{capitalised} files, one exercise each")),
        "exercises/README.md counts {count}"
    );
    let rows: Vec<&str> = exercises
        .lines()
        .filter(|l| l.starts_with("| `src/"))
        .collect();
    assert_eq!(
        rows.len(),
        EXERCISES.len(),
        "a row per exercise:\n{exercises}"
    );
    for (row, exercise) in rows.iter().zip(EXERCISES) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(cells[1], format!("`src/{}.rs`", exercise.name), "{row}");
        let functions: Vec<String> = exercise
            .functions
            .iter()
            .map(|f| format!("`{f}`"))
            .collect();
        assert_eq!(cells[2], functions.join(", "), "{row}");
        assert_eq!(
            cells[3],
            format!(
                "[{}, {}](../{})",
                exercise.chapter.number,
                exercise.chapter.title,
                exercise.chapter.path()
            ),
            "{row}: the chapter, linked"
        );
        assert_eq!(
            cells[4],
            format!("`cargo test -p exercises {}::`", exercise.name),
            "{row}"
        );
    }
}

/// How a test says that it did not test, lower-cased.
const SKIP_WORDS: [&str; 5] = ["not run", "skip", "cannot run", "did not run", "not tested"];

/// The macros by which a test tells the person running it something.
const PRINTS: [&str; 6] = ["println", "eprintln", "print", "eprint", "writeln", "write"];

/// The workspace's members, as the root `Cargo.toml` lists them.
fn members(root: &Path) -> Vec<PathBuf> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml"))
        .unwrap_or_else(|e| panic!("the root Cargo.toml: {e}"));
    let list = manifest
        .split_once("\nmembers = [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(list, _)| list)
        .unwrap_or_else(|| panic!("the root Cargo.toml lists no members"));
    list.split('"')
        .skip(1)
        .step_by(2)
        .map(|member| root.join(member))
        .collect()
}

/// Every `.rs` file under `dir`, but those of a target directory.
fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() && name != "target" && !name.to_string_lossy().starts_with('.') {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// The test binary a file belongs to, for the files of a `tests` folder: `tests/server/main.rs`
/// and `tests/server/child.rs` are one, as `tests/readme.rs` and `tests/readme/…` are. Any
/// other file is its own (its unit tests and their helpers are in it).
fn binary_of(file: &Path) -> PathBuf {
    let parts: Vec<_> = file.components().collect();
    match parts.iter().position(|p| p.as_os_str() == "tests") {
        Some(at) if at + 1 < parts.len() => {
            let binary: PathBuf = parts[..=at + 1].iter().collect();
            binary.with_extension("")
        }
        _ => file.to_path_buf(),
    }
}

/// Whether the code in `body` of `source` prints one of [`SKIP_WORDS`].
fn prints_a_skip(source: &Source, body: std::ops::Range<usize>) -> bool {
    source
        .macro_arguments(body, &PRINTS)
        .iter()
        .any(|args| SKIP_WORDS.iter().any(|w| args.to_lowercase().contains(w)))
}

/// The functions of one binary's `sources` that print that a test did not run, and those that
/// call one of them, by name.
fn sayers<'a>(sources: &[&'a Source]) -> Vec<&'a str> {
    let mut sayers: Vec<&str> = Vec::new();
    loop {
        let before = sayers.len();
        for source in sources {
            for function in &source.functions {
                let says = prints_a_skip(source, function.body.clone())
                    || sayers
                        .iter()
                        .any(|s| source.calls(function.body.clone(), s));
                if says && !sayers.contains(&function.name.as_str()) {
                    sayers.push(&function.name);
                }
            }
        }
        if sayers.len() == before {
            return sayers;
        }
    }
}

/// A test that returns early and says, by a print of its own or of a function it calls, that
/// it did not run is a pass that tested nothing: libtest shows it "ok". Such a test must fail
/// saying why ("cannot run here: …, the remedy"), or be `#[ignore = "the reason"]`, which
/// libtest reports as ignored. Every test of every member of the workspace is read here.
#[test]
fn no_test_passes_by_saying_it_did_not_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for member in members(&root) {
        rust_files(&member, &mut files);
    }
    files.sort();
    files.dedup();
    let mut binaries: BTreeMap<PathBuf, Vec<(PathBuf, Source)>> = BTreeMap::new();
    for path in files {
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let file = path.strip_prefix(&root).unwrap_or(&path).to_path_buf();
        binaries
            .entry(binary_of(&file))
            .or_default()
            .push((file, Source::new(text)));
    }
    let (mut tests, mut ignored, mut skipping) = (Vec::new(), Vec::new(), Vec::new());
    for sources in binaries.values() {
        let sayers = sayers(&sources.iter().map(|(_, s)| s).collect::<Vec<_>>());
        for (file, source) in sources {
            for test in source.functions.iter().filter(|f| f.has("#[test")) {
                if test.has("#[ignore") {
                    ignored.push(test.name.as_str());
                    continue;
                }
                tests.push(test.name.as_str());
                let body = test.body.clone();
                let says = if prints_a_skip(source, body.clone()) {
                    Some("says so itself".to_string())
                } else {
                    sayers
                        .iter()
                        .find(|s| source.calls(body.clone(), s))
                        .map(|s| format!("says so through {s}()"))
                };
                if let Some(how) = says
                    && source.holds_word(body, "return")
                {
                    skipping.push(format!("{} ({}): {how}", test.name, file.display()));
                }
            }
        }
    }
    assert!(
        skipping.is_empty(),
        "these tests return early saying they did not run, and so pass without testing; make \
         each fail saying why (\"cannot run here: …\", with the remedy) or mark it \
         #[ignore = \"the reason\"]:\n{}",
        skipping.join("\n")
    );
    // The reading itself works: it finds tests, and tells the ignored ones apart.
    assert!(
        tests.contains(&"shared_server_is_the_forced_source")
            && ignored.contains(&"container_is_removed_when_its_process_exits"),
        "the test files were not read as they are: {} tests, {} ignored",
        tests.len(),
        ignored.len()
    );
}
