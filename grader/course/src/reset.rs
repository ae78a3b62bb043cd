//! `cargo course reset EXERCISE`: put an exercise's stub back.
//!
//! A learner who wants to start an exercise over gets the stub as the course
//! committed it, from git: the newest committed version of the file that is
//! still a stub (it holds a `todo!(`), so that in a repository where the
//! learner commits their work, their own commits are passed over. The file is
//! only replaced after the learner says yes, since whatever is in it now is
//! lost; the exercise's hints and "done" mark are left as they are.

use std::io::{self, BufRead, Write};
use std::path::Path;
use std::process::{Command, ExitCode};

use super::board;
use super::error::CourseError;
use grader::exercise;

/// Puts the stub of `exercise` back in the course at `root`, asking first
/// unless `yes`.
pub fn run(root: &Path, exercise: &str, yes: bool) -> Result<ExitCode, CourseError> {
    let file = board::exercise_of_file(&format!("{exercise}.rs"))
        .and_then(exercise::file_of)
        .ok_or_else(|| {
            CourseError::Usage(format!(
                "there is no exercise {exercise:?}: the exercises are {}",
                exercise::names()
            ))
        })?;
    let (commit, stub) = committed_stub(root, &file)?;
    let path = root.join(&file);
    let now = std::fs::read_to_string(&path).unwrap_or_default();
    if now == stub {
        println!("{file} is already the stub of commit {commit}: nothing to do.");
        return Ok(ExitCode::SUCCESS);
    }
    if !yes
        && !confirm(&format!(
            "Put {file} back to the stub of commit {commit}? What is in it now is lost. [y/N] "
        ))
    {
        println!("Left {file} as it is.");
        return Ok(ExitCode::SUCCESS);
    }
    std::fs::write(&path, stub).map_err(|source| CourseError::File {
        what: "could not write",
        path: path.clone(),
        source,
    })?;
    println!("{file} is the stub again (from commit {commit}).");
    Ok(ExitCode::SUCCESS)
}

/// The newest committed version of `file` that is still a stub, and its
/// commit (abbreviated).
pub fn committed_stub(root: &Path, file: &str) -> Result<(String, String), CourseError> {
    let log = git(root, &["log", "--format=%h", "--", file])?;
    for commit in log.lines().map(str::trim).filter(|c| !c.is_empty()) {
        let text = git(root, &["show", &format!("{commit}:./{file}")])?;
        if text.contains("todo!(") {
            return Ok((commit.to_string(), text));
        }
    }
    Err(CourseError::Usage(format!(
        "no commit of this repository holds {file} as a stub (with its todo!()): take the file \
         from the course's repository by hand"
    )))
}

fn git(root: &Path, args: &[&str]) -> Result<String, CourseError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .map_err(|source| CourseError::System {
            what: "could not run git (reset takes the stub from git: is git installed?)",
            source,
        })?;
    if !out.status.success() {
        return Err(CourseError::Usage(format!(
            "`git {}` failed: {} (reset needs the course as a git repository)",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Asks `question` and reads a line: true for y or yes.
fn confirm(question: &str) -> bool {
    print!("{question}");
    let _ = io::stdout().flush();
    let mut answer = String::new();
    if io::stdin().lock().read_line(&mut answer).is_err() {
        return false;
    }
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git_ok(root: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(root)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .status();
        assert!(ok.is_ok_and(|s| s.success()), "git {args:?}");
    }

    #[test]
    fn reset_skips_the_learners_own_commits_back_to_the_stub() {
        let root = std::env::temp_dir().join(format!("course-reset-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let file = root.join("exercises/src/release.rs");
        std::fs::create_dir_all(file.parent().expect("a folder")).expect("mkdir");
        git_ok(&root, &["init", "-q"]);
        std::fs::write(&file, "fn release() { todo!(\"write it\") }\n").expect("write");
        git_ok(&root, &["add", "-A"]);
        git_ok(&root, &["commit", "-qm", "the course"]);
        std::fs::write(&file, "fn release() { 1 }\n").expect("write");
        git_ok(&root, &["commit", "-qam", "my solution"]);
        std::fs::write(&file, "fn release() { 2 }\n").expect("write");

        let (_, stub) = committed_stub(&root, "exercises/src/release.rs").expect("a stub");
        assert!(stub.contains("todo!(\"write it\")"), "{stub}");
        run(&root, "release", true).expect("reset runs");
        assert_eq!(std::fs::read_to_string(&file).expect("read"), stub);
        assert!(
            run(&root, "scenarios", true).is_err(),
            "scenarios is no file"
        );
        let _ = std::fs::remove_dir_all(&root);
    }
}
