//! Grades your lock: one test per check, exercise by exercise.
//!
//! `cargo test -p exercises` runs them all; `cargo test -p exercises release::`
//! runs one exercise's. Each check tests one exercise's functions, with the
//! course's reference solution standing in for the others, so you can work
//! through the files in order. The `scenarios::` checks at the end play the
//! course's stories with your whole lock.
//!
//! Each check runs in a process of its own: whatever your code does (exit,
//! abort, print), every check ends with a verdict or fails, and what your
//! code printed is shown under its failed check.
//!
//! Don't edit this file: the grader's own tests make sure it lists every check.

use grader::Lock;

/// Your lock, function by function.
const YOURS: Lock = Lock {
    name: "your lock",
    new_token: exercises::token::new_token,
    acquire: exercises::acquire::acquire,
    release: exercises::release::release,
    acquire_fenced: exercises::fencing::acquire_fenced,
    fenced_write: exercises::storage::fenced_write,
    fenced_read: exercises::storage::fenced_read,
    extend: exercises::extend::extend,
    keep_alive: exercises::keeper::keep_alive,
    redlock_acquire: exercises::redlock::redlock_acquire,
    redlock_release: exercises::redlock::redlock_release,
};

/// The checks, in the order they are reported: `checks!(exercise { check, … } …)`.
macro_rules! checks {
    ($($exercise:ident { $($check:ident),* $(,)? })*) => {
        const CHECKS: &[&str] = &[$($(concat!(stringify!($exercise), "::", stringify!($check)),)*)*];
    };
}

fn main() {
    grader::harness::main(&YOURS, CHECKS)
}

checks! {
    token {
        unique,
        unguessable,
    }
    acquire {
        takes_a_free_lock,
        refuses_a_held_lock,
        sets_the_ttl_in_milliseconds,
        one_winner_among_three,
        no_lock_without_ttl_after_a_crash,
        a_crashed_holder_frees_the_lock,
        explored,
    }
    release {
        releases_its_own_lock,
        leaves_another_holders_lock,
        never_deletes_a_lock_that_changed_hands,
        slow_job,
        explored,
    }
    fencing {
        grants_a_token,
        denied_while_held,
        sets_the_ttl_in_milliseconds,
        tokens_grow_with_every_grant,
        lock_and_token_in_one_step,
        gc_pause_fenced,
        explored,
    }
    storage {
        accepts_newer_and_equal_tokens,
        rejects_an_older_token,
        remembers_the_highest_token,
        fences_reads,
        checks_and_writes_in_one_step,
        fenced_reads,
        long_pause_fenced,
        explored,
    }
    extend {
        renews_its_own_lock,
        leaves_another_holders_lock,
        never_brings_back_a_lost_lock,
        never_renews_a_lock_that_changed_hands,
        explored,
    }
    keeper {
        renews_in_time,
        stops_the_job_when_a_renewal_fails,
        renewal_pause,
        explored,
    }
    redlock {
        takes_a_majority,
        counts_the_time_spent,
        carries_on_without_two_nodes,
        refuses_without_a_majority,
        gives_up_when_the_ttl_is_spent,
        release_frees_every_node,
        release_spares_another_holder,
        release_compares_and_deletes_in_one_step,
        explored,
        clock_jump,
        restart_without_persistence,
        delayed_restart,
        pause_longer_than_validity,
        pause_longer_than_validity_fenced,
    }
    scenarios {
        normal_run,
        race,
        gc_pause,
        gc_pause_fenced,
        fenced_reads,
        slow_job,
        long_pause,
        long_pause_fenced,
        crashed_holder,
        failover_lost_lock,
        failover_wait,
    }
}
