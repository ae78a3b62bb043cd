//! The learner's progress, in a plain text file the loop resumes from.
//!
//! `cargo course` keeps, in `.course-progress` at the top of the workspace
//! (git-ignored), the exercise on screen, the exercises completed, and how
//! many hints of each broken rule have been shown, so that a learner who
//! comes back tomorrow finds the same exercise and is not shown the first
//! hint again. The file is meant to be read, and may be edited or deleted
//! (which starts over); lines it does not know are kept out of the way, not
//! refused, so a file from another version of the course still loads.
//!
//! ```text
//! # Your progress in the course, kept by `cargo course`. Delete this file to start over.
//! exercise = release
//! done = token acquire
//! hints ReleaseSparesOthers = 2
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::verdict::Property;

/// The file's name, at the top of the workspace.
pub const FILE_NAME: &str = ".course-progress";

/// The most hints a rule has.
pub const HINT_LEVELS: u8 = 3;

/// What the file holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// The exercise on screen when the loop last stopped.
    pub exercise: Option<String>,
    /// The exercises whose every check passed.
    pub done: BTreeSet<String>,
    /// How many hints of each rule were shown, by the rule's name.
    hints: BTreeMap<String, u8>,
}

impl Progress {
    /// The progress file of the workspace at `root`.
    pub fn path(root: &Path) -> PathBuf {
        root.join(FILE_NAME)
    }

    /// Reads the file at `path`; a missing file is a fresh start.
    pub fn load(path: &Path) -> io::Result<Progress> {
        match fs::read_to_string(path) {
            Ok(text) => Ok(Progress::parse(&text)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Progress::default()),
            Err(e) => Err(e),
        }
    }

    /// Writes the file at `path`.
    pub fn save(&self, path: &Path) -> io::Result<()> {
        let partial = path.with_extension("partial");
        fs::write(&partial, self.render())?;
        fs::rename(&partial, path)
    }

    /// Reads the file's text; lines it does not know are skipped.
    pub fn parse(text: &str) -> Progress {
        let mut progress = Progress::default();
        for line in text.lines().map(str::trim) {
            if line.starts_with('#') {
                continue;
            }
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            let (key, value) = (key.trim(), value.trim());
            match key.split_once(' ') {
                None if key == "exercise" && !value.is_empty() => {
                    progress.exercise = Some(value.to_string());
                }
                None if key == "done" => {
                    progress.done = value.split_whitespace().map(str::to_string).collect();
                }
                Some(("hints", rule)) => {
                    if let (Some(p), Ok(n)) = (rule_named(rule.trim()), value.parse::<u8>()) {
                        progress.hints.insert(format!("{p:?}"), n.min(HINT_LEVELS));
                    }
                }
                _ => {}
            }
        }
        progress
    }

    /// The file's text.
    pub fn render(&self) -> String {
        let mut out = String::from(
            "# Your progress in the course, kept by `cargo course`. Plain text: you may edit it,\n\
             # or delete it to start over (your code is not touched).\n",
        );
        if let Some(exercise) = &self.exercise {
            out.push_str(&format!("exercise = {exercise}\n"));
        }
        let done: Vec<&str> = self.done.iter().map(String::as_str).collect();
        out.push_str(&format!("done = {}\n", done.join(" ")));
        for (rule, n) in &self.hints {
            out.push_str(&format!("hints {rule} = {n}\n"));
        }
        out
    }

    /// How many hints of `rule` were shown.
    pub fn hints_shown(&self, rule: Property) -> u8 {
        self.hints.get(&format!("{rule:?}")).copied().unwrap_or(0)
    }

    /// Shows one more hint of `rule`; false when all were shown already.
    pub fn next_hint(&mut self, rule: Property) -> bool {
        let shown = self.hints.entry(format!("{rule:?}")).or_insert(0);
        if *shown >= HINT_LEVELS {
            return false;
        }
        *shown += 1;
        true
    }
}

/// The rule called `name` in the file (its name in the grader's code).
fn rule_named(name: &str) -> Option<Property> {
    Property::ALL.into_iter().find(|p| format!("{p:?}") == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_reads_back_what_it_wrote() {
        let mut progress = Progress {
            exercise: Some("release".into()),
            done: ["token".to_string(), "acquire".to_string()].into(),
            ..Progress::default()
        };
        assert!(progress.next_hint(Property::ReleaseSparesOthers));
        assert!(progress.next_hint(Property::ReleaseSparesOthers));
        let text = progress.render();
        assert!(text.contains("exercise = release\n"), "{text}");
        assert!(text.contains("done = acquire token\n"), "{text}");
        assert!(text.contains("hints ReleaseSparesOthers = 2\n"), "{text}");
        assert_eq!(Progress::parse(&text), progress);
    }

    #[test]
    fn hints_stop_at_the_last_level() {
        let mut progress = Progress::default();
        for _ in 0..HINT_LEVELS {
            assert!(progress.next_hint(Property::LockHasTtl));
        }
        assert!(!progress.next_hint(Property::LockHasTtl));
        assert_eq!(progress.hints_shown(Property::LockHasTtl), HINT_LEVELS);
        assert_eq!(progress.hints_shown(Property::OneWinner), 0);
    }

    #[test]
    fn unknown_lines_and_rules_are_skipped() {
        let progress = Progress::parse(
            "colour = blue\nhints NoSuchRule = 2\nhints OneWinner = 9\nexercise = fencing\n",
        );
        assert_eq!(progress.exercise.as_deref(), Some("fencing"));
        assert_eq!(progress.hints_shown(Property::OneWinner), HINT_LEVELS);
        assert_eq!(progress.render().matches("hints").count(), 1);
    }

    #[test]
    fn a_missing_file_is_a_fresh_start() {
        let path = std::env::temp_dir().join(format!("no-progress-{}", std::process::id()));
        assert_eq!(Progress::load(&path).ok(), Some(Progress::default()));
    }
}
