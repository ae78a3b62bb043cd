//! Small helpers for writing HTML by hand.
//!
//! The generated HTML is pasted into the chapter's Markdown, where it must
//! survive as one raw HTML block: CommonMark ends such a block at the first
//! blank line, and mdBook re-parses the HTML and warns about unbalanced tags.
//! So the renderers close every element they open, and [`Html`] drops
//! empty lines and indentation.

pub use lock_timeline::html::json_for_script;

/// Escapes text for use in element content and in attributes, on one line:
/// a newline inside a story would end the raw HTML block early if it were
/// followed by another; a space renders the same.
pub fn escape(text: &str) -> String {
    lock_timeline::html::escape(&text.replace(['\n', '\r'], " "))
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
