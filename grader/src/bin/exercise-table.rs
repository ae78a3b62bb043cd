//! Prints the course's table of exercises ([`grader::exercise::EXERCISES`]),
//! one exercise a line, its fields separated by tabs, for scripts that need
//! to know the exercises without keeping a list of their own:
//!
//! ```sh
//! cargo run -q -p grader --bin exercise-table
//! # 1  token  exercises/src/token.rs  grader/src/reference/token.rs  new_token  book/src/single-instance.md
//! # (the fields separated by tabs)
//! ```
//!
//! The fields: number, name, stub, solution, functions (separated by
//! commas), chapter.

use grader::exercise::EXERCISES;

fn main() {
    for e in EXERCISES {
        println!(
            "{}\t{}\t{}\t{}\t{}\t{}",
            e.number(),
            e.name,
            e.stub(),
            e.solution(),
            e.functions.join(","),
            e.chapter.path()
        );
    }
}
