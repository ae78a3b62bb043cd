//! Finding directives: only in prose, exactly as written, and loudly wrong
//! when malformed.

use mdbook_timeline::directive::{Directive, Kind, find};
use mdbook_timeline::error::SyntaxError;

fn names(markdown: &str) -> Vec<(Kind, String)> {
    match find(markdown) {
        Ok(found) => found.into_iter().map(|d| (d.kind, d.name)).collect(),
        Err(m) => panic!("unexpected malformed directive: {m:?}"),
    }
}

fn error(markdown: &str) -> SyntaxError {
    match find(markdown) {
        Ok(found) => panic!("expected a malformed directive, found {found:?}"),
        Err(m) => m.error,
    }
}

/// Both directives are found, with the byte range and line they occupy, so
/// that splicing replaces exactly the braces and nothing around them.
#[test]
fn finds_both_directives_with_their_ranges() {
    let md = "# Title\n\n{{#timeline gc-pause}}\n\nText.\n\n  {{#player gc-pause-fenced}}\n";
    let found = find(md).expect("well-formed");
    let start = md.find("{{#timeline").expect("present");
    assert_eq!(
        found[0],
        Directive {
            kind: Kind::Timeline,
            name: "gc-pause".into(),
            range: start..start + "{{#timeline gc-pause}}".len(),
            line: 3,
        }
    );
    assert_eq!(found[1].kind, Kind::Player);
    assert_eq!(found[1].name, "gc-pause-fenced");
    assert_eq!(found[1].line, 7);
    assert_eq!(&md[found[1].range.clone()], "{{#player gc-pause-fenced}}");
}

/// Extra spaces inside the braces are allowed, as in mdBook's own directives.
#[test]
fn tolerates_spaces_inside_the_braces() {
    assert_eq!(
        names("{{#timeline   race  }}\n"),
        vec![(Kind::Timeline, "race".to_owned())]
    );
}

/// A directive shown as an example, in a fenced block, an indented block or
/// inline code, is left alone.
#[test]
fn skips_code_blocks_and_inline_code() {
    let md = concat!(
        "Write `{{#timeline gc-pause}}` to show a table:\n",
        "\n",
        "```markdown\n",
        "{{#timeline gc-pause}}\n",
        "```\n",
        "\n",
        "~~~\n",
        "{{#player gc-pause}}\n",
        "~~~\n",
        "\n",
        "    {{#timeline indented}}\n",
        "\n",
        "{{#timeline real}}\n",
    );
    assert_eq!(names(md), vec![(Kind::Timeline, "real".to_owned())]);
}

/// A fenced block inside a list item is still code.
#[test]
fn skips_code_nested_in_lists() {
    let md = "- item\n\n  ```\n  {{#timeline nested}}\n  ```\n";
    assert_eq!(names(md), vec![]);
}

/// `\{{#timeline x}}` is the escaped form; mdBook's `links` preprocessor
/// drops the backslash afterwards.
#[test]
fn skips_escaped_directives() {
    assert_eq!(names("\\{{#timeline gc-pause}}\n"), vec![]);
}

/// Other preprocessors' directives are none of our business.
#[test]
fn ignores_other_directives() {
    let md = "{{#quiz ../quizzes/x.toml}}\n\n{{#include a.md}}\n\n{{#timelines x}}\n";
    assert_eq!(names(md), vec![]);
}

/// A directive without a name, with two names, or with a name that is not a
/// file stem stops the build.
#[test]
fn rejects_malformed_directives() {
    assert_eq!(
        error("{{#timeline}}\n"),
        SyntaxError::MissingName {
            keyword: "timeline"
        }
    );
    assert_eq!(
        error("{{#player a b}}\n"),
        SyntaxError::ExtraWords {
            words: vec!["a".into(), "b".into()]
        }
    );
    assert_eq!(
        error("{{#timeline ../secret}}\n"),
        SyntaxError::BadName {
            name: "../secret".into()
        }
    );
    assert_eq!(error("{{#timeline gc-pause\n"), SyntaxError::Unclosed);
}

/// The HTML replaces a whole line; sharing the line with prose would put a
/// table inside a paragraph.
#[test]
fn requires_the_directive_alone_on_its_line() {
    assert_eq!(
        error("See {{#timeline gc-pause}} here.\n"),
        SyntaxError::NotAlone {
            line: "See {{#timeline gc-pause}} here.".into()
        }
    );
}

/// The line number counts from 1 and points at the directive, for the error
/// message.
#[test]
fn malformed_directives_report_their_line() {
    let Err(m) = find("a\n\nb\n\n{{#player}}\n") else {
        panic!("expected an error");
    };
    assert_eq!(m.line, 5);
    assert_eq!(m.text, "{{#player}}");
}
