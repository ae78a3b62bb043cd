//! The Redlock stories, played with the reference Redlock on five real nodes, end as the debate
//! says they do: Kleppmann's clock jump and a restart without persistence give two clients a
//! majority each and lose an update, the delayed restart prevents it, a client paused past its
//! validity writes late, and with fencing tokens its late write is rejected. Each play is a
//! timeline (the book's `redlock-*` files, held to fresh plays by `book_timelines.rs`) and a list
//! of lines, kept as a snapshot: what a failure report shows.

use grader::reference::LOCK as REFERENCE;
use grader::run::{Run, run};
use grader::scenario::{named as story, redlock::all};
use grader::story::Fault;
use grader::timeline::{ActionKind, Lane, NodeHealth, Note, Second, State, Timeline};

fn played(name: &str) -> Run {
    let story = story(name).unwrap_or_else(|| panic!("no story {name}"));
    let played = run(&story, &REFERENCE).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(played.halt.is_none(), "{name}: the reference failed");
    played
}

fn timeline(name: &str) -> Timeline {
    played(name).timeline
}

/// Second `t` of a run.
fn at(run: &Timeline, t: u64) -> &Second {
    run.seconds
        .iter()
        .find(|s| s.t == t)
        .unwrap_or_else(|| panic!("{}: no second {t}", run.name))
}

/// The text of `client`'s action of `kind` in second `t`, if it took one.
fn action(run: &Timeline, t: u64, client: &str, kind: ActionKind) -> Option<String> {
    at(run, t).clients[client]
        .actions
        .iter()
        .find(|a| a.kind == kind)
        .map(|a| a.text.clone())
}

/// Each node's holder at the end of second `t`, "·" for none, as "A A A · ·".
fn holders(run: &Timeline, t: u64) -> String {
    let second = at(run, t);
    run.nodes
        .iter()
        .map(|n| second.nodes[n].holder.clone().unwrap_or_else(|| "·".into()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every action taken on a lock its client did not hold: (second, client, text, rejected).
fn unsafe_actions(run: &Timeline) -> Vec<(u64, String, String, bool)> {
    run.seconds
        .iter()
        .flat_map(|s| {
            run.unsafe_actions(s)
                .map(move |(c, a)| (s.t, c.to_owned(), a.text.clone(), a.rejected))
        })
        .collect()
}

#[test]
fn a_clock_jump_gives_two_clients_a_majority() {
    let run = timeline("clock_jump");
    let granted = action(&run, 0, "A", ActionKind::Acquired);
    assert_eq!(
        granted.as_deref(),
        Some("acquired the lock on nodes 1, 2 and 3, valid for 9.8 s")
    );
    assert!(
        at(&run, 2)
            .notes
            .contains(&Note::expiry("A's key expires on node 3")),
        "{:#?}",
        at(&run, 2).notes
    );
    assert_eq!(at(&run, 2).nodes["node 3"].clock_ahead_s, 10);
    let granted = action(&run, 2, "B", ActionKind::Acquired);
    assert_eq!(
        granted.as_deref(),
        Some("acquired the lock on nodes 3, 4 and 5, valid for 9.9 s")
    );
    assert_eq!(holders(&run, 2), "A A B B B");
    assert_eq!(at(&run, 2).holder.as_deref(), Some("B"));
    // Both believe they hold the lock; only B holds a majority.
    assert!(at(&run, 3).clients["A"].believes && at(&run, 3).clients["B"].believes);
    assert_eq!(
        unsafe_actions(&run),
        vec![(4, "A".into(), "wrote 1".into(), false)]
    );
    assert_eq!(run.outcome.counter, 1);
    assert!(
        run.outcome.summary.contains("one update was lost"),
        "{}",
        run.outcome.summary
    );
}

#[test]
fn a_restart_without_persistence_grants_the_lock_twice() {
    let run = timeline("restart_without_persistence");
    assert_eq!(holders(&run, 0), "A A A · ·");
    assert!(
        at(&run, 2)
            .notes
            .contains(&Note::fault("A's key is lost on node 3")),
        "{:#?}",
        at(&run, 2).notes
    );
    assert!(action(&run, 2, "B", ActionKind::Acquired).is_some());
    assert_eq!(holders(&run, 2), "A A B B B");
    assert_eq!(
        unsafe_actions(&run),
        vec![(4, "A".into(), "wrote 1".into(), false)]
    );
    assert_eq!(run.outcome.counter, 1);
}

#[test]
fn a_delayed_restart_prevents_the_second_grant() {
    let run = timeline("delayed_restart");
    for t in 2..5 {
        assert!(
            action(&run, t, "B", ActionKind::Denied).is_some(),
            "t = {t}: B is refused"
        );
        assert_eq!(at(&run, t).holder.as_deref(), Some("A"), "t = {t}");
    }
    assert_eq!(
        at(&run, 3).nodes["node 3"].health,
        grader::timeline::NodeHealth::Down
    );
    // Once A releases, B gets the four nodes that run.
    let granted = action(&run, 5, "B", ActionKind::Acquired);
    assert_eq!(
        granted.as_deref(),
        Some("acquired the lock on nodes 1, 2, 4 and 5, valid for 9.9 s")
    );
    assert!(
        unsafe_actions(&run).is_empty(),
        "{:#?}",
        unsafe_actions(&run)
    );
    assert_eq!(run.outcome.counter, 2);
    assert!(
        run.outcome.summary.ends_with("every update counted."),
        "{}",
        run.outcome.summary
    );
}

#[test]
fn a_pause_longer_than_the_validity_lets_another_client_in() {
    let run = timeline("pause_longer_than_validity");
    let granted = action(&run, 0, "A", ActionKind::Acquired);
    assert_eq!(
        granted.as_deref(),
        Some("acquired the lock on every node, valid for 9.9 s")
    );
    assert!(
        at(&run, 10)
            .notes
            .contains(&Note::expiry("A's key expires on every node")),
        "{:#?}",
        at(&run, 10).notes
    );
    assert!(action(&run, 10, "B", ActionKind::Acquired).is_some());
    // Frozen, A cannot see time pass: it still believes when it wakes up.
    assert!(at(&run, 14).clients["A"].believes);
    assert_eq!(
        unsafe_actions(&run),
        vec![(15, "A".into(), "wrote 1".into(), false)]
    );
    assert_eq!(run.outcome.counter, 1);
    assert!(
        run.outcome.summary.contains("one update was lost"),
        "{}",
        run.outcome.summary
    );
}

#[test]
fn with_fencing_the_paused_clients_write_is_rejected() {
    let run = timeline("pause_longer_than_validity_fenced");
    assert!(run.fencing);
    assert_eq!(at(&run, 0).clients["A"].token, Some(33));
    assert_eq!(at(&run, 10).clients["B"].token, Some(34));
    assert_eq!(at(&run, 12).highest_token, Some(34));
    assert_eq!(
        unsafe_actions(&run),
        vec![(15, "A".into(), "write rejected: 33 < 34".into(), true)]
    );
    assert!(
        !at(&run, 15).clients["A"].believes,
        "A knows its job failed"
    );
    assert_eq!(run.outcome.counter, 1);
    assert!(
        run.outcome
            .summary
            .contains("the storage refused A's stale request"),
        "{}",
        run.outcome.summary
    );
}

#[test]
fn every_story_is_a_valid_timeline_and_the_same_on_a_second_play() {
    for story in all() {
        let first = timeline(story.name);
        first
            .validate(story.timeline)
            .unwrap_or_else(|e| panic!("{}: {e}", story.name));
        assert_eq!(first.nodes.len(), 5);
        assert_eq!(
            first.outcome.counter, story.expected_counter,
            "{}: a correct Redlock's run ends elsewhere than the story says",
            story.name
        );
        assert_eq!(
            timeline(story.name).to_json(),
            first.to_json(),
            "{}: two plays, two timelines",
            story.name
        );
    }
}

/// The book's message diagram of a Redlock story shows what each call really sent: every attempt
/// to take the lock asks each of the five nodes once, a node that stayed paused or down through
/// a second answers none of that second's commands while a node that stayed up answers all, the
/// storage gets one command per read and write (and per fencing token taken), and no message
/// shows a client's raw token or the run's key prefix.
#[test]
fn every_story_s_messages_are_the_commands_each_call_sent() {
    for story in all() {
        let run = timeline(story.name);
        let name = story.name;
        assert!(!run.messages.is_empty(), "{name}: no messages");
        for m in &run.messages {
            assert!(
                !m.command.contains("token-of-") && !m.reply.contains("token-of-"),
                "{name}: {m:?} shows a raw token"
            );
            assert!(
                !m.command.contains("dlcourse:"),
                "{name}: {m:?} shows the key prefix"
            );
        }
        for second in &run.seconds {
            let t = second.t;
            let health = |node: &str, t: u64| at(&run, t).nodes[node].health;
            for client in &run.clients {
                let sent: Vec<_> = run
                    .messages
                    .iter()
                    .filter(|m| m.t == t && &m.client == client)
                    .collect();
                let did = &second.clients[client].actions;
                let has =
                    |kinds: &[ActionKind]| did.iter().filter(|a| kinds.contains(&a.kind)).count();
                let attempts = has(&[ActionKind::Acquired, ActionKind::Denied]);
                for node in &run.nodes {
                    let sets = sent
                        .iter()
                        .filter(|m| {
                            m.to == Lane::Node(node.clone()) && m.command.starts_with("SET ")
                        })
                        .count();
                    assert_eq!(
                        sets, attempts,
                        "{name} at t = {t}: {client} sent {sets} SETs to {node} in {attempts} attempts"
                    );
                    let steady = t > 0 && health(node, t - 1) == health(node, t);
                    for m in sent.iter().filter(|m| m.to == Lane::Node(node.clone())) {
                        if steady {
                            let up = health(node, t) == NodeHealth::Up;
                            assert_eq!(
                                m.answered,
                                up,
                                "{name} at t = {t}: {node} ({:?}) and {m:?}",
                                health(node, t)
                            );
                        }
                    }
                }
                let storage = sent.iter().filter(|m| m.to == Lane::Storage).count();
                let reads_and_writes = has(&[
                    ActionKind::Read,
                    ActionKind::Wrote,
                    ActionKind::WriteRejected,
                ]);
                let tokens = if run.fencing {
                    has(&[ActionKind::Acquired])
                } else {
                    0
                };
                assert_eq!(
                    storage,
                    reads_and_writes + tokens,
                    "{name} at t = {t}: {client} sent {storage} commands to the storage for {reads_and_writes} reads and writes and {tokens} fencing tokens"
                );
            }
        }
        let silent = run.messages.iter().filter(|m| !m.answered).count();
        if story.faults.iter().any(|(_, f)| f.node().is_some()) {
            assert!(
                silent > 0,
                "{name}: its nodes are hurt, yet every command was answered"
            );
        }
    }
}

#[test]
fn every_story_matches_its_snapshot() {
    for story in all() {
        let run = played(story.name).lines;
        insta::with_settings!({ snapshot_suffix => story.name, prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!("redlock_story", run.join("\n"));
        });
    }
}

/// A Redlock that counts a majority wrong parts from the reference in the clock-jump story at the
/// act where it answers differently, and the report names that act and both answers.
#[test]
fn a_wrong_redlock_parts_from_the_story_at_the_act_it_gets_wrong() {
    use grader::checks;
    use grader::report::Verdict;
    use grader::verdict::Property;
    use lock_catalogue::wrong::ALL;
    let quorum = ALL
        .iter()
        .find(|w| w.lock.name == "Redlock with a quorum of 2")
        .expect("in the catalogue");
    let check = checks::named("redlock::clock_jump").expect("the check");
    let verdict = check.run(&quorum.lock).expect("runs");
    let Verdict::Fail(report) = verdict else {
        panic!("the quorum of 2 should fail the clock jump, got {verdict:?}");
    };
    assert_eq!(report.property(), Some(Property::RedlockSameAsReference));
    insta::with_settings!({ prepend_module_to_snapshot => false }, {
        insta::assert_snapshot!("redlock_story_report", report.to_string());
    });
}

/// The explorer catches every wrong Redlock of the catalogue on its own, shrinks the situation,
/// names the seed that replays it, and says the same on a second run.
#[test]
fn the_explorer_catches_each_wrong_redlock_and_replays_it() {
    use grader::checks;
    use grader::report::Verdict;
    use lock_catalogue::wrong::ALL;
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
    assert_eq!(caught, 12, "every wrong Redlock of the catalogue was tried");
}

/// A client's crash is the one vocabulary's fault on Redlock's nodes too: A crashes in place of
/// its write, its keys run out on their own, and B does its job.
#[test]
fn a_client_crash_is_the_same_fault_on_the_nodes() {
    let mut crashing = story("pause_longer_than_validity").expect("the pause story");
    crashing.faults = vec![(2, Fault::Crash("A"))];
    let played = run(&crashing, &REFERENCE).expect("a play");
    assert!(played.halt.is_none());
    let run = &played.timeline;
    assert_eq!(at(run, 2).clients["A"].state, State::Crashed);
    assert_eq!(
        action(run, 2, "A", ActionKind::Crashed).as_deref(),
        Some("crashed")
    );
    assert!(action(run, 2, "A", ActionKind::Wrote).is_none());
    assert!(
        run.seconds
            .iter()
            .all(|s| s.t < 2 || s.clients["A"].state == State::Crashed)
    );
    assert_eq!(run.outcome.counter, 1);
    assert!(
        run.outcome.summary.contains("A crashed before writing"),
        "{}",
        run.outcome.summary
    );
    assert!(played.lines.iter().any(|l| l.contains("A crashed")));
}
