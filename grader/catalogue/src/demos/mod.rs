//! The timelines the book shows, and how each is made.
//!
//! The book draws no timeline by hand: each one is a [`Story`] played by the
//! grader's one engine against Redis: a scenario with the reference lock or, to
//! show a mistake, a wrong one from the catalogue (under a name and words of its
//! own), or one of the Redlock stories played with the reference Redlock on five
//! nodes (the same play the `redlock::` checks hold a learner's Redlock to).
//! The JSON files in `book/timelines/` are these runs; a test fails when they no
//! longer match what the grader produces (`UPDATE_TIMELINES=1` rewrites them).
//! The "what if" grids of [`what_if`] play Demos 2–5 again with other values,
//! the same way.

pub mod what_if;

use crate::{renewal, wrong};
use grader::error::GradeError;
use grader::lock::Lock;
use grader::reference::LOCK as REFERENCE;
use grader::scenario;
use grader::story::Story;
use grader::timeline::Timeline;

/// One timeline of the book: a story, the lock that plays it, and the
/// name the book refers to it by.
pub struct Demo {
    /// The name in `{{#timeline NAME}}`, and the JSON file's stem: the story's
    /// [`Story::timeline`].
    pub name: &'static str,
    /// The story, told as the book tells it (a demo that plays a story with a wrong lock
    /// names and tells it its own way).
    pub story: Story,
    /// The lock that plays it.
    pub lock: Lock,
}

/// Every timeline of the book.
pub fn all() -> Vec<Demo> {
    let mut demos: Vec<Demo> = scenario::all()
        .into_iter()
        .map(|s| Demo::of(s, REFERENCE))
        .collect();
    if let Some(slow_job) = scenario::named("slow-job") {
        let story = Story {
            timeline: "slow-job-plain-del",
            title: "A job longer than the TTL, released with a plain DEL",
            text: "The same 12 s job over a 10 s TTL, but every client releases with a plain \
                   DEL, which deletes the key whoever holds it.",
            ..slow_job
        };
        demos.push(Demo::of(story, plain_del()));
    }
    let never_tells = renewal::WRONG
        .iter()
        .find(|w| w.lock.name == "keeper that never tells the job")
        .map_or(REFERENCE, |w| w.lock);
    if let Some(renewal_pause) = scenario::named("renewal-pause") {
        let story = Story {
            timeline: "renewal-pause-never-told",
            title: "A renewal fails during a pause, and nobody tells the job",
            text: "The same pause, with a keeper that renews every 10 s but never looks at the \
                   answer: when A wakes up, its renewal fails, the keeper says nothing, and A \
                   writes.",
            ..renewal_pause
        };
        demos.push(Demo::of(story, never_tells));
    }
    demos.extend(
        scenario::redlock::all()
            .into_iter()
            .map(|story| Demo::of(story, REFERENCE)),
    );
    demos
}

/// The catalogue's lock that releases with a plain DEL (Demo 4's).
fn plain_del() -> Lock {
    wrong::ALL
        .iter()
        .find(|w| w.lock.name == "plain DEL release")
        .map_or(REFERENCE, |w| w.lock)
}

/// Plays a story with `lock` on the grader's one engine, and returns its timeline, named as the
/// story's [`Story::timeline`]. A lock that failed shows it in its timeline ("acquire failed").
fn play(story: &Story, lock: &Lock) -> Result<Timeline, GradeError> {
    Ok(grader::run::run(story, lock)?.timeline)
}

impl Demo {
    /// `story` played with `lock`, under the story's timeline name.
    fn of(story: Story, lock: Lock) -> Demo {
        Demo {
            name: story.timeline,
            story,
            lock,
        }
    }

    /// Plays the demo and returns its timeline, named as the book names it.
    pub fn timeline(&self) -> Result<Timeline, GradeError> {
        play(&self.story, &self.lock)
    }
}
