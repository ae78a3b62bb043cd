//! Two learners on one shared Redis, one of them hostile:
//! `cargo bench -p grader --bench soak` (or `.ci/soak`, which runs it).
//!
//! A Redis on the loopback interface holds 10,000 keys that are nobody's
//! business of the course's (most outside its prefix, some under it, one the
//! hostile script goes after by name). Two test runs grade side by side on it
//! as two processes: a well-behaved learner runs every check on the reference
//! lock, and a hostile one runs the hostile locks of the catalogue (FLUSHALL,
//! KEYS and DEL, CONFIG SET, SHUTDOWN, CLIENT KILL, a script outside its KEYS,
//! SCRIPT FLUSH, …), round after round. At the end the bench counts the
//! foreign keys lost and the well-behaved learner's false verdicts (any check
//! of the reference lock that did not pass; a check that says the machine
//! stalled is counted apart, as it is no verdict), and the hostile checks that
//! were not failed for the command they sent.
//!
//! It runs twice: as the grader runs on a server it may create users on (each
//! learner connection confined by Redis's ACLs too), and as it runs under a
//! user limited to the course prefix (the README's `ACL SETUSER` line), where
//! the grader's own filter is all there is. There, as the README says, a Lua
//! script still reaches keys under the course prefix whose names it knows: the
//! one the hostile script names is lost, and its check is not stopped. Keys
//! outside the prefix must all survive in both.
//!
//! Options: `--rounds N` (default 50), `--limit SECONDS` (default 1200: a run
//! still going then is stopped and its rounds so far are counted).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use grader::checks::{self, CHECKS};
use grader::error::GradeError;
use grader::reference::LOCK as REFERENCE;
use grader::report::Verdict;
use grader::{acl, prefix, server};
use lock_catalogue::misbehaving::{HOSTILE, foreign_target};

/// How many foreign keys the server holds.
const FOREIGN: usize = 10_000;
/// How many of them lie under the course prefix.
const UNDER_PREFIX: usize = 1_000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let option = |name: &str, default: u64| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let rounds = option("--rounds", 50);
    if let Some(i) = args.iter().position(|a| a == "--learner") {
        learner(args.get(i + 1).map(String::as_str).unwrap_or(""), rounds);
        return;
    }
    let limit = Duration::from_secs(option("--limit", 1200));
    let server = server::shared().unwrap_or_else(|e| panic!("no Redis for the soak: {e}"));
    let admin_url = server.url().to_owned();
    let mut admin = server.connect().expect("a connection");
    println!("soak: {rounds} rounds, {FOREIGN} foreign keys, on {server}");
    println!();
    println!(
        "| grader's Redis user | rounds (well / hostile) | foreign keys lost outside the prefix | foreign keys lost under it | false verdicts, well-behaved | not stopped, hostile | stalls | wall time |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let limited = limited_url(&mut admin, &admin_url);
    let mut complete = true;
    for (who, url) in [
        ("may create users", admin_url.clone()),
        ("limited to the prefix", limited),
    ] {
        let keys = plant(&mut admin);
        let started = Instant::now();
        let well = start(&url, "well", rounds);
        let hostile = start(&url, "hostile", rounds);
        let (well, hostile) = (finish(well, limit), finish(hostile, limit));
        let (outside, under) = keys.split_at(FOREIGN - UNDER_PREFIX);
        let lost_outside = outside.len() - intact(&mut admin, outside);
        let lost_under = under.len() - intact(&mut admin, under);
        println!(
            "| {who} | {} / {} | {lost_outside} | {lost_under} | {} | {} | {} | {:.0} s |",
            well.rounds,
            hostile.rounds,
            well.wrong,
            hostile.wrong,
            well.stalls + hostile.stalls,
            started.elapsed().as_secs_f64()
        );
        let _ = redis::cmd("DEL").arg(&keys).exec(&mut admin);
        complete &= well.rounds == rounds && hostile.rounds == rounds;
    }
    let _ = redis::cmd("ACL")
        .arg("DELUSER")
        .arg("soak-grader")
        .exec(&mut admin);
    if !complete {
        eprintln!("soak: a learner's run did not finish its {rounds} rounds within the limit");
        std::process::exit(1);
    }
}

/// The URL of a user made with the README's line, on the server at `url`.
fn limited_url(admin: &mut redis::Connection, url: &str) -> String {
    let line = acl::instructor_line("soak-grader", prefix::course());
    let words: Vec<String> = line
        .split(' ')
        .skip(1)
        .map(|w| w.replace(">CHANGE-THIS-PASSWORD", ">soak"))
        .collect();
    redis::cmd("ACL")
        .arg(&words)
        .exec(admin)
        .expect("ACL SETUSER");
    // The server's own URL signs in with its password; the user's takes its place.
    let rest = url.strip_prefix("redis://").unwrap_or(url);
    let address = rest.rsplit_once('@').map_or(rest, |(_, address)| address);
    format!("redis://soak-grader:soak@{address}")
}

/// Puts the foreign keys on the server; returns their names.
fn plant(admin: &mut redis::Connection) -> Vec<String> {
    // Outside the prefix first, then under it, the script's target last.
    let mut keys: Vec<String> = (0..FOREIGN - UNDER_PREFIX)
        .map(|i| format!("shop:order:{i}"))
        .chain((1..UNDER_PREFIX).map(|i| format!("{}another-course:{i}", prefix::course())))
        .collect();
    keys.push(foreign_target());
    for chunk in keys.chunks(1_000) {
        let mut pipe = redis::pipe();
        for key in chunk {
            pipe.cmd("SET").arg(key).arg("precious");
        }
        pipe.exec(admin).expect("plant the foreign keys");
    }
    keys
}

/// How many of `keys` still hold what was planted.
fn intact(admin: &mut redis::Connection, keys: &[String]) -> usize {
    keys.chunks(1_000)
        .map(|chunk| {
            let values: Vec<Option<String>> = redis::cmd("MGET")
                .arg(chunk)
                .query(admin)
                .unwrap_or_default();
            values
                .iter()
                .filter(|v| v.as_deref() == Some("precious"))
                .count()
        })
        .sum()
}

fn start(url: &str, who: &str, rounds: u64) -> Child {
    Command::new(std::env::current_exe().expect("this binary"))
        .args(["--learner", who, "--rounds", &rounds.to_string()])
        .env("REDIS_URL", url)
        .env("GRADER_REDIS", "url")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start a learner's run")
}

/// What a learner's run reported.
#[derive(Default)]
struct Tally {
    rounds: u64,
    /// Well-behaved: checks that did not pass. Hostile: checks that were not
    /// failed for the command the lock sent.
    wrong: u64,
    stalls: u64,
}

/// Reads a run's report lines until it ends or `limit` passes.
fn finish(mut child: Child, limit: Duration) -> Tally {
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().expect("its stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + limit;
    let mut tally = Tally::default();
    while let Ok(line) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        let mut words = line.split(' ');
        match (words.next(), words.next()) {
            (Some("round"), _) => tally.rounds += 1,
            (Some("wrong"), Some(what)) => {
                tally.wrong += 1;
                eprintln!("soak: {what}");
            }
            (Some("stalled"), _) => tally.stalls += 1,
            _ => {}
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    tally
}

/// A learner's run: `well` grades the reference lock, `hostile` the hostile
/// locks; one line per finding, one per round.
fn learner(who: &str, rounds: u64) {
    for _ in 0..rounds {
        if who == "well" {
            for check in CHECKS {
                report(check.name, check.run(&REFERENCE), |v| *v == Verdict::Pass);
            }
        } else {
            let check = checks::named("acquire::takes_a_free_lock").expect("a check");
            for (_, lock) in HOSTILE {
                report(
                    lock.name,
                    check.run(lock),
                    |v| matches!(v, Verdict::Fail(r) if r.refused_command().is_some()),
                );
            }
        }
        println!("round");
    }
}

fn report(what: &str, outcome: Result<Verdict, GradeError>, right: impl Fn(&Verdict) -> bool) {
    match outcome {
        Ok(v) if right(&v) => {}
        Err(GradeError::Stalled(_)) => println!("stalled {}", what.replace(' ', "_")),
        _ => println!("wrong {}", what.replace(' ', "_")),
    }
}
