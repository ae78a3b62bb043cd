//! The one stepping loop every story is played by, whatever its topology.
//!
//! Virtual time moves one second at a time. At each second the engine of the story's topology
//! moves its clock (keys run out), plays the faults due then, lets each client take its step,
//! and looks at what it runs on to write the second down. A client's step is the same on every
//! topology ([`step`]): nothing while frozen or after its job is over, a crash in place of its
//! step, "woke up" when its pause ends, its keeper's tick, then the job's next call (acquire,
//! read, the write once its work is done, release), and "froze" when its pause begins. The run
//! ends when every client's job is over, when a call of learner code fails (a [`Halt`]), or after
//! [`MAX_SECONDS`], when the story is stuck.
//!
//! An engine says how each piece is done on its topology ([`Engine`]): how its clock moves, what a
//! fault of its topology does there (through [`super::Fault`]'s effects), how the job's calls are
//! made and judged, and how a second is written down. The order of a second, a client's step and
//! the end of a run are decided here, once.

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

/// How a story is played on one topology.
pub(crate) trait Engine {
    /// The story being played.
    fn story(&self) -> &Story;
    /// The second being played.
    fn second(&self) -> u64;
    /// Moves to the next second.
    fn next_second(&mut self);
    /// The clients.
    fn clients(&self) -> &[Client];
    /// Client `i`.
    fn client(&mut self, i: usize) -> &mut Client;

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
        for i in 0..self.clients().len() {
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
            t: self.second(),
            client: self.client(i).name().to_string(),
            function,
            failure,
        })
    }
}

/// Client `i`'s step at this second, with its pause and crash.
pub(crate) fn step(engine: &mut impl Engine, i: usize) -> Result<(), Stop> {
    let t = engine.second();
    let c = engine.client(i);
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
    match engine.client(i).step {
        Step::Acquire => engine.acquire(i)?,
        Step::Read => engine.read(i)?,
        Step::Write { at } if t >= at => engine.write(i)?,
        Step::Write { .. } | Step::Done => {}
        Step::Release => engine.release(i)?,
    }
    if engine.client(i).freezes_at(t) {
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
        let t = engine.second();
        // A client's faults are its own to play, in its step.
        let due: Vec<Fault> = engine
            .story()
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
        let done = engine.clients().iter().all(Client::finished);
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
        engine.next_second();
    }
}
