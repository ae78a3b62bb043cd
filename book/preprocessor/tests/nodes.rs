//! Timelines on several Redis nodes: the hand-written fixtures
//! `tests/fixtures/nodes-redlock.json` (five independent nodes, one paused,
//! one down, a clock jump, two clients who each took a majority) and
//! `nodes-failover.json` (a primary, its replica, and a failover), drawn as
//! the grader's text table and as the book's strip.

use mdbook_timeline::library::Library;
use mdbook_timeline::strip;
use mdbook_timeline::timeline::{NodeHealth, Timeline};
use std::fs;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn fixture(name: &str) -> Timeline {
    Library::new(fixtures())
        .get(name)
        .unwrap_or_else(|e| panic!("fixture {name} loads: {e}"))
        .clone()
}

/// The `<td>`s of the strip row that starts with `<tr data-role="{start}`.
fn row<'a>(html: &'a str, start: &str) -> Vec<&'a str> {
    let line = html
        .lines()
        .find(|l| l.starts_with(&format!(r#"<tr data-role="{start}"#)))
        .unwrap_or_else(|| panic!("no row {start} in {html}"));
    line.split("<td ").skip(1).collect()
}

/// The rows' `data-role` (and node), in order.
fn row_roles(html: &str) -> Vec<String> {
    html.lines()
        .filter_map(|l| l.strip_prefix(r#"<tr data-role=""#))
        .map(|rest| {
            let role = rest.split('"').next().unwrap_or_default();
            match rest.split(r#"data-node=""#).nth(1) {
                Some(node) => format!("{role}:{}", node.split('"').next().unwrap_or_default()),
                None => role.to_owned(),
            }
        })
        .collect()
}

/// A cell's text, without its tags: what a reader sees in it.
fn text_of(cell: &str) -> String {
    let inside = cell.split_once('>').map_or("", |(_, rest)| rest);
    let inside = inside.split("</td>").next().unwrap_or_default();
    let mut text = String::new();
    let mut in_tag = false;
    for c in inside.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            _ if !in_tag => text.push(c),
            _ => {}
        }
    }
    text
}

#[test]
fn the_fixtures_round_trip_byte_for_byte() {
    for name in ["nodes-redlock", "nodes-failover"] {
        let text = fs::read_to_string(fixtures().join(format!("{name}.json"))).expect("reads");
        let timeline = fixture(name);
        assert_eq!(timeline.to_json(), text, "{name} does not round-trip");
    }
}

#[test]
fn the_redlock_table() {
    insta::assert_snapshot!(fixture("nodes-redlock").render(Some(3)));
}

#[test]
fn the_failover_table() {
    insta::assert_snapshot!(fixture("nodes-failover").render(None));
}

#[test]
fn the_redlock_strip() {
    insta::assert_snapshot!(strip::render(&fixture("nodes-redlock"), None));
}

#[test]
fn the_failover_strip() {
    insta::assert_snapshot!(strip::render(&fixture("nodes-failover"), None));
}

/// One row per node, in the timeline's order, right under the key row,
/// which says whose the lock is by the story's rule.
#[test]
fn node_rows_follow_the_key_row_in_node_order() {
    let timeline = fixture("nodes-redlock");
    let html = strip::render(&timeline, None);
    let mut want: Vec<String> = vec!["belief-row", "belief-row", "holder-row"]
        .into_iter()
        .map(String::from)
        .collect();
    want.extend(timeline.nodes.iter().map(|n| format!("node-row:{n}")));
    want.extend(["counter-row", "unsafe-row"].map(String::from));
    assert_eq!(row_roles(&html), want);
    assert!(html.contains(r#"<th scope="row" class="tl-rowhead">majority holds</th>"#));
    let failover = strip::render(&fixture("nodes-failover"), None);
    assert!(failover.contains(r#"<th scope="row" class="tl-rowhead">primary holds</th>"#));
    assert!(failover.contains("P primary, R replica"), "{failover}");
    assert!(!html.contains("P primary"), "Redlock's nodes have no roles");
}

/// Every node cell carries its second's health and holder, as in the JSON,
/// and shows it as text: the holder's letter, – none, ‖ paused, ⊘ down.
#[test]
fn every_node_cell_says_what_the_json_says() {
    for name in ["nodes-redlock", "nodes-failover"] {
        let timeline = fixture(name);
        let html = strip::render(&timeline, None);
        for node in &timeline.nodes {
            let cells = row(&html, &format!(r#"node-row" data-node="{node}"#));
            assert_eq!(cells.len(), timeline.seconds.len(), "{name}, {node}");
            for (second, cell) in timeline.seconds.iter().zip(&cells) {
                let state = &second.nodes[node];
                let health = match state.health {
                    NodeHealth::Up => "up",
                    NodeHealth::Paused => "paused",
                    NodeHealth::Down => "down",
                };
                let glyph = match state.health {
                    NodeHealth::Paused => "‖".to_owned(),
                    NodeHealth::Down => "⊘".to_owned(),
                    NodeHealth::Up => state.holder.clone().unwrap_or_else(|| "–".into()),
                };
                let t = second.t;
                assert!(
                    cell.starts_with(&format!(r#"data-second="{t}" data-health="{health}" "#)),
                    "{name}, {node}, t = {t}: {cell}"
                );
                let holder = state.holder.as_deref().unwrap_or("");
                assert!(
                    cell.contains(&format!(r#"data-holder="{holder}""#)),
                    "{cell}"
                );
                let text = text_of(cell);
                assert!(
                    text.contains(&glyph),
                    "{name}, {node}, t = {t}: {glyph} missing in {text:?} ({cell})"
                );
            }
        }
    }
}

/// The jump is marked in the second it happens, on its node only; the
/// role change in the second of the failover, on both nodes.
#[test]
fn a_clock_jump_and_a_role_change_are_marked_where_they_happen() {
    let marked = |name: &str, attr: &str| -> Vec<(String, u64)> {
        let timeline = fixture(name);
        let html = strip::render(&timeline, None);
        let mut found = Vec::new();
        for node in &timeline.nodes {
            for (t, cell) in row(&html, &format!(r#"node-row" data-node="{node}"#))
                .iter()
                .enumerate()
            {
                if cell.contains(&format!(r#"{attr}="true""#)) {
                    found.push((node.clone(), t as u64));
                }
            }
        }
        found
    };
    assert_eq!(
        marked("nodes-redlock", "data-jumped"),
        [("node 3".to_owned(), 2)]
    );
    assert!(marked("nodes-redlock", "data-role-changed").is_empty());
    assert_eq!(
        marked("nodes-failover", "data-role-changed"),
        [("redis-1".to_owned(), 3), ("redis-2".to_owned(), 3)]
    );
    let html = strip::render(&fixture("nodes-redlock"), None);
    let jump = row(&html, r#"node-row" data-node="node 3"#)[2];
    assert!(
        jump.contains(r#"<span class="tl-jump">+10s</span>"#),
        "{jump}"
    );
    assert!(jump.contains("jumped this second"), "{jump}");
}

/// The words under the strip tell the nodes' changes in their second.
#[test]
fn the_seconds_in_words_tell_what_happened_to_the_nodes() {
    let html = strip::render(&fixture("nodes-redlock"), None);
    let t0 = html
        .lines()
        .find(|l| l.starts_with(r#"<li data-second="0">"#))
        .expect("t = 0 listed");
    assert!(
        t0.contains("node 4 is paused") && t0.contains("node 5 is down"),
        "{t0}"
    );
    let t3 = html
        .lines()
        .find(|l| l.starts_with(r#"<li data-second="3">"#))
        .expect("t = 3 listed");
    assert!(
        t3.contains("node 4 resumes") && t3.contains("node 5 is back up"),
        "{t3}"
    );
    let failover = strip::render(&fixture("nodes-failover"), None);
    assert!(
        failover.contains("redis-2 becomes the primary"),
        "{failover}"
    );
}

/// On one server nothing of this is written.
#[test]
fn one_server_gets_no_node_rows() {
    let html = strip::render(&fixture("gc-pause"), None);
    assert!(!html.contains("node-row"));
    assert!(!html.contains("tl-node-legend"));
    assert!(html.contains(r#"<th scope="row" class="tl-rowhead">Redis key</th>"#));
    let table = fixture("gc-pause").render(None);
    assert!(
        table.contains("key in Redis") && !table.contains("nodes"),
        "{table}"
    );
}
