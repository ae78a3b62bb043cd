//! The timelines the book shows, and how each is made.
//!
//! The book draws no timeline by hand: each one is a scenario played by the
//! grader against Redis, with the reference lock or, to show a mistake, a
//! wrong one from the catalogue, or one of the Redlock stories played with the
//! reference Redlock on five nodes (the same play the `redlock::` checks hold a
//! learner's Redlock to). The JSON files in `book/timelines/` are these runs; a
//! test fails when they no longer match what the grader produces
//! (`UPDATE_TIMELINES=1` rewrites them). The "what if" grids of [`what_if`]
//! play Demos 2–5 again with other values, the same way.

pub mod what_if;

use crate::catalogue::{renewal, wrong};
use crate::checks::redlock_stories;
use crate::error::GradeError;
use crate::lock::Lock;
use crate::reference::LOCK as REFERENCE;
use crate::scenario;
use crate::story::{Story, Topology};
use crate::timeline::Timeline;

/// One timeline of the book: a story, the lock that plays it, and the
/// name the book refers to it by.
pub struct Demo {
    /// The name in `{{#timeline NAME}}`, and the JSON file's stem.
    pub name: &'static str,
    /// The story.
    pub story: Story,
    /// The lock that plays it.
    pub lock: Lock,
}

/// Every timeline of the book.
pub fn all() -> Vec<Demo> {
    let mut demos: Vec<Demo> = scenario::all()
        .into_iter()
        .map(|s| Demo {
            name: s.timeline,
            story: s,
            lock: REFERENCE,
        })
        .collect();
    let plain_del = plain_del();
    if let Some(slow_job) = scenario::named("slow-job") {
        demos.push(Demo {
            name: "slow-job-plain-del",
            story: slow_job,
            lock: plain_del,
        });
    }
    let never_tells = renewal::WRONG
        .iter()
        .find(|w| w.lock.name == "keeper that never tells the job")
        .map_or(REFERENCE, |w| w.lock);
    if let Some(renewal_pause) = scenario::named("renewal-pause") {
        demos.push(Demo {
            name: "renewal-pause-never-told",
            story: renewal_pause,
            lock: never_tells,
        });
    }
    demos.extend(redlock_stories::all().into_iter().map(|story| Demo {
        name: story.timeline,
        story,
        lock: REFERENCE,
    }));
    demos
}

/// The catalogue's lock that releases with a plain DEL (Demo 4's).
fn plain_del() -> Lock {
    wrong::ALL
        .iter()
        .find(|w| w.lock.name == "plain DEL release")
        .map_or(REFERENCE, |w| w.lock)
}

/// Plays a story with `lock`, by the engine of its topology, and returns its timeline, named
/// as the story is.
fn play(story: &Story, lock: &Lock) -> Result<Timeline, GradeError> {
    match story.topology {
        Topology::Single | Topology::Replicated { .. } => {
            Ok(crate::run::run(story, lock)?.timeline)
        }
        // A Redlock that failed shows it in its timeline ("redlock_acquire failed"), as
        // a scenario's lock does.
        Topology::Nodes(_) => Ok(redlock_stories::play(story, lock)?.timeline),
    }
}

impl Demo {
    /// Plays the demo and returns its timeline, named as the book names it.
    pub fn timeline(&self) -> Result<Timeline, GradeError> {
        let mut timeline = play(&self.story, &self.lock)?;
        timeline.name = self.name.to_string();
        if self.name == "slow-job-plain-del" {
            timeline.title = "A job longer than the TTL, released with a plain DEL".into();
            timeline.story =
                "The same 12 s job over a 10 s TTL, but every client releases with a plain \
                              DEL, which deletes the key whoever holds it."
                    .into();
        }
        if self.name == "renewal-pause-never-told" {
            timeline.title = "A renewal fails during a pause, and nobody tells the job".into();
            timeline.story = "The same pause, with a keeper that renews every 10 s but never looks at \
                              the answer: when A wakes up, its renewal fails, the keeper says nothing, \
                              and A writes."
                .into();
        }
        Ok(timeline)
    }
}
