//! The one stepping loop every story is played by, whatever its topology.
//!
//! Virtual time moves one second at a time. At each second the engine moves its clock (keys run
//! out), plays the faults due then, lets each client take its step, and looks at what the lock
//! runs on to write the second down. A client's step is the same on every topology ([`step`]):
//! nothing while frozen or after its job is over, a crash in place of its step, "woke up" when its
//! pause ends, its keeper's tick, then the job's next call (acquire, read, the write once its work
//! is done, release), and "froze" when its pause begins. The run ends when every client's job is
//! over, when a call of learner code fails (a [`Halt`]), or after [`MAX_SECONDS`], when the story
//! is stuck.
//!
//! What the loop plays is a [`Stage`]: the story, the second and the clients, which the engine
//! owns. The engine ([`crate::run`], through the [`Engine`] trait) says how each piece is done on
//! the story's topology: how its clock moves, what a fault does there, how the job's calls are made
//! and judged, and how a second is written down. The order of a second, a client's step and the end
//! of a run are decided here, once.

use super::client::{Client, Step};
use super::{Fault, Halt, MAX_SECONDS, Story};
use crate::error::GradeError;
use crate::sandbox::Failure;
use crate::timeline::{ActionKind, Note, Second};

/// Why a client's step stopped the story.
pub(crate) enum Stop {
    /// A call of learner code failed: the story ends with this second.
    Halted(Halt),
    /// The grader's own work failed.
    Grader(GradeError),
}

impl From<GradeError> for Stop {
    fn from(e: GradeError) -> Stop {
        Stop::Grader(e)
    }
}

/// What a play is about: the story, the second being played, and the clients.
pub(crate) struct Stage {
    /// The story being played.
    pub(crate) story: Story,
    /// The second being played.
    pub(crate) t: u64,
    /// The clients, in the order they act within a second.
    pub(crate) clients: Vec<Client>,
}

impl Stage {
    /// `story` at t = 0, its clients not started, with the faults the story does to them.
    pub(crate) fn new(story: &Story) -> Stage {
        let clients = story
            .clients
            .iter()
            .map(|plan| Client::new(*plan, &story.faults))
            .collect();
        Stage {
            story: story.clone(),
            t: 0,
            clients,
        }
    }

    /// The second being played, in virtual milliseconds from the start.
    pub(crate) fn ms(&self) -> u64 {
        self.t * 1000
    }
}

/// How a story is played: the engine, which owns the [`Stage`] and says what each piece of a
/// second does on the story's topology.
pub(crate) trait Engine {
    /// What is being played.
    fn stage(&mut self) -> &mut Stage;

    /// Moves the clock to the start of this second; returns what time did on its own.
    fn tick(&mut self) -> Result<Vec<Note>, GradeError>;
    /// Does `fault`, a fault of the topology; returns what it did.
    fn fault(&mut self, fault: Fault) -> Result<Vec<Note>, GradeError>;
    /// Writes down the second that ends, with `notes`.
    fn observe(&mut self, notes: Vec<Note>) -> Result<Second, GradeError>;

    /// Client `i` did something: its action for the timeline (and whatever else the engine
    /// keeps of it).
    fn event(&mut self, i: usize, kind: ActionKind, text: String) -> Result<(), GradeError>;
    /// Client `i`'s keeper ticks, on a topology that plays keepers.
    fn keep(&mut self, _i: usize) -> Result<(), Stop> {
        Ok(())
    }
    /// Client `i` tries to take the lock.
    fn acquire(&mut self, i: usize) -> Result<(), Stop>;
    /// Client `i`, holding the lock, reads the counter.
    fn read(&mut self, i: usize) -> Result<(), Stop>;
    /// Client `i`, its work done, writes the counter it read, plus one.
    fn write(&mut self, i: usize) -> Result<(), Stop>;
    /// Client `i` releases the lock.
    fn release(&mut self, i: usize) -> Result<(), Stop>;

    /// Every client's step of this second, in order.
    fn steps(&mut self) -> Result<(), Stop>
    where
        Self: Sized,
    {
        for i in 0..self.stage().clients.len() {
            step(self, i)?;
        }
        Ok(())
    }

    /// Client `i`'s call of learner `function` failed: the story stops there.
    fn halt(&mut self, i: usize, function: &'static str, failure: Failure) -> Stop {
        if let Err(e) = self.event(i, ActionKind::Failed, format!("{function} failed")) {
            return Stop::Grader(e);
        }
        Stop::Halted(Halt {
            t: self.stage().t,
            client: self.stage().clients[i].name().to_string(),
            function,
            failure,
        })
    }
}

/// Client `i`'s step at this second, with its pause and crash.
pub(crate) fn step(engine: &mut impl Engine, i: usize) -> Result<(), Stop> {
    let t = engine.stage().t;
    let c = &mut engine.stage().clients[i];
    if c.finished() || c.paused_at(t) {
        return Ok(());
    }
    if c.crashes_at(t) {
        c.crash();
        return Ok(engine.event(i, ActionKind::Crashed, "crashed".into())?);
    }
    if c.wakes_at(t) {
        engine.event(i, ActionKind::Resumed, "woke up".into())?;
    }
    engine.keep(i)?;
    match engine.stage().clients[i].step {
        Step::Acquire => engine.acquire(i)?,
        Step::Read => engine.read(i)?,
        Step::Write { at } if t >= at => engine.write(i)?,
        Step::Write { .. } | Step::Done => {}
        Step::Release => engine.release(i)?,
    }
    if engine.stage().clients[i].freezes_at(t) {
        engine.event(i, ActionKind::Paused, "froze".into())?;
    }
    Ok(())
}

/// How a run ended.
pub(crate) struct Ended {
    /// Every second played, in order.
    pub(crate) seconds: Vec<Second>,
    /// The call of learner code that failed, if one did.
    pub(crate) halt: Option<Halt>,
    /// Whether the story was still running after [`MAX_SECONDS`].
    pub(crate) stuck: bool,
}

/// Plays a story on `engine`, second by second, until it ends.
pub(crate) fn play(engine: &mut impl Engine) -> Result<Ended, GradeError> {
    let mut seconds = Vec::new();
    loop {
        let mut notes = engine.tick()?;
        let t = engine.stage().t;
        // A client's faults are its own to play, in its step.
        let due: Vec<Fault> = engine
            .stage()
            .story
            .faults_at(t)
            .filter(|f| f.client().is_none())
            .collect();
        for fault in due {
            notes.extend(engine.fault(fault)?);
        }
        let halt = match engine.steps() {
            Ok(()) => None,
            Err(Stop::Halted(halt)) => Some(halt),
            Err(Stop::Grader(e)) => return Err(e),
        };
        seconds.push(engine.observe(notes)?);
        let done = engine.stage().clients.iter().all(Client::finished);
        if halt.is_some() || done {
            return Ok(Ended {
                seconds,
                halt,
                stuck: false,
            });
        }
        if t + 1 >= MAX_SECONDS {
            return Ok(Ended {
                seconds,
                halt,
                stuck: true,
            });
        }
        engine.stage().t += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::story::client::Step;
    use crate::story::{Plan, Story};

    /// An engine that grants every acquire, never fails a call, and writes down what the loop
    /// asks of it: the loop's order, with no Redis behind it.
    struct Log {
        stage: Stage,
        /// Whether acquires are granted; a story whose are not never ends.
        grants: bool,
        said: Vec<String>,
    }

    impl Log {
        fn said(&mut self, i: usize, what: &str) {
            let (t, name) = (self.stage.t, self.stage.clients[i].name());
            self.said.push(format!("{t} {name} {what}"));
        }
    }

    impl Engine for Log {
        fn stage(&mut self) -> &mut Stage {
            &mut self.stage
        }
        fn tick(&mut self) -> Result<Vec<Note>, GradeError> {
            Ok(Vec::new())
        }
        fn fault(&mut self, fault: Fault) -> Result<Vec<Note>, GradeError> {
            self.said.push(format!("{} {fault:?}", self.stage.t));
            Ok(Vec::new())
        }
        fn observe(&mut self, notes: Vec<Note>) -> Result<Second, GradeError> {
            Ok(Second {
                t: self.stage.t,
                clients: Default::default(),
                holder: None,
                ttl_left_s: None,
                counter: 0,
                highest_token: None,
                notes,
                nodes: Default::default(),
            })
        }
        fn event(&mut self, i: usize, _: ActionKind, text: String) -> Result<(), GradeError> {
            self.said(i, &text);
            Ok(())
        }
        fn keep(&mut self, i: usize) -> Result<(), Stop> {
            if self.stage.clients[i].plan.keeper && self.stage.clients[i].step != Step::Acquire {
                self.said(i, "keeps");
            }
            Ok(())
        }
        fn acquire(&mut self, i: usize) -> Result<(), Stop> {
            self.said(i, "acquires");
            if self.grants {
                self.stage.clients[i].step = Step::Read;
            }
            Ok(())
        }
        fn read(&mut self, i: usize) -> Result<(), Stop> {
            self.said(i, "reads");
            let c = &mut self.stage.clients[i];
            c.step = Step::Write {
                at: self.stage.t + c.plan.work_s,
            };
            Ok(())
        }
        fn write(&mut self, i: usize) -> Result<(), Stop> {
            self.said(i, "writes");
            self.stage.clients[i].step = Step::Release;
            Ok(())
        }
        fn release(&mut self, i: usize) -> Result<(), Stop> {
            self.said(i, "releases");
            if self.stage.clients[i].name() == "C" {
                return Err(self.halt(i, "release", Failure::TimedOut { commands: 1 }));
            }
            self.stage.clients[i].step = Step::Done;
            Ok(())
        }
    }

    fn log(story: &Story, grants: bool) -> (Log, Ended) {
        let mut log = Log {
            stage: Stage::new(story),
            grants,
            said: Vec::new(),
        };
        let ended = play(&mut log).expect("a play without Redis");
        (log, ended)
    }

    /// A second is the faults of the ground, then each client's step in order: a crash in place
    /// of the step, "woke up" before it, the keeper's tick, the job's next call, and "froze"
    /// after it; a frozen client takes no step at all.
    #[test]
    fn a_second_plays_faults_then_each_client_s_step_in_order() {
        let story = Story {
            topology: crate::story::Topology::Replicated { wait: false },
            clients: vec![Plan::job("A").kept(), Plan::job("B")],
            faults: vec![
                (
                    1,
                    Fault::Freeze {
                        client: "A",
                        until: 3,
                    },
                ),
                (1, Fault::KillPrimary),
                (2, Fault::Crash("B")),
            ],
            ..Story::single("s", "", "")
        };
        let (log, ended) = log(&story, true);
        assert_eq!(
            log.said,
            [
                "0 A acquires",
                "0 B acquires",
                "1 KillPrimary",
                "1 A keeps",
                "1 A reads",
                "1 A froze",
                "1 B reads",
                "2 B crashed",
                "3 A woke up",
                "3 A keeps",
                "3 A writes",
                "4 A keeps",
                "4 A releases",
            ]
        );
        let seconds: Vec<u64> = ended.seconds.iter().map(|s| s.t).collect();
        assert_eq!(seconds, [0, 1, 2, 3, 4]);
        assert!(ended.halt.is_none() && !ended.stuck);
    }

    #[test]
    fn a_failed_call_ends_the_run_with_its_second() {
        let story = Story {
            clients: vec![Plan::job("C")],
            ..Story::single("s", "", "")
        };
        let (log, ended) = log(&story, true);
        let halt = ended.halt.expect("C's release failed");
        assert_eq!(
            (halt.t, halt.client.as_str(), halt.function),
            (3, "C", "release")
        );
        assert_eq!(
            log.said.last().map(String::as_str),
            Some("3 C release failed")
        );
        assert_eq!(ended.seconds.len(), 4);
        assert!(!ended.stuck);
    }

    #[test]
    fn a_run_still_going_after_max_seconds_is_stuck() {
        let (_, ended) = log(&Story::single("s", "", ""), false);
        assert!(ended.stuck && ended.halt.is_none());
        assert_eq!(ended.seconds.len() as u64, MAX_SECONDS);
    }
}
