//! The course's exercises, named once.
//!
//! Every other place that needs to know what the exercises are (the stub a
//! "not started" message points at, the layout tests that keep stubs and
//! solutions in step, the script that puts the solutions in the stubs' place,
//! the explorer's choice of functions) reads this table. Adding an exercise
//! is adding a row here; its checks then go into [`crate::checks`], and the
//! tests say what else is missing (the learner's test file, the stub).

/// One exercise: a file of stubs in the learner's crate, its solution, the
/// functions it asks for, and the chapter that explains it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exercise {
    /// Its place in the course, from 1.
    pub number: u8,
    /// Its name, which is also the prefix of its checks (`acquire` for
    /// `acquire::takes_a_free_lock`) and its file's stem.
    pub name: &'static str,
    /// The learner functions it holds, as [`crate::Lock`] names them.
    pub functions: &'static [&'static str],
    /// The number of the book chapter that explains it, as the book's table
    /// of contents shows it (`4.1`).
    pub chapter_number: &'static str,
    /// The book chapter that explains it: its file, under `book/src/`.
    pub chapter_file: &'static str,
    /// The chapter's title, as its first heading reads.
    pub chapter_title: &'static str,
}

/// Every exercise, in the order a learner works through them.
pub const EXERCISES: &[Exercise] = &[
    Exercise {
        number: 1,
        name: "token",
        functions: &["new_token"],
        chapter_number: "1",
        chapter_file: "single-instance.md",
        chapter_title: "Why a lock, and the single-instance lock",
    },
    Exercise {
        number: 2,
        name: "acquire",
        functions: &["acquire"],
        chapter_number: "1",
        chapter_file: "single-instance.md",
        chapter_title: "Why a lock, and the single-instance lock",
    },
    Exercise {
        number: 3,
        name: "release",
        functions: &["release"],
        chapter_number: "2",
        chapter_file: "releasing.md",
        chapter_title: "Releasing: check, then delete, in one step",
    },
    Exercise {
        number: 4,
        name: "fencing",
        functions: &["acquire_fenced"],
        chapter_number: "4",
        chapter_file: "fencing.md",
        chapter_title: "Fencing tokens",
    },
    Exercise {
        number: 5,
        name: "storage",
        functions: &["fenced_write", "fenced_read"],
        chapter_number: "4.1",
        chapter_file: "fencing-storage.md",
        chapter_title: "The storage's side",
    },
    Exercise {
        number: 6,
        name: "extend",
        functions: &["extend"],
        chapter_number: "3.1",
        chapter_file: "renewal.md",
        chapter_title: "Renewal and the watchdog",
    },
    Exercise {
        number: 7,
        name: "keeper",
        functions: &["keep_alive"],
        chapter_number: "3.1",
        chapter_file: "renewal.md",
        chapter_title: "Renewal and the watchdog",
    },
    Exercise {
        number: 8,
        name: "redlock",
        functions: &["redlock_acquire", "redlock_release"],
        chapter_number: "6",
        chapter_file: "redlock-practice.md",
        chapter_title: "Redlock in practice",
    },
];

impl Exercise {
    /// The learner's file of stubs, from the repository's root.
    pub fn stub(&self) -> String {
        format!("exercises/src/{}.rs", self.name)
    }

    /// The reference solution's file, from the repository's root.
    pub fn solution(&self) -> String {
        format!("grader/src/reference/{}.rs", self.name)
    }

    /// The chapter as a reader finds it: number, title and file, e.g.
    /// `2, Releasing: check, then delete, in one step (book/src/releasing.md)`.
    pub fn chapter_line(&self) -> String {
        format!(
            "{}, {} ({})",
            self.chapter_number,
            self.chapter_title,
            self.chapter()
        )
    }

    /// The chapter's file, from the repository's root.
    pub fn chapter(&self) -> String {
        format!("book/src/{}", self.chapter_file)
    }
}

/// Where `book/serve` serves the book: chapter links point there.
pub const SERVED_BOOK: &str = "http://localhost:3000/";

/// The served page of a chapter line as [`Exercise::chapter_line`] and
/// [`crate::verdict::Property::chapter`] write it (`2, Releasing: …
/// (book/src/releasing.md)`): `releasing.html`.
pub fn page_of(chapter_line: &str) -> Option<String> {
    let (_, file) = chapter_line.rsplit_once("(book/src/")?;
    let stem = file.strip_suffix(".md)")?;
    Some(format!("{stem}.html"))
}

/// The group of checks that plays the book's stories with the whole lock: it
/// comes after the exercises, and has no file of its own.
pub const SCENARIOS: &str = "scenarios";

/// The exercise a check belongs to (or [`SCENARIOS`]): `acquire` for
/// `acquire::explored`.
pub fn of_check(check: &str) -> &str {
    check.split("::").next().unwrap_or(check)
}

/// The file the learner edits for `exercise`, if it is one.
pub fn file_of(exercise: &str) -> Option<String> {
    named(exercise).map(Exercise::stub)
}

/// The book chapter to read with `exercise` (the scenarios: the chapter of
/// the stories they play), as [`Exercise::chapter_line`] writes it.
pub fn chapter_of(exercise: &str) -> String {
    named(exercise).map_or_else(
        || {
            crate::verdict::Property::SameAsReference
                .chapter()
                .to_string()
        },
        Exercise::chapter_line,
    )
}

/// The exercises' names in order, as a sentence lists them: `token, acquire, …
/// and redlock`.
pub fn names() -> String {
    let names: Vec<&str> = EXERCISES.iter().map(|e| e.name).collect();
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The exercise called `name` (a check's prefix).
pub fn named(name: &str) -> Option<&'static Exercise> {
    EXERCISES.iter().find(|e| e.name == name)
}

/// The exercise that holds the learner function `function`.
pub fn holding(function: &str) -> Option<&'static Exercise> {
    EXERCISES.iter().find(|e| e.functions.contains(&function))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_chapter_has_its_page_in_the_served_book() {
        for e in EXERCISES {
            assert_eq!(
                page_of(&e.chapter_line()),
                Some(e.chapter_file.replace(".md", ".html")),
                "{}",
                e.name
            );
        }
        for rule in crate::verdict::Property::ALL {
            assert!(page_of(rule.chapter()).is_some(), "{rule:?}");
        }
        assert_eq!(page_of("2, Releasing"), None);
    }

    #[test]
    fn names_numbers_and_functions_are_each_used_once() {
        for (i, e) in EXERCISES.iter().enumerate() {
            assert_eq!(e.number as usize, i + 1, "{} is out of order", e.name);
            assert_eq!(named(e.name), Some(e));
            assert!(!e.functions.is_empty(), "{} holds no function", e.name);
            for f in e.functions {
                assert_eq!(holding(f), Some(e), "{f} is listed twice");
            }
        }
    }
}
