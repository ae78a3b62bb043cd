//! The wire's filter on the single server: what the lock's code may send goes
//! out inside its check's namespace, and what may not is refused, before it
//! goes out, with the reason in the record and the check's ledger
//! ([`crate::confine`]). A library the lock loads is looked at once Redis
//! has it: one that registered a function outside the check's names is
//! deleted again, and the load refused.

use redis::{ErrorKind, RedisError, RedisResult, Value};

use super::show::{pack, unpack};
use super::tally::Tally;
use super::world::OnWorld;
use crate::confine::{self, Refusal, functions};
use crate::world::enter;

impl OnWorld {
    /// The commands, already read whole ([`super::request`]), as they go
    /// out, with the keys of the namespace they name noted in the world; or
    /// the first that may not go out, and why.
    pub(super) fn admit_unpacked(
        &self,
        commands: &[Vec<Vec<u8>>],
    ) -> Result<Vec<confine::Admitted>, Refusal> {
        commands.iter().map(|args| self.admit_one(args)).collect()
    }

    /// One command, already read whole, as it goes out; or why it may not.
    pub(super) fn admit_one(&self, args: &[Vec<u8>]) -> Result<confine::Admitted, Refusal> {
        let admitted = confine::admit(args, &self.namespace)?;
        if let Some(world) = self.world.upgrade() {
            enter(&world).note_named(admitted.keys.iter().cloned());
        }
        Ok(admitted)
    }

    /// Refuses the command(s) in `packed` without sending anything: the lock's
    /// code gets an error reply that says why, and the record shows it.
    pub(super) fn refuse(
        &mut self,
        tally: &mut Tally,
        packed: &[u8],
        mut refusal: Refusal,
    ) -> RedisError {
        // Key names without the run's random prefix, so that the report (and
        // the error the lock may print) reads the same on every run.
        refusal.why = self.without_prefix(&refusal.why);
        let why = refusal.why.clone();
        // The record only marks it; the report's first lines say why.
        self.record(
            tally,
            &unpack(packed),
            "(refused by the grader)".into(),
            Some(refusal),
        );
        if let Some((turns, me)) = &self.turns {
            turns.pass(*me);
        }
        RedisError::from((ErrorKind::Client, "refused by the grader", why))
    }

    /// After a `FUNCTION LOAD` that Redis accepted: notes the library for
    /// removal when the check ends, and deletes it again, refusing the load,
    /// if it registered a function under a name outside the check's.
    pub(super) fn loaded(
        &mut self,
        tally: &mut Tally,
        sent: &[Vec<u8>],
        reply: Value,
    ) -> RedisResult<Value> {
        let name = match &reply {
            Value::BulkString(name) => String::from_utf8_lossy(name).into_owned(),
            Value::SimpleString(name) => name.clone(),
            _ => return Ok(reply),
        };
        if let Some(ledger) = &self.ledger {
            ledger.note_library(name.clone());
        }
        let listed: Value = redis::cmd("FUNCTION")
            .arg("LIST")
            .arg("LIBRARYNAME")
            .arg(&name)
            .query(enter(&self.world()?).con())?;
        let prefix = self.namespace.functions();
        if let Some(outside) = functions::registered(&listed)
            .into_iter()
            .find(|f| !f.starts_with(prefix))
        {
            let _ = redis::cmd("FUNCTION")
                .arg("DELETE")
                .arg(&name)
                .exec(enter(&self.world()?).con());
            let refusal = Refusal {
                command: "FUNCTION|LOAD".into(),
                why: format!(
                    "its library registered `{outside}` around `redis.register_function`, under \
                     a name outside the check's own; the grader deleted the library again"
                ),
            };
            return Err(self.refuse(tally, &pack(sent), refusal));
        }
        Ok(functions::reply_name(reply, prefix))
    }
}
