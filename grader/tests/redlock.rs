//! The Redlock stories, played with the reference Redlock on five real nodes, end as the debate
//! says they do: Kleppmann's clock jump and a restart without persistence give two clients a
//! majority each, the delayed restart prevents it, and a client paused past its validity finds
//! the lock taken. Each run is also kept as a snapshot, the record the book can show.

use grader::checks::redlock_stories::{STORIES, play, story};
use grader::reference::LOCK as REFERENCE;

fn lines(name: &str) -> Vec<String> {
    let story = story(name).unwrap_or_else(|| panic!("no story {name}"));
    let played = play(story, &REFERENCE).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(played.halt.is_none(), "{name}: the reference failed");
    played.lines
}

/// The line of step `n` (1-based).
fn step(lines: &[String], n: usize) -> &str {
    &lines[n - 1]
}

#[test]
fn a_clock_jump_gives_two_clients_a_majority() {
    let run = lines("clock_jump");
    assert!(step(&run, 3).contains("A acquires: granted"), "{run:#?}");
    assert!(step(&run, 3).ends_with("nodes: A A A ‖ ‖"), "{run:#?}");
    assert!(step(&run, 7).contains("B acquires: granted"), "{run:#?}");
    assert!(step(&run, 7).ends_with("nodes: A A B B B"), "{run:#?}");
}

#[test]
fn a_restart_without_persistence_grants_the_lock_twice() {
    let run = lines("restart_without_persistence");
    assert!(step(&run, 3).contains("A acquires: granted"), "{run:#?}");
    assert!(step(&run, 7).contains("B acquires: granted"), "{run:#?}");
    assert!(step(&run, 7).ends_with("nodes: A A B B B"), "{run:#?}");
}

#[test]
fn a_delayed_restart_prevents_the_second_grant() {
    let run = lines("delayed_restart");
    assert!(step(&run, 3).contains("A acquires: granted"), "{run:#?}");
    assert!(step(&run, 7).contains("B acquires: refused"), "{run:#?}");
    assert!(step(&run, 7).ends_with("nodes: A A ✗ · ·"), "{run:#?}");
    // Once A's TTL has run out everywhere, node 2 is back and B gets every node.
    assert!(step(&run, 9).contains("B acquires: granted"), "{run:#?}");
    assert!(step(&run, 9).ends_with("nodes: B B B B B"), "{run:#?}");
}

#[test]
fn a_pause_longer_than_the_validity_lets_another_client_in() {
    let run = lines("pause_longer_than_validity");
    assert!(step(&run, 1).contains("A acquires: granted, valid for 9898 ms"), "{run:#?}");
    assert!(step(&run, 3).contains("B acquires: granted"), "{run:#?}");
    assert!(step(&run, 3).ends_with("nodes: B B B B B"), "{run:#?}");
}

#[test]
fn every_story_matches_its_snapshot() {
    for story in STORIES {
        let run = lines(story.name);
        insta::with_settings!({ snapshot_suffix => story.name, prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!("redlock_story", run.join("\n"));
        });
    }
}
