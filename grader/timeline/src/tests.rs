//! The JSON's shape, the rules [`Timeline::validate`] enforces, and the
//! order of the ✗ marks.

use super::*;

fn client(state: State, believes: bool, actions: Vec<Action>) -> ClientSecond {
    ClientSecond {
        state,
        believes,
        token: None,
        actions,
    }
}

fn wrote(text: &str, unsafe_: bool) -> Action {
    Action {
        kind: ActionKind::Wrote,
        text: text.into(),
        unsafe_,
        rejected: false,
    }
}

/// Two seconds, with the columns out of alphabetical order: B, then A.
fn sample() -> Timeline {
    let second = |t: u64, a: Vec<Action>, b: Vec<Action>| Second {
        t,
        clients: BTreeMap::from([
            ("A".to_string(), client(State::Working, true, a)),
            ("B".to_string(), client(State::Waiting, false, b)),
        ]),
        holder: Some("A".into()),
        ttl_left_s: Some(10 - t),
        counter: 0,
        highest_token: None,
        notes: Vec::new(),
        nodes: BTreeMap::new(),
    };
    Timeline {
        name: "sample".into(),
        title: "A sample".into(),
        story: "A and B both write.".into(),
        implementation: "reference".into(),
        ttl_s: 10,
        fencing: false,
        clients: vec!["B".into(), "A".into()],
        nodes: Vec::new(),
        seconds: vec![
            second(0, vec![], vec![]),
            second(
                1,
                vec![wrote("wrote 1", true)],
                vec![wrote("wrote 1", true)],
            ),
        ],
        outcome: Outcome {
            counter: 1,
            jobs: 2,
            summary: "Two jobs, counter = 1: one update was lost.".into(),
        },
        messages: vec![Message {
            t: 0,
            client: "A".into(),
            to: Lane::Redis,
            command: "SET lock <A's token> NX PX 10000".into(),
            reply: "OK".into(),
            answered: true,
        }],
    }
}

#[test]
fn json_round_trips_byte_for_byte() {
    let timeline = sample();
    let json = timeline.to_json();
    let back: Timeline = serde_json::from_str(&json).expect("parses");
    assert_eq!(back, timeline);
    assert_eq!(back.to_json(), json);
    assert!(json.contains(r#""unsafe": true"#), "{json}");
    assert!(json.contains(r#""state": "waiting""#), "{json}");
}

#[test]
fn a_file_without_messages_still_reads() {
    let mut timeline = sample();
    timeline.messages.clear();
    let json = timeline.to_json();
    assert!(!json.contains("\"messages\""), "{json}");
    let back: Timeline = serde_json::from_str(&json).expect("parses without messages");
    assert_eq!(back, timeline);
    assert!(sample().to_json().contains(r#""to": "redis""#));
}

#[test]
fn unknown_fields_are_refused() {
    let json = sample()
        .to_json()
        .replacen("\"unsafe\":", "\"unsafe_\":", 1);
    let err = serde_json::from_str::<Timeline>(&json).expect_err("unknown field");
    assert!(err.to_string().contains("unsafe_"), "{err}");
}

#[test]
fn validate_accepts_a_whole_timeline() {
    assert_eq!(sample().validate("sample"), Ok(()));
}

#[test]
fn validate_refuses_a_wrong_name_a_gap_and_a_missing_client() {
    let timeline = sample();
    assert!(timeline.validate("other").is_err());

    let mut gap = sample();
    gap.seconds[1].t = 2;
    let err = gap.validate("sample").expect_err("gap");
    assert!(err.contains("seconds[1] has t = 2"), "{err}");

    let mut missing = sample();
    missing.seconds[1].clients.remove("B");
    let err = missing.validate("sample").expect_err("missing client");
    assert!(err.contains("client \"B\" is missing"), "{err}");

    let mut stranger = sample();
    stranger.seconds[0].holder = Some("C".into());
    assert!(stranger.validate("sample").is_err());
}

/// The sample on two nodes: both hold A's token in every second.
fn on_two_nodes() -> Timeline {
    let mut timeline = sample();
    timeline.nodes = vec!["node 1".into(), "node 2".into()];
    for second in &mut timeline.seconds {
        for node in &timeline.nodes {
            let state = NodeSecond {
                health: NodeHealth::Up,
                role: None,
                holder: Some("A".into()),
                clock_ahead_s: 0,
            };
            second.nodes.insert(node.clone(), state);
        }
    }
    timeline
}

#[test]
fn validate_holds_every_second_to_the_nodes() {
    assert_eq!(on_two_nodes().validate("sample"), Ok(()));

    let mut missing = on_two_nodes();
    missing.seconds[1].nodes.remove("node 2");
    let err = missing.validate("sample").expect_err("missing node");
    assert!(err.contains("t = 1: node \"node 2\" is missing"), "{err}");

    let mut stranger = on_two_nodes();
    let node = stranger.seconds[0].nodes.get_mut("node 1").expect("node 1");
    node.holder = Some("C".into());
    let err = stranger.validate("sample").expect_err("unknown holder");
    assert!(err.contains("holds \"C\""), "{err}");

    let mut twice = on_two_nodes();
    twice.nodes.push("node 1".into());
    assert!(twice.validate("sample").is_err());
}

/// The sample on two nodes, with A's SET to node 2 unanswered.
fn with_a_node_message() -> Timeline {
    let mut timeline = on_two_nodes();
    timeline.messages.push(Message {
        t: 1,
        client: "A".into(),
        to: Lane::Node("node 2".into()),
        command: "SET lock <A's token> NX PX 10000".into(),
        reply: "no reply within 50 ms: the node is paused".into(),
        answered: false,
    });
    timeline
}

#[test]
fn a_node_lane_is_the_node_s_name_and_a_missing_reply_says_so() {
    let timeline = with_a_node_message();
    let json = timeline.to_json();
    assert!(json.contains(r#""to": "node 2""#), "{json}");
    assert_eq!(json.matches(r#""answered": false"#).count(), 1, "{json}");
    assert!(!json.contains(r#""answered": true"#), "{json}");
    let back: Timeline = serde_json::from_str(&json).expect("reads back");
    assert_eq!(back, timeline);
    assert_eq!(back.messages[0].to, Lane::Redis);
    assert!(
        back.messages[0].answered,
        "an answered message reads back answered"
    );
}

#[test]
fn validate_holds_every_message_to_its_second_client_and_lane() {
    assert_eq!(with_a_node_message().validate("sample"), Ok(()));

    let mut stranger = with_a_node_message();
    stranger.messages[1].to = Lane::Node("node 7".into());
    let err = stranger.validate("sample").expect_err("unknown node");
    assert!(err.contains("goes to \"node 7\""), "{err}");

    let mut nobody = with_a_node_message();
    nobody.messages[1].client = "C".into();
    let err = nobody.validate("sample").expect_err("unknown client");
    assert!(err.contains("sent by \"C\""), "{err}");

    let mut late = with_a_node_message();
    late.messages[1].t = 2;
    let err = late.validate("sample").expect_err("after the end");
    assert!(err.contains("t = 2, after the last second"), "{err}");

    let mut named = with_a_node_message();
    named.nodes[1] = "storage".into();
    let err = named.validate("sample").expect_err("a node called storage");
    assert!(err.contains("may not be called \"storage\""), "{err}");
}

#[test]
fn a_node_round_trips_through_json_and_one_server_writes_no_nodes() {
    let timeline = on_two_nodes();
    let back: Timeline = serde_json::from_str(&timeline.to_json()).expect("reads back");
    assert_eq!(back, timeline);
    assert!(!sample().to_json().contains("\"nodes\""));
}

#[test]
fn unsafe_actions_follow_the_columns() {
    let timeline = sample();
    let marks: Vec<&str> = timeline
        .unsafe_actions(&timeline.seconds[1])
        .map(|(name, _)| name)
        .collect();
    assert_eq!(marks, ["B", "A"]);
    assert_eq!(timeline.unsafe_actions(&timeline.seconds[0]).count(), 0);
}

#[test]
fn labels_are_the_json_words() {
    for state in [
        State::Idle,
        State::Waiting,
        State::Working,
        State::Paused,
        State::Crashed,
        State::Done,
    ] {
        let json = serde_json::to_string(&state).expect("serialises");
        assert_eq!(json, format!("\"{}\"", state.label()));
    }
}

#[test]
fn tokens_are_renumbered_in_the_order_granted() {
    let mut timeline = sample();
    timeline.seconds[0].clients.get_mut("A").expect("A").token = Some(33);
    let b = timeline.seconds[1].clients.get_mut("B").expect("B");
    b.token = Some(35);
    b.actions = vec![wrote("write with token 35", false)];
    let renumbered = timeline.with_tokens_renumbered();
    let b = &renumbered.seconds[1].clients["B"];
    assert_eq!(renumbered.seconds[0].clients["A"].token, Some(1));
    assert_eq!(b.token, Some(2));
    assert_eq!(b.actions[0].text, "write with token 2");
}

#[test]
fn one_server_tables_have_no_nodes_column() {
    let table = sample().render(None);
    assert!(
        table
            .lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("t │ B ")),
        "{table}"
    );
    assert!(table.contains("│ key in Redis "), "{table}");
    assert!(!table.contains("nodes"), "{table}");
}

#[test]
fn the_table_marks_each_node_and_names_the_majority() {
    let mut timeline = on_two_nodes();
    let node = timeline.seconds[1].nodes.get_mut("node 1").expect("node 1");
    node.health = NodeHealth::Paused;
    node.clock_ahead_s = 3;
    let table = timeline.render(None);
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[1].starts_with("nodes: node 1, node 2 ("), "{table}");
    assert!(lines[2].contains("│ majority holds │ nodes  │"), "{table}");
    // Each node keeps its place: node 1's mark is padded to its widest, so
    // node 2's A stays under node 2's A.
    assert!(lines[4].contains("│ A    A │"), "{table}");
    assert!(lines[5].contains("│ ‖+3s A │"), "{table}");
}

#[test]
fn the_table_brackets_the_primary_and_names_it() {
    let mut timeline = on_two_nodes();
    for second in &mut timeline.seconds {
        for (name, node) in &mut second.nodes {
            node.role = Some(if name == "node 1" {
                NodeRole::Primary
            } else {
                NodeRole::Replica
            });
        }
    }
    timeline.seconds[1]
        .nodes
        .get_mut("node 2")
        .expect("node 2")
        .health = NodeHealth::Down;
    let table = timeline.render(None);
    assert!(table.contains("│ primary holds │ nodes │"), "{table}");
    assert!(table.contains("│ [A] A │"), "{table}");
    assert!(table.contains("│ [A] ✗ │"), "{table}");
}

#[test]
fn a_second_whose_nodes_changed_is_not_folded() {
    let mut quiet = on_two_nodes();
    for second in &mut quiet.seconds {
        for client in second.clients.values_mut() {
            client.actions.clear();
        }
    }
    let folded = quiet.render(None);
    assert!(folded.contains("\n0–1 │"), "{folded}");
    let mut paused = quiet.clone();
    let node = paused.seconds[1].nodes.get_mut("node 2").expect("node 2");
    node.health = NodeHealth::Paused;
    let table = paused.render(None);
    assert!(!table.contains("0–1"), "{table}");
    assert!(table.contains("│ A ‖   │"), "{table}");
}

#[test]
fn the_holder_must_be_the_one_the_nodes_give() {
    let mut three = on_two_nodes();
    three.nodes.push("node 3".into());
    for second in &mut three.seconds {
        let mut free = second.nodes["node 1"].clone();
        free.holder = None;
        second.nodes.insert("node 3".into(), free);
    }
    // Two of three hold A's token: a majority.
    assert_eq!(three.validate("sample"), Ok(()));
    // One of three does not, whatever the second says.
    let mut one = three.clone();
    one.seconds[1]
        .nodes
        .get_mut("node 2")
        .expect("node 2")
        .holder = None;
    let err = one.validate("sample").expect_err("no majority");
    assert!(
        err.contains(
            "t = 1: \"holder\" is Some(\"A\"), but by the majority rule the nodes give None"
        ),
        "{err}"
    );
    // A node that is down counts for the token it still keeps others from.
    let mut down = three;
    down.seconds[1]
        .nodes
        .get_mut("node 2")
        .expect("node 2")
        .health = NodeHealth::Down;
    assert_eq!(down.validate("sample"), Ok(()));
}

#[test]
fn the_primary_rule_reads_the_primary() {
    let mut pair = on_two_nodes();
    for second in &mut pair.seconds {
        second.nodes.get_mut("node 1").expect("node 1").role = Some(NodeRole::Replica);
        let primary = second.nodes.get_mut("node 2").expect("node 2");
        primary.role = Some(NodeRole::Primary);
        primary.holder = None;
    }
    let err = pair
        .validate("sample")
        .expect_err("the primary holds nothing");
    assert!(
        err.contains("by the primary rule the nodes give None"),
        "{err}"
    );
    for second in &mut pair.seconds {
        second.holder = None;
        second.ttl_left_s = None;
    }
    assert_eq!(pair.validate("sample"), Ok(()));
}

#[test]
fn notes_say_their_kind_in_the_json() {
    let mut timeline = sample();
    timeline.seconds[1].notes = vec![
        Note::fault("node 4 is killed"),
        Note::expiry("A's lock expired"),
    ];
    let json = timeline.to_json();
    assert!(json.contains("\"kind\": \"fault\""), "{json}");
    assert!(json.contains("\"kind\": \"expiry\""), "{json}");
    let back: Timeline = serde_json::from_str(&json).expect("reads back");
    assert_eq!(back, timeline);
    let plain = json.replace(
        "{\n          \"kind\": \"fault\",\n          \"text\": \"node 4 is killed\"\n        }",
        "\"node 4 is killed\"",
    );
    assert_ne!(plain, json, "the test's edit must apply");
    assert!(
        serde_json::from_str::<Timeline>(&plain).is_err(),
        "a bare string has no kind"
    );
}
