//! What the watch loop shows, as plain text.
//!
//! One screen at a time, drawn from the [`Board`] and the learner's
//! [`Progress`]: the course's progress as a bar (one cell per check, the
//! exercises set apart), then only the exercise in view, its checks, the one
//! report that matters most and the hints revealed so far, and the keys. A
//! compile error replaces the exercise with cargo's own text. Everything is a
//! pure function of its inputs, so a test can read the screen without a
//! terminal, and the same state always draws the same screen.

use grader::exercise;
use grader::harness::{Outcome, groups};

use super::board::{Board, Entry, broken_rule};
use super::progress::{HINT_LEVELS, Progress};

/// How wide a line of check marks grows before the next begins.
const MARKS_WIDTH: usize = 100;

/// The keys, as the last line shows them.
pub const KEYS: &str =
    "h hint · n/p next/previous exercise · l list · j/k scroll · r re-run · q quit";

/// How a screen says that more of its report or list is below: `j` moves
/// on only then.
pub const MORE_BELOW: &str = "more lines: j scrolls down";

/// What the loop is doing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Waiting for a save.
    Watching,
    /// A grading is running.
    Grading,
    /// A grading is running, and its build of the learner's code has taken
    /// more than a moment (the first build, or one after cargo's cache went).
    Building,
    /// The last build failed: cargo's text.
    CompileError(String),
    /// The grader itself could not grade: what it said.
    Trouble(String),
}

/// Which screen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One exercise.
    Exercise,
    /// Every check of every exercise.
    List,
}

/// Everything a screen is drawn from besides the board and the progress.
#[derive(Clone, Debug)]
pub struct View {
    /// The exercise in view.
    pub exercise: &'static str,
    /// Which screen.
    pub mode: Mode,
    /// What the loop is doing.
    pub status: Status,
    /// A line of news for the learner, e.g. an exercise just completed.
    pub news: Vec<String>,
    /// The first check of the exercise whose failed run is kept for the player.
    pub kept_run: Option<&'static str>,
    /// The terminal's height in lines, when known: a long report or list is
    /// shown a screenful at a time.
    pub height: Option<usize>,
    /// How many lines of the report or list are scrolled past (`j`/`k`).
    pub scroll: usize,
}

/// Draws the screen.
pub fn draw(board: &Board, progress: &Progress, view: &View) -> String {
    let mut top = vec![title(view), bar(board), tallies(board), String::new()];
    for line in &view.news {
        top.push(line.clone());
    }
    if !view.news.is_empty() {
        top.push(String::new());
    }
    let footer = vec![String::new(), KEYS.to_string()];
    let (head, report, tail) = match (&view.status, view.mode) {
        (Status::CompileError(output), _) => (
            vec![
                "Your code does not compile; cargo says:".to_string(),
                String::new(),
            ],
            output.lines().map(str::to_string).collect(),
            vec![
                String::new(),
                "Save the file again when it is fixed.".to_string(),
            ],
        ),
        (Status::Trouble(what), _) => (
            vec!["The grader could not grade:".to_string(), String::new()],
            what.lines().map(str::to_string).collect(),
            vec![String::new(), "r grades again.".to_string()],
        ),
        (_, Mode::List) => (Vec::new(), list(board), Vec::new()),
        (_, Mode::Exercise) => exercise(board, progress, view),
    };
    let mut lines = top;
    lines.extend(head);
    let fixed = lines.len() + tail.len() + footer.len();
    // A check's report can also be read whole from cargo test; a list or cargo's text cannot.
    let whole = match (&view.status, view.mode) {
        (Status::Watching | Status::Grading | Status::Building, Mode::Exercise) => {
            " (or run the check with cargo test -p exercises)"
        }
        _ => "",
    };
    lines.extend(fit(
        report,
        view.height.map(|h| h.saturating_sub(fixed)),
        view.scroll,
        whole,
    ));
    lines.extend(tail);
    lines.extend(footer);
    lines.join("\n")
}

fn title(view: &View) -> String {
    let doing = match view.status {
        Status::Grading => "grading…",
        Status::Building => "building your code…",
        Status::Watching => "watching exercises/src for saves",
        Status::CompileError(_) => "does not compile",
        Status::Trouble(_) => "could not grade",
    };
    format!("cargo course · Distributed Locks with Redis · {doing}")
}

/// One cell per check: █ passed, ░ not yet; the exercises set apart by │.
fn bar(board: &Board) -> String {
    let cells: Vec<String> = board
        .exercises()
        .into_iter()
        .map(|x| {
            let t = board.tally(x);
            "█".repeat(t.passed) + &"░".repeat(t.total - t.passed)
        })
        .collect();
    let (passed, total) = board.exercises().into_iter().fold((0, 0), |(p, n), x| {
        let t = board.tally(x);
        (p + t.passed, n + t.total)
    });
    format!("[{}]  {passed}/{total} checks pass", cells.join("│"))
}

fn tallies(board: &Board) -> String {
    let parts: Vec<String> = board
        .exercises()
        .into_iter()
        .map(|x| {
            let t = board.tally(x);
            if t.done() {
                format!("{x} ✓")
            } else {
                format!("{x} {}/{}", t.passed, t.total)
            }
        })
        .collect();
    parts.join("   ")
}

/// ✓ passed, ✗ failed, · not started, … not graded yet.
fn mark(entry: &Entry) -> &'static str {
    match &entry.outcome {
        None => "…",
        Some(Outcome::Passed) => "✓",
        Some(Outcome::NotStarted { .. }) => "·",
        Some(_) => "✗",
    }
}

fn short(name: &str) -> &str {
    name.split_once("::").map_or(name, |(_, check)| check)
}

fn list(board: &Board) -> Vec<String> {
    let mut out = vec!["Every check (✓ passes, ✗ fails, · not started, … not graded yet):".into()];
    for exercise in board.exercises() {
        let t = board.tally(exercise);
        let outcomes: Option<Vec<&Outcome>> = board
            .checks_of(exercise)
            .map(|e| e.outcome.as_ref())
            .collect();
        if outcomes.is_some_and(groups::untouched) {
            out.push(format!("  {}", groups::untouched_line(exercise, t.total)));
            continue;
        }
        let file = exercise::file_of(exercise).unwrap_or_else(|| "your whole lock".into());
        out.push(format!("  {exercise} ({file}): {}/{}", t.passed, t.total));
        for entry in board.checks_of(exercise) {
            out.push(format!("      {} {}", mark(entry), short(entry.name)));
        }
    }
    out.push(String::new());
    out.push("l goes back.".into());
    out
}

/// The exercise in view: its header and checks, the report, the hints.
fn exercise(
    board: &Board,
    progress: &Progress,
    view: &View,
) -> (Vec<String>, Vec<String>, Vec<String>) {
    let x = view.exercise;
    let t = board.tally(x);
    let place =
        exercise::file_of(x).unwrap_or_else(|| "the book's stories, with your whole lock".into());
    let mut head = vec![
        format!("▶ {x} · {place} · {} of {} checks pass", t.passed, t.total),
        format!("  Read: chapter {}", exercise::chapter_of(x).line()),
        String::new(),
    ];
    // The checks, a few to a line.
    let mut line = String::new();
    for entry in board.checks_of(x) {
        let item = format!("{} {}", mark(entry), short(entry.name));
        if !line.is_empty() && line.chars().count() + item.chars().count() > MARKS_WIDTH {
            head.push(std::mem::take(&mut line));
        }
        line = if line.is_empty() {
            format!("  {item}")
        } else {
            format!("{line}   {item}")
        };
    }
    head.push(line);
    head.push(String::new());
    let mut tail = Vec::new();
    let Some(headline) = board.headline(x) else {
        let line = if t.done() {
            format!("✓ Every check of {x} passes.")
        } else if view.status == Status::Building {
            format!(
                "Building your code, then grading (the first build: {} on two cores)…",
                super::grade::FIRST_BUILD
            )
        } else {
            "Grading…".to_string()
        };
        return (head, vec![line], tail);
    };
    let Some(outcome) = &headline.outcome else {
        return (head, Vec::new(), tail);
    };
    let report: Vec<String> = super::results::message(headline.name, outcome)
        .lines()
        .map(str::to_string)
        .collect();
    if let Some(check) = view.kept_run {
        tail.push(String::new());
        tail.push(format!(
            "Step through the failed run of {check} second by second in the book's player: \
             cargo course open {check}"
        ));
    }
    match broken_rule(outcome) {
        Some(rule) => {
            // The report holds hint 1; those above it that `h` revealed follow, in order.
            let level = progress.hint_level(rule);
            let levels = rule.hint_levels();
            if level > 1 {
                tail.push(String::new());
            }
            for (i, hint) in levels.iter().enumerate().take(usize::from(level)).skip(1) {
                tail.push(format!("Hint {} of {HINT_LEVELS}: {hint}", i + 1));
            }
            if level < HINT_LEVELS {
                tail.push(String::new());
                tail.push(format!(
                    "h shows hint {} of {HINT_LEVELS} for this rule.",
                    level + 1
                ));
            }
        }
        None if matches!(outcome, Outcome::NotStarted { .. }) => {
            tail.push(String::new());
            tail.push("Start here: replace the todo!() named above, then save.".into());
        }
        None => {}
    }
    (head, report, tail)
}

/// The screenful of `lines` that fits in `room` lines, `scroll` lines down
/// (as far as the last screenful), saying how many lines are above and below
/// (and, after the lines below, `whole`: where else to read them all).
fn fit(lines: Vec<String>, room: Option<usize>, scroll: usize, whole: &str) -> Vec<String> {
    let Some(room) = room else {
        return lines;
    };
    if lines.len() <= room {
        return lines;
    }
    // Two lines of the room say what is above and below.
    let window = room.saturating_sub(2).max(3);
    let from = scroll.min(lines.len().saturating_sub(window));
    let to = (from + window).min(lines.len());
    let mut shown = Vec::with_capacity(window + 2);
    shown.push(if from > 0 {
        format!("… {from} lines above: k scrolls up")
    } else {
        String::new()
    });
    shown.extend(lines[from..to].iter().cloned());
    let below = lines.len() - to;
    if below > 0 {
        shown.push(format!("… {below} {MORE_BELOW}{whole}"));
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::grade_all as graded;
    use grader::report::Report;
    use grader::verdict::{Property, Violation};

    fn view(exercise: &'static str) -> View {
        View {
            exercise,
            mode: Mode::Exercise,
            status: Status::Watching,
            news: Vec::new(),
            kept_run: None,
            height: None,
            scroll: 0,
        }
    }

    fn broken_release() -> Outcome {
        let v = Violation::at(
            Property::ReleaseSparesOthers,
            12_000,
            "A's release deleted B's lock",
        );
        Outcome::Failed {
            report: Report::broken("release::slow_job", "your lock", v, vec![]).to_string(),
        }
    }

    #[test]
    fn the_screen_shows_one_exercise_its_report_and_the_hints_reached() {
        let mut board = Board::new();
        graded(&mut board, "token", &Outcome::Passed);
        graded(&mut board, "release", &broken_release());
        let mut progress = Progress::default();
        let screen = draw(&board, &progress, &view("release"));
        assert!(
            screen.contains("▶ release · exercises/src/release.rs · 0 of 6 checks pass"),
            "{screen}"
        );
        assert!(
            screen.contains(
                "  Read: chapter 2, Releasing: check, then delete, in one step — \
                 http://localhost:3000/releasing.html (offline: book/src/releasing.md)\n"
            ),
            "the chapter's page in the served book:\n{screen}"
        );
        assert!(
            screen.contains("Broken rule:   a release must never delete another client's lock."),
            "{screen}"
        );
        assert!(screen.contains("token ✓"), "{screen}");
        assert!(
            screen.contains("[██│"),
            "token's two cells are full:\n{screen}"
        );
        let [nudge, idea, shape] = Property::ReleaseSparesOthers.hint_levels();
        assert!(
            screen.contains(&format!("Hint 1 of 3: {nudge} (")),
            "the report's own hint is the first:\n{screen}"
        );
        assert!(!screen.contains(idea), "{screen}");
        assert!(screen.contains("h shows hint 2 of 3"), "{screen}");
        assert!(screen.ends_with(KEYS));

        // Each h climbs one hint, and what was shown stays, in order.
        progress.next_hint(Property::ReleaseSparesOthers);
        let screen = draw(&board, &progress, &view("release"));
        let at = |text: &str| screen.find(text);
        assert!(at(nudge) < at(idea) && at(idea).is_some(), "{screen}");
        assert!(screen.contains(&format!("Hint 2 of 3: {idea}")), "{screen}");
        assert!(!screen.contains(shape), "{screen}");
        assert!(screen.contains("h shows hint 3 of 3"), "{screen}");

        progress.next_hint(Property::ReleaseSparesOthers);
        let screen = draw(&board, &progress, &view("release"));
        let at = |text: &str| screen.find(text);
        assert!(at(idea) < at(shape) && at(nudge) < at(idea), "{screen}");
        assert!(
            screen.contains(&format!("Hint 3 of 3: {shape}")),
            "{screen}"
        );
        assert!(!screen.contains("h shows hint"), "{screen}");
    }

    #[test]
    fn a_compile_error_replaces_the_exercise_with_cargos_text() {
        let board = Board::new();
        let mut v = view("acquire");
        v.status = Status::CompileError("error[E0425]: cannot find value `x`".into());
        let screen = draw(&board, &Progress::default(), &v);
        assert!(
            screen.contains("Your code does not compile; cargo says:"),
            "{screen}"
        );
        assert!(screen.contains("error[E0425]"), "{screen}");
        assert!(!screen.contains("▶ acquire"), "{screen}");
    }

    #[test]
    fn a_long_first_build_says_what_the_wait_is() {
        let board = Board::new();
        let mut v = view("token");
        v.status = Status::Grading;
        let grading = draw(&board, &Progress::default(), &v);
        assert!(grading.contains("· grading…"), "{grading}");
        assert!(grading.contains("\nGrading…"), "{grading}");
        v.status = Status::Building;
        let building = draw(&board, &Progress::default(), &v);
        assert!(building.contains("· building your code…"), "{building}");
        let line = format!(
            "Building your code, then grading (the first build: {} on two cores)…",
            crate::grade::FIRST_BUILD
        );
        assert!(building.contains(&line), "{building}");
    }

    #[test]
    fn a_long_report_is_cut_to_the_terminal() {
        let mut board = Board::new();
        let long = (0..200)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n");
        graded(&mut board, "token", &Outcome::Failed { report: long });
        let mut v = view("token");
        v.height = Some(40);
        let screen = draw(&board, &Progress::default(), &v);
        assert_eq!(screen.lines().count(), 40, "{screen}");
        assert!(screen.contains("more lines: j scrolls down"), "{screen}");
        assert!(screen.contains("\nline 0\n"), "{screen}");
        assert!(!screen.contains("lines above"), "{screen}");
        assert!(screen.ends_with(KEYS));

        // j scrolls on, as far as the last screenful and no further.
        v.scroll = 50;
        let screen = draw(&board, &Progress::default(), &v);
        assert_eq!(screen.lines().count(), 40, "{screen}");
        assert!(
            screen.contains("… 50 lines above: k scrolls up"),
            "{screen}"
        );
        assert!(
            screen.contains("\nline 50\n") && !screen.contains("\nline 49\n"),
            "{screen}"
        );
        v.scroll = 10_000;
        let screen = draw(&board, &Progress::default(), &v);
        assert!(screen.contains("\nline 199\n"), "{screen}");
        assert!(!screen.contains("more lines"), "{screen}");
        assert!(screen.lines().count() <= 40, "{screen}");
    }

    #[test]
    fn a_long_list_scrolls_to_its_end() {
        let mut board = Board::new();
        for x in board.exercises() {
            graded(&mut board, x, &broken_release());
        }
        let mut v = view("token");
        v.mode = Mode::List;
        let whole = draw(&board, &Progress::default(), &v);
        let rows = whole.lines().count();
        let redlock = grader::exercise::named("redlock").map_or(0, |x| x.checks.len());
        assert!(
            whole.contains(&format!(
                "  redlock (exercises/src/redlock.rs): 0/{redlock}"
            )),
            "{whole}"
        );
        assert!(rows > 60, "every check is a line: {rows} lines:\n{whole}");

        v.height = Some(30);
        let top = draw(&board, &Progress::default(), &v);
        assert_eq!(top.lines().count(), 30, "{top}");
        assert!(top.contains("Every check"), "{top}");
        assert!(
            top.contains(&format!("{MORE_BELOW}\n")),
            "j is offered, and no check to run instead:\n{top}"
        );
        assert!(!top.contains("l goes back."), "{top}");

        // j moves one line at a time, k back; the list's end is reachable.
        v.scroll = 1;
        let one_down = draw(&board, &Progress::default(), &v);
        assert!(
            one_down.contains("… 1 lines above: k scrolls up"),
            "{one_down}"
        );
        assert!(!one_down.contains("Every check"), "{one_down}");
        v.scroll = rows;
        let end = draw(&board, &Progress::default(), &v);
        assert!(end.lines().count() <= 30, "{end}");
        assert!(end.contains("l goes back."), "{end}");
        assert!(end.contains("scenarios (your whole lock)"), "{end}");
        assert!(!end.contains(MORE_BELOW), "{end}");
    }
}
