//! Which seconds a static strip shows, and which it folds into a gap.
//!
//! A strip must show the moment that matters at every width, without a
//! scrollbar a phone does not draw: the grant, the expiry, the stale write,
//! the refused release. The seconds between them in which nothing changes
//! (a client frozen, the others polling, the TTL running down) fold into one
//! column that says how long the gap is, "… 8 s …", so a 43 s run reads as
//! the dozen seconds in which something happens.
//!
//! A second is quiet when no client did anything but poll, Redis noted
//! nothing, and every row reads as in the second before (the TTL aside):
//! folding it loses nothing but the countdown. Only runs of
//! [`MIN_FOLD`] quiet seconds or more are folded; a shorter gap saves no room.

use crate::nodes;
use crate::strip::client_glyph;
use crate::timeline::{ActionKind, Second, Timeline};

/// The shortest run of quiet seconds folded into a gap.
pub const MIN_FOLD: usize = 3;

/// One column of a strip.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    /// The second at this index, shown.
    Second(usize),
    /// The quiet seconds `from..=to` (indices), folded into one column.
    Gap {
        /// The first folded second.
        from: usize,
        /// The last folded second.
        to: usize,
    },
}

/// The strip's columns, in order: every second that is not quiet, and one
/// gap for each run of at least [`MIN_FOLD`] quiet seconds.
pub fn columns(timeline: &Timeline) -> Vec<Column> {
    let n = timeline.seconds.len();
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        let mut end = i;
        while end < n && quiet(timeline, end) {
            end += 1;
        }
        if end - i >= MIN_FOLD {
            out.push(Column::Gap {
                from: i,
                to: end - 1,
            });
            i = end;
        } else if end > i {
            out.extend((i..end).map(Column::Second));
            i = end;
        } else {
            out.push(Column::Second(i));
            i += 1;
        }
    }
    out
}

/// Whether second `i` repeats second `i - 1` apart from the TTL, with no
/// action but polling and no note. The first and last seconds never are.
pub fn quiet(timeline: &Timeline, i: usize) -> bool {
    let (Some(second), Some(before)) = (
        timeline.seconds.get(i),
        i.checked_sub(1).and_then(|b| timeline.seconds.get(b)),
    ) else {
        return false;
    };
    if i + 1 == timeline.seconds.len() || !second.notes.is_empty() {
        return false;
    }
    let acted = second
        .clients
        .values()
        .any(|c| c.actions.iter().any(|a| a.kind != ActionKind::Denied));
    !acted
        && !nodes::changed(timeline, second)
        && looks(timeline, second) == looks(timeline, before)
}

/// What a second's rows show, the TTL aside: each client's glyph and
/// belief, the holder, the counter, the highest token, each node's glyph.
type Looks = (
    Vec<(String, bool)>,
    Option<String>,
    i64,
    Option<u64>,
    Vec<String>,
);

/// What a second's rows show, the TTL aside.
fn looks(timeline: &Timeline, second: &Second) -> Looks {
    let clients = timeline
        .clients
        .iter()
        .filter_map(|name| second.clients.get(name))
        .map(|c| (client_glyph(c), c.believes))
        .collect();
    let nodes = timeline
        .nodes
        .iter()
        .filter_map(|name| second.nodes.get(name))
        .map(nodes::node_glyph)
        .collect();
    (
        clients,
        second.holder.clone(),
        second.counter,
        second.highest_token,
        nodes,
    )
}
