//! Judges every mutant of the reference's Lua scripts, and every
//! fixed-answer mutant, and prints the result as Markdown tables, for
//! `grader/mutants.md`:
//!
//! ```sh
//! GRADER_REDIS=process cargo run -q -p lock-catalogue --bin lua-mutants
//! ```
//!
//! Each row is one mutant: the script and line and the change (or the
//! function and its fixed answer), and the first check (in the order of the
//! checks table) that fails on it with the rule its report names, or the
//! reason it is equivalent to the reference. The exit status is 1 when a
//! mutant that is not listed as equivalent survives every check, or one
//! listed as equivalent is caught.

use std::process::ExitCode;
use std::time::Instant;

use lock_catalogue::mutants::{self, Judged, fixed};

fn main() -> ExitCode {
    let started = Instant::now();
    let all = mutants::all();
    let (mut caught, mut equivalent, mut holes) = (0, 0, 0);
    println!("### Lua scripts");
    println!();
    println!("| mutant | before | after | verdict |");
    println!("|---|---|---|---|");
    for mutant in &all {
        let judged = match mutant.judge() {
            Ok(judged) => judged,
            Err(e) => {
                eprintln!("{}: {e}", mutant.id());
                return ExitCode::FAILURE;
            }
        };
        let verdict = match (judged, mutants::equivalent(mutant)) {
            (hit @ Judged::Caught { .. }, None) => {
                caught += 1;
                caught_by(hit)
            }
            (Judged::Survived, Some(reason)) => {
                equivalent += 1;
                format!("equivalent: {reason}")
            }
            (Judged::Survived, None) => {
                holes += 1;
                "**survived every check**".to_string()
            }
            (Judged::Caught { check, .. }, Some(_)) => {
                holes += 1;
                format!("**listed as equivalent, but `{check}` fails on it**")
            }
        };
        println!(
            "| `{}` | `{}` | {} | {verdict} |",
            mutant.id(),
            cell(&mutant.mutation.before),
            if mutant.mutation.after.is_empty() {
                "(line dropped)".to_string()
            } else {
                format!("`{}`", cell(&mutant.mutation.after))
            },
        );
    }
    println!();
    println!(
        "{} Lua mutants: {caught} caught, {equivalent} equivalent, {holes} not caught.",
        all.len()
    );
    println!();
    println!("### Fixed answers");
    println!();
    println!("| function | verdict |");
    println!("|---|---|");
    let mut fixed_caught = 0;
    for (name, lock) in fixed::ALL {
        let verdict = match mutants::judge_lock(lock, mutants::fixed::exercise(name)) {
            Ok(Judged::Survived) => {
                holes += 1;
                "**survived every check**".to_string()
            }
            Ok(hit) => {
                fixed_caught += 1;
                caught_by(hit)
            }
            Err(e) => {
                eprintln!("{name}: {e}");
                return ExitCode::FAILURE;
            }
        };
        println!("| `{name}` | {verdict} |");
    }
    println!();
    println!(
        "{} fixed-answer mutants: {fixed_caught} caught.",
        fixed::ALL.len()
    );
    eprintln!("judged in {:.1} s", started.elapsed().as_secs_f64());
    if holes == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The verdict cell of a caught mutant.
fn caught_by(judged: Judged) -> String {
    match judged {
        Judged::Caught {
            check,
            breaks: Some(rule),
        } => format!("caught by `{check}` ({rule:?})"),
        Judged::Caught {
            check,
            breaks: None,
        } => {
            format!("caught by `{check}` (failed without a broken rule)")
        }
        Judged::Survived => "survived every check".to_string(),
    }
}

/// `text` made safe inside a table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}
