//! `{{#player NAME}}`: the place where the interactive player appears.
//!
//! The preprocessor only writes an empty container that names the demo to
//! start on; `theme/timeline-player.js` builds the controls inside it. The
//! player lets the reader switch between every demo, so the page also needs
//! every timeline: they are embedded once per page as
//! `<script type="application/json" data-timelines>`, after the page's first
//! player. Without JavaScript the container says where the same facts are.

use crate::html::{Html, escape};
use crate::timeline::Timeline;

/// Renders the container for a player that starts on `timeline`.
///
/// `id` must be unique on the page (see [`PageState::player_id`]);
/// `embedded_json` is `Some` for the first player of a page only.
pub fn render(timeline: &Timeline, id: &str, embedded_json: Option<&str>) -> String {
    let mut html = Html::new();
    html.line(format!(
        r#"<div class="tl-player" id="{}" data-timeline-player="{}">"#,
        escape(id),
        escape(&timeline.name)
    ));
    html.line(format!(
        r#"<p class="tl-player-fallback">The interactive player for “{}” needs JavaScript. The timeline strips in this book show the same seconds without it.</p>"#,
        escape(&timeline.title)
    ));
    html.line("</div>");
    if let Some(json) = embedded_json {
        html.line(format!(
            r#"<script type="application/json" data-timelines="">{json}</script>"#
        ));
    }
    html.finish()
}

/// What one chapter has already emitted: the player ids in use and whether
/// the timelines' JSON is on the page yet.
#[derive(Debug, Default)]
pub struct PageState {
    ids: Vec<String>,
    data_embedded: bool,
}

impl PageState {
    /// A fresh page.
    pub fn new() -> Self {
        Self::default()
    }

    /// A stable, unique id for the next player starting on `name`:
    /// `player-NAME`, then `player-NAME-2`, ... if the page repeats it.
    pub fn player_id(&mut self, name: &str) -> String {
        let base = format!("player-{name}");
        let mut id = base.clone();
        let mut n = 1;
        while self.ids.contains(&id) {
            n += 1;
            id = format!("{base}-{n}");
        }
        self.ids.push(id.clone());
        id
    }

    /// True exactly once per page: when the data must be embedded.
    pub fn take_data_slot(&mut self) -> bool {
        !std::mem::replace(&mut self.data_embedded, true)
    }
}
