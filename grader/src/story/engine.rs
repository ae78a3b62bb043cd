//! The one stepping loop every story is played by, whatever its topology.
//!
//! Virtual time moves one second at a time. At each second the engine of the story's topology
//! moves its clock (keys run out), plays the faults due then, lets each client take its step,
//! and looks at what it runs on to write the second down. The run ends when every client's job
//! is over, when a call of learner code fails (a [`Halt`]), or after [`MAX_SECONDS`], when the
//! story is stuck. An engine says how a second is played on its topology ([`Engine`]); the order
//! of a second and the end of a run are decided here, once.

use super::client::Client;
use super::{Halt, MAX_SECONDS};
use crate::error::GradeError;
use crate::timeline::{Note, Second};

/// How a second of a story is played on one topology.
pub(crate) trait Engine {
    /// The second being played.
    fn second(&self) -> u64;
    /// Moves to the next second.
    fn next_second(&mut self);
    /// Moves the clock to the start of this second; returns what time did on its own.
    fn tick(&mut self) -> Result<Vec<Note>, GradeError>;
    /// Plays the faults of the topology due at this second; returns what they did.
    fn faults(&mut self) -> Result<Vec<Note>, GradeError>;
    /// Every client's step of this second, in order; the call of learner code that failed, if
    /// one did (the rest of the second is not played).
    fn steps(&mut self) -> Result<Option<Halt>, GradeError>;
    /// Writes down the second that ends, with `notes`.
    fn observe(&mut self, notes: Vec<Note>) -> Result<Second, GradeError>;
    /// The clients.
    fn clients(&self) -> &[Client];
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
        notes.extend(engine.faults()?);
        let halt = engine.steps()?;
        seconds.push(engine.observe(notes)?);
        let done = engine.clients().iter().all(Client::finished);
        if halt.is_some() || done {
            return Ok(Ended {
                seconds,
                halt,
                stuck: false,
            });
        }
        if engine.second() + 1 >= MAX_SECONDS {
            return Ok(Ended {
                seconds,
                halt,
                stuck: true,
            });
        }
        engine.next_second();
    }
}
