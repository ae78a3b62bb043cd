//! Small helpers for writing HTML by hand.
//!
//! The generated HTML is pasted into the chapter's Markdown, where it must
//! survive as one raw HTML block: CommonMark ends such a block at the first
//! blank line, and mdBook re-parses the HTML and warns about unbalanced tags.
//! So the renderers close every element they open, and [`Html`] drops
//! empty lines and indentation.

/// Escapes text for use in element content and in double-quoted attributes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // A newline inside a story would end the raw HTML block early
            // if it were followed by another; a space renders the same.
            '\n' | '\r' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

/// Makes JSON safe inside `<script type="application/json">`: the HTML
/// tokenizer ends the script at the first `</script`, and `<!--` changes how
/// it reads the rest. In JSON a `<` can only occur inside a string, where
/// the escape `\u003c` means the same character.
pub fn json_for_script(json: &str) -> String {
    json.replace('<', "\\u003c")
}

/// An HTML fragment under construction, one element per line.
#[derive(Debug, Default)]
pub struct Html {
    out: String,
}

impl Html {
    /// Starts an empty fragment.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends one line of already-escaped HTML.
    pub fn line(&mut self, html: impl AsRef<str>) -> &mut Self {
        let html = html.as_ref();
        if !html.trim().is_empty() {
            if !self.out.is_empty() {
                self.out.push('\n');
            }
            self.out.push_str(html.trim_start());
        }
        self
    }

    /// Returns the fragment: lines without indentation and without blank
    /// lines, so Markdown keeps it as one HTML block.
    pub fn finish(self) -> String {
        self.out
    }
}
