//! What `redlock_acquire` must do, as a function of what the nodes are doing.
//!
//! A [`Situation`] says what A's acquire meets: the TTL it asks for, and node by node a free
//! node, one B holds, one paused (A's request times out after [`NODE_TIMEOUT_MS`]), one down
//! (refused at once), and how late each running node's replies arrive. Nodes are asked in order,
//! so the time spent is the sum of the delays and the time-outs, and the [`Outcome`] follows from
//! the published algorithm: a grant when more than half of the nodes said yes and something of
//! the TTL is left after the time spent and the drift allowance, with the validity to the
//! millisecond; otherwise a refusal, after which no running node holds A's token. Each outcome
//! names the [`BRANCHES`] of the model its round reached, for the explorer's coverage table.
//!
//! The draws ([`Situation::draw`]) aim at every branch: a free majority or not, often just so
//! and reached only at the last node; and a round whose length is chosen first, around the TTL's
//! edges (well inside it, 1 ms of validity left, none left, inside the drift allowance, past the
//! TTL), then shared out among the nodes as late replies.
//!
//! Every delay is a multiple of [`GRID_MS`], the paused node's time-out, and so is every TTL:
//! every step of a round then comes at a multiple of it, and a key A set is, at every step,
//! either gone or at least that far from its expiry. The virtual clock needs that margin
//! ([`crate::clock`]): real time passes between two steps, and a key a few milliseconds from its
//! virtual expiry would expire for real first (a stall, not a verdict). The validity still meets
//! its edges to the millisecond: the TTLs of 4.7 s and 4.8 s put them on the grid (a drift of
//! 49 ms and 50 ms leaves exactly 1 ms and 0 ms at a round of 4650 ms and 4750 ms).

use std::fmt;
use std::time::Duration;

use crate::explore::rng::Rng;
use crate::nodes::cluster::NODE_TIMEOUT_MS;

/// The branches of the model a round may reach, as the coverage table names them.
pub const BRANCHES: &[&str] = &[
    GRANTED,
    NO_MAJORITY,
    NOTHING_LEFT,
    OUTLASTED,
    AT_THE_LAST_NODE,
    LATE_MAJORITY,
    AFTER_THE_MAJORITY,
    B_STEPS_IN,
];
const GRANTED: &str = "granted: a majority, validity left";
const NO_MAJORITY: &str = "refused: no majority";
const NOTHING_LEFT: &str = "refused: a majority, validity at or below zero within the TTL";
const OUTLASTED: &str = "refused: a majority, the round outlasts the TTL";
const AT_THE_LAST_NODE: &str = "a majority reached only at the last node";
const LATE_MAJORITY: &str = "late replies on the majority's nodes";
const AFTER_THE_MAJORITY: &str = "time spent after the majority was reached";
const B_STEPS_IN: &str = "B steps in during A's release";

/// The step every delay and TTL is a multiple of, in ms.
pub const GRID_MS: u64 = NODE_TIMEOUT_MS;

/// The TTLs a situation asks for, in ms: multiples of [`GRID_MS`] and of 100 ms (so the drift
/// allowance, 1 % of the TTL plus 2 ms, is a whole number of ms); 4.7 s and 4.8 s for a validity
/// of exactly 1 ms and 0 ms on the grid.
const TTLS_MS: &[u64] = &[1_000, 4_700, 4_800, 10_000];

/// What one node is doing when A asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Meets {
    /// Running, the lock free.
    Free,
    /// Running, the lock B's.
    HeldByB,
    /// Stopped: no reply.
    Paused,
    /// Killed: connection refused.
    Down,
}

/// What A's acquire meets, node by node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Situation {
    /// The TTL A asks for.
    pub ttl: Duration,
    /// What each node is doing.
    pub nodes: Vec<Meets>,
    /// How late each node's replies arrive, in virtual ms (for running nodes).
    pub delays: Vec<u64>,
    /// Just before this command of A's release (0-based), A's lock expires everywhere and B
    /// takes every running node; `None`: nobody steps in.
    pub steal_at: Option<usize>,
}

impl Situation {
    /// Every node free and prompt, with `ttl`.
    pub fn calm(n: usize, ttl: Duration) -> Situation {
        Situation {
            ttl,
            nodes: vec![Meets::Free; n],
            delays: vec![0; n],
            steal_at: None,
        }
    }

    /// The situation `rng` draws next for `n` nodes.
    pub fn draw(rng: &mut Rng, n: usize) -> Situation {
        let ttl_ms = rng.pick(TTLS_MS);
        let mut s = Situation::calm(n, Duration::from_millis(ttl_ms));
        // How many nodes are free: a majority three times in four, often a bare one.
        let majority = n / 2 + 1;
        let free = match rng.below(8) {
            0 => rng.below(majority as u64) as usize,
            1 => majority - 1,
            2..=4 => majority,
            5 => (majority + 1).min(n),
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
        let round_ms = round_length(rng, ttl_ms);
        s.share_out(rng, round_ms);
        // Up to two commands per node: a release that reads, then deletes, has a gap to find.
        if rng.chance(1, 2) {
            s.steal_at = Some(rng.below(2 * n as u64) as usize);
        }
        s
    }

    /// The situations of the history `seed` draws: a few rounds, each on fresh nodes.
    pub fn history(seed: u64, n: usize) -> Vec<Situation> {
        let mut rng = Rng::new(seed);
        (0..ROUNDS).map(|_| Situation::draw(&mut rng, n)).collect()
    }

    /// Sets the running nodes' delays so that the round takes `round_ms` (a multiple of
    /// [`GRID_MS`]; or as near as the time-outs of the paused nodes allow), in random shares of
    /// whole grid steps.
    fn share_out(&mut self, rng: &mut Rng, round_ms: u64) {
        let running: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| matches!(self.nodes[i], Meets::Free | Meets::HeldByB))
            .collect();
        let fixed = self.spent_ms();
        let Some(&last) = running.last() else {
            return;
        };
        let steps = round_ms.saturating_sub(fixed) / GRID_MS;
        let mut left = steps;
        let weights: Vec<u64> = running.iter().map(|_| rng.below(4)).collect();
        let total: u64 = weights.iter().sum::<u64>().max(1);
        for (&i, w) in running.iter().zip(&weights) {
            let share = steps * w / total;
            self.delays[i] = share * GRID_MS;
            left -= share;
        }
        // What the shares' rounding left over goes to one node, the last when no weight fell.
        let to = if weights.iter().all(|w| *w == 0) {
            last
        } else {
            running[rng.below(running.len() as u64) as usize]
        };
        self.delays[to] += left * GRID_MS;
    }

    /// The virtual ms A's round of requests takes.
    pub fn spent_ms(&self) -> u64 {
        self.nodes
            .iter()
            .zip(&self.delays)
            .map(|(meets, delay)| match meets {
                Meets::Free | Meets::HeldByB => *delay,
                Meets::Paused => NODE_TIMEOUT_MS,
                Meets::Down => 0,
            })
            .sum()
    }

    /// The simpler situations to try when shrinking a failing one: one node at a time made
    /// free, or made prompt.
    pub fn simpler(&self) -> Vec<Situation> {
        let mut out = Vec::new();
        if self.steal_at.is_some() {
            out.push(Situation {
                steal_at: None,
                ..self.clone()
            });
        }
        for i in 0..self.nodes.len() {
            if self.nodes[i] != Meets::Free {
                let mut s = self.clone();
                s.nodes[i] = Meets::Free;
                out.push(s);
            }
            if self.delays[i] != 0 {
                let mut s = self.clone();
                s.delays[i] = 0;
                out.push(s);
            }
        }
        out
    }
}

impl fmt::Display for Situation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "  A asks for a TTL of {} ms", self.ttl.as_millis())?;
        for (i, (meets, delay)) in self.nodes.iter().zip(&self.delays).enumerate() {
            let what = match meets {
                Meets::Free => "free",
                Meets::HeldByB => "held by B",
                Meets::Paused => "paused",
                Meets::Down => "down",
            };
            write!(f, "  node {i}: {what}")?;
            if *delay > 0 && matches!(meets, Meets::Free | Meets::HeldByB) {
                write!(f, ", replies {delay} ms late")?;
            }
            writeln!(f)?;
        }
        if let Some(k) = self.steal_at {
            writeln!(
                f,
                "  then A releases; before its command {}, A's lock expires everywhere and B takes \
                 every running node",
                k + 1
            )?;
        }
        Ok(())
    }
}

/// What a correct `redlock_acquire` returns in a situation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// How many nodes granted A the lock.
    pub grants: usize,
    /// The validity, when the lock is A's.
    pub validity: Option<Duration>,
}

/// The drift allowance of the published algorithm: 1 % of the TTL plus 2 ms.
pub fn drift(ttl: Duration) -> Duration {
    ttl / 100 + Duration::from_millis(2)
}

/// What a correct Redlock does for A in `situation`, whose round took `spent_ms`.
pub fn expect(situation: &Situation, spent_ms: u64) -> Outcome {
    let ttl = situation.ttl;
    let grants = situation
        .nodes
        .iter()
        .filter(|m| **m == Meets::Free)
        .count();
    let left = ttl
        .saturating_sub(Duration::from_millis(spent_ms))
        .saturating_sub(drift(ttl));
    let majority = grants > situation.nodes.len() / 2;
    Outcome {
        grants,
        validity: (majority && !left.is_zero()).then_some(left),
    }
}

impl Situation {
    /// The [`BRANCHES`] a correct Redlock's round reaches here (its round takes
    /// [`Situation::spent_ms`]).
    pub fn branches(&self) -> Vec<&'static str> {
        let spent = self.spent_ms();
        let outcome = expect(self, spent);
        let majority = self.nodes.len() / 2 + 1;
        let mut out = vec![match outcome.validity {
            Some(_) => GRANTED,
            None if outcome.grants < majority => NO_MAJORITY,
            None if Duration::from_millis(spent) > self.ttl => OUTLASTED,
            None => NOTHING_LEFT,
        }];
        // Where the majority's last grant came, and what the nodes cost until then.
        let mut granted = 0;
        let mut at = None;
        for (i, meets) in self.nodes.iter().enumerate() {
            if *meets == Meets::Free {
                granted += 1;
                if granted == majority {
                    at = Some(i);
                }
            }
        }
        if let Some(at) = at {
            if at == self.nodes.len() - 1 {
                out.push(AT_THE_LAST_NODE);
            }
            let late =
                (0..self.nodes.len()).any(|i| self.nodes[i] == Meets::Free && self.delays[i] > 0);
            if late {
                out.push(LATE_MAJORITY);
            }
            let after = Situation {
                nodes: self.nodes[at + 1..].to_vec(),
                delays: self.delays[at + 1..].to_vec(),
                ..self.clone()
            };
            if after.spent_ms() > 0 {
                out.push(AFTER_THE_MAJORITY);
            }
        }
        if self.steal_at.is_some() {
            out.push(B_STEPS_IN);
        }
        out
    }
}

/// How many rounds one explored history plays.
pub const ROUNDS: usize = 4;

/// How long a round takes, a multiple of [`GRID_MS`] drawn around the edges of `ttl_ms`:
/// prompt, well inside, the last step with validity left, the first with none, inside the drift
/// allowance, the TTL itself, or past it.
fn round_length(rng: &mut Rng, ttl_ms: u64) -> u64 {
    let drift_ms = drift(Duration::from_millis(ttl_ms)).as_millis() as u64;
    // What a round may take and leave validity: below this.
    let budget = ttl_ms - drift_ms;
    let last_valid = (budget - 1) / GRID_MS;
    let first_spent = budget.div_ceil(GRID_MS);
    let steps = match rng.below(8) {
        0 => 0,
        1 => rng.below(last_valid + 1),
        2 => last_valid,
        3 => first_spent,
        4 => first_spent + rng.below(ttl_ms / GRID_MS - first_spent + 1),
        5 => ttl_ms / GRID_MS,
        _ => ttl_ms / GRID_MS + 1 + rng.below(ttl_ms / 2 / GRID_MS),
    };
    steps * GRID_MS
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

    #[test]
    fn a_seed_draws_the_same_rounds() {
        assert_eq!(Situation::history(7, 5), Situation::history(7, 5));
        assert_ne!(Situation::history(7, 5), Situation::history(8, 5));
    }

    #[test]
    fn every_delay_is_on_the_grid_and_the_validity_meets_its_edges() {
        let mut rng = Rng::new(5);
        let mut validities = std::collections::BTreeSet::new();
        for _ in 0..2000 {
            let s = Situation::draw(&mut rng, 5);
            assert!(s.delays.iter().all(|d| d % GRID_MS == 0), "{s}");
            assert_eq!(s.ttl.as_millis() as u64 % GRID_MS, 0);
            if let Some(v) = expect(&s, s.spent_ms()).validity {
                validities.insert(v.as_millis());
            }
        }
        assert!(validities.contains(&1), "no round left exactly 1 ms");
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

    #[test]
    fn the_branches_follow_the_outcome() {
        let ttl = Duration::from_millis(1_000);
        let mut s = Situation::calm(5, ttl);
        assert_eq!(s.branches(), vec![GRANTED]);
        // 988 ms of 1000, drift 12: nothing left.
        s.delays[4] = 988;
        assert_eq!(
            s.branches(),
            vec![NOTHING_LEFT, LATE_MAJORITY, AFTER_THE_MAJORITY]
        );
        s.delays[4] = 987;
        assert_eq!(
            expect(&s, s.spent_ms()).validity,
            Some(Duration::from_millis(1))
        );
        s.delays[4] = 1_001;
        assert_eq!(s.branches()[0], OUTLASTED);
        s.nodes[0] = Meets::Down;
        s.nodes[1] = Meets::Down;
        s.delays[4] = 0;
        assert_eq!(s.branches(), vec![GRANTED, AT_THE_LAST_NODE]);
        s.nodes[2] = Meets::HeldByB;
        assert_eq!(s.branches(), vec![NO_MAJORITY]);
    }
}
