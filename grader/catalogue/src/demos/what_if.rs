//! The book's "what if" grids: Demos 2–5 played again with other values.
//!
//! Demos 2 and 3 are one story, a client frozen past its TTL, with fencing
//! off and on; Demos 4 and 5 are another, a job longer than the TTL, released
//! with a plain DEL or by check-and-delete. Each grid offers a few values of
//! what the reader would change (the TTL; the pause or the job's length;
//! fencing or the release) and every combination is a real run of the
//! story, by the same engine and against the same Redis as every timeline of
//! the book. The grids stay small (at most a dozen cells) so that recording
//! them all stays a matter of seconds.
//!
//! A cell is recorded as a [`Timeline`] of its own; [`Grid::record`] stores
//! a cell that is the very run of one of the book's timelines as a reference
//! to it, so the demo the grid starts from is never stored twice.

use super::plain_del;
use grader::error::GradeError;
use grader::lock::Lock;
use grader::reference::LOCK as REFERENCE;
use grader::scenario;
use grader::story::{Fault, Fencing, Plan, Story};
use grader::timeline::{Cell, Control, Timeline, WhatIf};

/// One grid: its controls and, for every combination, the run to record.
pub struct Grid {
    /// The file's stem in `book/src/what-if/`, and the `{{#what-if NAME}}` argument.
    pub name: &'static str,
    question: &'static str,
    controls: Vec<Control>,
    cells: Vec<GridCell>,
}

/// One combination of a grid, ready to be played.
struct GridCell {
    choice: Vec<String>,
    scenario: Story,
    lock: Lock,
    title: String,
    story: String,
}

/// Every grid of the book. A story the scenarios no longer have gives no grid,
/// and the book's test then finds its file stale.
pub fn grids() -> Vec<Grid> {
    [pause_grid(), slow_job_grid()]
        .into_iter()
        .flatten()
        .collect()
}

impl Grid {
    /// Plays every cell and returns the grid as the book stores it. A cell whose
    /// run is the same as one of `book` (the book's own timelines, freshly
    /// recorded) but for its name, title and story names it instead.
    pub fn record(&self, book: &[Timeline]) -> Result<WhatIf, GradeError> {
        let mut cells = Vec::with_capacity(self.cells.len());
        for cell in &self.cells {
            let mut run = super::play(&cell.scenario, &cell.lock)?;
            run.name = WhatIf::cell_name(self.name, &cell.choice);
            run.title.clone_from(&cell.title);
            run.story.clone_from(&cell.story);
            let same_as = book.iter().find(|t| run.same_run_as(t));
            cells.push(Cell {
                choice: cell.choice.clone(),
                same_as: same_as.map(|t| t.name.clone()),
                run: if same_as.is_some() { None } else { Some(run) },
            });
        }
        Ok(WhatIf {
            name: self.name.to_owned(),
            question: self.question.to_owned(),
            controls: self.controls.clone(),
            cells,
        })
    }
}

/// Seconds as a control shows them.
fn secs(s: u64) -> String {
    format!("{s} s")
}

/// A control offering `values`.
fn control(label: &str, values: impl IntoIterator<Item = String>) -> Control {
    Control {
        label: label.to_owned(),
        values: values.into_iter().collect(),
    }
}

const TTLS_S: [u64; 2] = [10, 20];

/// Demos 2 and 3: A freezes after reading, for a pause shorter than the TTL, longer
/// than it, or longer than both TTLs; fencing off or on.
fn pause_grid() -> Option<Grid> {
    const PAUSES_S: [u64; 3] = [5, 14, 30];
    let base = scenario::named("gc-pause")?;
    let mut cells = Vec::new();
    for ttl_s in TTLS_S {
        for pause_s in PAUSES_S {
            for fenced in [false, true] {
                let fencing = if fenced {
                    Fencing::Writes
                } else {
                    Fencing::Off
                };
                let mut scenario = base.clone();
                scenario.ttl_s = ttl_s;
                scenario.fencing = fencing;
                scenario.faults = vec![(
                    1,
                    Fault::Freeze {
                        client: "A",
                        until: 1 + pause_s,
                    },
                )];
                let checked = if fenced {
                    "The storage checks fencing tokens and refuses a write older than one it has seen."
                } else {
                    "No fencing tokens: the storage takes every write."
                };
                cells.push(GridCell {
                    choice: vec![secs(ttl_s), secs(pause_s), on_off(fenced)],
                    scenario,
                    lock: REFERENCE,
                    title: format!(
                        "What if: a {ttl_s} s TTL, a {pause_s} s pause, fencing {}",
                        on_off(fenced)
                    ),
                    story: format!(
                        "A takes the lock with a {ttl_s} s TTL, reads the counter, and freezes for \
                         {pause_s} s, from t = 1 s to t = {} s. {checked}",
                        1 + pause_s
                    ),
                });
            }
        }
    }
    Some(Grid {
        name: "gc-pause",
        question: "What if the TTL, the pause or fencing were different?",
        controls: vec![
            control("TTL", TTLS_S.map(secs)),
            control("A's pause", PAUSES_S.map(secs)),
            control("fencing", [on_off(false), on_off(true)]),
        ],
        cells,
    })
}

/// How a grid's release control names the two releases.
const RELEASES: [&str; 2] = ["check-and-delete", "plain DEL"];

/// Demos 4 and 5: A's job, from acquiring to releasing, shorter than the TTL, longer
/// than it, or longer than both TTLs; released by check-and-delete or a plain DEL.
fn slow_job_grid() -> Option<Grid> {
    // A job of J seconds: acquire at 0, read at 1, write at J - 1, release at J.
    const JOBS_S: [u64; 3] = [6, 12, 22];
    let base = scenario::named("slow-job")?;
    let mut cells = Vec::new();
    for ttl_s in TTLS_S {
        for job_s in JOBS_S {
            for (release, lock) in RELEASES.into_iter().zip([REFERENCE, plain_del()]) {
                let mut scenario = base.clone();
                scenario.ttl_s = ttl_s;
                scenario.clients = vec![
                    Plan::job("A").working(job_s - 2),
                    Plan::job("B"),
                    Plan::job("C"),
                ];
                let how = if lock.name == REFERENCE.name {
                    "Every client releases by check-and-delete: it deletes the key only if it \
                     still holds its own token."
                } else {
                    "Every client releases with a plain DEL, which deletes the key whoever holds it."
                };
                cells.push(GridCell {
                    choice: vec![secs(ttl_s), secs(job_s), release.to_owned()],
                    scenario,
                    lock,
                    title: format!("What if: a {ttl_s} s TTL, a {job_s} s job, {release}"),
                    story: format!(
                        "No pause: A's job takes {job_s} s from acquiring to releasing, over a \
                         {ttl_s} s TTL. {how}"
                    ),
                });
            }
        }
    }
    Some(Grid {
        name: "slow-job",
        question: "What if the TTL, the job's length or the release were different?",
        controls: vec![
            control("TTL", TTLS_S.map(secs)),
            control("A's job", JOBS_S.map(secs)),
            control("release", RELEASES.map(str::to_owned)),
        ],
        cells,
    })
}

fn on_off(on: bool) -> String {
    if on { "on" } else { "off" }.to_owned()
}
