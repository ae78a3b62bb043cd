//! The READMEs as a newcomer reads them: the learner's door comes first, is
//! short and speaks the book's words, and every list or count of the
//! exercises agrees with the one table, `grader/src/exercise/mod.rs`.

use grader::exercise::EXERCISES;

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
