//! `mdbook-timeline`: the book's lock timelines, as strips and as a player.
//!
//! The grader runs each lock scenario against a real Redis on a virtual
//! clock and writes what happened, second by second, to
//! `book/timelines/<name>.json`. This preprocessor puts those runs into the
//! chapters:
//!
//! - `{{#timeline NAME}}` becomes a compact strip of the run, one column per
//!   second ([`strip`]), quiet seconds folded into a gap ([`fold`]), with a row per node when the story runs on several
//!   Redis nodes ([`nodes`]),
//! - `{{#player NAME}}` becomes the interactive player's container, with all
//!   timelines embedded for it ([`player`]); the player itself is
//!   `theme/timeline-player.js`.
//!
//! Directives are found only in prose, never in code ([`directive`]), and a
//! missing or malformed timeline stops the build with an error that names
//! the chapter, the directive and the file ([`error`]). The timeline types
//! themselves ([`timeline`]) are the grader's, from the `lock-timeline` crate.

pub mod directive;
pub mod error;
pub mod expand;
pub mod fold;
pub mod html;
pub mod library;
pub mod nodes;
pub mod player;
pub mod strip;
pub mod what_if;

pub use lock_timeline as timeline;

use mdbook_preprocessor::book::Book;
use mdbook_preprocessor::{Preprocessor, PreprocessorContext};

/// The folder of timeline files, relative to the book's root (where
/// `book.toml` is).
pub const TIMELINES_DIR: &str = "timelines";

/// The preprocessor, as mdBook sees it: `[preprocessor.timeline]`.
#[derive(Debug, Default)]
pub struct TimelinePreprocessor;

impl Preprocessor for TimelinePreprocessor {
    fn name(&self) -> &str {
        "timeline"
    }

    fn run(
        &self,
        ctx: &PreprocessorContext,
        mut book: Book,
    ) -> mdbook_preprocessor::errors::Result<Book> {
        let mut library = library::Library::new(ctx.root.join(TIMELINES_DIR)).with_what_if(
            ctx.root
                .join(&ctx.config.book.src)
                .join(library::WHAT_IF_DIR),
        );
        let mut failure = None;
        book.for_each_chapter_mut(|chapter| {
            if failure.is_some() {
                return;
            }
            let label = chapter
                .source_path
                .as_ref()
                .map_or_else(|| chapter.name.clone(), |p| p.display().to_string());
            match expand::expand(&chapter.content, &label, &mut library) {
                Ok(content) => chapter.content = content,
                Err(e) => failure = Some(e),
            }
        });
        match failure {
            Some(e) => Err(e.into()),
            None => Ok(book),
        }
    }
}
