//! The pristine course, and scratch copies of it to grade submissions in.
//!
//! A submission is graded with the course's own grader and tests, never with
//! its own: only its `exercises/src/*.rs` are taken, into a scratch copy of
//! the course's tracked files. Each worker of a batch has one scratch copy
//! and one cargo target directory of its own, kept under
//! `target/course-batch/` between runs: cargo names a member's build by its
//! path inside the workspace, so two copies sharing a target directory would
//! link each other's code. The copies keep the files' modification times,
//! so after the first batch a submission costs the build of the `exercises`
//! crate only, not of the grader.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::super::error::CourseError;

/// The course's tracked files, by path relative to its root.
pub struct Pristine {
    /// The course's root.
    pub root: PathBuf,
    /// The tracked files' relative paths.
    pub files: Vec<PathBuf>,
}

impl Pristine {
    /// The tracked files of the course at `root` (`git ls-files`).
    pub fn of(root: &Path) -> Result<Pristine, CourseError> {
        let output = Command::new("git")
            .arg("-C")
            .arg(root)
            .args(["ls-files", "-z"])
            .output()
            .map_err(|source| CourseError::System {
                what: "could not run git to list the course's files (batch needs git)",
                source,
            })?;
        if !output.status.success() {
            return Err(CourseError::Usage(format!(
                "`git ls-files` failed in {}: batch grades with the course's tracked files, so \
                 it needs the course as a git checkout: {}",
                root.display(),
                String::from_utf8_lossy(&output.stderr).trim()
            )));
        }
        let files = output
            .stdout
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
            // A tracked file deleted in the work tree is not part of the course.
            .filter(|p| root.join(p).is_file())
            .collect();
        Ok(Pristine {
            root: root.to_path_buf(),
            files,
        })
    }

    /// The pristine content of `relative`, if the course tracks it.
    pub fn content(&self, relative: &Path) -> Option<Vec<u8>> {
        self.files
            .iter()
            .any(|f| f == relative)
            .then(|| fs::read(self.root.join(relative)).ok())
            .flatten()
    }

    /// Copies the tracked files into `dest`, keeping their modification times,
    /// and removes files there that the course does not track (a previous
    /// submission's extra source files).
    pub fn copy_to(&self, dest: &Path) -> Result<(), CourseError> {
        let io = |what, path: &Path| {
            let path = path.to_path_buf();
            move |source| CourseError::File { what, path, source }
        };
        for relative in &self.files {
            let from = self.root.join(relative);
            let to = dest.join(relative);
            if let Some(parent) = to.parent() {
                fs::create_dir_all(parent).map_err(io("could not create", parent))?;
            }
            let meta = fs::metadata(&from).map_err(io("could not read", &from))?;
            let same = fs::metadata(&to)
                .is_ok_and(|m| m.len() == meta.len() && m.modified().ok() == meta.modified().ok());
            if same {
                continue;
            }
            fs::copy(&from, &to).map_err(io("could not copy to", &to))?;
            if let Ok(modified) = meta.modified() {
                let file = fs::File::options().write(true).open(&to);
                let _ = file.and_then(|f| f.set_modified(modified));
            }
        }
        let src = dest.join("exercises/src");
        for entry in fs::read_dir(&src)
            .map_err(io("could not read", &src))?
            .flatten()
        {
            let relative = Path::new("exercises/src").join(entry.file_name());
            if !self.files.contains(&relative) {
                let _ = fs::remove_file(entry.path());
            }
        }
        Ok(())
    }
}

/// What a submission holds, compared with the pristine course.
#[derive(Debug, Default)]
pub struct Submission {
    /// Its `exercises/src/*.rs`, by file name.
    pub sources: BTreeMap<String, Vec<u8>>,
    /// Files that differ from the course's (changed, or not in the course),
    /// relative to the submission's root.
    pub changed: Vec<String>,
}

/// Folders never compared: version control, build output, the built book.
const SKIPPED: &[&str] = &[".git", "target", "book/book", "book/src/quiz"];

impl Submission {
    /// Reads the submission at `dir`.
    pub fn read(dir: &Path, pristine: &Pristine) -> Result<Submission, CourseError> {
        let mut submission = Submission::default();
        let mut stack = vec![PathBuf::new()];
        while let Some(relative) = stack.pop() {
            let path = dir.join(&relative);
            let entries = fs::read_dir(&path).map_err(|source| CourseError::File {
                what: "could not read",
                path: path.clone(),
                source,
            })?;
            for entry in entries.flatten() {
                let rel = relative.join(entry.file_name());
                let shown = rel.to_string_lossy().into_owned();
                if SKIPPED.contains(&shown.as_str()) {
                    continue;
                }
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_dir() {
                    stack.push(rel);
                    continue;
                }
                // A link could point anywhere: it is never followed, only flagged.
                let bytes = if kind.is_file() {
                    fs::read(entry.path()).ok()
                } else {
                    None
                };
                let is_source = rel.parent() == Some(Path::new("exercises/src"))
                    && rel.extension().is_some_and(|e| e == "rs");
                match bytes {
                    Some(bytes) if is_source => {
                        let name = entry.file_name().to_string_lossy().into_owned();
                        submission.sources.insert(name, bytes);
                    }
                    Some(bytes) if pristine.content(&rel).as_deref() == Some(&bytes[..]) => {}
                    _ => submission.changed.push(shown),
                }
            }
        }
        submission.changed.sort();
        Ok(submission)
    }

    /// Puts the submission's sources into the scratch copy at `workspace`,
    /// over the pristine stubs, and marks every source of the crate as new:
    /// a stub put back with its old time would otherwise look unchanged to
    /// cargo, which would then link the previous submission's build.
    pub fn install(&self, workspace: &Path) -> Result<(), CourseError> {
        let src = workspace.join("exercises/src");
        let failed = |path: &Path| {
            let path = path.to_path_buf();
            move |source| CourseError::File {
                what: "could not write",
                path,
                source,
            }
        };
        for (name, bytes) in &self.sources {
            let to = src.join(name);
            fs::write(&to, bytes).map_err(failed(&to))?;
        }
        let now = std::time::SystemTime::now();
        for entry in fs::read_dir(&src).map_err(failed(&src))?.flatten() {
            let file = fs::File::options().write(true).open(entry.path());
            file.and_then(|f| f.set_modified(now))
                .map_err(failed(&entry.path()))?;
        }
        Ok(())
    }
}
