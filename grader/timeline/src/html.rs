//! Text put into HTML: the one escape both the grader's pages (the class
//! summary, the player page of `cargo course open`) and the book's timelines
//! use.

/// `text` as HTML element content or as a quoted attribute value (single or
/// double quotes): the five characters with a meaning in markup written as
/// character references.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// JSON made safe inside `<script type="application/json">`: the HTML
/// tokenizer ends the script at the first `</script`, and `<!--` changes how
/// it reads the rest. In JSON a `<` can only occur inside a string, where
/// the escape `\u003c` means the same character.
pub fn json_for_script(json: &str) -> String {
    json.replace('<', "\\u003c")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_character_with_a_meaning_in_markup_is_escaped() {
        assert_eq!(
            escape(r#"<a href="x" title='y'>&</a>"#),
            "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;"
        );
        assert_eq!(escape("plain text, ✗ and all"), "plain text, ✗ and all");
    }

    #[test]
    fn json_cannot_close_its_script() {
        let json = r#"{"story":"</script><script>alert(1)</script>"}"#;
        let safe = json_for_script(json);
        assert!(!safe.contains("</"), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).expect("still JSON");
        assert_eq!(back["story"], "</script><script>alert(1)</script>");
    }
}
