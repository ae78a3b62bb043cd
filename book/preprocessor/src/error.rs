//! What can go wrong while expanding the directives.
//!
//! A broken directive must stop the build with a message that leads straight
//! to the fix, never leave a blank where a timeline should be. So every error
//! that reaches mdBook names the chapter, the line, the directive as written,
//! and underneath (as its `source`) the file involved and what is wrong with
//! it. `main` prints the whole chain.

use std::io;
use std::path::PathBuf;
use thiserror::Error;

/// An error that stops the build, located in the book.
#[derive(Debug, Error)]
pub enum Error {
    /// A directive could not be expanded.
    #[error("chapter `{chapter}`, line {line}: cannot expand `{directive}`")]
    Directive {
        /// The chapter's source file, relative to the book's `src/`.
        chapter: String,
        /// The 1-based line of the directive in that file.
        line: usize,
        /// The directive as written.
        directive: String,
        /// What is wrong.
        #[source]
        source: Problem,
    },
    /// The book handed over by mdBook could not be read or written back.
    #[error("cannot exchange the book with mdBook over stdin/stdout")]
    Protocol(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Why one directive could not be expanded.
#[derive(Debug, Error)]
pub enum Problem {
    /// The directive is written wrongly.
    #[error(transparent)]
    Syntax(#[from] SyntaxError),
    /// A timeline file is missing or broken.
    #[error(transparent)]
    Load(#[from] LoadError),
}

/// A directive that does not follow `{{#timeline NAME}}` / `{{#player NAME}}`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SyntaxError {
    /// No name after the keyword.
    #[error(
        "the directive names no timeline; write `{{{{#{keyword} NAME}}}}` with NAME a file in timelines/ (src/what-if/ for a grid) without `.json`"
    )]
    MissingName {
        /// `timeline` or `player`.
        keyword: &'static str,
    },
    /// More than one word after the keyword.
    #[error("the directive takes exactly one timeline name, got {words:?}")]
    ExtraWords {
        /// The words after the keyword.
        words: Vec<String>,
    },
    /// A name that could not be a timeline file's stem.
    #[error("{name:?} is not a timeline name: names use lowercase letters, digits, `-` and `_`")]
    BadName {
        /// The name as written.
        name: String,
    },
    /// The directive shares its line with other text.
    #[error(
        "the directive must stand alone on its line (it becomes a block of HTML), but the line is {line:?}"
    )]
    NotAlone {
        /// The whole line.
        line: String,
    },
    /// `{{#` with no closing `}}`.
    #[error("the directive has no closing `}}}}`")]
    Unclosed,
}

/// A timeline file that cannot be used.
#[derive(Debug, Error)]
pub enum LoadError {
    /// The file is missing or unreadable.
    #[error("cannot read timeline file `{}`; the grader writes it: `UPDATE_TIMELINES=1 cargo test -p grader --test book_timelines`", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why it could not be read.
        #[source]
        source: io::Error,
    },
    /// The timelines folder cannot be listed.
    #[error("cannot list the timelines folder `{}`", path.display())]
    ListDir {
        /// The folder.
        path: PathBuf,
        /// Why it could not be listed.
        #[source]
        source: io::Error,
    },
    /// The file is not JSON of the expected shape.
    #[error("timeline file `{}` does not match timelines/SCHEMA.md", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What serde found, with line and column.
        #[source]
        source: serde_json::Error,
    },
    /// The timelines could not be serialized for the player.
    #[error("cannot serialize the timelines of `{}` for the player", dir.display())]
    Embed {
        /// The timelines folder.
        dir: PathBuf,
        /// What serde reported.
        #[source]
        source: serde_json::Error,
    },
    /// The JSON has the right shape but contradicts itself.
    #[error("timeline file `{}` is inconsistent: {reason}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The broken rule.
        reason: String,
    },
}
