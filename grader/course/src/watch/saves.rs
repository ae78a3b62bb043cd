//! Saves of the learner's files: `notify`'s changes under `exercises/src/`,
//! made into one save each.
//!
//! An editor writes a file in several steps (a new file, a rename, its
//! time), and may save several files at once: every change to a `.rs` file
//! is gathered until the folder has been quiet for [`DEBOUNCE`], and the
//! files changed in that time are one save.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Sender};
use std::thread;
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher};

use super::Event;
use crate::error::CourseError;

/// How long the files must stay quiet after a write before it counts as a
/// save.
const DEBOUNCE: Duration = Duration::from_millis(150);

/// Watches `dir` for saves of `.rs` files; each save becomes one
/// [`Event::Saved`]. Saves are watched as long as the watcher returned lives.
pub(super) fn watch(
    dir: &Path,
    events: Sender<Event>,
) -> Result<notify::RecommendedWatcher, CourseError> {
    let (raw, changes) = mpsc::channel::<PathBuf>();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else { return };
        if matches!(event.kind, EventKind::Access(_)) {
            return;
        }
        for path in event.paths {
            if path.extension().is_some_and(|e| e == "rs") {
                let _ = raw.send(path);
            }
        }
    })
    .map_err(|e| watch_error(dir, e))?;
    watcher
        .watch(dir, RecursiveMode::NonRecursive)
        .map_err(|e| watch_error(dir, e))?;
    thread::spawn(move || {
        while let Ok(first) = changes.recv() {
            let mut paths = vec![first];
            while let Ok(more) = changes.recv_timeout(DEBOUNCE) {
                paths.push(more);
            }
            paths.sort();
            paths.dedup();
            if events.send(Event::Saved(paths)).is_err() {
                break;
            }
        }
    });
    Ok(watcher)
}

fn watch_error(dir: &Path, e: notify::Error) -> CourseError {
    CourseError::Usage(format!(
        "cannot watch {} for saves: {e}; grade by hand with `cargo test -p exercises` meanwhile",
        dir.display()
    ))
}
