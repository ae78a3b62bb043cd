//! How long Redlock's nodes and stories take: `cargo bench -p grader --bench redlock`.
//!
//! - five `redis-server` nodes started from nothing, process source (target: under 1 s);
//! - five container nodes started from nothing on the run's private network, container source
//!   (target: under 5 s), when a Docker engine answers and has the image (`REDIS_IMAGE`);
//! - a whole Redlock story with a node killed and restarted empty, on virtual time: the
//!   restart-without-persistence story, played with the reference Redlock on nodes already
//!   running (target: under 500 ms);
//! - the same story with antirez's delayed restart, whose node stays down for 10 s of virtual
//!   time (target: under 500 ms).
//!
//! The story targets are for process nodes. On container nodes a story's kill and restarts are
//! the engine's (`docker kill`, `docker start`, which sets the container's network up again),
//! and the target is under 3 s.
//!
//! The stories run on the nodes of this process's source (`GRADER_REDIS`, see
//! `grader::server::node_source`), which the table names. Each figure is the median of several
//! runs, printed as a table.

use std::time::{Duration, Instant};

use grader::nodes::{NODES, NodeSet};
use grader::reference::LOCK as REFERENCE;
use grader::run::run as play;
use grader::scenario::named as story;
use grader::server::{self, NodeSource};

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
    let image = std::env::var("REDIS_IMAGE").unwrap_or_else(|_| server::DEFAULT_IMAGE.to_owned());
    let docker =
        server::docker_available().is_ok() && server::image_present(&image).is_ok_and(|here| here);
    for (source, target) in [
        (NodeSource::Process, "< 1 s"),
        (NodeSource::Container { image }, "< 5 s"),
    ] {
        let name = source.name();
        if matches!(source, NodeSource::Container { .. }) && !docker {
            println!(
                "| {NODES} nodes started ({name} source) | not run: no Docker engine with the image | | {target} |"
            );
            continue;
        }
        let mut starts = Vec::new();
        for _ in 0..RUNS {
            let started = Instant::now();
            let set = NodeSet::start_from(NODES, &source)?;
            starts.push(started.elapsed());
            drop(set);
        }
        println!(
            "| {NODES} nodes started ({name} source) | {RUNS} | {} | {target} |",
            ms(median(starts))
        );
    }
    let source = server::node_source()?.name();
    for (name, caption) in [
        (
            "restart_without_persistence",
            "story: a node restarted empty",
        ),
        ("delayed_restart", "story: a delayed restart (10 s virtual)"),
    ] {
        let story = story(name).ok_or("no such story")?;
        // The first play starts the nodes; the figures are for the story alone.
        play(&story, &REFERENCE)?;
        let mut times = Vec::new();
        for _ in 0..RUNS {
            let started = Instant::now();
            let played = play(&story, &REFERENCE)?;
            times.push(started.elapsed());
            if played.halt.is_some() {
                return Err("the reference Redlock failed".into());
            }
        }
        let target = if source == "container" {
            "< 3 s"
        } else {
            "< 500 ms"
        };
        println!(
            "| {caption}, {source} nodes | {RUNS} | {} | {target} |",
            ms(median(times))
        );
    }
    Ok(())
}
