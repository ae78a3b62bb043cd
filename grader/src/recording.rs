//! Keeping a failed scenario's run on disk, for the book's player.
//!
//! A report shows a failed scenario as text, cut around the moment it broke.
//! The book's player can step through the whole run second by second, with
//! the commands of each second as a message diagram, if it has the run as a
//! timeline file. So when a scenario check fails in a process of the
//! harness, its run is written to `target/course/runs/CHECK.json` (the same
//! JSON as `book/timelines/`), and `cargo course open` shows it in the
//! player. A check that passes, or whose function is still a stub, removes
//! its file, so that what is there is always the latest failure. Only the
//! scenario checks play a whole story; the other checks call one function
//! and show the commands it sent, and have no run to keep.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::timeline::Timeline;

/// The environment variable that says where runs are kept. Unset, the harness
/// sets it for each check's process to `course/runs` of the target directory
/// it was built in ([`beside`]), and a check run any other way keeps none.
pub const RUNS_DIR_VAR: &str = "GRADER_RUNS_DIR";

/// The folder of kept runs inside a target directory.
pub const RUNS_SUBDIR: &str = "course/runs";

/// The file that keeps `check`'s run inside `dir`: `release.slow_job.json`
/// for `release::slow_job`.
pub fn file(dir: &Path, check: &str) -> PathBuf {
    dir.join(format!("{}.json", check.replace("::", ".")))
}

/// The check a kept run's file belongs to: `release::slow_job` for
/// `release.slow_job.json`.
pub fn check_of(file: &Path) -> Option<String> {
    let stem = file.file_stem()?.to_str()?;
    let (exercise, check) = stem.split_once('.')?;
    Some(format!("{exercise}::{check}"))
}

/// Keeps `run` as the latest failed run of `check`, or, with `None`, forgets
/// the check's last one. Writing is a courtesy to the learner: a run that
/// cannot be kept does not change the verdict, so errors are dropped here.
pub fn keep(check: &str, run: Option<&Timeline>) {
    let Some(dir) = dir() else {
        return;
    };
    let _ = write(&dir, check, run);
}

fn write(dir: &Path, check: &str, run: Option<&Timeline>) -> io::Result<()> {
    let path = file(dir, check);
    match run {
        Some(timeline) => {
            fs::create_dir_all(dir)?;
            let json = serde_json::to_string_pretty(timeline).map_err(io::Error::other)?;
            // Written aside and renamed, so a reader never sees half a file.
            let partial = path.with_extension("json.partial");
            fs::write(&partial, json + "\n")?;
            fs::rename(&partial, &path)
        }
        None => match fs::remove_file(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        },
    }
}

/// Where runs are kept in this process, if anywhere: only where
/// [`RUNS_DIR_VAR`] says, so that a check run any other way keeps none.
fn dir() -> Option<PathBuf> {
    let dir = std::env::var_os(RUNS_DIR_VAR)?;
    (!dir.is_empty()).then(|| PathBuf::from(dir))
}

/// Where the checks of the program `exe` keep their runs when
/// [`RUNS_DIR_VAR`] is not set: `course/runs` of the target directory it was
/// built in. The harness hands this to each check's process.
pub fn beside(exe: &Path) -> Option<PathBuf> {
    // The judge lives in TARGET/PROFILE/, a test binary (the grader's own
    // tests) in TARGET/PROFILE/deps/.
    let mut profile = exe.parent()?;
    if profile.file_name().is_some_and(|name| name == "deps") {
        profile = profile.parent()?;
    }
    Some(profile.parent()?.join(RUNS_SUBDIR))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_and_its_file_name_each_other() {
        let path = file(Path::new("runs"), "scenarios::gc_pause");
        assert_eq!(path, Path::new("runs/scenarios.gc_pause.json"));
        assert_eq!(check_of(&path).as_deref(), Some("scenarios::gc_pause"));
        assert_eq!(check_of(Path::new("runs/notes.json")), None);
    }

    #[test]
    fn a_kept_run_is_written_whole_and_forgotten_on_a_pass() {
        let dir = std::env::temp_dir().join(format!("grader-runs-{}", std::process::id()));
        let sample: Timeline = serde_json::from_str(include_str!("../../book/timelines/race.json"))
            .expect("the book's race timeline reads back");
        write(&dir, "scenarios::race", Some(&sample)).expect("the run is written");
        let kept = fs::read_to_string(file(&dir, "scenarios::race")).expect("the file is there");
        let back: Timeline = serde_json::from_str(&kept).expect("the kept run reads back");
        assert_eq!(back, sample);
        write(&dir, "scenarios::race", None).expect("the run is forgotten");
        assert!(!file(&dir, "scenarios::race").exists());
        write(&dir, "scenarios::race", None).expect("forgetting twice is fine");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_program_keeps_its_runs_in_the_target_directory_it_was_built_in() {
        let runs = Path::new("target/course/runs");
        assert_eq!(
            beside(Path::new("target/debug/judge")).as_deref(),
            Some(runs)
        );
        assert_eq!(
            beside(Path::new("target/debug/deps/harness-1f2e")).as_deref(),
            Some(runs)
        );
        assert_eq!(
            beside(Path::new("target/judge/course")).as_deref(),
            Some(runs)
        );
    }
}
