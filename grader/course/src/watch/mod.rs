//! `cargo course`: grade on start and on every save, and show what matters.
//!
//! The loop waits on one channel for four kinds of news: what the learner
//! does at the terminal (`keys`), a save under `exercises/src/`
//! (`saves`), a build that lasts (the first takes over a minute: the
//! screen says what the wait is), and a grading pass that finished
//! (`passes`: a save's own exercise first, and a save during a grading
//! makes that grading stale). Each piece of news changes the loop's state,
//! the board of results, the learner's progress and what is in view, and the
//! screen is drawn anew from them. A compile error is shown as cargo shows
//! it, and the loop goes on waiting for the next save.

mod keys;
mod passes;
mod saves;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc::{self, Receiver, Sender};

use grader::exercise::SCENARIOS;
use grader::recording;

use super::announce;
use super::board::Board;
use super::error::CourseError;
use super::open::runs_dir;
use super::progress::Progress;
use super::results::Results;
use super::screen::{self, Mode, Status, View};
use super::terminal::{self, Input, RawMode};
use passes::Pass;

/// What the loop waits for.
enum Event {
    /// What the learner did at the terminal.
    Input(Input),
    /// Files under `exercises/src/` changed.
    Saved(Vec<PathBuf>),
    /// A pass's build has lasted (`true`; see [`slow_build`](crate::slow_build)),
    /// or, after that, ended (`false`).
    Building {
        /// The generation it builds (see [`Loop::generation`]).
        generation: u64,
        /// Whether it is still building.
        building: bool,
    },
    /// A grading pass ended.
    Graded {
        /// The generation it graded (see [`Loop::generation`]).
        generation: u64,
        /// What it came to.
        results: Result<Results, CourseError>,
    },
}

struct Loop {
    root: PathBuf,
    board: Board,
    progress: Progress,
    view: View,
    /// Counts saves (and re-runs): a pass of an older generation is stale.
    generation: u64,
    /// The passes still to run for this generation.
    passes: VecDeque<Pass>,
    /// Whether a pass is running.
    busy: bool,
    /// Where the grading thread takes its passes.
    work: Sender<(u64, Pass)>,
    /// The exercise saved last, shown while it has a check that fails.
    saved: Option<&'static str>,
    /// Whether the screen shown has more of its report or list below.
    more_below: bool,
}

/// Runs the loop on the course at `root` until the learner quits.
pub fn run(root: PathBuf) -> Result<ExitCode, CourseError> {
    let progress_path = Progress::path(&root);
    let progress = Progress::load(&progress_path).map_err(|source| CourseError::File {
        what: "could not read your progress from",
        path: progress_path.clone(),
        source,
    })?;
    let raw_mode = RawMode::enter()?;
    let (events, inbox) = mpsc::channel();
    let _watcher = saves::watch(&root.join("exercises/src"), events.clone())?;
    let work = passes::grader_thread(&root, events.clone());
    terminal::read_input(events, Event::Input);

    let board = Board::new();
    let exercise = progress
        .exercise
        .as_deref()
        .and_then(|x| board.exercises().into_iter().find(|e| *e == x))
        .or(board.current())
        .unwrap_or(SCENARIOS);
    let mut state = Loop {
        root,
        board,
        progress,
        view: View {
            exercise,
            mode: Mode::Exercise,
            status: Status::Grading,
            news: Vec::new(),
            kept_run: None,
            height: terminal::height(),
            scroll: 0,
        },
        generation: 0,
        passes: VecDeque::new(),
        busy: false,
        work,
        saved: None,
        more_below: false,
    };
    state.regrade(passes::everything());
    state.draw();
    state.serve(&inbox);
    // A grading may still be running: its cargo and test processes go with the loop.
    super::process::stop_all();
    let _ = state.progress.save(&progress_path);
    drop(raw_mode);
    println!();
    Ok(ExitCode::SUCCESS)
}

impl Loop {
    /// Handles events until the learner quits.
    fn serve(&mut self, inbox: &Receiver<Event>) {
        while let Ok(event) = inbox.recv() {
            match event {
                Event::Input(input) if keys::quits(input) => return,
                Event::Input(Input::Key(key)) => self.key(key),
                Event::Input(Input::Resized(height)) => self.view.height = height,
                Event::Input(_) => {}
                Event::Saved(paths) => self.grade_save(&paths),
                Event::Building {
                    generation,
                    building,
                } => self.building(generation, building),
                Event::Graded {
                    generation,
                    results,
                } => self.pass_ended(generation, results),
            }
            self.draw();
        }
    }

    /// Takes in a pass's results.
    fn graded(&mut self, results: Result<Results, CourseError>) {
        let checks = match results {
            Ok(Results::Graded { checks }) => checks,
            Ok(Results::CompileError { output, .. }) => {
                self.passes.clear();
                self.view.status = Status::CompileError(output);
                return;
            }
            Err(e) => {
                self.passes.clear();
                self.view.status = Status::Trouble(e.to_string());
                return;
            }
        };
        self.view.status = Status::Grading;
        self.board.record(&checks);
        for exercise in self.board.exercises() {
            let done = self.board.tally(exercise).done();
            if done && self.progress.done.insert(exercise.to_string()) {
                self.view
                    .news
                    .push(announce::announce(&self.board, exercise));
            } else if !done && self.board.checks_of(exercise).all(|e| e.outcome.is_some()) {
                self.progress.done.remove(exercise);
            }
        }
        let current = self.board.current().unwrap_or(SCENARIOS);
        self.view.exercise = match self.saved {
            Some(x) if !self.board.tally(x).done() => x,
            _ => current,
        };
        self.view.mode = Mode::Exercise;
        self.progress.exercise = Some(self.view.exercise.to_string());
        self.save_progress();
    }

    fn draw(&mut self) {
        let runs = runs_dir(&self.root);
        self.view.kept_run = self
            .board
            .checks_of(self.view.exercise)
            .find(|e| {
                e.outcome.as_ref().is_some_and(|o| !o.passed())
                    && recording::file(&runs, e.name).exists()
            })
            .map(|e| e.name);
        let screen = screen::draw(&self.board, &self.progress, &self.view);
        self.more_below = screen.contains(screen::MORE_BELOW);
        terminal::show(&screen);
    }

    fn save_progress(&mut self) {
        if let Err(e) = self.progress.save(&Progress::path(&self.root)) {
            self.view.news = vec![format!(
                "Your progress could not be saved in {}: {e}",
                Progress::path(&self.root).display()
            )];
        }
    }
}
