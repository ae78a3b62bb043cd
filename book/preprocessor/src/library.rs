//! The book's timelines folder, read lazily and at most once per build.
//!
//! A `{{#timeline NAME}}` needs one file; a `{{#player NAME}}` embeds every
//! timeline so the reader can switch demos, which means reading the whole
//! folder. Both go through [`Library`], which keeps what it has parsed and
//! validated, so a book with many directives reads each file once, and the
//! embedded JSON is serialized once.

use crate::error::LoadError;
use crate::timeline::Timeline;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The timelines of one book.
#[derive(Debug)]
pub struct Library {
    dir: PathBuf,
    loaded: BTreeMap<String, Timeline>,
    complete: bool,
    embedded: Option<String>,
}

impl Library {
    /// A library over `dir`, usually `<book root>/timelines`. Nothing is
    /// read until asked for.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Library {
            dir: dir.into(),
            loaded: BTreeMap::new(),
            complete: false,
            embedded: None,
        }
    }

    /// The folder the timelines are read from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The timeline in `<dir>/<name>.json`, read and validated.
    pub fn get(&mut self, name: &str) -> Result<&Timeline, LoadError> {
        if !self.loaded.contains_key(name) {
            let timeline = load(&self.dir.join(format!("{name}.json")), name)?;
            self.loaded.insert(name.to_owned(), timeline);
        }
        self.loaded.get(name).ok_or_else(|| LoadError::Invalid {
            path: self.dir.join(format!("{name}.json")),
            reason: "the timeline vanished from the cache".to_owned(),
        })
    }

    /// Every `*.json` file of the folder, by name.
    pub fn all(&mut self) -> Result<&BTreeMap<String, Timeline>, LoadError> {
        if !self.complete {
            for name in json_stems(&self.dir)? {
                self.get(&name)?;
            }
            self.complete = true;
        }
        Ok(&self.loaded)
    }

    /// Every timeline as one JSON document, `{"timelines": [...], "labels":
    /// {...}}` in the order of [`DEMO_ORDER`], ready to be placed inside
    /// `<script type="application/json">`.
    pub fn embedded_json(&mut self) -> Result<&str, LoadError> {
        if self.embedded.is_none() {
            let all = self.all()?;
            let mut timelines: Vec<&Timeline> = all.values().collect();
            timelines.sort_by_key(|t| demo_rank(&t.name));
            let labels = timelines
                .iter()
                .filter_map(|t| demo_label(&t.name).map(|l| (t.name.as_str(), l)))
                .collect();
            let json =
                serde_json::to_string(&Embedded { timelines, labels }).map_err(|source| {
                    LoadError::Embed {
                        dir: self.dir.clone(),
                        source,
                    }
                })?;
            self.embedded = Some(crate::html::json_for_script(&json));
        }
        Ok(self.embedded.as_deref().unwrap_or_default())
    }
}

/// The document the player reads: `{"timelines": [...], "labels": {...}}`.
#[derive(Serialize)]
struct Embedded<'a> {
    timelines: Vec<&'a Timeline>,
    labels: BTreeMap<&'a str, String>,
}

/// The order of the demos in the player's menu: first the six demos of the
/// course's original page, numbered Demo 1–6 as there (and as the chapters
/// call them), then the course's own, in the order the chapters tell them.
/// A timeline missing from this list comes last, by name.
pub const DEMO_ORDER: [&str; 10] = [
    "normal-run",
    "gc-pause",
    "gc-pause-fenced",
    "slow-job-plain-del",
    "slow-job",
    "fenced-reads",
    "race",
    "crashed-holder",
    "long-pause",
    "long-pause-fenced",
];

/// How many of [`DEMO_ORDER`] carry a number.
pub const NUMBERED_DEMOS: usize = 6;

/// `Demo 2` for `gc-pause`; `None` for a timeline without a number.
pub fn demo_label(name: &str) -> Option<String> {
    DEMO_ORDER[..NUMBERED_DEMOS]
        .iter()
        .position(|&n| n == name)
        .map(|i| format!("Demo {}", i + 1))
}

/// Where `name` sorts in the menu.
fn demo_rank(name: &str) -> (usize, &str) {
    let rank = DEMO_ORDER
        .iter()
        .position(|&n| n == name)
        .unwrap_or(DEMO_ORDER.len());
    (rank, name)
}

/// Reads, parses and validates one timeline file.
fn load(path: &Path, name: &str) -> Result<Timeline, LoadError> {
    let text = fs::read_to_string(path).map_err(|source| LoadError::Read {
        path: path.to_owned(),
        source,
    })?;
    let timeline: Timeline = serde_json::from_str(&text).map_err(|source| LoadError::Parse {
        path: path.to_owned(),
        source,
    })?;
    timeline
        .validate(name)
        .map_err(|reason| LoadError::Invalid {
            path: path.to_owned(),
            reason,
        })?;
    Ok(timeline)
}

/// The stems of the `.json` files in `dir`, sorted (the folder also holds
/// SCHEMA.md, which is not a timeline).
fn json_stems(dir: &Path) -> Result<Vec<String>, LoadError> {
    let list_error = |source| LoadError::ListDir {
        path: dir.to_owned(),
        source,
    };
    let mut stems = Vec::new();
    for entry in fs::read_dir(dir).map_err(list_error)? {
        let path = entry.map_err(list_error)?.path();
        if path.extension().is_some_and(|e| e == "json")
            && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
        {
            stems.push(stem.to_owned());
        }
    }
    stems.sort();
    Ok(stems)
}
