//! Points per check, for the results instructors read (`cargo course grade`,
//! `cargo course batch`).
//!
//! Every check carries its points in its exercise's descriptor
//! ([`crate::exercise`]), so a new check cannot go ungraded. The weights
//! follow the work, and are named here: a direct check is worth [`DIRECT`],
//! an exercise's `explored` check (hundreds of histories against the model)
//! [`EXPLORED`], and a story (a scenario, which replays one with the whole
//! lock once the exercises pass, or one of Redlock's) [`STORY`]. To weigh
//! the checks differently for a class, change the numbers here or in the
//! descriptors; every output format reads them through [`of`].

/// A direct check: a call on a prepared world, a probe, or an exercise's own
/// play of a story.
pub const DIRECT: u32 = 3;

/// An exercise's `explored` check.
pub const EXPLORED: u32 = 5;

/// A story played with the whole lock, or one of Redlock's.
pub const STORY: u32 = 2;

/// The points the check `name` is worth; 0 for a name that is no check.
pub fn of(name: &str) -> u32 {
    crate::checks::named(name).map_or(0, |check| check.points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_is_worth_its_kind() {
        for check in crate::checks::CHECKS {
            assert_eq!(of(check.name), check.points);
            let redlock_story = crate::scenario::redlock::all()
                .iter()
                .any(|story| check.name == format!("redlock::{}", story.name));
            let kind = if check.name.ends_with("::explored") {
                EXPLORED
            } else if check.name.starts_with("scenarios::") || redlock_story {
                STORY
            } else {
                DIRECT
            };
            assert_eq!(
                check.points, kind,
                "{} is worth {}",
                check.name, check.points
            );
            assert!(check.points > 0, "{} is worth nothing", check.name);
        }
        assert_eq!(of("acquire::no_such_check"), 0);
    }
}
