//! `{{#what-if NAME}}`: every run of a "what if" grid, as one table.
//!
//! The player on the page lets the reader pick a combination and replays
//! its run; this table is the same grid at a glance, one row per
//! combination: the values, whether the run was safe, and the engine's own
//! summary of its outcome. It is plain HTML, so it reads without JavaScript,
//! in print and in the search index, and every claim in it comes from a
//! recorded run. "Safe" is read off the run: no client acted on a lock it no
//! longer held without the storage refusing it (no ✗ but "rejected" ones).
//! At a phone's width the rows become cards, each value labelled.

use crate::html::{Html, escape};
use crate::library::demo_label;
use crate::timeline::{Timeline, WhatIf};

/// One row of the table: a cell's values and its run.
pub struct Row<'a> {
    /// One value per control.
    pub choice: &'a [String],
    /// The book timeline the cell is, if any (the demo the grid starts from).
    pub same_as: Option<&'a str>,
    /// The cell's run.
    pub run: &'a Timeline,
}

/// Renders the table of `grid`, whose cells' runs are `rows`, in the grid's order.
pub fn render(grid: &WhatIf, rows: &[Row<'_>]) -> String {
    let mut html = Html::new();
    html.line(format!(
        r#"<figure class="tl-what-if" data-what-if="{}">"#,
        escape(&grid.name)
    ));
    html.line(format!(
        r#"<figcaption>{} Every row is a run recorded against Redis; the player above replays any of them.</figcaption>"#,
        escape(&grid.question)
    ));
    html.line(r#"<table class="tl-what-if-table tl-reflow">"#);
    let mut head = String::from("<thead><tr>");
    for control in &grid.controls {
        head.push_str(&format!(
            r#"<th scope="col">{}</th>"#,
            escape(&control.label)
        ));
    }
    head.push_str(r#"<th scope="col">safe?</th><th scope="col">outcome</th></tr></thead>"#);
    html.line(head);
    html.line("<tbody>");
    for row in rows {
        html.line(render_row(grid, row));
    }
    html.line("</tbody>");
    html.line("</table>");
    html.line("</figure>");
    html.finish()
}

fn render_row(grid: &WhatIf, row: &Row<'_>) -> String {
    let harmful = row.run.harmful_actions();
    let safe = harmful == 0;
    let mut tr = format!(
        r#"<tr data-choice="{}" data-timeline="{}" data-safe="{safe}" data-counter="{}">"#,
        escape(&row.choice.join("|")),
        escape(&row.run.name),
        row.run.outcome.counter
    );
    for (i, (value, control)) in row.choice.iter().zip(&grid.controls).enumerate() {
        let demo = match (i, row.same_as.and_then(demo_label)) {
            (0, Some(label)) => format!(r#" <span class="tl-what-if-demo">({label})</span>"#),
            _ => String::new(),
        };
        tr.push_str(&format!(
            r#"<td data-label="{}">{}{demo}</td>"#,
            escape(&control.label),
            escape(value)
        ));
    }
    let verdict = if safe {
        r#"<span class="tl-safe">✓ safe</span>"#.to_owned()
    } else {
        let plural = if harmful == 1 { "" } else { "s" };
        format!(r#"<span class="tl-x">✗</span> unsafe: {harmful} action{plural} on a lost lock"#)
    };
    tr.push_str(&format!(r#"<td data-label="safe?">{verdict}</td>"#));
    tr.push_str(&format!(
        r#"<td data-label="outcome">{}</td></tr>"#,
        escape(&row.run.outcome.summary)
    ));
    tr
}
