//! The `mdbook-timeline` command, as mdBook calls it.
//!
//! mdBook may first ask `mdbook-timeline supports <renderer>` (exit 0: yes;
//! book.toml names the renderer, which skips the question), then runs
//! `mdbook-timeline` with `[context, book]` as JSON on stdin and reads the
//! changed book from stdout. Errors go to stderr, which mdBook shows, with
//! their causes one per line.

use mdbook_preprocessor::Preprocessor;
use mdbook_timeline::TimelinePreprocessor;
use mdbook_timeline::error::Error;
use std::io;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [command, _renderer] = args.as_slice()
        && command == "supports"
    {
        // The output is plain HTML inside Markdown, which every renderer
        // can carry; only the HTML one runs the player.
        return ExitCode::SUCCESS;
    }
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{}", report(&*error));
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let (ctx, book) = mdbook_preprocessor::parse_input(io::stdin().lock())
        .map_err(|e| Error::Protocol(e.into()))?;
    if ctx.mdbook_version != mdbook_preprocessor::MDBOOK_VERSION {
        eprintln!(
            "mdbook-timeline: warning: built against mdBook {} but called by mdBook {}; book/serve installs the pinned version",
            mdbook_preprocessor::MDBOOK_VERSION,
            ctx.mdbook_version
        );
    }
    let book = TimelinePreprocessor.run(&ctx, book)?;
    serde_json::to_writer(io::stdout().lock(), &book).map_err(|e| Error::Protocol(e.into()))?;
    Ok(())
}

/// The error and its causes, one per line, the way a reader scans them.
fn report(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = format!("mdbook-timeline: error: {error}");
    let mut cause = error.source();
    while let Some(e) = cause {
        text.push_str(&format!("\n  caused by: {e}"));
        cause = e.source();
    }
    text
}
