//! Rendering the hand-written fixtures in `tests/fixtures/` (timelines in
//! the format of `book/timelines/SCHEMA.md`), and the errors a chapter gets
//! when a timeline is missing or broken.

use mdbook_timeline::error::{Error, LoadError, Problem};
use mdbook_timeline::expand::expand;
use mdbook_timeline::library::Library;
use mdbook_timeline::library::{DEMO_ORDER, demo_label};
use mdbook_timeline::{player, strip};
use std::fs;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A scratch folder of timelines for one test, emptied first.
fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("render")
        .join(test);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create scratch folder");
    dir
}

/// The whole strip of the fenced GC pause, as a reader without JavaScript
/// gets it.
#[test]
fn renders_the_fenced_gc_pause_strip() {
    let mut library = Library::new(fixtures());
    let timeline = library.get("gc-pause-fenced").expect("fixture loads");
    insta::assert_snapshot!(strip::render(timeline, Some("Demo 3")));
}

/// The cells of one strip row, by `data-role` (and client), in column order,
/// folded gaps included.
fn row<'a>(html: &'a str, role: &str) -> Vec<&'a str> {
    let line = html
        .lines()
        .find(|l| l.starts_with(&format!(r#"<tr data-role="{role}"#)))
        .unwrap_or_else(|| panic!("no row {role} in {html}"));
    line.split("<td ").skip(1).collect()
}

/// The cells of one row that show one second each, by their second.
fn by_second<'a>(html: &'a str, role: &str) -> std::collections::BTreeMap<u64, &'a str> {
    row(html, role)
        .into_iter()
        .filter_map(|cell| {
            let t = cell.strip_prefix(r#"data-second=""#)?.split('"').next()?;
            Some((t.parse().ok()?, cell))
        })
        .collect()
}

/// How many seconds the row's folded gaps stand for.
fn folded(html: &str, role: &str) -> u64 {
    row(html, role)
        .iter()
        .filter_map(|cell| cell.strip_prefix(r#"class="tl-gap" data-gap=""#))
        .map(|gap| {
            let range = gap.split('"').next().unwrap_or_default();
            let (from, to) = range.split_once('-').expect("a gap from-to");
            to.parse::<u64>().expect("to") - from.parse::<u64>().expect("from") + 1
        })
        .sum()
}

/// One column per second, and the unsafe row marks A's rejected write at
/// t = 15, and only there.
#[test]
fn the_unsafe_row_marks_the_rejected_write() {
    let mut library = Library::new(fixtures());
    let timeline = library
        .get("gc-pause-fenced")
        .expect("fixture loads")
        .clone();
    let html = strip::render(&timeline, None);
    let cells = by_second(&html, "unsafe-row");
    assert_eq!(
        cells.len() as u64 + folded(&html, "unsafe-row"),
        timeline.seconds.len() as u64
    );
    let marked: Vec<&str> = cells
        .values()
        .filter(|c| c.contains("data-unsafe="))
        .copied()
        .collect();
    assert_eq!(marked.len(), 1, "{marked:?}");
    assert!(
        marked[0].starts_with(r#"data-second="15" data-unsafe="A" data-rejected="true""#),
        "{}",
        marked[0]
    );
    assert!(
        marked[0]
            .contains(r#"<span class="tl-x">✗</span>A<span class="tl-rejected">rejected</span>"#)
    );
    assert_eq!(
        row(&html, "token-row").len(),
        row(&html, "unsafe-row").len()
    );
}

/// Without fencing, A's late write goes through: a ✗ without "rejected",
/// and no token row.
#[test]
fn the_unfenced_write_is_unsafe_but_not_rejected() {
    let mut library = Library::new(fixtures());
    let html = strip::render(library.get("gc-pause").expect("fixture loads"), None);
    let cell = by_second(&html, "unsafe-row")[&15];
    assert!(
        cell.starts_with(r#"data-second="15" data-unsafe="A" data-rejected="false""#),
        "{cell}"
    );
    assert!(!cell.contains("tl-rejected"), "{cell}");
    assert!(!html.contains(r#"data-role="token-row""#));
}

/// A client that believes it holds the lock while the key is someone
/// else's is marked mistaken, paused or not: the one thing the reader must
/// see. While it really holds the lock, it is not.
#[test]
fn a_paused_client_with_a_wrong_belief_is_marked_mistaken() {
    let mut library = Library::new(fixtures());
    let html = strip::render(library.get("gc-pause").expect("fixture loads"), None);
    let a = by_second(&html, "belief-row\" data-client=\"A");
    assert!(
        (10..=14).all(|t| a.contains_key(&t)),
        "the mistaken seconds are shown"
    );
    for (&t, cell) in &a {
        let paused = cell.contains(r#"data-state="paused""#);
        let mistaken = cell.contains(r#"data-mistaken="true""#) && cell.contains("tl-mistaken");
        match t {
            2..=9 => assert!(paused && !mistaken, "t = {t}: {cell}"),
            10..=14 => assert!(paused && mistaken, "t = {t}: {cell}"),
            _ => {}
        }
    }
}

/// The menu order puts the original page's six demos first, as Demo 1–6.
#[test]
fn demos_are_numbered_as_on_the_original_page() {
    assert_eq!(demo_label("normal-run").as_deref(), Some("Demo 1"));
    assert_eq!(demo_label("gc-pause").as_deref(), Some("Demo 2"));
    assert_eq!(demo_label("fenced-reads").as_deref(), Some("Demo 6"));
    assert_eq!(demo_label("race"), None);
    let mut library = Library::new(fixtures());
    let json = library.embedded_json().expect("fixtures load").to_owned();
    let first = json
        .find(r#""name":"gc-pause""#)
        .expect("gc-pause embedded");
    let second = json
        .find(r#""name":"gc-pause-fenced""#)
        .expect("gc-pause-fenced embedded");
    assert!(
        first < second,
        "gc-pause (Demo 2) must come before gc-pause-fenced (Demo 3)"
    );
    assert!(
        json.contains(r#""labels":{"gc-pause":"Demo 2","gc-pause-fenced":"Demo 3"}"#),
        "{json}"
    );
    // Every listed demo is one the grader makes.
    let book_timelines = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../timelines");
    for name in DEMO_ORDER {
        assert!(
            book_timelines.join(format!("{name}.json")).is_file(),
            "{name} in DEMO_ORDER has no timeline"
        );
    }
}

/// The generated HTML must stay one raw HTML block in Markdown: no blank
/// line, no indentation that could turn into a code block.
#[test]
fn rendered_html_has_no_blank_or_indented_lines() {
    let mut library = Library::new(fixtures());
    let timeline = library.get("gc-pause").expect("fixture loads").clone();
    let json = library
        .embedded_json()
        .expect("all fixtures load")
        .to_owned();
    for html in [
        strip::render(&timeline, Some("Demo 2")),
        player::render(&timeline, "player-gc-pause", Some(&json)),
    ] {
        for line in html.lines() {
            assert!(!line.trim().is_empty(), "blank line in {html}");
            assert!(!line.starts_with(' '), "indented line {line:?}");
        }
    }
}

/// A chapter with two players embeds the timelines once, after the first,
/// and gives the players distinct ids.
#[test]
fn a_page_embeds_the_timelines_once() {
    let mut library = Library::new(fixtures());
    let md =
        "{{#player gc-pause}}\n\ntext\n\n{{#player gc-pause}}\n\n{{#player gc-pause-fenced}}\n";
    let out = expand(md, "ch.md", &mut library).expect("expands");
    assert_eq!(out.matches("data-timelines=").count(), 1);
    for id in [
        "player-gc-pause",
        "player-gc-pause-2",
        "player-gc-pause-fenced",
    ] {
        assert!(
            out.contains(&format!(r#"id="{id}""#)),
            "{id} missing in {out}"
        );
    }
    // Both fixtures are in the data, so the reader can switch demos.
    assert!(out.contains(r#""name":"gc-pause-fenced""#));
    assert!(out.contains(r#""name":"gc-pause""#));
}

/// A directive in prose is replaced, one in a code block is kept, and the
/// rest of the chapter is left byte for byte.
#[test]
fn expand_keeps_the_rest_of_the_chapter() {
    let mut library = Library::new(fixtures());
    let md = "Before.\n\n{{#timeline gc-pause}}\n\n```\n{{#timeline gc-pause}}\n```\n\n{{#quiz ../q.toml}}\n";
    let out = expand(md, "ch.md", &mut library).expect("expands");
    assert!(out.starts_with("Before.\n\n<div class=\"tl-figure\" data-timeline=\"gc-pause\">\n"));
    assert!(out.ends_with("</div>\n\n\n```\n{{#timeline gc-pause}}\n```\n\n{{#quiz ../q.toml}}\n"));
}

/// A missing file is an error that names the chapter, the line, the
/// directive and the file, and says how to produce the file.
#[test]
fn a_missing_timeline_is_an_error_naming_chapter_directive_and_file() {
    let dir = scratch("missing");
    let mut library = Library::new(&dir);
    let err = expand(
        "Intro.\n\n{{#timeline nowhere}}\n",
        "timeout.md",
        &mut library,
    )
    .expect_err("the file does not exist");
    assert_eq!(
        err.to_string(),
        "chapter `timeout.md`, line 3: cannot expand `{{#timeline nowhere}}`"
    );
    let Error::Directive {
        source: Problem::Load(LoadError::Read { path, .. }),
        ..
    } = &err
    else {
        panic!("expected a read error, got {err:?}");
    };
    assert_eq!(path, &dir.join("nowhere.json"));
    let cause = std::error::Error::source(&err)
        .expect("has a cause")
        .to_string();
    assert!(cause.contains("nowhere.json"), "{cause}");
    assert!(cause.contains("UPDATE_TIMELINES=1"), "{cause}");
}

/// A player needs every timeline, so a broken file anywhere in the folder
/// fails the player's page, naming that file and where serde stopped.
#[test]
fn malformed_json_is_an_error_naming_the_file() {
    let dir = scratch("malformed");
    fs::copy(fixtures().join("gc-pause.json"), dir.join("gc-pause.json")).expect("copy fixture");
    fs::write(dir.join("broken.json"), "{ \"name\": \"broken\", ").expect("write broken file");
    let mut library = Library::new(&dir);
    let err =
        expand("{{#player gc-pause}}\n", "timeout.md", &mut library).expect_err("broken file");
    let cause = std::error::Error::source(&err)
        .expect("has a cause")
        .to_string();
    assert!(
        cause.contains("broken.json") && cause.contains("SCHEMA.md"),
        "{cause}"
    );
}

/// A misspelt field is refused rather than ignored: `"unsafe"` spelt
/// `"unsafe_"` would otherwise silently drop the ✗.
#[test]
fn unknown_fields_are_refused() {
    let dir = scratch("unknown-field");
    let text = fs::read_to_string(fixtures().join("gc-pause.json")).expect("read fixture");
    fs::write(
        dir.join("gc-pause.json"),
        text.replacen("\"unsafe\":", "\"unsafe_\":", 1),
    )
    .expect("write");
    let err = Library::new(&dir)
        .get("gc-pause")
        .map(|_| ())
        .expect_err("unknown field");
    let source = std::error::Error::source(&err)
        .expect("serde error")
        .to_string();
    assert!(source.contains("unsafe_"), "{source}");
}

/// Seconds must count 0, 1, 2, ... without gaps: the table's rows and the
/// player's slider both use `t` as the index.
#[test]
fn a_gap_in_the_seconds_is_refused() {
    let dir = scratch("gap");
    let text = fs::read_to_string(fixtures().join("gc-pause.json")).expect("read fixture");
    fs::write(
        dir.join("gc-pause.json"),
        text.replacen("\"t\": 3,", "\"t\": 4,", 1),
    )
    .expect("write");
    let err = Library::new(&dir)
        .get("gc-pause")
        .map(|_| ())
        .expect_err("gap");
    assert!(err.to_string().contains("seconds[3] has t = 4"), "{err}");
}

/// Inside a list item, every line of the HTML keeps the item's indentation,
/// so the whole strip stays in the item.
#[test]
fn a_directive_in_a_list_item_stays_in_the_item() {
    let mut library = Library::new(fixtures());
    let md = "- Look:\n\n  {{#timeline gc-pause}}\n\n- Next item\n";
    let out = expand(md, "ch.md", &mut library).expect("expands");
    let strip: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.contains("tl-figure"))
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(strip.len() > 10, "{out}");
    assert!(strip.iter().all(|l| l.starts_with("  <")), "{out}");
}
