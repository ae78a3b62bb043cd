//! What each key of the loop does (the screen's last line lists them).
//!
//! `h` reveals the next hint for the rule in view; `n` and `p` move between
//! exercises, `l` between an exercise and the list of every check, `j` and
//! `k` scroll; `r` grades everything again; `q`, Ctrl-C and Ctrl-D quit.
//! Moving around grades nothing; the exercise in view is kept in the
//! progress file, so that the loop resumes there.

use grader::harness::Outcome;

use super::Loop;
use super::passes;
use crate::board::broken_rule;
use crate::screen::Mode;
use crate::terminal::Input;

/// Whether `input` ends the loop.
pub(super) fn quits(input: Input) -> bool {
    matches!(
        input,
        Input::Closed | Input::Key('q') | Input::Ctrl('c' | 'd')
    )
}

impl Loop {
    /// Does what `key` does.
    pub(super) fn key(&mut self, key: char) {
        let exercises = self.board.exercises();
        let at = exercises
            .iter()
            .position(|x| *x == self.view.exercise)
            .unwrap_or(0);
        // Another screen starts at its top; j and k move within one.
        if !matches!(key, 'j' | 'k') {
            self.view.scroll = 0;
        }
        match key {
            'j' if self.more_below => self.view.scroll += 1,
            'k' => self.view.scroll = self.view.scroll.saturating_sub(1),
            'h' => self.hint(),
            'n' => {
                self.view.exercise = exercises[(at + 1).min(exercises.len() - 1)];
                self.view.mode = Mode::Exercise;
            }
            'p' => {
                self.view.exercise = exercises[at.saturating_sub(1)];
                self.view.mode = Mode::Exercise;
            }
            'l' => {
                self.view.mode = match self.view.mode {
                    Mode::List => Mode::Exercise,
                    Mode::Exercise => Mode::List,
                }
            }
            'r' => {
                self.view.news.clear();
                self.regrade(passes::everything());
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
            Some((Outcome::NotStarted { .. }, None)) => Some(
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
}
