//! The grader's move between two commands of a call: what it does to the
//! world, and whether the caller goes on, crashes there, or meets a fault.

use super::Fault;
use crate::error::GradeError;
use crate::world::World;

/// What an intervention did, for the record.
pub enum Fired {
    /// The world changed; the caller goes on with its next command.
    Continue(String),
    /// The caller crashes here: it never sends another command.
    Crash(String),
    /// The caller's next command meets this fault ([`super::fault`]); the record shows it on
    /// that command's line.
    Fault(Fault),
}

/// The action of an intervention, run with the world locked.
pub type Action = Box<dyn FnMut(&mut World) -> Result<Fired, GradeError> + Send>;

/// Something to do once, just before command number `before` (0-based) of
/// the next call; `before` equal to the number of commands the call sends
/// means "after its last command, before it returns" (see
/// [`super::Wire::fire_if_pending`]).
pub struct Intervention {
    pub(super) before: usize,
    pub(super) action: Action,
    pub(super) fired: bool,
}

impl Intervention {
    /// Runs `action` just before command number `before`.
    pub fn before(before: usize, action: Action) -> Intervention {
        Intervention {
            before,
            action,
            fired: false,
        }
    }
}
