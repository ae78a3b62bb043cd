//! The book's timelines are real runs: each JSON file in `book/timelines/`
//! must be exactly what the grader records today. After changing a scenario
//! or the grader, rewrite them with
//! `UPDATE_TIMELINES=1 cargo test -p grader --test book_timelines`.

use std::fs;
use std::path::PathBuf;

use grader::demos;

fn folder() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../book/timelines")
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
