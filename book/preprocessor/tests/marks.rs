//! The strips of the book's own timelines (`book/timelines/`) say only true
//! things: ◷ only where a key expired, ⚡ where a node was hit, every write
//! of a second in the counter row, the refused release marked, the events
//! of a second in the order they happened and each once, and no second in
//! which something happens folded away.

use mdbook_timeline::fold::{self, Column};
use mdbook_timeline::library::Library;
use mdbook_timeline::strip;
use mdbook_timeline::timeline::{NoteKind, Timeline};
use std::path::Path;

fn book_timelines() -> Vec<Timeline> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../timelines");
    let mut library = Library::new(dir);
    let all = library.all().expect("the book's timelines load");
    assert!(all.len() >= 20, "only {} timelines", all.len());
    all.values().cloned().collect()
}

fn named(name: &str) -> Timeline {
    book_timelines()
        .into_iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no timeline {name}"))
}

/// The cells of the strip row that starts with `row`, e.g. `data-role="counter-row"`.
fn cells<'a>(html: &'a str, row: &str) -> Vec<&'a str> {
    let line = html
        .lines()
        .find(|l| l.starts_with(&format!("<tr {row}")))
        .unwrap_or_else(|| panic!("no row {row}"));
    line.split("<td ").skip(1).collect()
}

/// The cell of second `t` in the row that starts with `row`.
fn cell<'a>(html: &'a str, row: &str, t: u64) -> &'a str {
    cells(html, row)
        .into_iter()
        .find(|c| c.starts_with(&format!(r#"data-second="{t}""#)))
        .unwrap_or_else(|| panic!("t = {t} is not shown in {row}"))
}

/// The key row's cell of second `t`.
fn key_cell(html: &str, t: u64) -> &str {
    cell(html, r#"data-role="holder-row""#, t)
}

#[test]
fn the_clock_mark_is_drawn_on_expiries_only() {
    let mut expiries = 0;
    let mut faults = 0;
    for timeline in book_timelines() {
        let html = strip::render(&timeline, None);
        for second in &timeline.seconds {
            let expired = second.notes.iter().any(|n| n.kind == NoteKind::Expiry);
            let fault = second.notes.iter().any(|n| n.kind == NoteKind::Fault);
            if !expired && !fault && fold::quiet(&timeline, second.t as usize) {
                continue;
            }
            let cell = key_cell(&html, second.t);
            assert_eq!(
                cell.contains('◷'),
                expired,
                "{} t = {}: {cell}",
                timeline.name,
                second.t
            );
            assert_eq!(
                cell.contains('⚡'),
                fault,
                "{} t = {}: {cell}",
                timeline.name,
                second.t
            );
            expiries += usize::from(expired);
            faults += usize::from(fault);
        }
    }
    assert!(
        expiries >= 10 && faults >= 8,
        "{expiries} expiries, {faults} faults"
    );
    // The restart's kill loses A's key on node 3: a fault, not an expiry.
    let html = strip::render(&named("redlock-restart"), None);
    assert!(!key_cell(&html, 2).contains('◷'), "{}", key_cell(&html, 2));
}

#[test]
fn the_legends_name_every_mark_drawn() {
    let html = strip::render(&named("failover-lost-lock"), None);
    for mark in [
        "○ working, no longer believing",
        "◷ a key expired",
        "⚡ a fault hit a node",
        "its release was refused",
    ] {
        assert!(html.contains(mark), "{mark} missing");
    }
    let html = strip::render(&named("gc-pause"), None);
    assert!(!html.contains("⚡"), "no fault, no ⚡ in its legend");
    let html = strip::render(&named("redlock-delayed-restart"), None);
    assert!(html.contains("⊘A down, still counted for A"), "{html}");
}

#[test]
fn the_counter_shows_every_write_of_a_second() {
    // Demo 2, t = 15: A writes its stale 1 over B's 1, then C writes 2.
    let html = strip::render(&named("gc-pause"), None);
    let cell = cell(&html, r#"data-role="counter-row""#, 15);
    assert!(cell.contains(r#"data-writes="2""#), "{cell}");
    assert!(
        cell.contains(r#"<span class="tl-write" data-client="A">1<sub>A</sub></span><span class="tl-write" data-client="C">2<sub>C</sub></span>"#),
        "{cell}"
    );
    assert!(cell.contains("A wrote 1, then C wrote 2"), "{cell}");
}

#[test]
fn the_refused_release_is_marked() {
    let html = strip::render(&named("gc-pause"), None);
    let refused: Vec<&str> = cells(&html, r#"data-role="belief-row" data-client="A""#)
        .into_iter()
        .filter(|c| c.contains(r#"data-refused="true""#))
        .collect();
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0].starts_with(r#"data-second="16""#),
        "{}",
        refused[0]
    );
    assert!(refused[0].contains(r#"<span class="tl-release-refused">!</span>"#));
}

#[test]
fn the_events_of_a_second_come_in_causal_order_each_once() {
    let html = strip::render(&named("failover-lost-lock"), None);
    let t1 = html
        .lines()
        .find(|l| l.starts_with(r#"<li data-second="1">"#))
        .expect("t = 1 in words");
    let kill = t1.find("killed").expect("the kill");
    let promoted = t1.find("promoted").expect("the promotion");
    let acquired = t1.find("B: acquired").expect("B's grant");
    assert!(kill < promoted && promoted < acquired, "{t1}");
    assert_eq!(t1.matches("killed").count(), 1, "{t1}");
    assert!(!t1.contains("becomes the primary"), "said twice: {t1}");
    let html = strip::render(&named("gc-pause"), None);
    let t10 = html
        .lines()
        .find(|l| l.starts_with(r#"<li data-second="10">"#))
        .expect("t = 10 in words");
    assert!(
        t10.find("expired").expect("expiry") < t10.find("B: acquired").expect("grant"),
        "{t10}"
    );
    let html = strip::render(&named("redlock-clock-jump"), None);
    let t2 = html
        .lines()
        .find(|l| l.starts_with(r#"<li data-second="2">"#))
        .expect("t = 2 in words");
    assert_eq!(t2.matches("clock jumps").count(), 1, "{t2}");
}

/// Every strip keeps each second in which something happens, its first and
/// its last, and folds the rest into gaps that say how long they are.
#[test]
fn strips_fold_only_quiet_seconds() {
    for timeline in book_timelines() {
        let columns = fold::columns(&timeline);
        let mut covered = 0;
        for column in &columns {
            match *column {
                Column::Second(_) => covered += 1,
                Column::Gap { from, to } => {
                    assert!(to + 1 - from >= fold::MIN_FOLD, "{}", timeline.name);
                    assert!(
                        (from..=to).all(|i| fold::quiet(&timeline, i)),
                        "{}",
                        timeline.name
                    );
                    covered += to + 1 - from;
                }
            }
        }
        assert_eq!(covered, timeline.seconds.len(), "{}", timeline.name);
        assert_eq!(
            columns.first(),
            Some(&Column::Second(0)),
            "{}",
            timeline.name
        );
        let last = timeline.seconds.len() - 1;
        assert_eq!(
            columns.last(),
            Some(&Column::Second(last)),
            "{}",
            timeline.name
        );
        for second in &timeline.seconds {
            let acted = second.clients.values().any(|c| {
                c.actions
                    .iter()
                    .any(|a| a.kind != mdbook_timeline::timeline::ActionKind::Denied)
            });
            if acted || !second.notes.is_empty() {
                assert!(
                    columns.contains(&Column::Second(second.t as usize)),
                    "{} t = {} folded",
                    timeline.name,
                    second.t
                );
            }
        }
    }
    // The 40 s pause: 43 seconds read as a few columns, its gap said in words.
    let timeline = named("long-pause");
    let html = strip::render(&timeline, None);
    assert!(
        fold::columns(&timeline).len() <= 16,
        "{:?}",
        fold::columns(&timeline)
    );
    assert!(html.contains("s …</th>"), "{html}");
    assert!(key_cell(&html, 30).contains('◷'));
    assert!(key_cell(&html, 41).contains("data-holder"));
}
