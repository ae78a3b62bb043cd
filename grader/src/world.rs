//! The Redis side of one scenario: its keys, its clock, and how it looks.
//!
//! Every scenario (and every attempt inside a check) gets a fresh [`World`]:
//! its own key prefix, so that scenarios can run in parallel on one server
//! and so that a `REDIS_URL` pointing at a database with other data keeps that
//! data. The world sets the keys up, answers the grader's questions ("whose
//! token is in the lock key?", "what does the row hold?") through a connection
//! of its own, and deletes its keys when it is dropped. The keys it creates
//! also carry a one-hour safety TTL, in case the process is killed first.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use redis::Connection;

use crate::clock::{Clock, Expiry};
use crate::error::GradeError;
use crate::server;

/// The fence counter starts here, so that the first grant gets token 33, as in
/// the course's examples.
pub const FIRST_FENCE_COUNTER: u64 = 32;

pub use crate::prefix::SAFETY_TTL_MS;

/// The key names of one world. The lock, the fence counter and the row share
/// one prefix that nothing else uses: the world's namespace, the only keys
/// learner code can reach ([`crate::confine::Namespace`]). The clock's books
/// lie beside it, out of that reach.
#[derive(Clone, Debug)]
pub struct Keys {
    prefix: String,
    /// The lock key.
    pub lock: String,
    /// The fence counter (`INCR`ed once per grant).
    pub fence: String,
    /// The storage row: a hash `{ value, fence }`.
    pub row: String,
    /// The clock's own books.
    pub clock: String,
}

impl Keys {
    fn fresh() -> Result<Keys, GradeError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let prefix = format!(
            "{}{}:",
            crate::prefix::run()?,
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        Ok(Keys {
            lock: format!("{prefix}lock"),
            fence: format!("{prefix}lock:fence"),
            row: format!("{prefix}row"),
            // `…:7.clock` beside the namespace `…:7:`, which no pattern of it matches.
            clock: format!("{}.clock", prefix.trim_end_matches(':')),
            prefix,
        })
    }

    /// The same prefix with the lock, fence counter and row renamed to
    /// `lock`, `fence` and `row` (names without the prefix), so that a lock
    /// cannot guess one name from another.
    fn renamed(mut self, lock: &str, fence: &str, row: &str) -> Keys {
        self.lock = format!("{}{lock}", self.prefix);
        self.fence = format!("{}{fence}", self.prefix);
        self.row = format!("{}{row}", self.prefix);
        self
    }

    /// `arg` with this world's prefix removed, so that reports say `lock`
    /// rather than a process-specific name.
    pub fn display(&self, arg: &str) -> String {
        arg.replace(&self.prefix, "")
    }

    /// The namespace: every key whose name starts with it is this world's.
    pub fn namespace(&self) -> &str {
        &self.prefix
    }

    fn all(&self) -> [&str; 4] {
        [&self.lock, &self.fence, &self.row, &self.clock]
    }
}

/// What the storage row holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// The counter the clients increment.
    pub value: i64,
    /// The highest fencing token the storage has seen (0: none yet).
    pub fence: u64,
}

/// One scenario's keys, clock and observer connection.
pub struct World {
    /// The scenario's key names.
    pub keys: Keys,
    /// Facts the grader's own moves leave for whoever judges the outcome,
    /// such as the fencing token a well-behaved client was granted.
    pub memo: std::collections::BTreeMap<&'static str, u64>,
    /// The grader's connection to the server that holds the lock.
    con: Connection,
    /// The grader's connection to the row's server, when it is not the lock's.
    store: Option<Connection>,
    /// Keys of the namespace that learner code named besides the lock, the
    /// counter and the row (a signal list, say): deleted with the world.
    named: std::collections::BTreeSet<String>,
    /// Where clients connect: the shared server, or this URL (a replicated pair's primary).
    primary_url: Option<String>,
    clock: Clock,
}

/// A world shared by the grader and the client connections that settle its
/// clock after every command.
pub type SharedWorld = Arc<Mutex<World>>;

/// Locks a shared world. A client thread that panicked cannot leave the world
/// half-changed (it only holds the lock inside the grader's own code), so a
/// poisoned lock is still usable.
pub fn enter(world: &SharedWorld) -> MutexGuard<'_, World> {
    world
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl World {
    /// Creates a fresh world on the shared Redis server: an empty lock, the
    /// fence counter at [`FIRST_FENCE_COUNTER`], and the row `{ value: 0, fence: 0 }`.
    pub fn open() -> Result<World, GradeError> {
        let mut con = server::shared()?.connect()?;
        let keys = Keys::fresh()?;
        let mut pipe = redis::pipe();
        pipe.atomic();
        set_up_fence(&mut pipe, &keys);
        set_up_row(&mut pipe, &keys);
        pipe.exec(&mut con)?;
        let timed = [keys.lock.clone()];
        World::start(con, keys, &timed)
    }

    /// Creates an empty world whose lock, fence counter and row have the
    /// given names (without the prefix), all three on the virtual clock, so
    /// that a TTL a lock puts on the counter or the row runs out too. The
    /// caller sets the keys up (see [`SAFETY_TTL_MS`] for the TTL the
    /// grader's own keys carry).
    pub fn open_named(lock: &str, fence: &str, row: &str) -> Result<World, GradeError> {
        let con = server::shared()?.connect()?;
        let keys = Keys::fresh()?.renamed(lock, fence, row);
        let timed = [keys.lock.clone(), keys.fence.clone(), keys.row.clone()];
        World::start(con, keys, &timed)
    }

    /// Creates a fresh world whose lock and fence counter live on `pair`'s primary, and whose
    /// row lives on the shared server, which does not fail over.
    pub fn open_replicated(pair: &crate::replication::Pair) -> Result<World, GradeError> {
        let mut con = pair.connect_primary()?;
        let mut store = server::shared()?.connect()?;
        let keys = Keys::fresh()?;
        let (mut fence, mut row) = (redis::pipe(), redis::pipe());
        set_up_fence(&mut fence, &keys);
        set_up_row(row.atomic(), &keys);
        fence.exec(&mut con)?;
        row.exec(&mut store)?;
        let timed = [keys.lock.clone()];
        let mut world = World::start(con, keys, &timed)?;
        world.store = Some(store);
        world.primary_url = Some(pair.primary_url());
        Ok(world)
    }

    /// Points the world at a newly promoted primary: the grader's own look at the lock, and
    /// every client connection opened from now on.
    pub fn fail_over(&mut self, pair: &crate::replication::Pair) -> Result<(), GradeError> {
        self.con = pair.connect_primary()?;
        self.primary_url = Some(pair.primary_url());
        // The new primary's books came by replication, which may lag.
        self.clock.forget_seen();
        Ok(())
    }

    /// Whether the lock lives on the shared server, where the grader's Redis users are
    /// ([`crate::acl`]); a replicated pair's nodes have none.
    pub fn on_shared_server(&self) -> bool {
        self.primary_url.is_none()
    }

    /// Opens the clock's book for `keys` (with the grader's safety TTL) and
    /// builds the world around it, its clock timing the `timed` keys.
    fn start(mut con: Connection, keys: Keys, timed: &[String]) -> Result<World, GradeError> {
        redis::pipe()
            .atomic()
            .cmd("HSET")
            .arg(&keys.clock)
            .arg("started")
            .arg(1)
            .cmd("PEXPIRE")
            .arg(&keys.clock)
            .arg(SAFETY_TTL_MS)
            .exec(&mut con)?;
        let clock = Clock::new(keys.clock.clone(), timed);
        Ok(World {
            keys,
            memo: Default::default(),
            con,
            store: None,
            named: Default::default(),
            primary_url: None,
            clock,
        })
    }

    /// Wraps the world for sharing with client connections.
    pub fn shared(self) -> SharedWorld {
        Arc::new(Mutex::new(self))
    }

    /// The URL of the server the world's lock lives on: the replicated pair's primary, or the
    /// shared server. Never print it: it carries the server's password.
    pub fn server_url(&self) -> Result<String, GradeError> {
        match &self.primary_url {
            None => Ok(server::shared()?.url().to_owned()),
            Some(url) => Ok(url.clone()),
        }
    }

    /// A new connection for a client of this world.
    pub fn client_connection(&self) -> Result<Connection, GradeError> {
        match &self.primary_url {
            None => Ok(server::shared()?.connect()?),
            Some(url) => server::connect_url(url)
                .map_err(|cause| server::ServerError::connect(url, cause).into()),
        }
    }

    /// Notes keys of the namespace that learner code named, to delete them
    /// with the world.
    pub fn note_named(&mut self, keys: impl IntoIterator<Item = String>) {
        let known = self.keys.all().map(str::to_owned);
        self.named
            .extend(keys.into_iter().filter(|k| !known.contains(k)));
    }

    /// The grader's connection to the row's server.
    fn store(&mut self) -> &mut Connection {
        match &mut self.store {
            Some(store) => store,
            None => &mut self.con,
        }
    }

    /// The grader's own connection, for well-behaved clients the grader plays
    /// itself (an adversary, the job's plain reads and writes).
    pub fn con(&mut self) -> &mut Connection {
        &mut self.con
    }

    /// Virtual now, in milliseconds.
    pub fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// Notes TTLs that client commands have set.
    pub fn settle(&mut self) -> Result<(), GradeError> {
        self.clock.settle(&mut self.con)
    }

    /// Notes the TTL a client command sent at `sent` may have set; its own
    /// round trip told the clock what `sighting` says.
    pub fn settle_after(
        &mut self,
        sent: std::time::Instant,
        sighting: &crate::clock::Sighting,
    ) -> Result<(), GradeError> {
        self.clock.settle_after(&mut self.con, sent, sighting)
    }

    /// Runs `f`, commands of the grader's own on its connection, between two
    /// `TIME`s, and notes the TTLs they set to the millisecond: each the one
    /// of `asked` (in ms) that fits between the two instants, when one does
    /// ([`crate::clock::Sighting::asked`]). What a client command set before is
    /// noted first, from its own instant.
    pub fn timed<T>(
        &mut self,
        asked: &[u64],
        f: impl FnOnce(&mut Connection) -> Result<T, GradeError>,
    ) -> Result<T, GradeError> {
        self.settle()?;
        let before = crate::clock::read_time(&mut self.con);
        let value = f(&mut self.con)?;
        let after = crate::clock::read_time(&mut self.con);
        let sighting = crate::clock::Sighting {
            ran_at: before.zip(after),
            asked: asked.to_vec(),
            ..crate::clock::Sighting::default()
        };
        self.clock
            .settle_after(&mut self.con, std::time::Instant::now(), &sighting)?;
        Ok(value)
    }

    /// The keys on the virtual clock, whose expiry a client command's round
    /// trip reads back for it ([`crate::clock::TimedFrame`]).
    pub fn timed_keys(&self) -> &[String] {
        self.clock.timed()
    }

    /// Moves virtual time to `t_ms`; returns true when the lock key expired.
    pub fn advance_to(&mut self, t_ms: u64) -> Result<bool, GradeError> {
        let expired = self.clock.advance_to(&mut self.con, t_ms)?;
        Ok(expired.contains(&self.keys.lock))
    }

    /// Moves virtual time forward by `ms`; returns true when the lock expired.
    pub fn advance_by(&mut self, ms: u64) -> Result<bool, GradeError> {
        let t = self.now_ms() + ms;
        self.advance_to(t)
    }

    /// The token in the lock key, if any.
    pub fn lock_value(&mut self) -> Result<Option<String>, GradeError> {
        // The look also tells whether real time took the key away meanwhile.
        self.settle()?;
        Ok(redis::cmd("GET")
            .arg(&self.keys.lock)
            .query(&mut self.con)?)
    }

    /// The lock key's virtual expiry.
    pub fn lock_expiry(&mut self) -> Result<Expiry, GradeError> {
        self.settle()?;
        Ok(self.clock.expiry(&mut self.con, &self.keys.lock)?)
    }

    /// The virtual expiry of one of the world's timed keys, as of now.
    pub fn expiry(&mut self, key: &str) -> Result<Expiry, GradeError> {
        self.settle()?;
        Ok(self.clock.expiry(&mut self.con, key)?)
    }

    /// The virtual expiries of several of the world's timed keys, as of now,
    /// in their order: one look of the clock for all of them, as no command
    /// runs between two of the readings.
    pub fn expiries<const N: usize>(&mut self, keys: [&str; N]) -> Result<[Expiry; N], GradeError> {
        self.settle()?;
        one_each(self.clock.expiries(&mut self.con, &keys)?)
    }

    /// Runs `read`, a script of the grader's own that sets no TTL, on `keys`,
    /// and reads the virtual expiries of `timed` after a look of the clock, in
    /// one round trip ([`Clock::read_and_look`]): an observation between two
    /// steps.
    pub fn read_and_look<T: redis::FromRedisValue, const N: usize>(
        &mut self,
        read: &redis::Script,
        keys: &[&str],
        timed: [&str; N],
    ) -> Result<(T, [Expiry; N]), GradeError> {
        let (value, expiries) = self
            .clock
            .read_and_look(&mut self.con, read, keys, &timed)?;
        Ok((value, one_each(expiries)?))
    }

    /// What the storage row holds now. A field that holds something other
    /// than a whole number is the storage's fault:
    /// [`GradeError::RowNotANumber`].
    pub fn row(&mut self) -> Result<Row, GradeError> {
        let (value, fence): (Option<String>, Option<String>) = redis::cmd("HMGET")
            .arg(&self.keys.row)
            .arg("value")
            .arg("fence")
            .query(self.store())?;
        // A key name written into a field is shown without the run's prefix,
        // so the report reads the same on every run.
        let shown = |held: Option<String>| held.map(|h| self.keys.display(&h));
        Ok(Row {
            value: number("value", shown(value))?,
            fence: number("fence", shown(fence))?,
        })
    }

    /// A plain, unfenced read of the counter: the job's own database access
    /// when fencing is off.
    pub fn read_counter(&mut self) -> Result<i64, GradeError> {
        Ok(self.row()?.value)
    }

    /// A plain, unfenced write of the counter.
    pub fn write_counter(&mut self, value: i64) -> Result<(), GradeError> {
        redis::cmd("HSET")
            .arg(&self.keys.row)
            .arg("value")
            .arg(value)
            .exec(self.store())?;
        Ok(())
    }
}

/// Adds to `pipe` the set-up of a fresh world's fence counter, at [`FIRST_FENCE_COUNTER`].
fn set_up_fence(pipe: &mut redis::Pipeline, keys: &Keys) {
    pipe.cmd("SET")
        .arg(&keys.fence)
        .arg(FIRST_FENCE_COUNTER)
        .arg("PX")
        .arg(SAFETY_TTL_MS);
}

/// Adds to `pipe` the set-up of a fresh world's row, `{ value: 0, fence: 0 }`.
fn set_up_row(pipe: &mut redis::Pipeline, keys: &Keys) {
    pipe.cmd("HSET")
        .arg(&keys.row)
        .arg("value")
        .arg(0)
        .arg("fence")
        .arg(0)
        .cmd("PEXPIRE")
        .arg(&keys.row)
        .arg(SAFETY_TTL_MS);
}

/// The expiries the clock's books gave for `N` keys, one each.
fn one_each<const N: usize>(read: Vec<Expiry>) -> Result<[Expiry; N], GradeError> {
    read.try_into().map_err(|read: Vec<Expiry>| {
        GradeError::from(redis::RedisError::from((
            redis::ErrorKind::UnexpectedReturnType,
            "HMGET of the clock's books answered another number of fields",
            format!("{} for {N} keys", read.len()),
        )))
    })
}

/// A field of the row as a number: 0 when it is missing.
fn number<T: std::str::FromStr + Default>(
    field: &'static str,
    held: Option<String>,
) -> Result<T, GradeError> {
    match held {
        None => Ok(T::default()),
        Some(held) => held
            .parse()
            .map_err(|_| GradeError::RowNotANumber { field, held }),
    }
}

impl Drop for World {
    fn drop(&mut self) {
        crate::acl::world_closed(&self.keys.prefix);
        // Best effort: the safety TTLs clean up if this fails.
        let _ = redis::cmd("DEL")
            .arg(&self.keys.all()[..])
            .arg(self.named.iter().collect::<Vec<_>>())
            .exec(&mut self.con);
        if let Some(store) = &mut self.store {
            let _ = redis::cmd("DEL").arg(&self.keys.row).exec(store);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read of the grader's own, a look and the expiries it leaves, in one
    /// round trip: the look notes a TTL the grader just set, and a server
    /// that has forgotten the scripts (a restart, a promotion) is given them
    /// again rather than failing the check.
    #[test]
    fn an_observation_reads_looks_and_survives_a_server_without_the_scripts() {
        let read = redis::Script::new("return redis.call('GET', KEYS[1])");
        let mut world = World::open().expect("a world on the test's server");
        let lock = world.keys.lock.clone();
        let fence = world.keys.fence.clone();
        let mut admin = crate::server::shared()
            .and_then(|s| s.connect())
            .expect("the grader's own connection");
        for round in 0..2 {
            redis::cmd("SET")
                .arg(&lock)
                .arg("tok")
                .arg("PX")
                .arg(5_000)
                .exec(world.con())
                .expect("SET");
            if round == 1 {
                redis::cmd("SCRIPT")
                    .arg("FLUSH")
                    .exec(&mut admin)
                    .expect("SCRIPT FLUSH");
            }
            let (value, [lock_expiry, fence_expiry]): (Option<String>, _) = world
                .read_and_look(&read, &[&lock], [&lock, &fence])
                .expect("the observation");
            assert_eq!(value.as_deref(), Some("tok"), "round {round}");
            assert_eq!(lock_expiry, Expiry::At(5_000), "round {round}");
            assert_eq!(fence_expiry, Expiry::Missing, "round {round}");
        }
    }

    /// A TTL on no grid that the grader sets itself reads to the millisecond,
    /// however long real time ran around the command: the one asked for is
    /// taken from the range the two `TIME`s leave.
    #[test]
    fn an_odd_ttl_the_grader_sets_reads_as_asked() {
        let mut world = World::open().expect("a world on the test's server");
        let lock = world.keys.lock.clone();
        world
            .timed(&[1_337], |con| {
                // Real time runs on either side of the command.
                std::thread::sleep(std::time::Duration::from_millis(30));
                redis::cmd("SET")
                    .arg(&lock)
                    .arg("tok")
                    .arg("PX")
                    .arg(1_337)
                    .exec(con)?;
                std::thread::sleep(std::time::Duration::from_millis(30));
                Ok(())
            })
            .expect("the grader's SET");
        assert_eq!(world.lock_expiry().expect("its expiry"), Expiry::At(1_337));
    }
}
