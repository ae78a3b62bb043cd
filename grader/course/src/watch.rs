//! `cargo course`: grade on start and on every save, and show what matters.
//!
//! The loop waits on one channel for four kinds of news: a key, a save
//! under `exercises/src/` (from `notify`, debounced so an editor's several
//! writes make one save), a build that lasts (the first takes over a minute:
//! the screen says what the wait is), and a grading that finished. Grading
//! runs on a thread of its own, one at a time, in passes: after a save of
//! `X.rs`, X's checks first (what the learner is waiting for), then the
//! scenarios, which use the whole lock; after a save of anything else,
//! everything. A save during a grading makes that grading's results stale:
//! they are dropped, and the passes start again on the new code. A compile
//! error is shown as cargo shows it, and the loop goes on waiting for the
//! next save.

use std::collections::VecDeque;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread;
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher};

use super::announce;
use super::board::{self, Board, broken_rule};
use super::error::CourseError;
use super::grade::{self, Options};
use super::open::runs_dir;
use super::progress::Progress;
use super::results::Results;
use super::screen::{self, Mode, Status, View};
use super::slow_build;
use super::terminal::{self, RawKeys};
use grader::exercise::SCENARIOS;
use grader::recording;

/// How long the files must stay quiet after a write before it counts as a
/// save: editors write a file in several steps.
const DEBOUNCE: Duration = Duration::from_millis(150);

/// What the loop waits for.
enum Event {
    /// A key, or `None` when standard input ended.
    Key(Option<u8>),
    /// Files under `exercises/src/` changed.
    Saved(Vec<PathBuf>),
    /// A pass's build has lasted (`true`; see [`slow_build`]), or, after
    /// that, ended (`false`).
    Building {
        /// The save it builds (see [`Loop::generation`]).
        generation: u64,
        /// Whether it is still building.
        building: bool,
    },
    /// A grading pass ended.
    Graded {
        /// The save it graded (see [`Loop::generation`]).
        generation: u64,
        /// What it came to.
        results: Result<Results, CourseError>,
    },
}

/// One grading: the checks whose name contains one of these (all when empty).
type Pass = Vec<String>;

struct Loop {
    root: PathBuf,
    board: Board,
    progress: Progress,
    view: View,
    /// Counts saves (and re-runs): a grading of an older generation is stale.
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
    let (events, inbox) = mpsc::channel();
    let _watcher = watch_sources(&root.join("exercises/src"), events.clone())?;
    let work = grader_thread(grading_options(&root), events.clone());
    let _keys = RawKeys::enter();
    terminal::read_keys(events, Event::Key);

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
    // Clear once; each screen then draws over the last.
    print!("\x1b[2J");
    state.regrade(vec![Vec::new()]);
    state.draw();
    state.serve(&inbox);
    // A grading may still be running: its cargo and test processes go with the loop.
    super::process::stop_all();
    let _ = state.progress.save(&progress_path);
    println!();
    Ok(ExitCode::SUCCESS)
}

impl Loop {
    /// Handles events until the learner quits.
    fn serve(&mut self, inbox: &Receiver<Event>) {
        while let Ok(event) = inbox.recv() {
            match event {
                Event::Key(None | Some(b'q' | 3 | 4)) => return,
                Event::Key(Some(key)) => self.key(key),
                Event::Saved(paths) => {
                    self.view.news.clear();
                    let saved: Vec<&'static str> = paths
                        .iter()
                        .filter_map(|p| p.file_name()?.to_str())
                        .filter_map(board::exercise_of_file)
                        .collect();
                    let everything = saved.is_empty()
                        || paths.iter().any(|p| {
                            p.file_name()
                                .and_then(|n| n.to_str())
                                .and_then(board::exercise_of_file)
                                .is_none()
                        });
                    self.saved = saved.first().copied();
                    if everything {
                        self.regrade(vec![Vec::new()]);
                    } else {
                        let first = saved.iter().map(|x| format!("{x}::")).collect();
                        self.regrade(vec![first, vec![format!("{SCENARIOS}::")]]);
                    }
                }
                Event::Building {
                    generation,
                    building,
                } => {
                    if generation == self.generation {
                        self.view.status = match (&self.view.status, building) {
                            (Status::Grading, true) => Status::Building,
                            (Status::Building, false) => Status::Grading,
                            (other, _) => other.clone(),
                        };
                    }
                }
                Event::Graded {
                    generation,
                    results,
                } => {
                    self.busy = false;
                    if generation == self.generation {
                        self.graded(results);
                    }
                    self.next_pass();
                }
            }
            self.view.height = terminal::height();
            self.draw();
        }
    }

    fn key(&mut self, key: u8) {
        let exercises = self.board.exercises();
        let at = exercises
            .iter()
            .position(|x| *x == self.view.exercise)
            .unwrap_or(0);
        // Another screen starts at its top; j and k move within one.
        if !matches!(key, b'j' | b'k') {
            self.view.scroll = 0;
        }
        match key {
            b'j' if self.more_below => self.view.scroll += 1,
            b'k' => self.view.scroll = self.view.scroll.saturating_sub(1),
            b'h' => self.hint(),
            b'n' => {
                self.view.exercise = exercises[(at + 1).min(exercises.len() - 1)];
                self.view.mode = Mode::Exercise;
            }
            b'p' => {
                self.view.exercise = exercises[at.saturating_sub(1)];
                self.view.mode = Mode::Exercise;
            }
            b'l' => {
                self.view.mode = match self.view.mode {
                    Mode::List => Mode::Exercise,
                    Mode::Exercise => Mode::List,
                }
            }
            b'r' => {
                self.view.news.clear();
                self.regrade(vec![Vec::new()]);
            }
            _ => {}
        }
        self.progress.exercise = Some(self.view.exercise.to_string());
        self.save_progress();
    }

    /// Reveals the next hint for the rule the report in view names.
    fn hint(&mut self) {
        self.view.mode = Mode::Exercise;
        let outcome = self
            .board
            .headline(self.view.exercise)
            .and_then(|e| e.outcome.as_ref());
        let news = match outcome.map(|o| (o, broken_rule(o))) {
            Some((_, Some(rule))) if self.progress.next_hint(rule) => None,
            Some((_, Some(_))) => Some(
                "That was the last hint for this rule: the chapter named above explains it in full."
                    .to_string(),
            ),
            Some((grader::harness::Outcome::NotStarted { .. }, None)) => Some(
                "Nothing is broken yet: the hints come with the first broken rule. Replace the \
                 todo!() and save."
                    .to_string(),
            ),
            Some((_, None)) => Some(
                "This failure is not a broken rule but your code's own: the report says what \
                 it did and what to check."
                    .to_string(),
            ),
            None => Some("No check of this exercise fails: there is no hint to give.".to_string()),
        };
        self.view.news = news.into_iter().collect();
    }

    /// Starts the passes of a new generation; a running pass becomes stale.
    fn regrade(&mut self, passes: Vec<Pass>) {
        self.generation += 1;
        self.passes = passes.into();
        self.view.status = Status::Grading;
        self.next_pass();
    }

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

/// The thread that grades, one pass at a time.
fn grader_thread(options: Options, events: Sender<Event>) -> Sender<(u64, Pass)> {
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

/// Watches `dir` for saves of `.rs` files; each save, once the files are
/// quiet for [`DEBOUNCE`], becomes one [`Event::Saved`].
fn watch_sources(
    dir: &Path,
    events: Sender<Event>,
) -> Result<notify::RecommendedWatcher, CourseError> {
    let (raw, changes) = mpsc::channel::<PathBuf>();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else { return };
        if matches!(event.kind, EventKind::Access(_)) {
            return;
        }
        for path in event.paths {
            if path.extension().is_some_and(|e| e == "rs") {
                let _ = raw.send(path);
            }
        }
    })
    .map_err(|e| watch_error(dir, e))?;
    watcher
        .watch(dir, RecursiveMode::NonRecursive)
        .map_err(|e| watch_error(dir, e))?;
    thread::spawn(move || {
        while let Ok(first) = changes.recv() {
            let mut paths = vec![first];
            while let Ok(more) = changes.recv_timeout(DEBOUNCE) {
                paths.push(more);
            }
            paths.sort();
            paths.dedup();
            if events.send(Event::Saved(paths)).is_err() {
                break;
            }
        }
    });
    Ok(watcher)
}

fn watch_error(dir: &Path, e: notify::Error) -> CourseError {
    CourseError::Usage(format!(
        "cannot watch {} for saves: {e}; grade by hand with `cargo test -p exercises` meanwhile",
        dir.display()
    ))
}
