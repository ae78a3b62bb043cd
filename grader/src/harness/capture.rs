//! What a check's process printed, kept within bounds and shown so that it
//! cannot pass for the harness's own lines.
//!
//! The code under test may print anything: a million lines, terminal escapes,
//! a carriage return followed by a fake `test result: ok.` line. The harness
//! keeps the beginning and the end of it (a flood costs memory only up to a
//! fixed size), and shows it only indented behind a bar, with control
//! characters spelled out, so no byte of it reaches the first column of the
//! terminal or of a log.

use std::io::Read;

/// How many bytes of the beginning of the output are kept.
const HEAD: usize = 8 * 1024;
/// How many bytes of the end of the output are kept.
const TAIL: usize = 8 * 1024;

/// A check's process output (stdout and stderr, interleaved as written).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    head: Vec<u8>,
    /// The last bytes, once the output is longer than `HEAD`.
    tail: Vec<u8>,
    /// Bytes between `head` and `tail` that were not kept.
    skipped: u64,
}

impl Output {
    /// Reads `source` to its end, keeping its beginning and its end.
    pub(super) fn read(mut source: impl Read) -> Output {
        let mut output = Output::default();
        let mut buffer = [0u8; 8192];
        loop {
            match source.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => output.push(&buffer[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        output
    }

    fn push(&mut self, mut bytes: &[u8]) {
        let room = HEAD - self.head.len();
        let first = bytes.len().min(room);
        self.head.extend_from_slice(&bytes[..first]);
        bytes = &bytes[first..];
        if bytes.is_empty() {
            return;
        }
        self.tail.extend_from_slice(bytes);
        if self.tail.len() > 2 * TAIL {
            let drop = self.tail.len() - TAIL;
            self.skipped += drop as u64;
            self.tail.drain(..drop);
        }
    }

    /// Whether nothing was printed.
    pub fn is_empty(&self) -> bool {
        self.head.is_empty()
    }

    /// Whether the output holds Rust's "memory allocation of N bytes
    /// failed", which comes before the abort of a failed allocation.
    pub(super) fn tells_of_allocation_failure(&self) -> bool {
        [&self.head, &self.tail].iter().any(|part| {
            String::from_utf8_lossy(part)
                .lines()
                .any(|l| l.starts_with("memory allocation of ") && l.ends_with(" bytes failed"))
        })
    }

    /// The output as lines to show, each behind `prefix`, with control
    /// characters spelled out and a note where bytes were left out.
    pub fn indented(&self, prefix: &str) -> String {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if !self.tail.is_empty() {
            let skipped = self.skipped + self.tail.len().saturating_sub(TAIL) as u64;
            let tail = &self.tail[self.tail.len().saturating_sub(TAIL)..];
            text.push_str(&format!("\n[… {skipped} bytes not shown …]\n"));
            text.push_str(&String::from_utf8_lossy(tail));
        }
        let mut shown = String::new();
        for line in text.trim_end_matches('\n').split('\n') {
            shown.push_str(prefix);
            shown.push_str(&spelled_out(line, &['\t']));
            shown.push('\n');
        }
        shown
    }
}

/// Unicode's invisible controls of how text is laid out: the marks,
/// embeddings, overrides and isolates of bidirectional text (with which a
/// name can show its characters in another order than they have, as in
/// "Trojan Source", CVE-2021-42574), and the line and paragraph separators.
const LAYOUT_CONTROLS: &[char] = &[
    '\u{061C}', '\u{200E}', '\u{200F}', '\u{2028}', '\u{2029}', '\u{202A}', '\u{202B}', '\u{202C}',
    '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
];

/// `text` with its control characters spelled out (`\u{1b}`, `\r`, `\n`,
/// `\u{202e}`), but those in `kept`: what a student named, a file or a
/// folder, can then draw nothing on a terminal, start no line of its own, nor
/// show its characters in another order.
pub fn spelled_out(text: &str, kept: &[char]) -> String {
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        if (c.is_control() || LAYOUT_CONTROLS.contains(&c)) && !kept.contains(&c) {
            shown.extend(c.escape_default());
        } else {
            shown.push(c);
        }
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_carriage_return_cannot_bring_a_line_to_the_first_column() {
        let output = Output::read(&b"x\rtest result: ok. 34 passed\n\x1b[2K"[..]);
        assert_eq!(
            output.indented("  | "),
            "  | x\\rtest result: ok. 34 passed\n  | \\u{1b}[2K\n"
        );
    }

    #[test]
    fn bidirectional_controls_are_spelled_out() {
        assert_eq!(
            spelled_out("victim_passed_\u{202E}exe.txt\u{2066}", &[]),
            "victim_passed_\\u{202e}exe.txt\\u{2066}"
        );
    }

    #[test]
    fn a_flood_keeps_its_beginning_and_its_end() {
        let flood: Vec<u8> = (0..100_000u32)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect();
        let output = Output::read(&flood[..]);
        let shown = output.indented("| ");
        assert!(shown.starts_with("| line 0\n"), "{}", &shown[..40]);
        assert!(shown.ends_with("| line 99999\n"));
        assert!(shown.contains("bytes not shown"));
        assert!(shown.len() < HEAD + TAIL + 4096, "{}", shown.len());
    }

    #[test]
    fn an_allocation_failure_is_recognised() {
        let output = Output::read(&b"hello\nmemory allocation of 1073741824 bytes failed\n"[..]);
        assert!(output.tells_of_allocation_failure());
        assert!(!Output::read(&b"hello\n"[..]).tells_of_allocation_failure());
    }
}
