//! The pristine course, and the small workspace a submission is built in.
//!
//! A submission is graded with the course's own judge and tests, never with
//! its own: only its `exercises/src/*.rs` are taken. The course is read from
//! git at a commit ([`Pristine::at`]: `git archive`, never the instructor's
//! work tree), once per commit, into the batch's cache.
//!
//! What a submission is built in holds nothing it could use to cheat: a
//! workspace of two members, the learner's `exercises` crate (the pristine
//! manifest and tests, the submission's sources) and the runner
//! (`grader/runner`), with the course's manifest and lock file cut down to
//! them ([`Pristine::build_workspace`]). The grader, its reference solutions
//! and catalogue, the other submissions: none of them is in the folder the
//! build can see, so no `include_str!` or `#[path]` can reach them.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::super::error::CourseError;

/// The largest source file a submission may hand in.
pub const SOURCE_LIMIT: u64 = 256 * 1024;
/// The most files of a submission that are looked at.
pub const FILES_LIMIT: usize = 10_000;
/// The largest file compared with the course's (larger ones are only flagged).
const COMPARED_LIMIT: u64 = 1024 * 1024;

/// The parts of the course the build of a submission needs, besides its
/// sources and the lock file (which [`Pristine::lock`] holds).
const BUILD_PARTS: &[&str] = &["exercises/", "grader/runner/"];

/// The course's tracked files at one commit, extracted once.
pub struct Pristine {
    /// Where the files are, extracted (read only by convention).
    pub root: PathBuf,
    /// The commit they come from.
    pub commit: String,
    /// The tracked files' relative paths.
    pub files: Vec<PathBuf>,
    /// The lock file the build workspace is written with: the course's, until
    /// a first build has cut it down to the build workspace's members.
    pub lock: Vec<u8>,
}

fn git(course: &Path, args: &[&str]) -> Result<Vec<u8>, CourseError> {
    let output = Command::new("git")
        .arg("-C")
        .arg(course)
        .args(args)
        .output()
        .map_err(|source| CourseError::System {
            what: "could not run git (a batch grades with the course as git holds it)",
            source,
        })?;
    if !output.status.success() {
        return Err(CourseError::Usage(format!(
            "`git {}` failed in {}: a batch grades with the course's files at a commit, so it \
             needs the course as a git checkout: {}",
            args.join(" "),
            course.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    Ok(output.stdout)
}

impl Pristine {
    /// The course at `commit` (e.g. `HEAD`), extracted under `cache` unless it is already.
    pub fn at(course: &Path, commit: &str, cache: &Path) -> Result<Pristine, CourseError> {
        let spec = format!("{commit}^{{commit}}");
        let rev = git(course, &["rev-parse", "--verify", "--quiet", &spec])?;
        let rev = String::from_utf8_lossy(&rev).trim().to_string();
        let listed = git(course, &["ls-tree", "-r", "-z", "--name-only", &rev])?;
        let files: Vec<PathBuf> = listed
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
            .collect();
        let root = cache.join(format!("course-{}", &rev[..rev.len().min(12)]));
        let done = root.join(".extracted");
        if !done.exists() {
            let partial = cache.join(format!("course-{}.partial", &rev[..rev.len().min(12)]));
            let _ = fs::remove_dir_all(&partial);
            fs::create_dir_all(&partial).map_err(|source| CourseError::File {
                what: "could not create",
                path: partial.clone(),
                source,
            })?;
            let archive = git(course, &["archive", "--format=tar", &rev])?;
            let mut tar = Command::new("tar")
                .arg("-x")
                .arg("-C")
                .arg(&partial)
                .stdin(std::process::Stdio::piped())
                .spawn()
                .map_err(|source| CourseError::System {
                    what: "could not run tar to extract the course",
                    source,
                })?;
            if let Some(mut stdin) = tar.stdin.take() {
                use std::io::Write;
                let _ = stdin.write_all(&archive);
            }
            let status = tar.wait().map_err(|source| CourseError::System {
                what: "tar did not finish",
                source,
            })?;
            if !status.success() {
                return Err(CourseError::Usage(format!(
                    "tar could not extract the course at {rev} into {}",
                    partial.display()
                )));
            }
            let _ = fs::remove_dir_all(&root);
            fs::rename(&partial, &root).map_err(|source| CourseError::File {
                what: "could not move the extracted course to",
                path: root.clone(),
                source,
            })?;
            fs::write(&done, &rev).map_err(|source| CourseError::File {
                what: "could not write",
                path: done.clone(),
                source,
            })?;
        }
        let lock = fs::read(root.join("Cargo.lock")).unwrap_or_default();
        Ok(Pristine {
            root,
            commit: rev,
            files,
            lock,
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

    /// The size of the pristine `relative`, if the course tracks it.
    fn size(&self, relative: &Path) -> Option<u64> {
        self.files
            .iter()
            .any(|f| f == relative)
            .then(|| fs::metadata(self.root.join(relative)).ok().map(|m| m.len()))
            .flatten()
    }

    /// Writes into `dest` the workspace a submission is built in: the learner's
    /// crate and the runner, and nothing else of the course. Files already
    /// there and unchanged keep their times, so that cargo rebuilds only the
    /// learner's crate from one submission to the next.
    pub fn build_workspace(&self, dest: &Path) -> Result<(), CourseError> {
        let io = |what, path: &Path| {
            let path = path.to_path_buf();
            move |source| CourseError::File { what, path, source }
        };
        let manifest = fs::read_to_string(self.root.join("Cargo.toml"))
            .map_err(io("could not read", &self.root.join("Cargo.toml")))?;
        let lock = String::from_utf8_lossy(&self.lock);
        let manifest = super::manifest::cut_down(&manifest, &lock)?;
        // A workspace made from another commit goes whole: it may hold files this one has not.
        let made_from = dest.join(".course-commit");
        if fs::read_to_string(&made_from).ok().as_deref() != Some(self.commit.as_str()) {
            let _ = fs::remove_dir_all(dest);
            fs::create_dir_all(dest).map_err(io("could not create", dest))?;
            fs::write(&made_from, &self.commit).map_err(io("could not write", &made_from))?;
        }
        write_if_changed(&dest.join("Cargo.toml"), manifest.as_bytes())?;
        write_if_changed(&dest.join("Cargo.lock"), &self.lock)?;
        for relative in &self.files {
            let shown = relative.to_string_lossy();
            if !BUILD_PARTS
                .iter()
                .any(|part| shown == *part || (part.ends_with('/') && shown.starts_with(part)))
            {
                continue;
            }
            let bytes = fs::read(self.root.join(relative))
                .map_err(io("could not read", &self.root.join(relative)))?;
            write_if_changed(&dest.join(relative), &bytes)?;
        }
        // Sources a previous submission added are not the course's.
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

fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<(), CourseError> {
    if fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|source| CourseError::File {
            what: "could not create",
            path: parent.to_path_buf(),
            source,
        })?;
    }
    fs::write(path, bytes).map_err(|source| CourseError::File {
        what: "could not write",
        path: path.to_path_buf(),
        source,
    })
}

/// What a submission holds, compared with the pristine course.
#[derive(Debug, Default)]
pub struct Submission {
    /// Its `exercises/src/*.rs`, by file name.
    pub sources: BTreeMap<String, Vec<u8>>,
    /// Files that differ from the course's (changed, not in the course, too
    /// large to read, or not plain files), relative to the submission's root.
    pub changed: Vec<String>,
}

/// Folders never compared: version control, build output, the built book.
const SKIPPED: &[&str] = &[".git", "target", "book/book", "book/src/quiz"];

impl Submission {
    /// Reads the submission at `dir`: never follows a link, never reads a file
    /// before its size is known to be within bounds.
    pub fn read(dir: &Path, pristine: &Pristine) -> Result<Submission, CourseError> {
        let mut submission = Submission::default();
        let mut stack = vec![PathBuf::new()];
        let mut seen = 0usize;
        while let Some(relative) = stack.pop() {
            let path = dir.join(&relative);
            let entries = fs::read_dir(&path).map_err(|source| CourseError::File {
                what: "could not read",
                path: path.clone(),
                source,
            })?;
            for entry in entries.flatten() {
                seen += 1;
                if seen > FILES_LIMIT {
                    submission.changed.push(format!(
                        "(more than {FILES_LIMIT} files: the rest not read)"
                    ));
                    submission.changed.sort();
                    return Ok(submission);
                }
                let rel = relative.join(entry.file_name());
                let shown = rel.to_string_lossy().into_owned();
                if SKIPPED.contains(&shown.as_str()) {
                    continue;
                }
                // `file_type` does not follow links: a link is flagged, never read.
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_dir() {
                    stack.push(rel);
                    continue;
                }
                let size = if kind.is_file() {
                    entry.metadata().map(|m| m.len()).ok()
                } else {
                    None
                };
                let is_source = rel.parent() == Some(Path::new("exercises/src"))
                    && rel.extension().is_some_and(|e| e == "rs");
                match size {
                    Some(size) if is_source && size <= SOURCE_LIMIT => {
                        if let Ok(bytes) = fs::read(entry.path()) {
                            let name = entry.file_name().to_string_lossy().into_owned();
                            submission.sources.insert(name, bytes);
                        }
                    }
                    Some(size) if is_source => submission.changed.push(format!(
                        "{shown} (too large: {size} bytes, at most {SOURCE_LIMIT}; not graded)"
                    )),
                    Some(size)
                        if size <= COMPARED_LIMIT
                            && pristine.size(&rel) == Some(size)
                            && pristine.content(&rel).as_deref()
                                == fs::read(entry.path()).ok().as_deref() => {}
                    _ => submission.changed.push(shown),
                }
            }
        }
        submission.changed.sort();
        Ok(submission)
    }

    /// Puts the submission's sources into the build workspace at `workspace`,
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
            // Only plain file names: nothing can be written outside the folder.
            if name.contains('/') || name.starts_with('.') {
                continue;
            }
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
