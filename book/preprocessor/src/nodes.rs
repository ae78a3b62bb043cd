//! The node rows of a strip, for a story on several Redis nodes.
//!
//! Redlock's five independent nodes, or a primary and its replica: the lock
//! is then not one key but one key per node, and what goes wrong is that
//! the nodes stop agreeing. So under the strip's key row (which then says
//! whose the lock is by the story's rule: the majority's holder, or the
//! primary's) comes one row per node, in the timeline's node order, showing
//! per second whose token that node holds, with a mark for what happened to
//! the node: ‖ paused, ⊘ down, `+10s` the second its clock jumped ahead, `P`
//! or `R` its role, and ↻ the second that role changed. Every mark is text
//! and every cell says its facts in words as a tooltip, so nothing depends
//! on colour. The same marks and words are drawn by the player
//! (`theme/timeline-common.js`, `nodeGlyph` and `nodeText`).
//!
//! A timeline on one server has no nodes, and none of this is written.

use crate::html::escape;
use crate::timeline::{NodeHealth, NodeRole, NodeSecond, Second, Timeline};

/// The key row's heading: `Redis key` on one server, else `majority holds`
/// or `primary holds`.
pub fn key_heading(timeline: &Timeline) -> String {
    match timeline.key_rule() {
        Some(rule) => format!("{rule} holds"),
        None => "Redis key".to_owned(),
    }
}

/// The key cell's words: "the lock key held by A, 9 s left" on one server,
/// "a majority of the nodes hold A's token, 9 s left" or "the primary holds
/// A's token, 9 s left" on several.
pub fn key_words(timeline: &Timeline, second: &Second) -> String {
    let ttl = second
        .ttl_left_s
        .map(|t| format!(", {t} s left"))
        .unwrap_or_default();
    match (timeline.key_rule(), &second.holder) {
        (None, Some(h)) => format!("lock key held by {h}{ttl}"),
        (None, None) => "lock key free".to_owned(),
        (Some("primary"), Some(h)) => format!("the primary holds {h}'s token{ttl}"),
        (Some("primary"), None) => "the primary holds no token".to_owned(),
        (Some(_), Some(h)) => format!("a majority of the nodes hold {h}'s token{ttl}"),
        (Some(_), None) => "no client's token is on a majority of the nodes".to_owned(),
    }
}

/// The node's state one second before, if there was a second before.
fn before<'a>(timeline: &'a Timeline, t: u64, name: &str) -> Option<&'a NodeSecond> {
    let index = usize::try_from(t.checked_sub(1)?).ok()?;
    timeline.seconds.get(index)?.nodes.get(name)
}

/// Whether the node's clock jumped this second (at t = 0: whether it
/// starts ahead).
fn jumped(node: &NodeSecond, before: Option<&NodeSecond>) -> bool {
    node.clock_ahead_s > before.map_or(0, |b| b.clock_ahead_s)
}

/// Whether the node's role changed this second.
fn role_changed(node: &NodeSecond, before: Option<&NodeSecond>) -> bool {
    before.is_some_and(|b| b.role != node.role)
}

/// The glyph of one node in one second, without its marks: the client
/// whose token it holds, – none, ‖ paused, ⊘ down (⊘A: down, and still
/// counted for A's key, which it keeps others from until it would expire).
pub fn node_glyph(node: &NodeSecond) -> String {
    match node.health {
        NodeHealth::Paused => "‖".to_owned(),
        NodeHealth::Down => format!("⊘{}", node.holder.as_deref().unwrap_or("")),
        NodeHealth::Up => node.holder.clone().unwrap_or_else(|| "–".to_owned()),
    }
}

fn role_word(role: NodeRole) -> &'static str {
    match role {
        NodeRole::Primary => "primary",
        NodeRole::Replica => "replica",
    }
}

fn health_word(health: NodeHealth) -> &'static str {
    match health {
        NodeHealth::Up => "up",
        NodeHealth::Paused => "paused",
        NodeHealth::Down => "down",
    }
}

/// "node 3 up, holds B's token; its clock runs 10 s ahead (jumped this
/// second)" and friends: a node cell's tooltip, and the player's words.
pub fn node_text(name: &str, node: &NodeSecond, before: Option<&NodeSecond>) -> String {
    let mut text = format!("{name} {}", health_word(node.health));
    if let Some(role) = node.role {
        text.push_str(&format!(", {}", role_word(role)));
        if let Some(was) = before.and_then(|b| b.role).filter(|&was| was != role) {
            text.push_str(&format!(" (was {})", role_word(was)));
        }
    }
    match (&node.holder, node.health) {
        (Some(h), NodeHealth::Up) => text.push_str(&format!(", holds {h}'s token")),
        (Some(h), NodeHealth::Down) => text.push_str(&format!(
            ", answers nothing; still counted for {h}: it comes back only after {h}'s key would have expired"
        )),
        (Some(h), _) => text.push_str(&format!(", keeps {h}'s token but answers nothing")),
        (None, NodeHealth::Up) => text.push_str(", holds no token"),
        (None, _) => text.push_str(", answers nothing"),
    }
    if node.clock_ahead_s > 0 {
        text.push_str(&format!("; its clock runs {} s ahead", node.clock_ahead_s));
        if jumped(node, before) {
            text.push_str(" (jumped this second)");
        }
    }
    text
}

/// The opening of each node's row, with its heading, in node order; empty
/// on one server. The strip adds a cell per column ([`cell_of`]).
pub fn row_heads(timeline: &Timeline) -> Vec<String> {
    timeline
        .nodes
        .iter()
        .map(|name| {
            format!(
                r#"<tr data-role="node-row" data-node="{0}"><th scope="row" class="tl-rowhead">{0}</th>"#,
                escape(name)
            )
        })
        .collect()
}

/// Node `name`'s cell in `second`, with its marks and its words as a tooltip.
pub fn cell_of(timeline: &Timeline, name: &str, second: &Second) -> String {
    second
        .nodes
        .get(name)
        .map(|node| cell(name, node, before(timeline, second.t, name), second.t))
        .unwrap_or_default()
}

fn cell(name: &str, node: &NodeSecond, before: Option<&NodeSecond>, t: u64) -> String {
    let jumped = jumped(node, before);
    let changed = role_changed(node, before);
    let mut content = String::new();
    if changed {
        content.push('↻');
    }
    if let Some(role) = node.role {
        let letter = if role == NodeRole::Primary { "P" } else { "R" };
        content.push_str(&format!(r#"<span class="tl-node-role">{letter}</span>"#));
    }
    content.push_str(&escape(&node_glyph(node)));
    if jumped {
        content.push_str(&format!(
            r#"<span class="tl-jump">+{}s</span>"#,
            node.clock_ahead_s
        ));
    }
    let mut classes = Vec::new();
    if node.health != NodeHealth::Up {
        classes.push("tl-node-out");
    }
    if jumped || changed {
        classes.push("tl-changed");
    }
    format!(
        r#"<td data-second="{t}" data-health="{}" data-node-role="{}" data-holder="{}" data-ahead="{}" data-jumped="{jumped}" data-role-changed="{changed}"{} title="t = {t} s: {}">{content}</td>"#,
        health_word(node.health),
        node.role.map_or("", role_word),
        escape(node.holder.as_deref().unwrap_or("")),
        node.clock_ahead_s,
        if classes.is_empty() {
            String::new()
        } else {
            format!(r#" class="{}""#, classes.join(" "))
        },
        escape(&node_text(name, node, before)),
    )
}

/// What the node rows' marks mean, those this timeline uses; empty on one
/// server.
pub fn legend(timeline: &Timeline) -> String {
    if timeline.nodes.is_empty() {
        return String::new();
    }
    let states = || timeline.seconds.iter().flat_map(|s| s.nodes.values());
    let mut marks = vec!["whose token the node holds, – none", "‖ paused", "⊘ down"];
    if states().any(|n| n.health == NodeHealth::Down && n.holder.is_some()) {
        marks.push("⊘A down, still counted for A: it stays down until A's key would have expired");
    }
    if states().any(|n| n.clock_ahead_s > 0) {
        marks.push("+10s its clock jumped 10 s ahead");
    }
    let whose = if timeline.key_rule() == Some("primary") {
        marks.push("P primary, R replica, ↻ its role changed");
        "the client whose token the current primary holds"
    } else {
        "the client whose token a majority of the nodes hold"
    };
    format!(
        r#"<p class="tl-legend tl-node-legend">Node rows: {}. The row “{}” says whose the lock is: {whose}.</p>"#,
        marks.join("; "),
        escape(&key_heading(timeline))
    )
}

/// Whether any node's health, role or clock changed in `second`.
pub fn changed(timeline: &Timeline, second: &Second) -> bool {
    !events(timeline, second).is_empty()
}

/// What happened to the nodes in second `t`, in words, in node order: a
/// node paused, down or back, a clock jump, a role change.
pub fn events(timeline: &Timeline, second: &Second) -> Vec<String> {
    let mut events = Vec::new();
    for name in &timeline.nodes {
        let Some(node) = second.nodes.get(name) else {
            continue;
        };
        let before = before(timeline, second.t, name);
        let was = before.map_or(NodeHealth::Up, |b| b.health);
        match (was, node.health) {
            (a, b) if a == b => {}
            (_, NodeHealth::Paused) => events.push(format!("{name} is paused")),
            (_, NodeHealth::Down) => events.push(format!("{name} is down")),
            (NodeHealth::Paused, NodeHealth::Up) => events.push(format!("{name} resumes")),
            (_, NodeHealth::Up) => events.push(format!("{name} is back up")),
        }
        if jumped(node, before) {
            events.push(format!(
                "{name}'s clock jumps to {} s ahead",
                node.clock_ahead_s
            ));
        }
        if role_changed(node, before) {
            let role = match node.role {
                Some(NodeRole::Primary) => "the primary",
                Some(NodeRole::Replica) => "a replica",
                None => "a node without a role",
            };
            events.push(format!("{name} becomes {role}"));
        }
    }
    events
}
