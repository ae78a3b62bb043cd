//! Where in the learner's files each check points: the file of the exercise
//! it tests and the line its first function starts on, for the formats that
//! name a line (GitHub Classroom's `filename` and `line_no`).
//!
//! The lines are read once, before rendering, so that every format stays a
//! pure function of the results and these places. A file that is missing,
//! not UTF-8 or larger than [`MAX_BYTES`] is never read whole, and its checks
//! point at line 1.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use grader::exercise::{self, EXERCISES};

/// The most of a learner's file read to find a line.
pub const MAX_BYTES: u64 = 1 << 20;

/// The file the checks of the stories point at: they grade the whole lock.
const STORIES_FILE: &str = "exercises/tests/grade.rs";

/// The file and line each exercise's checks point at.
#[derive(Clone, Debug, Default)]
pub struct Places {
    /// Exercise name → the line its first function starts on.
    lines: BTreeMap<&'static str, u32>,
}

impl Places {
    /// Finds, under `workspace`, the line where each exercise's first
    /// function (`pub fn NAME`) starts in its file.
    pub fn read(workspace: &Path) -> Places {
        let lines = EXERCISES
            .iter()
            .filter_map(|e| {
                let function = e.functions.first()?;
                let text = read_bounded(&workspace.join(e.stub()))?;
                let line = line_of(&text, &format!("pub fn {function}"))?;
                Some((e.name, line))
            })
            .collect();
        Places { lines }
    }

    /// The file and line (from 1) that check `name` points at.
    pub fn of(&self, name: &str) -> (String, u32) {
        let exercise = exercise::of_check(name);
        match exercise::file_of(exercise) {
            Some(file) => (file, self.lines.get(exercise).copied().unwrap_or(1)),
            None => (STORIES_FILE.to_string(), 1),
        }
    }
}

/// `path`'s text, if it is UTF-8 and at most [`MAX_BYTES`] long.
fn read_bounded(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    if file.metadata().ok()?.len() > MAX_BYTES {
        return None;
    }
    let mut text = String::new();
    file.take(MAX_BYTES).read_to_string(&mut text).ok()?;
    Some(text)
}

/// The number (from 1) of the first line of `text` that starts with `start`,
/// once indented.
fn line_of(text: &str, start: &str) -> Option<u32> {
    let index = text
        .lines()
        .position(|line| line.trim_start().starts_with(start))?;
    u32::try_from(index + 1).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_function_is_found_on_its_line_and_a_missing_one_points_at_line_1() {
        assert_eq!(
            line_of("//! doc\n\nuse x;\n  pub fn acquire(", "pub fn acquire"),
            Some(4)
        );
        assert_eq!(line_of("fn other()", "pub fn acquire"), None);
        let places = Places::default();
        assert_eq!(
            places.of("acquire::explored"),
            ("exercises/src/acquire.rs".into(), 1)
        );
        assert_eq!(places.of("scenarios::race"), (STORIES_FILE.into(), 1));
    }
}
