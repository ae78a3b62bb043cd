//! How often the explored histories reach each branch of a model.
//!
//! An explorer is only as good as the situations it draws: a branch of the
//! model that no history reaches is a mistake no seed can catch. So each
//! model names its branches (a grant, a refusal, a renewal that finds the
//! key gone, a Redlock round that outlasts its TTL, …), each step the
//! explorer plays notes the branch the model took, and a [`Coverage`] counts
//! them over the seeds. The grader's own tests print it as a table and hold
//! every branch the model lists to a floor ([`Coverage::short`]): [`FLOOR`]
//! hits in the default [`super::DEFAULT_HISTORIES`] seeds, scaled with the
//! seeds explored. A branch the list leaves out (a step outside the
//! exercise's contract, which the model still answers) is shown with its
//! hits and held to nothing.

use std::fmt;

use super::DEFAULT_HISTORIES;

/// The hits every branch needs in the default number of histories.
pub const FLOOR: u64 = 20;

/// Hits per branch of one model, over some histories.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coverage {
    /// The check that explored.
    pub check: String,
    /// How many histories were played.
    pub histories: u64,
    /// Each branch the model lists, with its hits, in the model's order.
    hits: Vec<(&'static str, u64)>,
    /// The branches reached that the model's list leaves out, with their hits.
    unlisted: Vec<(&'static str, u64)>,
}

impl Coverage {
    /// No hits yet on `branches`, the model's list.
    pub fn new(check: &str, branches: &[&'static str]) -> Coverage {
        Coverage {
            check: check.to_string(),
            histories: 0,
            hits: branches.iter().map(|b| (*b, 0)).collect(),
            unlisted: Vec::new(),
        }
    }

    /// One more hit on `branch`.
    pub fn hit(&mut self, branch: &'static str) {
        let listed = self.hits.iter_mut().find(|(b, _)| *b == branch);
        match listed.or_else(|| self.unlisted.iter_mut().find(|(b, _)| *b == branch)) {
            Some((_, n)) => *n += 1,
            None => self.unlisted.push((branch, 1)),
        }
    }

    /// The hits of `branch`.
    pub fn hits(&self, branch: &str) -> u64 {
        self.hits
            .iter()
            .chain(&self.unlisted)
            .find(|(b, _)| *b == branch)
            .map_or(0, |(_, n)| *n)
    }

    /// The floor for this many histories: [`FLOOR`] per
    /// [`DEFAULT_HISTORIES`], rounded up.
    pub fn floor(&self) -> u64 {
        (FLOOR * self.histories).div_ceil(DEFAULT_HISTORIES)
    }

    /// The listed branches below the floor, with their hits.
    pub fn short(&self) -> Vec<(&'static str, u64)> {
        let floor = self.floor();
        self.hits
            .iter()
            .copied()
            .filter(|(_, n)| *n < floor)
            .collect()
    }
}

impl fmt::Display for Coverage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}: branches reached in {} histories (floor {})",
            self.check,
            self.histories,
            self.floor()
        )?;
        writeln!(f, "| branch | hits |")?;
        writeln!(f, "|---|---:|")?;
        for (branch, n) in &self.hits {
            let mark = if *n < self.floor() {
                " (below the floor)"
            } else {
                ""
            };
            writeln!(f, "| {branch} | {n}{mark} |")?;
        }
        for (branch, n) in &self.unlisted {
            writeln!(f, "| {branch} | {n} (not in the model's list: no floor) |")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_branch_below_its_floor_is_named() {
        let mut c = Coverage::new("x::explored", &["granted", "refused"]);
        c.histories = DEFAULT_HISTORIES;
        for _ in 0..FLOOR {
            c.hit("granted");
        }
        c.hit("refused");
        c.hit("unlisted");
        assert_eq!(c.short(), vec![("refused", 1)]);
        assert_eq!(c.hits("granted"), FLOOR);
        assert_eq!(c.hits("unlisted"), 1);
        let table = c.to_string();
        assert!(
            table.contains("| refused | 1 (below the floor) |"),
            "{table}"
        );
        assert!(
            table.contains("| unlisted | 1 (not in the model's list"),
            "{table}"
        );
        c.histories = 1000;
        assert_eq!(c.floor(), 500);
    }
}
