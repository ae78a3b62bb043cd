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
//! allowance (1 % of the TTL plus 2 ms) is a whole number of milliseconds; the others are not
//! (1 % of 1337 ms is 13.37 ms), and a correct lock may round that 1 % down (go-redsync), to the
//! nearest (node-redlock) or not at all. The validities so computed differ by under a
//! millisecond, which the judge allows; where under a millisecond of validity is left, a lock
//! that rounds up sees none and refuses, and the model takes a grant or a refusal there
//! ([`Outcome::or_refused`]).

use std::fmt;
use std::time::Duration;

use crate::explore::rng::Rng;
use crate::nodes::cluster::NODE_TIMEOUT_MS;
use crate::wire::{Fault, Hit};

/// The branches of the model a round may reach, as the coverage table names them.
pub const BRANCHES: &[&str] = &[
    GRANTED,
    UNDER_A_MS,
    NO_MAJORITY,
    NOTHING_LEFT,
    OUTLASTED,
    AT_THE_LAST_NODE,
    LATE_MAJORITY,
    AFTER_THE_MAJORITY,
    B_STEPS_IN,
    FAULT_SAYS_NO,
    RAN_UNHEARD,
    RELEASE_FAILS,
];
const GRANTED: &str = "granted: a majority, validity left";
const NO_MAJORITY: &str = "refused: no majority";
const UNDER_A_MS: &str = "granted or refused: a majority, under 1 ms of validity left";
const NOTHING_LEFT: &str = "refused: a majority, validity at or below zero within the TTL";
const OUTLASTED: &str = "refused: a majority, the round outlasts the TTL";
const AT_THE_LAST_NODE: &str = "a majority reached only at the last node";
const LATE_MAJORITY: &str = "late replies on the majority's nodes";
const AFTER_THE_MAJORITY: &str = "time spent after the majority was reached";
const B_STEPS_IN: &str = "B steps in during A's release";
const FAULT_SAYS_NO: &str = "a free node's SET fails: it counts as a no";
const RAN_UNHEARD: &str = "a free node's SET runs, but its OK never reaches A";
const RELEASE_FAILS: &str = "a command of A's release fails: that node is not counted as freed";

/// TTLs a situation asks for, in ms, below a second and between whole seconds too: multiples of
/// 100 ms, whose drift allowance is a whole number of ms.
const EVEN_TTLS_MS: &[u64] = &[700, 1_000, 2_300, 10_000];

/// The other TTLs a situation asks for: their 1 % is not a whole number of ms.
const UNEVEN_TTLS_MS: &[u64] = &[777, 1_337, 2_999, 4_250];

/// What one node is doing when A asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Meets {
    /// Running, the lock free.
    Free,
    /// Running, the lock B's.
    HeldByB,
    /// Stopped: no reply.
    Paused,
    /// Down: connection refused.
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
    /// Just before this command of A's acquire (0-based, counted across the nodes) this fault is
    /// armed: it hits that command, or the next that can meet it (no reply is lost from a node
    /// that gave none); `None`: no fault.
    pub fault: Option<(usize, Fault)>,
    /// The same for A's release, in rounds where B does not step in.
    pub release_fault: Option<(usize, Fault)>,
}

impl Situation {
    /// Every node free and prompt, with `ttl`.
    pub fn calm(n: usize, ttl: Duration) -> Situation {
        Situation {
            ttl,
            nodes: vec![Meets::Free; n],
            delays: vec![0; n],
            steal_at: None,
            fault: None,
            release_fault: None,
        }
    }

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
        if self.fault.is_some() {
            out.push(Situation {
                fault: None,
                ..self.clone()
            });
        }
        if self.release_fault.is_some() {
            out.push(Situation {
                release_fault: None,
                ..self.clone()
            });
        }
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
        if let Some((k, fault)) = self.fault {
            // The fault waits for a command that can meet it: no reply is lost from a node that
            // gave none.
            writeln!(
                f,
                "  from command {} of A's acquire on, the first that can meet it: {}",
                k + 1,
                fault.did("that command")
            )?;
        }
        if let Some((k, fault)) = self.release_fault {
            writeln!(
                f,
                "  then A releases; from its command {} on, the first that can meet it: {}",
                k + 1,
                fault.did("that command")
            )?;
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
    /// Whether a refusal is as correct as the grant: the validity is under a millisecond, and
    /// a lock that rounds 1 % of the TTL up has none left.
    pub or_refused: bool,
}

/// The drift allowance of the published algorithm: 1 % of the TTL plus 2 ms.
pub fn drift(ttl: Duration) -> Duration {
    ttl / 100 + Duration::from_millis(2)
}

/// The free node whose grant the fault `hit` took, if it hit one: a `SET` that failed, or whose
/// `OK` never came back, is a no (the exercise's text: "an error … counts as a refusal").
pub fn lost_grant(situation: &Situation, hit: Option<&Hit>) -> Option<usize> {
    let hit = hit?;
    let node = hit.node?;
    (situation.nodes.get(node) == Some(&Meets::Free) && hit.command.eq_ignore_ascii_case("SET"))
        .then_some(node)
}

/// What a correct Redlock does for A in `situation`, whose round took `spent_ms`, when a fault
/// took the grant of the free node `lost` ([`lost_grant`]).
pub fn expect(situation: &Situation, spent_ms: u64, lost: Option<usize>) -> Outcome {
    let ttl = situation.ttl;
    let grants = (0..situation.nodes.len())
        .filter(|&i| situation.nodes[i] == Meets::Free && Some(i) != lost)
        .count();
    let left = ttl
        .saturating_sub(Duration::from_millis(spent_ms))
        .saturating_sub(drift(ttl));
    let granted = grants > situation.nodes.len() / 2 && !left.is_zero();
    Outcome {
        grants,
        validity: granted.then_some(left),
        or_refused: granted && left < Duration::from_millis(1),
    }
}

impl Situation {
    /// The [`BRANCHES`] a correct Redlock's round of `SET`s reaches here (it takes
    /// [`Situation::spent_ms`]), when the fault, if any, hit as `hit` says in the acquire and as
    /// `release_hit` says in the release.
    pub fn branches(&self, hit: Option<&Hit>, release_hit: Option<&Hit>) -> Vec<&'static str> {
        let spent = self.spent_ms();
        let lost = lost_grant(self, hit);
        let outcome = expect(self, spent, lost);
        let majority = self.nodes.len() / 2 + 1;
        let mut out = vec![match outcome.validity {
            Some(_) if outcome.or_refused => UNDER_A_MS,
            Some(_) => GRANTED,
            None if outcome.grants < majority => NO_MAJORITY,
            None if Duration::from_millis(spent) > self.ttl => OUTLASTED,
            None => NOTHING_LEFT,
        }];
        // Where the majority's last grant came, and what the nodes cost until then.
        let mut granted = 0;
        let mut at = None;
        for (i, meets) in self.nodes.iter().enumerate() {
            if *meets == Meets::Free && Some(i) != lost {
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
            let late = (0..self.nodes.len())
                .any(|i| self.nodes[i] == Meets::Free && Some(i) != lost && self.delays[i] > 0);
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
        if lost.is_some() {
            out.push(FAULT_SAYS_NO);
            if hit.is_some_and(|h| h.fault.runs()) {
                out.push(RAN_UNHEARD);
            }
        }
        if release_hit.is_some() {
            out.push(RELEASE_FAILS);
        }
        out
    }
}

/// How many rounds one explored history plays.
pub const ROUNDS: usize = 4;

/// The TTL a round asks for and how long the round takes, in ms, drawn around the TTL's edges:
/// prompt, well inside, the last millisecond with validity left, the first with none, inside the
/// drift allowance, the TTL itself, a millisecond past it, or well past it. The last millisecond
/// comes three times more with a TTL whose 1 % is not whole, which leaves under a millisecond:
/// the edge where correct locks part, by how they round ([`Outcome::or_refused`]).
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

    #[test]
    fn a_fault_on_a_free_node_s_set_takes_its_grant_and_nothing_else_does() {
        let s = Situation::calm(5, Duration::from_millis(1_000));
        let hit = |fault, command: &str, node| Hit {
            fault,
            command: command.to_owned(),
            node: Some(node),
        };
        let lost = hit(Fault::LostReply, "SET", 2);
        assert_eq!(lost_grant(&s, Some(&lost)), Some(2));
        assert_eq!(expect(&s, 0, Some(2)).grants, 4);
        assert_eq!(
            s.branches(Some(&lost), None),
            vec![GRANTED, FAULT_SAYS_NO, RAN_UNHEARD]
        );
        let error = hit(Fault::ErrorReply, "SET", 2);
        assert_eq!(s.branches(Some(&error), None), vec![GRANTED, FAULT_SAYS_NO]);
        // Not a grant it took: a script's load, or a node B holds.
        assert_eq!(
            lost_grant(&s, Some(&hit(Fault::Dropped, "SCRIPT LOAD", 2))),
            None
        );
        let mut held = s.clone();
        held.nodes[2] = Meets::HeldByB;
        assert_eq!(lost_grant(&held, Some(&lost)), None);
        // Two of five held by B and a third free node's SET failed: no majority.
        held.nodes[3] = Meets::HeldByB;
        let error_on_4 = hit(Fault::ErrorReply, "SET", 4);
        let lost = lost_grant(&held, Some(&error_on_4));
        assert_eq!(expect(&held, 0, lost).validity, None);
        assert_eq!(held.branches(Some(&error_on_4), None)[0], NO_MAJORITY);
    }

    #[test]
    fn under_a_millisecond_of_validity_a_grant_or_a_refusal_is_correct() {
        // 1 % of 1337 ms is 13.37 ms: the drift allowance is 15.37 ms.
        let mut s = Situation::calm(5, Duration::from_millis(1_337));
        s.delays[4] = 1_321;
        let outcome = expect(&s, s.spent_ms(), None);
        assert_eq!(outcome.validity, Some(Duration::from_micros(630)));
        assert!(outcome.or_refused);
        assert_eq!(s.branches(None, None)[0], UNDER_A_MS);
        // 1.63 ms left: a lock that rounds up still has 1 ms.
        s.delays[4] = 1_320;
        assert!(!expect(&s, s.spent_ms(), None).or_refused);
        // Nothing left, whichever way it rounds.
        s.delays[4] = 1_322;
        assert_eq!(expect(&s, s.spent_ms(), None).validity, None);
        // A whole drift allowance leaves whole milliseconds: 1 ms is a grant.
        let mut s = Situation::calm(5, Duration::from_millis(1_000));
        s.delays[4] = 987;
        assert!(!expect(&s, s.spent_ms(), None).or_refused);
    }

    #[test]
    fn the_branches_follow_the_outcome() {
        let ttl = Duration::from_millis(1_000);
        let mut s = Situation::calm(5, ttl);
        assert_eq!(s.branches(None, None), vec![GRANTED]);
        // 988 ms of 1000, drift 12: nothing left.
        s.delays[4] = 988;
        assert_eq!(
            s.branches(None, None),
            vec![NOTHING_LEFT, LATE_MAJORITY, AFTER_THE_MAJORITY]
        );
        s.delays[4] = 987;
        assert_eq!(
            expect(&s, s.spent_ms(), None).validity,
            Some(Duration::from_millis(1))
        );
        s.delays[4] = 1_001;
        assert_eq!(s.branches(None, None)[0], OUTLASTED);
        s.nodes[0] = Meets::Down;
        s.nodes[1] = Meets::Down;
        s.delays[4] = 0;
        assert_eq!(s.branches(None, None), vec![GRANTED, AT_THE_LAST_NODE]);
        s.nodes[2] = Meets::HeldByB;
        assert_eq!(s.branches(None, None), vec![NO_MAJORITY]);
    }
}
