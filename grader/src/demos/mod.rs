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
use crate::checks::redlock_stories::{self, Story};
use crate::error::GradeError;
use crate::lock::Lock;
use crate::reference::LOCK as REFERENCE;
use crate::scenario::{self, Scenario};
use crate::timeline::Timeline;

/// One timeline of the book: a story, the lock that plays it, and the
/// name the book refers to it by.
pub struct Demo {
    /// The name in `{{#timeline NAME}}`, and the JSON file's stem.
    pub name: &'static str,
    /// The story.
    pub play: Play,
    /// The lock that plays it.
    pub lock: Lock,
}

/// What a demo plays.
pub enum Play {
    /// A story of three clients on one Redis server.
    Scenario(Scenario),
    /// A Redlock story on five nodes.
    Redlock(&'static Story),
}

/// Every timeline of the book.
pub fn all() -> Vec<Demo> {
    let mut demos: Vec<Demo> = scenario::all()
        .into_iter()
        .map(|s| Demo {
            name: s.name,
            play: Play::Scenario(s),
            lock: REFERENCE,
        })
        .collect();
    let plain_del = plain_del();
    if let Some(slow_job) = scenario::named("slow-job") {
        demos.push(Demo {
            name: "slow-job-plain-del",
            play: Play::Scenario(slow_job),
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
            play: Play::Scenario(renewal_pause),
            lock: never_tells,
        });
    }
    demos.extend(redlock_stories::STORIES.iter().map(|story| Demo {
        name: story.timeline,
        play: Play::Redlock(story),
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

/// Plays a story with `lock` and returns its timeline, named as the story is.
fn play(play: &Play, lock: &Lock) -> Result<Timeline, GradeError> {
    match play {
        Play::Scenario(scenario) => Ok(crate::run::run(scenario, lock)?.timeline),
        // A Redlock that failed shows it in its timeline ("redlock_acquire failed"), as
        // a scenario's lock does.
        Play::Redlock(story) => Ok(redlock_stories::play(story, lock)?.timeline),
    }
}

impl Demo {
    /// Plays the demo and returns its timeline, named as the book names it.
    pub fn timeline(&self) -> Result<Timeline, GradeError> {
        let mut timeline = play(&self.play, &self.lock)?;
        if let Play::Redlock(_) = self.play {
            return Ok(timeline);
        }
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
