//! What `redlock_acquire` must do, as a function of what the nodes are doing.
//!
//! A [`Situation`] says, node by node, what A's acquire meets: a free node, one B holds, one
//! paused (A's request times out after [`NODE_TIMEOUT_MS`]), one down (refused at once), and how
//! late each running node's replies arrive. Nodes are asked in order, so the time spent is the
//! sum of the delays and the time-outs, and the [`Outcome`] follows from the published
//! algorithm: a grant when more than half of the nodes said yes and something of the TTL is left
//! after the time spent and the drift allowance, with the validity to the millisecond; otherwise
//! a refusal, after which no running node holds A's token.

use std::fmt;
use std::time::Duration;

use crate::explore::rng::Rng;
use crate::nodes::cluster::NODE_TIMEOUT_MS;

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
    /// What each node is doing.
    pub nodes: Vec<Meets>,
    /// How late each node's replies arrive, in virtual ms (for running nodes).
    pub delays: Vec<u64>,
    /// Just before this command of A's release (0-based), A's lock expires everywhere and B
    /// takes every running node; `None`: nobody steps in.
    pub steal_at: Option<usize>,
}

/// The delays a situation draws from: mostly prompt, sometimes late enough to spend the TTL.
const DELAYS: [u64; 6] = [0, 0, 0, 300, 1_200, 2_600];

impl Situation {
    /// Every node free and prompt.
    pub fn calm(n: usize) -> Situation {
        Situation {
            nodes: vec![Meets::Free; n],
            delays: vec![0; n],
            steal_at: None,
        }
    }

    /// The situation seed `seed` draws for `n` nodes.
    pub fn draw(seed: u64, n: usize) -> Situation {
        let mut rng = Rng::new(seed);
        let mut s = Situation::calm(n);
        for i in 0..n {
            s.nodes[i] = rng.pick(&[
                Meets::Free,
                Meets::Free,
                Meets::Free,
                Meets::HeldByB,
                Meets::Paused,
                Meets::Down,
            ]);
            s.delays[i] = rng.pick(&DELAYS);
        }
        // Up to two commands per node: a release that reads, then deletes, has a gap to find.
        if rng.chance(1, 2) {
            s.steal_at = Some(rng.below(2 * n as u64) as usize);
        }
        s
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

/// What a correct Redlock does for A with `ttl` in `situation`, whose round took `spent_ms`.
pub fn expect(situation: &Situation, ttl: Duration, spent_ms: u64) -> Outcome {
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
