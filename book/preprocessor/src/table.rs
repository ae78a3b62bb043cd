//! `{{#timeline NAME}}`: a timeline as a static, accessible HTML table.
//!
//! The table is the timeline for readers without JavaScript, for screen
//! readers, for print, and for the search index. One row per second; for
//! each client what it did and whether it believes it holds the lock; then
//! the truth: who holds the key in Redis and for how long, the storage's
//! counter and highest token; and last the unsafe column, where a red ✗ and
//! the client's letter mark every action taken on a lock the client no
//! longer held, labelled "rejected" when the storage refused it.
//!
//! Rows and cells carry `data-*` attributes (`data-second`, `data-client`,
//! `data-unsafe`, ...) so that tests and styles do not depend on the text.

use crate::html::{Html, escape};
use crate::timeline::{ClientSecond, Second, Timeline};

/// Renders the story, the table and the outcome of `timeline`.
pub fn render(timeline: &Timeline) -> String {
    let title = escape(&timeline.title);
    let mut html = Html::new();
    html.line(format!(
        r#"<div class="tl-figure" data-timeline="{}">"#,
        escape(&timeline.name)
    ));
    html.line(format!(
        r#"<p class="tl-caption"><strong>{title}</strong> <span class="tl-meta">{}</span></p>"#,
        escape(&settings(timeline))
    ));
    html.line(format!(
        r#"<p class="tl-story">{}</p>"#,
        escape(&timeline.story)
    ));
    // A wide table scrolls sideways; the region must then be focusable so
    // that it can be scrolled from the keyboard.
    html.line(format!(
        r#"<div class="tl-scroll" role="region" tabindex="0" aria-label="Timeline: {title}">"#
    ));
    html.line(r#"<table class="tl-table">"#);
    header(&mut html, timeline);
    html.line("<tbody>");
    for second in &timeline.seconds {
        row(&mut html, timeline, second);
    }
    html.line("</tbody>");
    html.line("</table>");
    html.line("</div>");
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
fn settings(timeline: &Timeline) -> String {
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

fn header(html: &mut Html, timeline: &Timeline) {
    html.line("<thead>");
    let mut cells = String::from(r#"<tr><th scope="col">t</th>"#);
    for client in &timeline.clients {
        cells.push_str(&format!(
            r#"<th scope="col" data-client="{0}">client {0}</th>"#,
            escape(client)
        ));
    }
    cells.push_str(concat!(
        r#"<th scope="col">lock key in Redis</th>"#,
        r#"<th scope="col">counter</th>"#,
        r#"<th scope="col">highest token</th>"#,
        r#"<th scope="col">unsafe</th></tr>"#,
    ));
    html.line(cells);
    html.line("</thead>");
}

fn row(html: &mut Html, timeline: &Timeline, second: &Second) {
    let marks = timeline.unsafe_actions(second).collect::<Vec<_>>();
    let mut unsafe_clients: Vec<&str> = marks.iter().map(|(client, _)| *client).collect();
    unsafe_clients.dedup();
    let unsafe_attr = if unsafe_clients.is_empty() {
        String::new()
    } else {
        format!(r#" data-unsafe="{}""#, escape(&unsafe_clients.join(" ")))
    };
    let class = if marks.is_empty() {
        ""
    } else {
        r#" class="tl-unsafe-row""#
    };
    html.line(format!(
        r#"<tr data-second="{}"{unsafe_attr}{class}>"#,
        second.t
    ));
    html.line(format!(r#"<th scope="row">{} s</th>"#, second.t));
    for name in &timeline.clients {
        if let Some(client) = second.clients.get(name) {
            html.line(client_cell(name, client, second.holder.as_deref()));
        }
    }
    html.line(key_cell(second));
    html.line(format!(r#"<td class="tl-num">{}</td>"#, second.counter));
    html.line(format!(
        r#"<td class="tl-num">{}</td>"#,
        second
            .highest_token
            .map_or_else(|| "–".to_owned(), |t| t.to_string())
    ));
    let mut cell = String::from(r#"<td class="tl-unsafe">"#);
    for (client, action) in &marks {
        let rejected = if action.rejected {
            r#" <span class="tl-rejected">rejected</span>"#
        } else {
            ""
        };
        cell.push_str(&format!(
            r#"<span class="tl-x" data-client="{0}" data-rejected="{1}" title="{2}">✗ {0}{rejected}</span> "#,
            escape(client),
            action.rejected,
            escape(&format!("{client}: {}", action.text)),
        ));
    }
    html.line(format!("{}</td>", cell.trim_end()));
    html.line("</tr>");
}

/// What one client did and believed during the second.
fn client_cell(name: &str, client: &ClientSecond, holder: Option<&str>) -> String {
    let state = client.state.label();
    let mut cell = format!(
        r#"<td data-client="{}" data-state="{state}" data-believes="{}"><span class="tl-state">{state}</span>"#,
        escape(name),
        client.believes,
    );
    if client.believes {
        // The lesson is the gap between belief and truth, so the table
        // says so in the very cell where it happens.
        let token = client
            .token
            .map(|t| format!(", token {t}"))
            .unwrap_or_default();
        let (class, truth) = match holder {
            Some(h) if h == name => ("tl-believes", String::new()),
            Some(h) => (
                "tl-believes tl-mistaken",
                format!(" (Redis: {})", escape(h)),
            ),
            None => ("tl-believes tl-mistaken", " (Redis: free)".to_owned()),
        };
        cell.push_str(&format!(
            r#" <span class="{class}">believes it holds the lock{token}{truth}</span>"#
        ));
    }
    if !client.actions.is_empty() {
        cell.push_str(r#"<ul class="tl-actions">"#);
        for action in &client.actions {
            let mark = if action.unsafe_ { "✗ " } else { "" };
            cell.push_str(&format!(
                r#"<li data-unsafe="{}" data-rejected="{}">{mark}{}</li>"#,
                action.unsafe_,
                action.rejected,
                escape(&action.text)
            ));
        }
        cell.push_str("</ul>");
    }
    cell.push_str("</td>");
    cell
}

/// Who really holds the key, for how long, and what Redis did by itself.
fn key_cell(second: &Second) -> String {
    let holder = match (&second.holder, second.ttl_left_s) {
        (Some(h), Some(ttl)) => format!("{}, {ttl} s left", escape(h)),
        (Some(h), None) => escape(h),
        (None, _) => "free".to_owned(),
    };
    let mut cell = format!(
        r#"<td class="tl-key" data-holder="{}">{holder}"#,
        escape(second.holder.as_deref().unwrap_or(""))
    );
    if !second.notes.is_empty() {
        cell.push_str(r#"<ul class="tl-notes">"#);
        for note in &second.notes {
            cell.push_str(&format!("<li>{}</li>", escape(note)));
        }
        cell.push_str("</ul>");
    }
    cell.push_str("</td>");
    cell
}
