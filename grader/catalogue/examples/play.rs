//! Prints the book's timelines as text, played now against Redis:
//!
//! ```sh
//! cargo run -p lock-catalogue --example play [NAME]
//! ```
//!
//! `NAME` is one timeline's (`gc-pause`, `redlock-restart`, … the JSON files'
//! names in `book/timelines/`); without it, every one is played in the book's
//! order.

fn main() -> std::process::ExitCode {
    let only = std::env::args().nth(1);
    let demos = lock_catalogue::demos::all();
    if let Some(name) = &only
        && !demos.iter().any(|d| d.name == name)
    {
        let names: Vec<&str> = demos.iter().map(|d| d.name).collect();
        eprintln!(
            "error: the book has no timeline {name:?}; its timelines are: {}",
            names.join(", ")
        );
        return std::process::ExitCode::from(2);
    }
    for demo in demos
        .iter()
        .filter(|d| only.as_deref().is_none_or(|name| name == d.name))
    {
        match demo.timeline() {
            Ok(timeline) => println!("{}", timeline.render(None)),
            Err(e) => {
                eprintln!("error: the timeline {} could not be played: {e}", demo.name);
                return std::process::ExitCode::FAILURE;
            }
        }
    }
    std::process::ExitCode::SUCCESS
}
