//! Virtual time makes a scenario a fixed story: played 200 times, four at a
//! time so that they load the machine and the server, it gives 200 identical
//! timelines.

use std::thread;

use grader::reference::LOCK as REFERENCE;
use grader::{run, scenario};

const RUNS: usize = 200;
const AT_ONCE: usize = 4;

fn same_timeline_every_time(name: &str) {
    let scenario = scenario::named(name).expect("a scenario");
    let first = run::run(&scenario, &REFERENCE).expect("runs").timeline;
    let differing: usize = thread::scope(|s| {
        let workers: Vec<_> = (0..AT_ONCE)
            .map(|_| {
                s.spawn(|| {
                    (0..RUNS / AT_ONCE)
                        .filter(|_| {
                            run::run(&scenario, &REFERENCE).expect("runs").timeline != first
                        })
                        .count()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a worker"))
            .sum()
    });
    assert_eq!(
        differing, 0,
        "{differing} of {RUNS} runs of {name} differed from the first"
    );
}

#[test]
fn the_gc_pause_is_the_same_200_times() {
    same_timeline_every_time("gc-pause-fenced");
}

#[test]
fn the_40_s_pause_is_the_same_200_times() {
    same_timeline_every_time("long-pause");
}
