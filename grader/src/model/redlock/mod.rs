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
//! The drift allowance is 1 % of the TTL plus 2 ms, and libraries round that 1 % differently
//! (go-redsync truncates it, node-redlock rounds it to the nearest, the reference keeps it
//! exact): their validities differ by under a millisecond, which the judge allows, and where
//! under a millisecond of validity is left, a lock that rounds up sees none and refuses, so the
//! model takes a grant or a refusal there ([`Outcome::or_refused`]).
//!
//! How the explorer draws situations that reach every branch is in `draw.rs`.

mod draw;

use std::fmt;
use std::time::Duration;

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

#[cfg(test)]
mod tests {
    use super::*;

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
