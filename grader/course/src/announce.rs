//! What the loop says when an exercise has just passed: the exercise that
//! comes next in the table's order (which is the book's), where to write it
//! and the chapter to read, named as the served book shows it.

use super::board::Board;
use grader::exercise::{self, chapter};

/// The news when `exercise` has just passed all its checks: what comes next
/// (the first exercise after it, in the table's order, that does not pass
/// yet, then those before it) and the chapter to read, as the served book
/// shows it; or, when every exercise passes, the chapter to read on.
pub fn announce(board: &Board, exercise: &str) -> String {
    let total = board.tally(exercise).total;
    let exercises = board.exercises();
    let after = exercises.iter().skip_while(|x| **x != exercise).skip(1);
    let next = after
        .chain(exercises.iter())
        .find(|x| !board.tally(x).done());
    match next {
        Some(next) => {
            let place = exercise::file_of(next).map_or(
                "the book's stories, with your whole lock".to_string(),
                |f| format!("in {f}"),
            );
            format!(
                "✓ {exercise} passes all {total} checks. Next: {next}, {place}; read chapter {}.",
                exercise::chapter_of(next).line()
            )
        }
        None => format!(
            "✓ {exercise} passes all {total} checks, and so does every other: your lock keeps \
             every rule of the course. Read on: chapter {}.",
            chapter::REDLOCK_DEBATE.line()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::grade_all as graded;
    use grader::harness::Outcome;

    #[test]
    fn a_finished_exercise_names_the_next_in_the_books_order_and_its_page() {
        let mut board = Board::new();
        for x in ["token", "acquire", "release"] {
            graded(&mut board, x, &Outcome::Passed);
        }
        let checks = grader::exercise::named("release").map_or(0, |x| x.checks.len());
        assert_eq!(
            announce(&board, "release"),
            format!(
                "✓ release passes all {checks} checks. Next: extend, in exercises/src/extend.rs; \
                 read chapter 3.1, Renewal and the watchdog — http://localhost:3000/renewal.html \
                 (offline: book/src/renewal.md)."
            )
        );
        for x in board.exercises() {
            graded(&mut board, x, &Outcome::Passed);
        }
        let last = announce(&board, "scenarios");
        assert!(
            last.ends_with(
                "Read on: chapter 7, The Redlock debate — http://localhost:3000/redlock.html \
                 (offline: book/src/redlock.md)."
            ),
            "{last}"
        );
    }
}
