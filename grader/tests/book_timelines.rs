//! The book's timelines are real runs: each JSON file in `book/timelines/`
//! must be exactly what the grader records today. After changing a scenario
//! or the grader, rewrite them with
//! `UPDATE_TIMELINES=1 cargo test -p grader --test book_timelines`.
//! The same goes for the "what if" grids in `book/src/what-if/`: every cell
//! is a run the grader records today.

use std::fs;
use std::path::PathBuf;

use lock_catalogue::demos::{self, what_if};

fn folder() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../book/timelines")
}

fn what_if_folder() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../book/src/what-if")
}

#[test]
fn every_book_timeline_matches_a_fresh_run() {
    let update = std::env::var_os("UPDATE_TIMELINES").is_some();
    let mut stale = Vec::new();
    for demo in demos::all() {
        let json = demo
            .timeline()
            .unwrap_or_else(|e| panic!("{}: {e}", demo.name))
            .to_json();
        let path = folder().join(format!("{}.json", demo.name));
        if update {
            fs::write(&path, &json)
                .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        } else if fs::read_to_string(&path).ok().as_deref() != Some(json.as_str()) {
            stale.push(demo.name);
        }
    }
    assert!(
        stale.is_empty(),
        "book/timelines/ is out of date for {stale:?}; rewrite with \
         UPDATE_TIMELINES=1 cargo test -p grader --test book_timelines"
    );
}

#[test]
fn the_folder_holds_no_timeline_the_grader_does_not_make() {
    let names: Vec<String> = demos::all()
        .iter()
        .map(|d| format!("{}.json", d.name))
        .collect();
    for entry in fs::read_dir(folder()).expect("book/timelines/ exists") {
        let file = entry
            .expect("a readable entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        if file.ends_with(".json") {
            assert!(
                names.contains(&file),
                "book/timelines/{file} is not made by any demo"
            );
        }
    }
}

/// Every "what if" grid is what the grader records now, cell by cell; a cell
/// stored as a reference to a book timeline must be that very run.
#[test]
fn every_what_if_grid_matches_fresh_runs() {
    let update = std::env::var_os("UPDATE_TIMELINES").is_some();
    let book: Vec<_> = demos::all()
        .iter()
        .map(|d| d.timeline().unwrap_or_else(|e| panic!("{}: {e}", d.name)))
        .collect();
    let mut stale = Vec::new();
    let mut total = 0;
    for grid in what_if::grids() {
        let json = grid
            .record(&book)
            .unwrap_or_else(|e| panic!("what-if {}: {e}", grid.name))
            .to_json();
        total += json.len();
        let path = what_if_folder().join(format!("{}.json", grid.name));
        if update {
            fs::create_dir_all(what_if_folder()).expect("book/src/what-if/ can be made");
            fs::write(&path, &json)
                .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        } else if fs::read_to_string(&path).ok().as_deref() != Some(json.as_str()) {
            stale.push(grid.name);
        }
    }
    eprintln!("what-if grids: {total} bytes of JSON in all");
    assert!(
        stale.is_empty(),
        "book/src/what-if/ is out of date for {stale:?}; rewrite with \
         UPDATE_TIMELINES=1 cargo test -p grader --test book_timelines"
    );
}

#[test]
fn the_what_if_folder_holds_no_grid_the_grader_does_not_make() {
    let names: Vec<String> = what_if::grids()
        .iter()
        .map(|g| format!("{}.json", g.name))
        .collect();
    for entry in fs::read_dir(what_if_folder()).expect("book/src/what-if/ exists") {
        let file = entry
            .expect("a readable entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        assert!(
            names.contains(&file),
            "book/src/what-if/{file} is not made by any grid"
        );
    }
}
