//! `{{#what-if NAME}}`: a grid whose cells are the fixtures' two GC pauses
//! (fencing off and on) renders as a table whose safety comes from the runs,
//! the player's data carries the grid's controls, and a grid that does not
//! cover its controls stops the build with the file and the reason.

use mdbook_timeline::error::{Error, LoadError, Problem};
use mdbook_timeline::expand::expand;
use mdbook_timeline::library::Library;
use std::fs;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A scratch what-if folder for one test, holding `grid` as `fencing.json`.
fn grid_folder(test: &str, grid: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("what-if")
        .join(test);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create scratch folder");
    fs::write(dir.join("fencing.json"), grid).expect("write the grid");
    dir
}

const GRID: &str = r#"{"name": "fencing", "question": "What if fencing were on?",
  "controls": [{"label": "fencing", "values": ["off", "on"]}],
  "cells": [{"choice": ["off"], "same_as": "gc-pause"}, {"choice": ["on"], "same_as": "gc-pause-fenced"}]}"#;

/// The rows of the table, each as its `<tr …>` tag.
fn rows(html: &str) -> Vec<&str> {
    html.split("<tr ")
        .skip(1)
        .map(|r| &r[..r.find('>').unwrap_or(r.len())])
        .collect()
}

#[test]
fn a_grid_renders_one_row_per_run_with_its_safety() {
    let dir = grid_folder("renders", GRID);
    let mut library = Library::new(fixtures()).with_what_if(&dir);
    let html = expand("{{#what-if fencing}}\n", "ch.md", &mut library).expect("expands");
    let rows = rows(&html);
    assert_eq!(rows.len(), 2, "{html}");
    assert!(
        rows[0].contains(r#"data-choice="off""#) && rows[0].contains(r#"data-safe="false""#),
        "the unfenced pause lets A's late write through: {}",
        rows[0]
    );
    assert!(
        rows[1].contains(r#"data-choice="on""#) && rows[1].contains(r#"data-safe="true""#),
        "fencing refuses it: {}",
        rows[1]
    );
    assert!(
        html.contains("(Demo 2)") && html.contains("(Demo 3)"),
        "{html}"
    );
}

#[test]
fn the_players_data_carries_the_grids_controls_and_demos() {
    let dir = grid_folder("embedded", GRID);
    let mut library = Library::new(fixtures()).with_what_if(&dir);
    let json = library.embedded_json().expect("embeds");
    assert!(
        json.contains(r#""what_if":[{"name":"fencing""#)
            && json.contains(r#""file":"what-if/fencing.json""#)
            && json.contains(r#""demos":{"gc-pause":["off"],"gc-pause-fenced":["on"]}"#),
        "{json}"
    );
}

#[test]
fn a_grid_missing_a_combination_stops_the_build() {
    let dir = grid_folder(
        "missing",
        &GRID.replace(r#", {"choice": ["on"], "same_as": "gc-pause-fenced"}"#, ""),
    );
    let mut library = Library::new(fixtures()).with_what_if(&dir);
    let err = expand("{{#what-if fencing}}\n", "ch.md", &mut library).expect_err("refused");
    let Error::Directive {
        source: Problem::Load(LoadError::Invalid { path, reason }),
        ..
    } = err
    else {
        panic!("unexpected error: {err}");
    };
    assert!(path.ends_with("fencing.json"), "{}", path.display());
    assert_eq!(reason, "1 cells for 2 combinations of the controls");
}

#[test]
fn a_cell_naming_no_book_timeline_stops_the_build() {
    let dir = grid_folder("unknown", &GRID.replace("gc-pause-fenced", "no-such-run"));
    let mut library = Library::new(fixtures()).with_what_if(&dir);
    let err = expand("{{#what-if fencing}}\n", "ch.md", &mut library).expect_err("refused");
    assert!(
        format!("{:?}", err)
            .contains("\\\"no-such-run\\\", which is not one of the book's timelines"),
        "{err:?}"
    );
}
