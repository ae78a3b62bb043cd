//! Points per check, for the results instructors read: one table, here.
//!
//! Every check of [`crate::checks::CHECKS`] has exactly one row (a test
//! keeps the two in step), so a new check cannot go ungraded. The weights
//! follow the work: a direct check is worth 3, an exercise's `explored`
//! check (hundreds of histories against the model) 5, and a story (a
//! scenario, which replays one with the whole lock once the exercises pass,
//! or one of Redlock's) 2. To weigh
//! the checks differently for a class, change the numbers here; every output
//! format reads them from this table.

/// `(check, points)`, in the course's order.
pub const POINTS: &[(&str, u32)] = &[
    ("token::unique", 3),
    ("token::unguessable", 3),
    ("acquire::takes_a_free_lock", 3),
    ("acquire::refuses_a_held_lock", 3),
    ("acquire::sets_the_ttl_in_milliseconds", 3),
    ("acquire::one_winner_among_three", 3),
    ("acquire::no_lock_without_ttl_after_a_crash", 3),
    ("acquire::a_crashed_holder_frees_the_lock", 3),
    ("acquire::explored", 5),
    ("release::releases_its_own_lock", 3),
    ("release::leaves_another_holders_lock", 3),
    ("release::never_deletes_a_lock_that_changed_hands", 3),
    ("release::slow_job", 3),
    ("release::explored", 5),
    ("fencing::grants_a_token", 3),
    ("fencing::denied_while_held", 3),
    ("fencing::sets_the_ttl_in_milliseconds", 3),
    ("fencing::tokens_grow_with_every_grant", 3),
    ("fencing::lock_and_token_in_one_step", 3),
    ("fencing::gc_pause_fenced", 3),
    ("fencing::explored", 5),
    ("storage::accepts_newer_and_equal_tokens", 3),
    ("storage::rejects_an_older_token", 3),
    ("storage::remembers_the_highest_token", 3),
    ("storage::fences_reads", 3),
    ("storage::checks_and_writes_in_one_step", 3),
    ("storage::fenced_reads", 3),
    ("storage::long_pause_fenced", 3),
    ("storage::explored", 5),
    ("extend::renews_its_own_lock", 3),
    ("extend::leaves_another_holders_lock", 3),
    ("extend::never_brings_back_a_lost_lock", 3),
    ("extend::never_renews_a_lock_that_changed_hands", 3),
    ("extend::explored", 5),
    ("keeper::renews_in_time", 3),
    ("keeper::stops_the_job_when_a_renewal_fails", 3),
    ("keeper::renewal_pause", 3),
    ("keeper::explored", 5),
    ("redlock::takes_a_majority", 3),
    ("redlock::counts_the_time_spent", 3),
    ("redlock::carries_on_without_two_nodes", 3),
    ("redlock::refuses_without_a_majority", 3),
    ("redlock::gives_up_when_the_ttl_is_spent", 3),
    ("redlock::release_frees_every_node", 3),
    ("redlock::release_spares_another_holder", 3),
    ("redlock::release_compares_and_deletes_in_one_step", 3),
    ("redlock::explored", 5),
    ("redlock::clock_jump", 2),
    ("redlock::restart_without_persistence", 2),
    ("redlock::delayed_restart", 2),
    ("redlock::pause_longer_than_validity", 2),
    ("redlock::pause_longer_than_validity_fenced", 2),
    ("scenarios::normal_run", 2),
    ("scenarios::race", 2),
    ("scenarios::gc_pause", 2),
    ("scenarios::gc_pause_fenced", 2),
    ("scenarios::fenced_reads", 2),
    ("scenarios::slow_job", 2),
    ("scenarios::long_pause", 2),
    ("scenarios::long_pause_fenced", 2),
    ("scenarios::crashed_holder", 2),
    ("scenarios::failover_lost_lock", 2),
    ("scenarios::failover_wait", 2),
];

/// The points the check `name` is worth; 0 for a name the table does not know
/// (which the table's test rules out for every real check).
pub fn of(name: &str) -> u32 {
    POINTS
        .iter()
        .find(|(check, _)| *check == name)
        .map_or(0, |(_, points)| *points)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::CHECKS;

    #[test]
    fn every_check_has_one_row_and_every_row_a_check() {
        let checks: Vec<&str> = CHECKS.iter().map(|c| c.name).collect();
        let rows: Vec<&str> = POINTS.iter().map(|(name, _)| *name).collect();
        for check in &checks {
            let n = rows.iter().filter(|row| *row == check).count();
            assert_eq!(n, 1, "{check} has {n} rows in POINTS; it needs exactly one");
        }
        for row in &rows {
            assert!(
                checks.contains(row),
                "POINTS names {row}, which is no check"
            );
        }
        assert!(POINTS.iter().all(|(_, points)| *points > 0));
    }
}
