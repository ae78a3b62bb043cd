//! The limits every process started for a check runs under, the check's own
//! process and the learner's runner alike: a ceiling on its memory (with death
//! with the process that started it, both set by [`crate::sys::install`]).
//!
//! Written once here, below both the harness that starts a check's process
//! and the runner's link that starts a runner, so that neither reaches into
//! the other for them.

use rustix::process::Resource;

use crate::sys::Rlimit;

/// The memory a check's process may allocate (`RLIMIT_DATA`, see
/// [`memory_limit`]). A check needs a few dozen MiB; a token or a
/// loop that grows without bound stops here, before it makes the machine swap.
pub const MEMORY_LIMIT: u64 = 512 * 1024 * 1024;

/// The memory limit of a check's process and of a learner's runner.
///
/// The limit is on the data segment and private writable mappings
/// (`RLIMIT_DATA`), not on the address space (`RLIMIT_AS`): glibc reserves
/// 64 MiB of address space for the malloc arena of each thread that meets
/// contention, so eight busy threads reach 512 MiB of address space with a few
/// MiB in use, and a check with five node links failed so under load. A
/// reservation is not writable until it is used, so it does not count here,
/// while every block a process allocates does, touched or not.
///
/// A process cannot raise its hard limit: where the one it inherited is
/// lower, that one stays, so that setting the limit never fails.
pub fn memory_limit(memory: u64) -> Rlimit {
    let inherited = rustix::process::getrlimit(Resource::Data).maximum;
    let memory = inherited.map_or(memory, |hard| memory.min(hard));
    Rlimit {
        resource: Resource::Data,
        soft: memory,
        hard: memory,
    }
}
