//! Grading in passes, one at a time, on a thread of its own.
//!
//! A save is graded in passes, so that what the learner waits for comes
//! first: after a save of `X.rs`, X's checks, then the scenarios, which use
//! the whole lock; after a save of anything else, everything ([`after_save`]).
//! Each save (or re-run) starts a new generation: the passes still to run
//! are replaced, and the results of the pass running then, when they come,
//! are stale and dropped. A compile error drops the passes left: they would
//! fail the same way. The thread that grades tells the loop when a build
//! lasts and when a pass has ended ([`Event::Building`], [`Event::Graded`]).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Sender};
use std::thread;

use grader::exercise::SCENARIOS;
use grader::recording;

use super::{Event, Loop};
use crate::board;
use crate::error::CourseError;
use crate::grade::{self, Options};
use crate::open::runs_dir;
use crate::results::Results;
use crate::screen::Status;
use crate::slow_build;

/// One grading: the checks whose name contains one of these (all when empty).
pub(super) type Pass = Vec<String>;

/// Grades everything in one pass.
pub(super) fn everything() -> Vec<Pass> {
    vec![Vec::new()]
}

/// What a save of `paths` grades, and the exercise saved first, if one was:
/// the saved exercises' checks, then the scenarios; everything when a file
/// that is no exercise's was saved too.
fn after_save(paths: &[PathBuf]) -> (Option<&'static str>, Vec<Pass>) {
    let exercises: Vec<Option<&'static str>> = paths
        .iter()
        .map(|p| p.file_name()?.to_str().and_then(board::exercise_of_file))
        .collect();
    let saved: Vec<&'static str> = exercises.iter().flatten().copied().collect();
    if saved.is_empty() || exercises.contains(&None) {
        return (saved.first().copied(), everything());
    }
    let first = saved.iter().map(|x| format!("{x}::")).collect();
    (
        saved.first().copied(),
        vec![first, vec![format!("{SCENARIOS}::")]],
    )
}

impl Loop {
    /// Grades a save of `paths`.
    pub(super) fn grade_save(&mut self, paths: &[PathBuf]) {
        self.view.news.clear();
        let (saved, passes) = after_save(paths);
        self.saved = saved;
        self.regrade(passes);
    }

    /// Starts the passes of a new generation; a running pass becomes stale.
    pub(super) fn regrade(&mut self, passes: Vec<Pass>) {
        self.generation += 1;
        self.passes = passes.into();
        self.view.status = Status::Grading;
        self.next_pass();
    }

    /// The build of a pass of `generation` has lasted (`building`), or
    /// ended after lasting: the screen says which while it is current.
    pub(super) fn building(&mut self, generation: u64, building: bool) {
        if generation == self.generation {
            self.view.status = match (&self.view.status, building) {
                (Status::Grading, true) => Status::Building,
                (Status::Building, false) => Status::Grading,
                (other, _) => other.clone(),
            };
        }
    }

    /// A pass of `generation` ended: its results are taken in unless stale,
    /// and the next pass starts.
    pub(super) fn pass_ended(&mut self, generation: u64, results: Result<Results, CourseError>) {
        self.busy = false;
        if generation == self.generation {
            self.graded(results);
        }
        self.next_pass();
    }

    /// Starts the next pass, unless one is running; says "watching" when
    /// none is left.
    fn next_pass(&mut self) {
        if self.busy {
            return;
        }
        match self.passes.pop_front() {
            Some(pass) => {
                self.busy = self.work.send((self.generation, pass)).is_ok();
                self.view.status = Status::Grading;
            }
            None if self.view.status == Status::Grading => self.view.status = Status::Watching,
            None => {}
        }
    }
}

/// How the loop grades: in colour when the screen is a terminal, keeping
/// failed runs for the player.
fn grading_options(root: &Path) -> Options {
    let mut options = Options::new(root);
    options.color = std::io::stdout().is_terminal();
    options.env.push((
        recording::RUNS_DIR_VAR.to_string(),
        runs_dir(root).display().to_string(),
    ));
    options
}

/// Starts the thread that grades the course at `root`, one pass at a time,
/// telling `events` how each goes; passes are sent to it with their
/// generation.
pub(super) fn grader_thread(root: &Path, events: Sender<Event>) -> Sender<(u64, Pass)> {
    let options = grading_options(root);
    let (work, passes) = mpsc::channel::<(u64, Pass)>();
    thread::spawn(move || {
        for (generation, filters) in passes {
            let mut options = options.clone();
            options.filters = filters;
            let told = events.clone();
            let built = slow_build::watch(slow_build::SLOW_BUILD, move |building| {
                let _ = told.send(Event::Building {
                    generation,
                    building,
                });
            });
            let results = grade::run_noting_build(&options, move || {
                let _ = built.send(());
            });
            if events
                .send(Event::Graded {
                    generation,
                    results,
                })
                .is_err()
            {
                break;
            }
        }
    });
    work
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saved(names: &[&str]) -> (Option<&'static str>, Vec<Pass>) {
        let paths: Vec<PathBuf> = names
            .iter()
            .map(|n| Path::new("exercises/src").join(n))
            .collect();
        after_save(&paths)
    }

    #[test]
    fn a_saved_exercise_is_graded_first_then_the_scenarios() {
        assert_eq!(
            saved(&["release.rs", "acquire.rs"]),
            (
                Some("release"),
                vec![
                    vec!["release::".to_string(), "acquire::".to_string()],
                    vec![format!("{SCENARIOS}::")]
                ]
            )
        );
    }

    #[test]
    fn a_file_of_no_exercise_grades_everything() {
        assert_eq!(saved(&["lib.rs"]), (None, everything()));
        assert_eq!(
            saved(&["token.rs", "lib.rs"]),
            (Some("token"), everything()),
            "lib.rs may change what every exercise does"
        );
    }
}
