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
    assert!(
        step(&run, 1).contains("A acquires: granted, valid for 9.9 s"),
        "{run:#?}"
    );
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

/// The explorer catches every wrong Redlock of the catalogue on its own, shrinks the situation,
/// names the seed that replays it, and says the same on a second run.
#[test]
fn the_explorer_catches_each_wrong_redlock_and_replays_it() {
    use grader::catalogue::wrong::ALL;
    use grader::checks;
    use grader::report::Verdict;
    let explored = checks::named("redlock::explored").expect("the check");
    let wrong_redlocks = ALL.iter().filter(|w| w.fails.starts_with("redlock::"));
    let mut caught = 0;
    for wrong in wrong_redlocks {
        let first = explored.run(&wrong.lock).expect("runs");
        let Verdict::Fail(report) = &first else {
            panic!(
                "{}: the explorer should fail it, got {first:?}",
                wrong.lock.name
            );
        };
        let text = report.to_string();
        if std::env::var_os("SHOW_REPORTS").is_some() {
            println!("{text}");
        }
        assert!(text.contains("Replay: GRADER_SEED=0x"), "{text}");
        assert!(text.contains("(seed 0x"), "{text}");
        assert_eq!(
            explored.run(&wrong.lock).expect("runs"),
            first,
            "{}: same verdict twice",
            wrong.lock.name
        );
        caught += 1;
    }
    assert_eq!(caught, 7, "every wrong Redlock of the catalogue was tried");
}
