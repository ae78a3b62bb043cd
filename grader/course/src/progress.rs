//! The learner's progress, in a plain text file the loop resumes from.
//!
//! `cargo course` keeps, in `.course-progress` at the top of the workspace
//! (git-ignored), the exercise on screen, the exercises completed, and how
//! far up its hints each broken rule has been read, so that a learner who
//! comes back tomorrow finds the same exercise and the hints where they left
//! them. A rule is written as the report states it. The file is meant to be
//! read, and may be edited or deleted (which starts over); lines it does not
//! know are kept out of the way, not refused, so a file from another version
//! of the course still loads (rules named as the grader's code names them,
//! `hints ReleaseSparesOthers = 2`, included).
//!
//! ```text
//! # Your progress in the course, kept by `cargo course`. …
//! exercise = release
//! done = token acquire
//! hints for a release must never delete another client's lock = 2
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use grader::verdict::Property;

/// The file's name, at the top of the workspace.
pub const FILE_NAME: &str = ".course-progress";

pub use grader::verdict::HINT_LEVELS;

/// What the file holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// The exercise on screen when the loop last stopped.
    pub exercise: Option<String>,
    /// The exercises whose every check passed.
    pub done: BTreeSet<String>,
    /// The highest hint of each rule read so far (the report shows the
    /// first), by the rule's sentence.
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
            // The value is a word or a number; a rule's sentence, in the key, may hold anything.
            let Some((key, value)) = line.rsplit_once('=') else {
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
                    let rule = rule.trim();
                    let rule = rule.strip_prefix("for ").unwrap_or(rule);
                    if let (Some(p), Ok(n)) = (rule_named(rule.trim()), value.parse::<u8>()) {
                        progress
                            .hints
                            .insert(p.rule().to_string(), n.min(HINT_LEVELS));
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
        if !self.hints.is_empty() {
            out.push_str(&format!(
                "# The hints read for each rule your lock broke (1 to {HINT_LEVELS}; the report shows the first):\n"
            ));
        }
        for (rule, n) in &self.hints {
            out.push_str(&format!("hints for {rule} = {n}\n"));
        }
        out
    }

    /// The highest hint of `rule` read so far: 1, the one its report shows,
    /// until `h` asks for the next.
    pub fn hint_level(&self, rule: Property) -> u8 {
        self.hints.get(rule.rule()).copied().unwrap_or(1).max(1)
    }

    /// Climbs to the next hint of `rule`; false when the last was read already.
    pub fn next_hint(&mut self, rule: Property) -> bool {
        let level = self.hint_level(rule);
        if level >= HINT_LEVELS {
            return false;
        }
        self.hints.insert(rule.rule().to_string(), level + 1);
        true
    }
}

/// The rule called `name` in the file: its sentence, or (in files of earlier
/// versions) its name in the grader's code.
fn rule_named(name: &str) -> Option<Property> {
    let name = name.trim_end_matches('.');
    Property::ALL
        .into_iter()
        .find(|p| p.rule() == name || format!("{p:?}") == name)
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
        let text = progress.render();
        assert!(text.contains("exercise = release\n"), "{text}");
        assert!(text.contains("done = acquire token\n"), "{text}");
        assert!(
            text.contains("hints for a release must never delete another client's lock = 2\n"),
            "the rule as the report states it:\n{text}"
        );
        assert!(!text.contains("ReleaseSparesOthers"), "{text}");
        assert_eq!(Progress::parse(&text), progress);
        // Every rule's sentence reads back, whatever it holds.
        for rule in Property::ALL {
            let mut one = Progress::default();
            assert!(one.next_hint(rule));
            assert_eq!(
                Progress::parse(&one.render()).hint_level(rule),
                2,
                "{rule:?}"
            );
        }
    }

    #[test]
    fn hints_climb_from_the_reports_to_the_last_and_stop() {
        let mut progress = Progress::default();
        assert_eq!(progress.hint_level(Property::LockHasTtl), 1, "the report's");
        for level in 2..=HINT_LEVELS {
            assert!(progress.next_hint(Property::LockHasTtl));
            assert_eq!(progress.hint_level(Property::LockHasTtl), level);
        }
        assert!(!progress.next_hint(Property::LockHasTtl));
        assert_eq!(progress.hint_level(Property::LockHasTtl), HINT_LEVELS);
        assert_eq!(progress.hint_level(Property::OneWinner), 1);
    }

    #[test]
    fn a_file_of_an_earlier_version_still_loads() {
        // As the loop wrote it before rules were written as sentences.
        let old = "# Your progress in the course, kept by `cargo course`.\n\
                   exercise = release\n\
                   done = token acquire\n\
                   hints ReleaseSparesOthers = 2\n\
                   hints TokensUnguessable = 3\n";
        let progress = Progress::parse(old);
        assert_eq!(progress.exercise.as_deref(), Some("release"));
        assert_eq!(progress.hint_level(Property::ReleaseSparesOthers), 2);
        assert_eq!(progress.hint_level(Property::TokensUnguessable), 3);
        let text = progress.render();
        assert!(
            text.contains("hints for a token must carry 120 random bits or more = 3\n"),
            "written back in the new words:\n{text}"
        );
    }

    #[test]
    fn unknown_lines_and_rules_are_skipped() {
        let progress = Progress::parse(
            "colour = blue\nhints NoSuchRule = 2\nhints OneWinner = 9\nexercise = fencing\n",
        );
        assert_eq!(progress.exercise.as_deref(), Some("fencing"));
        assert_eq!(progress.hint_level(Property::OneWinner), HINT_LEVELS);
        assert_eq!(progress.render().matches("\nhints ").count(), 1);
    }

    #[test]
    fn a_missing_file_is_a_fresh_start() {
        let path = std::env::temp_dir().join(format!("no-progress-{}", std::process::id()));
        assert_eq!(Progress::load(&path).ok(), Some(Progress::default()));
    }
}
