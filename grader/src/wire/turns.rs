//! Taking turns: wires that race for a lock send their commands one at a
//! time, in a fixed order, so that a race interleaves command by command the
//! same way on every run.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// A fair turn-taking among several wires: each sends one command, then
/// passes the turn to the next wire still in its call.
#[derive(Default)]
pub struct Turns {
    state: Mutex<TurnState>,
    changed: Condvar,
}

#[derive(Default)]
struct TurnState {
    /// The wires still taking turns, in turn order.
    active: Vec<usize>,
    /// Index into `active` of the wire whose turn it is.
    current: usize,
}

/// How long a wire waits for its turn before it goes ahead anyway (the wire
/// that has the turn is then stuck, and its own time limit reports it).
const TURN_PATIENCE: Duration = Duration::from_secs(5);

impl Turns {
    /// Turns among wires numbered `0..n`, starting with 0.
    pub fn new(n: usize) -> Arc<Turns> {
        Arc::new(Turns {
            state: Mutex::new(TurnState {
                active: (0..n).collect(),
                current: 0,
            }),
            changed: Condvar::new(),
        })
    }

    pub(super) fn wait_for(&self, me: usize) {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let _ = self.changed.wait_timeout_while(state, TURN_PATIENCE, |s| {
            s.active.get(s.current) != Some(&me)
        });
    }

    pub(super) fn pass(&self, me: usize) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(pos) = s.active.iter().position(|&w| w == me) {
            s.current = (pos + 1) % s.active.len();
        }
        self.changed.notify_all();
    }

    /// Takes `me` out of the rotation (its call has ended).
    pub fn leave(&self, me: usize) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(pos) = s.active.iter().position(|&w| w == me) {
            let had_turn = s.current == pos;
            s.active.remove(pos);
            if s.active.is_empty() {
                s.current = 0;
            } else if pos < s.current || (had_turn && s.current >= s.active.len()) {
                s.current = if pos < s.current { s.current - 1 } else { 0 };
            }
        }
        self.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_go_round_and_skip_those_who_left() {
        let turns = Turns::new(3);
        turns.pass(0);
        turns.leave(1);
        // 1 left while it had the turn: the turn moves on to 2.
        let state = turns.state.lock().unwrap();
        assert_eq!(state.active.get(state.current), Some(&2));
    }
}
