//! The book's timelines folder, read lazily and at most once per build.
//!
//! A `{{#timeline NAME}}` needs one file; a `{{#player NAME}}` embeds every
//! timeline so the reader can switch demos, which means reading the whole
//! folder. Both go through [`Library`], which keeps what it has parsed and
//! validated, so a book with many directives reads each file once, and the
//! embedded JSON is serialized once.
//!
//! The "what if" grids (`src/what-if/*.json`, see `lock_timeline::what_if`)
//! are read here too: a grid names book timelines, so it is checked against
//! them, and the player's data carries every grid's controls (not its runs,
//! which the player fetches when the reader asks).

use crate::error::LoadError;
use crate::timeline::{Control, Timeline, WhatIf};
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
    what_if_dir: Option<PathBuf>,
    grids: BTreeMap<String, WhatIf>,
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
            what_if_dir: None,
            grids: BTreeMap::new(),
        }
    }

    /// The same library, with its "what if" grids in `dir` (usually
    /// `<book root>/src/what-if`, which mdBook copies beside the pages). A
    /// folder that does not exist holds no grid.
    pub fn with_what_if(mut self, dir: impl Into<PathBuf>) -> Self {
        self.what_if_dir = Some(dir.into());
        self
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

    /// The grid in `<what-if dir>/<name>.json`, read and checked against the
    /// book's timelines.
    pub fn what_if(&mut self, name: &str) -> Result<&WhatIf, LoadError> {
        let path = self
            .what_if_dir
            .clone()
            .unwrap_or_else(|| self.dir.join("what-if"))
            .join(format!("{name}.json"));
        if !self.grids.contains_key(name) {
            let book = self.all()?;
            let grid: WhatIf = parse(&path)?;
            grid.validate(name, |t| book.contains_key(t))
                .map_err(|reason| LoadError::Invalid {
                    path: path.clone(),
                    reason,
                })?;
            self.grids.insert(name.to_owned(), grid);
        }
        self.grids.get(name).ok_or_else(|| LoadError::Invalid {
            path,
            reason: "the grid vanished from the cache".to_owned(),
        })
    }

    /// Every grid of the what-if folder, by name (none without a folder).
    pub fn what_ifs(&mut self) -> Result<Vec<&WhatIf>, LoadError> {
        let names = match &self.what_if_dir {
            Some(dir) if dir.is_dir() => json_stems(dir)?,
            _ => Vec::new(),
        };
        for name in &names {
            self.what_if(name)?;
        }
        Ok(names.iter().filter_map(|n| self.grids.get(n)).collect())
    }

    /// Every timeline as one JSON document, `{"timelines": [...], "labels":
    /// {...}, "what_if": [...]}` in the order of [`DEMO_ORDER`], ready to be
    /// placed inside `<script type="application/json">`.
    pub fn embedded_json(&mut self) -> Result<&str, LoadError> {
        if self.embedded.is_none() {
            let what_if: Vec<GridIndex> = self.what_ifs()?.into_iter().map(GridIndex::of).collect();
            let all = self.all()?;
            let mut timelines: Vec<&Timeline> = all.values().collect();
            timelines.sort_by_key(|t| demo_rank(&t.name));
            let labels = timelines
                .iter()
                .filter_map(|t| demo_label(&t.name).map(|l| (t.name.as_str(), l)))
                .collect();
            let folds = timelines
                .iter()
                .map(|t| (t.name.clone(), gaps(t)))
                .collect();
            let json = serde_json::to_string(&Embedded {
                timelines,
                labels,
                folds,
                what_if,
            })
            .map_err(|source| LoadError::Embed {
                dir: self.dir.clone(),
                source,
            })?;
            self.embedded = Some(crate::html::json_for_script(&json));
        }
        Ok(self.embedded.as_deref().unwrap_or_default())
    }
}

/// The document the player reads: `{"timelines": [...], "labels": {...}, "folds": {...},
/// "what_if": [...]}`.
#[derive(Serialize)]
struct Embedded<'a> {
    timelines: Vec<&'a Timeline>,
    labels: BTreeMap<&'a str, String>,
    folds: Folds,
    what_if: Vec<GridIndex>,
}

/// For each timeline by name, the seconds its strip folds into gaps, `[first, last]`: the
/// static strip's rule ([`crate::fold`]), which the player's strip follows too.
type Folds = BTreeMap<String, Vec<[u64; 2]>>;

/// The gaps of `timeline`'s strip, as `[first, last]` seconds.
fn gaps(timeline: &Timeline) -> Vec<[u64; 2]> {
    crate::fold::columns(timeline)
        .into_iter()
        .filter_map(|c| match c {
            crate::fold::Column::Gap { from, to } => {
                Some([timeline.seconds[from].t, timeline.seconds[to].t])
            }
            crate::fold::Column::Second(_) => None,
        })
        .collect()
}

/// What the player needs of a grid before the reader asks for a run: its
/// controls, where to fetch its cells (relative to the book's root), and
/// which book timelines are cells of it, with their values.
#[derive(Serialize)]
struct GridIndex {
    name: String,
    question: String,
    file: String,
    controls: Vec<Control>,
    demos: BTreeMap<String, Vec<String>>,
    /// The gaps of the cells' own runs, by run name (the demos' are the page's).
    folds: Folds,
}

impl GridIndex {
    fn of(grid: &WhatIf) -> GridIndex {
        GridIndex {
            name: grid.name.clone(),
            question: grid.question.clone(),
            file: format!("{WHAT_IF_DIR}/{}.json", grid.name),
            controls: grid.controls.clone(),
            demos: grid
                .cells
                .iter()
                .filter_map(|c| c.same_as.clone().map(|name| (name, c.choice.clone())))
                .collect(),
            folds: grid
                .cells
                .iter()
                .filter_map(|c| c.run.as_ref())
                .map(|run| (run.name.clone(), gaps(run)))
                .collect(),
        }
    }
}

/// The folder of the grids, inside the book's `src/` (so mdBook copies them
/// to the built book, where the player fetches them).
pub const WHAT_IF_DIR: &str = "what-if";

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

/// Reads and parses one JSON file.
fn parse<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, LoadError> {
    let text = fs::read_to_string(path).map_err(|source| LoadError::Read {
        path: path.to_owned(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| LoadError::Parse {
        path: path.to_owned(),
        source,
    })
}

/// Reads, parses and validates one timeline file.
fn load(path: &Path, name: &str) -> Result<Timeline, LoadError> {
    let timeline: Timeline = parse(path)?;
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
