//! `{{#timeline NAME}}`: a timeline as a compact strip, one column per second.
//!
//! The lesson of every timeline is the gap between what a client believes
//! and what is true, and when it opens. A strip shows that at a glance, the
//! way the player does: one row per client (tinted while it believes it holds
//! the lock, amber while that belief is wrong, ‖ while it is frozen), then the
//! truth: whose token the lock key holds in Redis, the storage's counter and
//! highest fencing token, and last the unsafe row, where a red ✗ and the
//! client's letter mark every action taken on a lock the client no longer
//! held, labelled "rejected" when the storage refused it.
//!
//! In a story on several Redis nodes, the key row is headed by whose the
//! lock is ("majority holds", "primary holds") and one row per node follows
//! it ([`crate::nodes`]).
//!
//! The strip is plain HTML, for readers without JavaScript, for print and for
//! the search index; every cell carries its second's facts as a tooltip, and
//! the seconds in which something happened are listed in words underneath,
//! folded away until asked for ("Second by second").
//!
//! Rows and cells carry `data-*` attributes (`data-role`, `data-second`,
//! `data-client`, `data-unsafe`, ...) so that tests and styles do not depend
//! on the text. The player (`theme/timeline-player.js`) draws the same rows
//! with the same classes.

use crate::html::{Html, escape};
use crate::nodes;
use crate::timeline::{Action, ActionKind, ClientSecond, Second, State, Timeline};

/// Renders the caption, story, strip, legend, second-by-second list and
/// outcome of `timeline`. `label` names the demo, e.g. `Demo 3`.
pub fn render(timeline: &Timeline, label: Option<&str>) -> String {
    let title = escape(&timeline.title);
    let name = escape(&timeline.name);
    let mut html = Html::new();
    html.line(format!(r#"<div class="tl-figure" data-timeline="{name}">"#));
    let label = label
        .map(|l| format!(r#"<span class="tl-demo">{}:</span> "#, escape(l)))
        .unwrap_or_default();
    html.line(format!(
        r#"<p class="tl-caption">{label}<strong>{title}</strong> <span class="tl-meta">{}</span></p>"#,
        escape(&settings(timeline))
    ));
    html.line(format!(
        r#"<p class="tl-story">{}</p>"#,
        escape(&timeline.story)
    ));
    // A long run scrolls sideways; the region must then be focusable so
    // that it can be scrolled from the keyboard.
    html.line(format!(
        r#"<div class="tl-strip-scroll" role="region" tabindex="0" aria-label="Timeline, one column per second: {title}">"#
    ));
    table(&mut html, timeline);
    html.line("</div>");
    html.line(legend(timeline));
    html.line(nodes::legend(timeline));
    details(&mut html, timeline);
    html.line(format!(
        r#"<p class="tl-outcome" data-counter="{}" data-jobs="{}"><strong>Outcome:</strong> {}</p>"#,
        timeline.outcome.counter,
        timeline.outcome.jobs,
        escape(&timeline.outcome.summary)
    ));
    html.line("</div>");
    html.finish()
}

/// The run's settings in one line: lock, TTL, fencing.
pub fn settings(timeline: &Timeline) -> String {
    let fencing = if timeline.fencing {
        "fencing tokens checked by the storage"
    } else {
        "no fencing"
    };
    format!(
        "lock: {} · TTL {} s · {fencing}",
        timeline.implementation, timeline.ttl_s
    )
}

fn table(html: &mut Html, timeline: &Timeline) {
    html.line(format!(
        r#"<table class="tl-strip" data-role="strip" data-seconds="{}">"#,
        timeline.seconds.len()
    ));
    html.line("<thead>");
    let mut head = String::from(r#"<tr><th scope="col" class="tl-rowhead">t (s)</th>"#);
    for second in &timeline.seconds {
        head.push_str(&format!(
            r#"<th scope="col" data-second="{0}">{0}</th>"#,
            second.t
        ));
    }
    head.push_str("</tr>");
    html.line(head);
    html.line("</thead>");
    html.line("<tbody>");
    for name in &timeline.clients {
        let mut row = format!(
            r#"<tr data-role="belief-row" data-client="{0}"><th scope="row" class="tl-rowhead">{0}</th>"#,
            escape(name)
        );
        for second in &timeline.seconds {
            if let Some(client) = second.clients.get(name) {
                row.push_str(&client_cell(name, client, second));
            }
        }
        row.push_str("</tr>");
        html.line(row);
    }
    let mut row = format!(
        r#"<tr data-role="holder-row"><th scope="row" class="tl-rowhead">{}</th>"#,
        nodes::key_heading(timeline)
    );
    for second in &timeline.seconds {
        row.push_str(&holder_cell(timeline, second));
    }
    html.line(row + "</tr>");
    for row in nodes::rows(timeline) {
        html.line(row);
    }
    let mut row = String::from(
        r#"<tr data-role="counter-row"><th scope="row" class="tl-rowhead">counter</th>"#,
    );
    for (i, second) in timeline.seconds.iter().enumerate() {
        let changed = i > 0 && timeline.seconds[i - 1].counter != second.counter;
        row.push_str(&format!(
            r#"<td data-second="{}"{} title="t = {} s: counter = {}">{}</td>"#,
            second.t,
            if changed {
                r#" class="tl-changed""#
            } else {
                ""
            },
            second.t,
            second.counter,
            second.counter
        ));
    }
    html.line(row + "</tr>");
    if timeline.fencing {
        let mut row = String::from(
            r#"<tr data-role="token-row"><th scope="row" class="tl-rowhead">highest token</th>"#,
        );
        for second in &timeline.seconds {
            let shown = second
                .highest_token
                .map_or_else(|| "–".to_owned(), |t| t.to_string());
            row.push_str(&format!(
                r#"<td data-second="{0}" title="t = {0} s: the storage's highest token: {1}">{1}</td>"#,
                second.t, shown
            ));
        }
        html.line(row + "</tr>");
    }
    let mut row = String::from(
        r#"<tr data-role="unsafe-row"><th scope="row" class="tl-rowhead">unsafe</th>"#,
    );
    for second in &timeline.seconds {
        row.push_str(&unsafe_cell(timeline, second));
    }
    html.line(row + "</tr>");
    html.line("</tbody>");
    html.line("</table>");
}

/// The glyph of one client in one second: its fencing token or ● while it
/// believes it holds the lock, ‖ while frozen, and for the others · waiting,
/// ✓ done, † crashed.
pub fn client_glyph(client: &ClientSecond) -> String {
    match client.state {
        State::Paused => "‖".to_owned(),
        _ if client.believes => client
            .token
            .map_or_else(|| "●".to_owned(), |t| t.to_string()),
        State::Crashed => "†".to_owned(),
        State::Done => "✓".to_owned(),
        State::Waiting => "·".to_owned(),
        State::Working => "○".to_owned(),
        State::Idle => String::new(),
    }
}

/// "believes it holds the lock (token 33), but the key is B's" and friends.
pub fn belief_text(name: &str, client: &ClientSecond, holder: Option<&str>) -> String {
    if !client.believes {
        return "does not believe it holds the lock".to_owned();
    }
    let token = client
        .token
        .map(|t| format!(" (token {t})"))
        .unwrap_or_default();
    match holder {
        Some(h) if h == name => format!("believes it holds the lock{token}, and it does"),
        Some(h) => format!("believes it holds the lock{token}, but the key is {h}'s"),
        None => format!("believes it holds the lock{token}, but the key is gone"),
    }
}

/// An action in words, with its flags.
pub fn action_text(action: &Action) -> String {
    let mut flags = Vec::new();
    if action.unsafe_ {
        flags.push("unsafe: the lock is no longer held");
    }
    if action.rejected {
        flags.push("rejected");
    }
    if flags.is_empty() {
        action.text.clone()
    } else {
        format!("{} ({})", action.text, flags.join("; "))
    }
}

fn client_cell(name: &str, client: &ClientSecond, second: &Second) -> String {
    let mistaken = client.believes && second.holder.as_deref() != Some(name);
    let mut classes = Vec::new();
    if client.believes {
        classes.push("tl-believing");
    }
    if mistaken {
        classes.push("tl-mistaken");
    }
    if client.actions.iter().any(|a| a.kind != ActionKind::Denied) {
        classes.push("tl-acted");
    }
    let mut title = format!(
        "t = {} s: {name} {}, {}",
        second.t,
        client.state.label(),
        belief_text(name, client, second.holder.as_deref())
    );
    if !client.actions.is_empty() {
        let did: Vec<String> = client.actions.iter().map(action_text).collect();
        title.push_str(&format!(". {}", did.join("; ")));
    }
    format!(
        r#"<td data-second="{}" data-state="{}" data-believes="{}" data-mistaken="{mistaken}"{} title="{}">{}</td>"#,
        second.t,
        client.state.label(),
        client.believes,
        class_attr(&classes),
        escape(&title),
        escape(&client_glyph(client))
    )
}

/// Whose token the lock key holds (on several nodes: by the story's rule),
/// and a ◷ when a key expired this second.
fn holder_cell(timeline: &Timeline, second: &Second) -> String {
    let mut title = format!("t = {} s: {}", second.t, nodes::key_words(timeline, second));
    for note in &second.notes {
        title.push_str(&format!(". {note}"));
    }
    let expired = if second.notes.is_empty() { "" } else { "◷" };
    format!(
        r#"<td data-second="{}" data-holder="{}"{} title="{}">{expired}{}</td>"#,
        second.t,
        escape(second.holder.as_deref().unwrap_or("")),
        if expired.is_empty() {
            ""
        } else {
            r#" class="tl-expired""#
        },
        escape(&title),
        escape(second.holder.as_deref().unwrap_or("–"))
    )
}

fn unsafe_cell(timeline: &Timeline, second: &Second) -> String {
    let marks: Vec<(&str, &Action)> = timeline.unsafe_actions(second).collect();
    if marks.is_empty() {
        return format!(r#"<td data-second="{}"></td>"#, second.t);
    }
    let mut clients: Vec<&str> = marks.iter().map(|(c, _)| *c).collect();
    clients.dedup();
    let rejected = marks.iter().all(|(_, a)| a.rejected);
    let title: Vec<String> = marks
        .iter()
        .map(|(c, a)| format!("{c}: {}", action_text(a)))
        .collect();
    let mut cell = format!(
        r#"<td data-second="{}" data-unsafe="{}" data-rejected="{rejected}" class="tl-x-cell" title="t = {} s: {}">"#,
        second.t,
        escape(&clients.join(" ")),
        second.t,
        escape(&title.join("; "))
    );
    for client in &clients {
        cell.push_str(&format!(r#"<span class="tl-x">✗</span>{}"#, escape(client)));
    }
    if marks.iter().any(|(_, a)| a.rejected) {
        cell.push_str(r#"<span class="tl-rejected">rejected</span>"#);
    }
    cell + "</td>"
}

fn class_attr(classes: &[&str]) -> String {
    if classes.is_empty() {
        String::new()
    } else {
        format!(r#" class="{}""#, classes.join(" "))
    }
}

/// What the glyphs and tints mean.
fn legend(timeline: &Timeline) -> String {
    let holding = if timeline.fencing {
        "33 believes it holds the lock, with that fencing token"
    } else {
        "● believes it holds the lock"
    };
    format!(
        concat!(
            r#"<p class="tl-legend">"#,
            r#"<span class="tl-key-believing">{}</span>; "#,
            r#"<span class="tl-key-mistaken">amber: believes it, but the key is someone else's or gone</span>; "#,
            r#"‖ frozen; · waiting; ✓ done; † crashed; ◷ a key expired; "#,
            r#"<span class="tl-x">✗</span> acted on a lock it no longer held</p>"#
        ),
        holding
    )
}

/// The seconds in which something happened, in words, folded away. Within
/// a second the clients act in column order, so the events are listed in
/// the order they happened; the strip's rows show the end of the second.
fn details(html: &mut Html, timeline: &Timeline) {
    html.line(r#"<details class="tl-detail"><summary>Second by second, in words</summary>"#);
    html.line(r#"<p class="tl-events-note">Within a second, in the order things happened; the strip shows the end of each second.</p>"#);
    html.line(r#"<ul class="tl-events">"#);
    for second in &timeline.seconds {
        let mut events = Vec::new();
        for name in &timeline.clients {
            let Some(client) = second.clients.get(name) else {
                continue;
            };
            for action in &client.actions {
                // Polling for a taken lock repeats every second; listing it
                // would drown what changes.
                if action.kind != ActionKind::Denied {
                    let mark = if action.unsafe_ { "✗ " } else { "" };
                    let token = match (action.kind, client.token) {
                        (ActionKind::Read | ActionKind::Wrote, Some(t)) => {
                            format!(" with token {t}")
                        }
                        _ => String::new(),
                    };
                    events.push(format!("{mark}{name}: {}{token}", action_text(action)));
                }
            }
        }
        events.extend(nodes::events(timeline, second));
        events.extend(second.notes.iter().cloned());
        if events.is_empty() {
            continue;
        }
        html.line(format!(
            r#"<li data-second="{}"><strong>t = {} s</strong> {}.</li>"#,
            second.t,
            second.t,
            escape(&events.join(". "))
        ));
    }
    html.line("</ul>");
    html.line("</details>");
}
