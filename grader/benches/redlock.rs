//! How long Redlock's nodes and stories take: `cargo bench -p grader --bench redlock`.
//!
//! - five `redis-server` nodes started from nothing, process source (target: under 1 s);
//! - a whole Redlock story with a node killed and restarted empty, on virtual time: the
//!   restart-without-persistence story, played with the reference Redlock on nodes already
//!   running (target: under 500 ms);
//! - the same story with antirez's delayed restart, whose node stays down for 10 s of virtual
//!   time (target: under 500 ms).
//!
//! Each figure is the median of several runs, printed as a table.

use std::time::{Duration, Instant};

use grader::checks::redlock_stories::{play, story};
use grader::nodes::{NODES, NodeSet};
use grader::reference::LOCK as REFERENCE;

const RUNS: usize = 5;

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("| measure | runs | median wall time | target |");
    println!("|---|---|---|---|");
    let mut starts = Vec::new();
    for _ in 0..RUNS {
        let started = Instant::now();
        let set = NodeSet::start(NODES)?;
        starts.push(started.elapsed());
        drop(set);
    }
    println!(
        "| {NODES} nodes started (process source) | {RUNS} | {} | < 1 s |",
        ms(median(starts))
    );
    for (name, caption) in [
        (
            "restart_without_persistence",
            "story: a node restarted empty",
        ),
        ("delayed_restart", "story: a delayed restart (10 s virtual)"),
    ] {
        let story = story(name).ok_or("no such story")?;
        // The first play starts the nodes; the figures are for the story alone.
        play(story, &REFERENCE)?;
        let mut times = Vec::new();
        for _ in 0..RUNS {
            let started = Instant::now();
            let played = play(story, &REFERENCE)?;
            times.push(started.elapsed());
            if played.halt.is_some() {
                return Err("the reference Redlock failed".into());
            }
        }
        println!("| {caption} | {RUNS} | {} | < 500 ms |", ms(median(times)));
    }
    Ok(())
}
