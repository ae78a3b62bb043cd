//! How the explorer draws what Redlock's acquire meets.
//!
//! The draws ([`Situation::draw`]) aim at every branch: a free majority or not, often just so
//! and reached only at the last node; and a round whose length is chosen first, around the TTL's
//! edges (well inside it, 1 ms of validity left, none left, inside the drift allowance, past the
//! TTL), then shared out among the nodes as late replies. In half the rounds one command of A's
//! acquire meets a fault ([`Fault`]: an error reply, a dropped connection, a reply lost after the
//! command ran, a reply too late): a free node whose `SET` met it said no, as the exercise's text
//! has it, and one whose `SET` ran regardless holds A's token though A never heard its `OK`, so
//! that a refusal must release it there too. In some of the other rounds A's release meets the
//! fault instead: the node it hit keeps A's token or not, and is not counted as freed.
//!
//! Delays, round lengths and TTLs are drawn to the millisecond: a round may end 1 ms inside the
//! validity, exactly at its edge, or 1 ms past the TTL. A key A set may then be a millisecond from
//! its virtual expiry when the clock moves; the clock gives such a key a real TTL of at least
//! [`crate::clock::FLOOR_MS`], so that real time passing between two steps does not end it before
//! virtual time does ([`crate::clock`]). Some TTLs are multiples of 100 ms, whose drift
//! allowance is a whole number of milliseconds; the others are not (1 % of 1337 ms is 13.37 ms),
//! and a round may then leave under a millisecond of validity, where correct locks part by how
//! they round ([`super::Outcome::or_refused`]).

use std::time::Duration;

use super::{Meets, ROUNDS, Situation, drift};
use crate::explore::rng::Rng;
use crate::wire::Fault;

/// TTLs a situation asks for, in ms, below a second and between whole seconds too: multiples of
/// 100 ms, whose drift allowance is a whole number of ms.
const EVEN_TTLS_MS: &[u64] = &[700, 1_000, 2_300, 10_000];

/// The other TTLs a situation asks for: their 1 % is not a whole number of ms.
const UNEVEN_TTLS_MS: &[u64] = &[777, 1_337, 2_999, 4_250];

impl Situation {
    /// The situation `rng` draws next for `n` nodes.
    pub fn draw(rng: &mut Rng, n: usize) -> Situation {
        let (ttl_ms, round_ms) = ttl_and_round(rng);
        let mut s = Situation::calm(n, Duration::from_millis(ttl_ms));
        // How many nodes are free: a majority nine times in ten, often a bare one (a fault that
        // takes a grant makes many more rounds fall short).
        let majority = n / 2 + 1;
        let free = match rng.below(10) {
            0 => rng.below(majority as u64) as usize,
            1..=4 => majority,
            5..=7 => (majority + 1).min(n),
            _ => majority + rng.below((n - majority + 1) as u64) as usize,
        };
        let mut free_at: Vec<usize> = (0..n).collect();
        shuffle(rng, &mut free_at);
        free_at.truncate(free);
        // A bare majority that only the last node completes, half the time.
        if free == majority && free > 0 && rng.chance(1, 2) && !free_at.contains(&(n - 1)) {
            free_at[0] = n - 1;
        }
        for i in 0..n {
            s.nodes[i] = if free_at.contains(&i) {
                Meets::Free
            } else {
                rng.pick(&[Meets::HeldByB, Meets::Paused, Meets::Down])
            };
        }
        s.share_out(rng, round_ms);
        // Up to two commands per node: a release that reads, then deletes, has a gap to find.
        if rng.chance(1, 2) {
            s.steal_at = Some(rng.below(2 * n as u64) as usize);
        }
        // One command per node is the published round: the fault lands on one node's SET.
        if rng.chance(1, 2) {
            s.fault = Some((rng.below(n as u64) as usize, rng.pick(&Fault::ALL)));
        }
        if s.steal_at.is_none() && rng.chance(1, 2) {
            s.release_fault = Some((rng.below(n as u64) as usize, rng.pick(&Fault::ALL)));
        }
        s
    }

    /// The situations of the history `seed` draws: a few rounds, each on fresh nodes.
    pub fn history(seed: u64, n: usize) -> Vec<Situation> {
        let mut rng = Rng::new(seed);
        (0..ROUNDS).map(|_| Situation::draw(&mut rng, n)).collect()
    }

    /// Sets the running nodes' delays so that the round takes `round_ms` (or as near as the
    /// time-outs of the paused nodes allow), in random shares of whole milliseconds.
    fn share_out(&mut self, rng: &mut Rng, round_ms: u64) {
        let running: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| matches!(self.nodes[i], Meets::Free | Meets::HeldByB))
            .collect();
        let fixed = self.spent_ms();
        let Some(&last) = running.last() else {
            return;
        };
        let steps = round_ms.saturating_sub(fixed);
        let mut left = steps;
        let weights: Vec<u64> = running.iter().map(|_| rng.below(4)).collect();
        let total: u64 = weights.iter().sum::<u64>().max(1);
        for (&i, w) in running.iter().zip(&weights) {
            let share = steps * w / total;
            self.delays[i] = share;
            left -= share;
        }
        // What the shares' rounding left over goes to one node, the last when no weight fell.
        let to = if weights.iter().all(|w| *w == 0) {
            last
        } else {
            running[rng.below(running.len() as u64) as usize]
        };
        self.delays[to] += left;
    }
}

/// The TTL a round asks for and how long the round takes, in ms, drawn around the TTL's edges:
/// prompt, well inside, the last millisecond with validity left, the first with none, inside the
/// drift allowance, the TTL itself, a millisecond past it, or well past it. The last millisecond
/// comes three times more with a TTL whose 1 % is not whole, which leaves under a millisecond:
/// the edge where correct locks part, by how they round ([`super::Outcome::or_refused`]).
fn ttl_and_round(rng: &mut Rng) -> (u64, u64) {
    let edge = rng.below(15);
    let ttl_ms = match edge {
        4..=6 => rng.pick(UNEVEN_TTLS_MS),
        _ if rng.chance(1, 2) => rng.pick(UNEVEN_TTLS_MS),
        _ => rng.pick(EVEN_TTLS_MS),
    };
    let drift_ms = drift(Duration::from_millis(ttl_ms)).as_millis() as u64;
    // What a round may take and leave validity, 1 % of the TTL rounded down: below this.
    let budget = ttl_ms - drift_ms;
    let round_ms = match edge {
        0 => 0,
        1 | 2 => rng.below(budget),
        3..=6 => budget - 1,
        7 => budget,
        8 | 9 => budget + rng.below(drift_ms + 1),
        10 => ttl_ms,
        11 => ttl_ms + 1,
        _ => ttl_ms + 1 + rng.below(ttl_ms / 2),
    };
    (ttl_ms, round_ms)
}

/// Shuffles `items` in place (Fisher–Yates), from `rng`.
fn shuffle<T>(rng: &mut Rng, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        items.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nodes::cluster::NODE_TIMEOUT_MS;

    #[test]
    fn a_seed_draws_the_same_rounds() {
        assert_eq!(Situation::history(7, 5), Situation::history(7, 5));
        assert_ne!(Situation::history(7, 5), Situation::history(8, 5));
    }

    #[test]
    fn rounds_meet_the_validity_s_edges_to_the_millisecond() {
        let mut rng = Rng::new(5);
        let (mut one_left, mut under_one, mut none_left, mut just_past) = (0, 0, 0, 0);
        let mut off_the_old_grid = false;
        for _ in 0..2000 {
            let s = Situation::draw(&mut rng, 5);
            let (ttl, spent) = (s.ttl.as_millis() as u64, s.spent_ms());
            let budget = ttl - drift(s.ttl).as_millis() as u64;
            let whole = ttl % 100 == 0;
            one_left += usize::from(spent + 1 == budget && whole);
            under_one += usize::from(spent + 1 == budget && !whole);
            none_left += usize::from(spent == budget);
            just_past += usize::from(spent == ttl + 1);
            off_the_old_grid |= s.delays.iter().any(|d| d % 50 != 0);
        }
        assert!(one_left > 20, "a round left exactly 1 ms {one_left} times");
        assert!(under_one > 20, "a round left under 1 ms {under_one} times");
        assert!(
            none_left > 20,
            "a round left exactly 0 ms {none_left} times"
        );
        assert!(
            just_past > 20,
            "a round took 1 ms past the TTL {just_past} times"
        );
        assert!(off_the_old_grid, "every delay was a multiple of 50 ms");
    }

    #[test]
    fn a_round_is_shared_out_exactly() {
        let mut rng = Rng::new(3);
        for _ in 0..200 {
            let mut s = Situation::draw(&mut rng, 5);
            let paused = s.nodes.iter().filter(|m| **m == Meets::Paused).count() as u64;
            let wanted = 1_250 + paused * NODE_TIMEOUT_MS;
            if s.nodes
                .iter()
                .any(|m| matches!(m, Meets::Free | Meets::HeldByB))
            {
                s.delays = vec![0; 5];
                s.share_out(&mut rng, wanted);
                assert_eq!(s.spent_ms(), wanted, "{s}");
            }
        }
    }
}
