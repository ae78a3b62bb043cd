//! Finding `{{#timeline NAME}}`, `{{#player NAME}}` and `{{#what-if NAME}}` in a chapter.
//!
//! Only prose counts. A directive inside a fenced or indented code block, or
//! inside `inline code`, is an example shown to the reader and must stay as
//! written. Searching the raw text with a pattern cannot tell the two apart,
//! so the chapter is first parsed with pulldown-cmark (with the options mdBook
//! itself renders with) and the byte ranges of its prose text are collected;
//! a directive counts only if it starts inside one of them.
//!
//! A directive written with a backslash, `\{{#timeline NAME}}`, is left
//! alone too: mdBook's `links` preprocessor, which runs after this one,
//! removes the backslash, the same way it treats its own `{{#include}}`.
//!
//! Each directive becomes a block of HTML, so it must stand alone on its line.

use crate::error::SyntaxError;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use std::ops::Range;

/// The directives this preprocessor expands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `{{#timeline NAME}}`: the static strip of one timeline.
    Timeline,
    /// `{{#player NAME}}`: the interactive player, starting on NAME.
    Player,
    /// `{{#what-if NAME}}`: the table of every run of the grid
    /// `src/what-if/NAME.json`, whose controls the page's player offers.
    WhatIf,
}

impl Kind {
    /// The keyword after `{{#`.
    pub fn keyword(self) -> &'static str {
        match self {
            Kind::Timeline => "timeline",
            Kind::Player => "player",
            Kind::WhatIf => "what-if",
        }
    }

    fn from_keyword(word: &str) -> Option<Kind> {
        match word {
            "timeline" => Some(Kind::Timeline),
            "player" => Some(Kind::Player),
            "what-if" => Some(Kind::WhatIf),
            _ => None,
        }
    }
}

/// A well-formed directive found in prose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directive {
    /// Which directive.
    pub kind: Kind,
    /// The timeline it names.
    pub name: String,
    /// Where it is in the chapter, in bytes, braces included.
    pub range: Range<usize>,
    /// Its 1-based line, for error messages.
    pub line: usize,
}

/// A directive found in prose that cannot be expanded as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    /// The directive as written (up to the end of its line if unclosed).
    pub text: String,
    /// Its 1-based line.
    pub line: usize,
    /// What is wrong.
    pub error: SyntaxError,
}

/// Finds every directive in the prose of `markdown`, in order.
///
/// Fails on the first malformed one: a typo in a directive should stop the
/// build, not leave the braces in the page.
pub fn find(markdown: &str) -> Result<Vec<Directive>, Malformed> {
    let prose = prose_ranges(markdown);
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(offset) = markdown[from..].find("{{#") {
        let start = from + offset;
        from = start + 3;
        let Some(kind) = keyword_at(&markdown[start + 3..]) else {
            continue; // Another preprocessor's directive, such as {{#quiz}}.
        };
        if markdown[..start].ends_with('\\') || !prose.iter().any(|r| r.contains(&start)) {
            continue;
        }
        let directive = parse_at(markdown, start, kind)?;
        from = directive.range.end;
        found.push(directive);
    }
    Ok(found)
}

/// The keyword right after `{{#`, if it is one of ours and complete
/// (`{{#timelines}}` is not `{{#timeline}}`).
fn keyword_at(rest: &str) -> Option<Kind> {
    let end = rest
        .find(|c: char| !c.is_ascii_alphanumeric() && c != '_' && c != '-')
        .unwrap_or(rest.len());
    let after = &rest[end..];
    let complete = after.starts_with("}}") || after.starts_with(char::is_whitespace);
    if complete {
        Kind::from_keyword(&rest[..end])
    } else {
        None
    }
}

/// Parses the directive that starts at byte `start` of `markdown`.
fn parse_at(markdown: &str, start: usize, kind: Kind) -> Result<Directive, Malformed> {
    let line_start = markdown[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = markdown[start..]
        .find('\n')
        .map_or(markdown.len(), |i| start + i);
    let line_text = markdown[line_start..line_end].trim_end_matches('\r');
    let line = markdown[..start].matches('\n').count() + 1;
    let malformed = |text: &str, error| Malformed {
        text: text.to_owned(),
        line,
        error,
    };

    let Some(close) = markdown[start..line_end].find("}}") else {
        return Err(malformed(&markdown[start..line_end], SyntaxError::Unclosed));
    };
    let end = start + close + 2;
    let text = &markdown[start..end];
    let inner = &text[3 + kind.keyword().len()..text.len() - 2];
    let words: Vec<&str> = inner.split_whitespace().collect();
    let name = match words.as_slice() {
        [] => {
            let error = SyntaxError::MissingName {
                keyword: kind.keyword(),
            };
            return Err(malformed(text, error));
        }
        [name] => *name,
        _ => {
            let words = words.iter().map(|w| (*w).to_owned()).collect();
            return Err(malformed(text, SyntaxError::ExtraWords { words }));
        }
    };
    if !is_timeline_name(name) {
        let error = SyntaxError::BadName {
            name: name.to_owned(),
        };
        return Err(malformed(text, error));
    }
    if line_text.trim() != text {
        let error = SyntaxError::NotAlone {
            line: line_text.to_owned(),
        };
        return Err(malformed(text, error));
    }
    Ok(Directive {
        kind,
        name: name.to_owned(),
        range: start..end,
        line,
    })
}

/// Whether `name` can be a timeline's file stem. Keeping to this alphabet
/// also keeps a directive from reaching outside the timelines folder.
pub fn is_timeline_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// The byte ranges of the chapter's prose text, outside code, adjacent
/// pieces merged (pulldown-cmark splits text at characters it had to look
/// at twice).
fn prose_ranges(markdown: &str) -> Vec<Range<usize>> {
    let mut ranges: Vec<Range<usize>> = Vec::new();
    let mut code_depth = 0usize;
    for (event, range) in Parser::new_ext(markdown, markdown_options()).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(_)) => code_depth += 1,
            Event::End(TagEnd::CodeBlock) => code_depth = code_depth.saturating_sub(1),
            Event::Text(_) if code_depth == 0 => match ranges.last_mut() {
                Some(last) if last.end == range.start => last.end = range.end,
                _ => ranges.push(range),
            },
            _ => {}
        }
    }
    ranges
}

/// The Markdown extensions mdBook 0.5 renders chapters with, so that the
/// parse here sees the same blocks the reader will.
fn markdown_options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_DEFINITION_LIST
        | Options::ENABLE_GFM
}
