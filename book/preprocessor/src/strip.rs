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

use crate::fold::{self, Column};
use crate::html::{Html, escape};
use crate::nodes;
use crate::timeline::{Action, ActionKind, ClientSecond, NoteKind, Second, State, Timeline};

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
    let columns = fold::columns(timeline);
    html.line(format!(
        r#"<table class="tl-strip" data-role="strip" data-seconds="{}">"#,
        timeline.seconds.len()
    ));
    html.line("<thead>");
    let mut head = String::from(r#"<tr><th scope="col" class="tl-rowhead">t (s)</th>"#);
    for column in &columns {
        head.push_str(&match *column {
            Column::Second(i) => format!(
                r#"<th scope="col" data-second="{0}">{0}</th>"#,
                timeline.seconds[i].t
            ),
            Column::Gap { from, to } => format!(
                r#"<th scope="col" class="tl-gap" data-gap="{}-{}" title="t = {} to {} s: nothing changes but the TTL">… {} s …</th>"#,
                timeline.seconds[from].t,
                timeline.seconds[to].t,
                timeline.seconds[from].t,
                timeline.seconds[to].t,
                to - from + 1
            ),
        });
    }
    head.push_str("</tr>");
    html.line(head);
    html.line("</thead>");
    html.line("<tbody>");
    // Each row: its heading, then a cell per column; a gap shows what the
    // folded seconds all show, through `gap` (the first folded second).
    let row = |html: &mut Html,
               open: String,
               cell: &dyn Fn(&Second) -> String,
               gap: &dyn Fn(&Second) -> String| {
        let mut row = open;
        for column in &columns {
            row.push_str(&match *column {
                Column::Second(i) => cell(&timeline.seconds[i]),
                Column::Gap { from, to } => {
                    gap_cell(timeline, from, to, &gap(&timeline.seconds[from]))
                }
            });
        }
        html.line(row + "</tr>");
    };
    for name in &timeline.clients {
        let open = format!(
            r#"<tr data-role="belief-row" data-client="{0}"><th scope="row" class="tl-rowhead">{0}</th>"#,
            escape(name)
        );
        let client = |s: &Second| {
            s.clients
                .get(name)
                .map(|c| client_cell(name, c, s))
                .unwrap_or_default()
        };
        let gap = |s: &Second| s.clients.get(name).map(client_glyph).unwrap_or_default();
        row(html, open, &client, &gap);
    }
    let open = format!(
        r#"<tr data-role="holder-row"><th scope="row" class="tl-rowhead">{}</th>"#,
        nodes::key_heading(timeline)
    );
    let holder = |s: &Second| s.holder.clone().unwrap_or_else(|| "–".to_owned());
    row(html, open, &|s| holder_cell(timeline, s), &holder);
    for (name, open) in timeline.nodes.iter().zip(nodes::row_heads(timeline)) {
        let cell = |s: &Second| nodes::cell_of(timeline, name, s);
        let gap = |s: &Second| s.nodes.get(name).map(nodes::node_glyph).unwrap_or_default();
        row(html, open, &cell, &gap);
    }
    let open = String::from(
        r#"<tr data-role="counter-row"><th scope="row" class="tl-rowhead">counter</th>"#,
    );
    let counter = |s: &Second| {
        let i = s.t as usize;
        let changed = i > 0 && timeline.seconds[i - 1].counter != s.counter;
        counter_cell(timeline, s, changed)
    };
    row(html, open, &counter, &|s| s.counter.to_string());
    if timeline.fencing {
        let open = String::from(
            r#"<tr data-role="token-row"><th scope="row" class="tl-rowhead">highest token</th>"#,
        );
        let shown = |s: &Second| {
            s.highest_token
                .map_or_else(|| "–".to_owned(), |t| t.to_string())
        };
        let cell = |s: &Second| {
            format!(
                r#"<td data-second="{0}" title="t = {0} s: the storage's highest token: {1}">{1}</td>"#,
                s.t,
                shown(s)
            )
        };
        row(html, open, &cell, &shown);
    }
    let open = String::from(
        r#"<tr data-role="unsafe-row"><th scope="row" class="tl-rowhead">unsafe</th>"#,
    );
    row(html, open, &|s| unsafe_cell(timeline, s), &|_| {
        String::new()
    });
    html.line("</tbody>");
    html.line("</table>");
}

/// A folded gap's cell in one row: what that row shows in every folded
/// second, dimmed, under the head's "… N s …".
fn gap_cell(timeline: &Timeline, from: usize, to: usize, shown: &str) -> String {
    format!(
        r#"<td class="tl-gap" data-gap="{}-{}">{}</td>"#,
        timeline.seconds[from].t,
        timeline.seconds[to].t,
        escape(shown)
    )
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

/// Whether the client's release was refused this second: Redis found the key
/// someone else's, the only hint a paused client ever gets. The strip marks
/// it with a `!`, and the player stops on it.
pub fn refused_release(client: &ClientSecond) -> bool {
    client
        .actions
        .iter()
        .any(|a| a.kind == ActionKind::ReleaseRefused)
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
    let refused = refused_release(client);
    format!(
        r#"<td data-second="{}" data-state="{}" data-believes="{}" data-mistaken="{mistaken}" data-refused="{refused}"{} title="{}">{}{}</td>"#,
        second.t,
        client.state.label(),
        client.believes,
        class_attr(&classes),
        escape(&title),
        escape(&client_glyph(client)),
        if refused {
            r#"<span class="tl-release-refused">!</span>"#
        } else {
            ""
        }
    )
}

/// The writes of one second, in the order they happened: each client that
/// wrote, and the value it wrote. Two writes in one second (A's stale 1 over
/// B's 1, then C's 2) are the lost update itself, which the counter at the
/// end of the second alone would hide.
pub fn writes<'a>(timeline: &'a Timeline, second: &'a Second) -> Vec<(&'a str, &'a str)> {
    timeline
        .actions(second)
        .filter(|(_, a)| a.kind == ActionKind::Wrote)
        .map(|(name, a)| (name, a.text.strip_prefix("wrote ").unwrap_or(&a.text)))
        .collect()
}

/// The counter at the end of the second, or every value written in it when
/// more than one write landed, each with its writer.
fn counter_cell(timeline: &Timeline, second: &Second, changed: bool) -> String {
    let writes = writes(timeline, second);
    let mut title = format!("t = {} s: counter = {}", second.t, second.counter);
    if !writes.is_empty() {
        let said: Vec<String> = writes
            .iter()
            .map(|(c, v)| format!("{c} wrote {v}"))
            .collect();
        title.push_str(&format!(" ({})", said.join(", then ")));
    }
    let content = if writes.len() > 1 {
        writes
            .iter()
            .map(|(c, v)| {
                format!(
                    r#"<span class="tl-write" data-client="{}">{}<sub>{}</sub></span>"#,
                    escape(c),
                    escape(v),
                    escape(c)
                )
            })
            .collect::<String>()
    } else {
        second.counter.to_string()
    };
    format!(
        r#"<td data-second="{}" data-writes="{}"{} title="{}">{content}</td>"#,
        second.t,
        writes.len(),
        if changed || !writes.is_empty() {
            r#" class="tl-changed""#
        } else {
            ""
        },
        escape(&title)
    )
}

/// Whether a note of `kind` was made in `second`: ◷ for an expiry, ⚡ for a
/// fault done to a node. Each mark comes from its own kind of event, so a
/// killed node never reads as an expired key.
pub fn noted(second: &Second, kind: NoteKind) -> bool {
    second.notes.iter().any(|n| n.kind == kind)
}

/// Whose token the lock key holds (on several nodes: by the story's rule),
/// a ◷ when a key expired this second and a ⚡ when a node was hit by a fault.
fn holder_cell(timeline: &Timeline, second: &Second) -> String {
    let mut title = format!("t = {} s: {}", second.t, nodes::key_words(timeline, second));
    for note in &second.notes {
        title.push_str(&format!(". {}", note.text));
    }
    let (expired, fault) = (
        noted(second, NoteKind::Expiry),
        noted(second, NoteKind::Fault),
    );
    let marks = format!(
        "{}{}",
        if fault { "⚡" } else { "" },
        if expired { "◷" } else { "" }
    );
    let mut classes = Vec::new();
    if expired {
        classes.push("tl-expired");
    }
    if fault {
        classes.push("tl-fault");
    }
    format!(
        r#"<td data-second="{}" data-holder="{}" data-expired="{expired}" data-fault="{fault}"{} title="{}">{marks}{}</td>"#,
        second.t,
        escape(second.holder.as_deref().unwrap_or("")),
        class_attr(&classes),
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

/// What happened to Redis in `second`, in the order it happened: the notes,
/// which say each fault and expiry in the grader's words; the changes read
/// off the node rows only where the grader wrote no fault for the second, so
/// that a kill is never said twice.
pub fn redis_events(timeline: &Timeline, second: &Second) -> Vec<String> {
    let mut events: Vec<String> = second.notes.iter().map(|n| n.text.clone()).collect();
    if !noted(second, NoteKind::Fault) {
        events.extend(nodes::events(timeline, second));
    }
    events
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
    let fault = if timeline.seconds.iter().any(|s| noted(s, NoteKind::Fault)) {
        "⚡ a fault hit a node (killed, paused, restarted, promoted, its clock moved); "
    } else {
        ""
    };
    format!(
        concat!(
            r#"<p class="tl-legend">"#,
            r#"<span class="tl-key-believing">{}</span>; "#,
            r#"<span class="tl-key-mistaken">amber: believes it, but the key is someone else's or gone</span>; "#,
            r#"○ working, no longer believing it holds the lock; ‖ frozen; · waiting; ✓ done; † crashed; "#,
            r#"<span class="tl-release-refused">!</span> its release was refused: the key was not its own; "#,
            r#"◷ a key expired; {}"#,
            r#"<span class="tl-x">✗</span> acted on a lock it no longer held</p>"#
        ),
        holding, fault
    )
}

/// The seconds in which something happened, in words, folded away. Within
/// a second, what happened to Redis (an expiry, a fault) comes first, since
/// it happens before the clients step; then the clients act in column order.
/// So the events are listed in the order they happened, each once; the
/// strip's rows show the end of the second.
fn details(html: &mut Html, timeline: &Timeline) {
    html.line(r#"<details class="tl-detail"><summary>Second by second, in words</summary>"#);
    html.line(r#"<p class="tl-events-note">Within a second, in the order things happened; the strip shows the end of each second.</p>"#);
    html.line(r#"<ul class="tl-events">"#);
    for second in &timeline.seconds {
        let mut events = redis_events(timeline, second);
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
