//! Just enough of Rust's lexical structure to read a test file as a reviewer does: its
//! functions, with their attributes and bodies, and the macros they call.
//!
//! A file is read twice over: as written, and as *code*, the same text with every comment and
//! the inside of every string and character literal blanked out, byte for byte. Braces,
//! brackets and keywords are looked for in the code, where a `{` in a format string or a
//! `return` in a comment cannot mislead; the words a macro prints are read from the text at the
//! same offsets. This is no parser: a function is `fn NAME`, its body the braces that follow,
//! which is what the workspace's tests are.

/// A function of a source file.
pub struct Function {
    /// Its name.
    pub name: String,
    /// Its attributes as written (`#[test]`, `#[ignore = "…"]`), outermost first.
    pub attributes: Vec<String>,
    /// Where its body (from `{` to `}`) is, in bytes.
    pub body: std::ops::Range<usize>,
}

impl Function {
    /// Whether an attribute of the function starts with `prefix` (`#[test`).
    pub fn has(&self, prefix: &str) -> bool {
        self.attributes.iter().any(|a| a.starts_with(prefix))
    }
}

/// A source file, as written and as code.
pub struct Source {
    /// The file as written.
    pub text: String,
    /// The same, with comments and the insides of literals blanked (spaces, newlines kept).
    pub code: String,
    /// Its functions, in order.
    pub functions: Vec<Function>,
}

impl Source {
    /// Reads `text` as Rust.
    pub fn new(text: String) -> Source {
        let code = blank_comments_and_literals(&text);
        let functions = functions(&code, &text);
        Source {
            text,
            code,
            functions,
        }
    }

    /// The arguments, as written, of every call of one of `macros` (`println!`) in `range`.
    pub fn macro_arguments(&self, range: std::ops::Range<usize>, macros: &[&str]) -> Vec<&str> {
        let code = &self.code[range.clone()];
        let mut found = Vec::new();
        for name in macros {
            let call = format!("{name}!");
            for (at, _) in code.match_indices(&call) {
                if !word_starts(code, at) {
                    continue;
                }
                let open = range.start + at + call.len();
                let open = open + self.code[open..].len() - self.code[open..].trim_start().len();
                if let Some(close) = matching(&self.code, open) {
                    found.push(&self.text[open..=close]);
                }
            }
        }
        found
    }

    /// Whether the code in `range` holds the word `word` (`return`).
    pub fn holds_word(&self, range: std::ops::Range<usize>, word: &str) -> bool {
        !self.words(range, word).is_empty()
    }

    /// Whether the code in `range` calls the function `name` (`name(`, `path::name(`, not a
    /// method `.name(`).
    pub fn calls(&self, range: std::ops::Range<usize>, name: &str) -> bool {
        let start = range.start;
        self.words(range, name).into_iter().any(|at| {
            self.code[at + name.len()..].trim_start().starts_with('(')
                && !self.code[start..at].trim_end().ends_with('.')
        })
    }

    /// Where in the code of `range` the word `word` stands whole.
    fn words(&self, range: std::ops::Range<usize>, word: &str) -> Vec<usize> {
        let code = &self.code[range.clone()];
        code.match_indices(word)
            .map(|(at, _)| at)
            .filter(|&at| {
                let after = &code[at + word.len()..];
                word_starts(code, at)
                    && !after.starts_with(|c: char| c.is_alphanumeric() || c == '_')
            })
            .map(|at| range.start + at)
            .collect()
    }
}

/// Whether the word at byte `at` of `code` begins there (no identifier character before it).
fn word_starts(code: &str, at: usize) -> bool {
    !code[..at]
        .chars()
        .next_back()
        .is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// The byte of the bracket that closes the one at `open` in `code` (`(`, `[` or `{`).
fn matching(code: &str, open: usize) -> Option<usize> {
    let bytes = code.as_bytes();
    let (up, down) = match bytes.get(open)? {
        b'(' => (b'(', b')'),
        b'[' => (b'[', b']'),
        b'{' => (b'{', b'}'),
        _ => return None,
    };
    let mut depth = 0usize;
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        if b == up {
            depth += 1;
        } else if b == down {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// The bracket that opens the one at `close` in `code` (`]`), searching backwards.
fn opening(code: &str, close: usize) -> Option<usize> {
    let bytes = code.as_bytes();
    let mut depth = 0usize;
    for i in (0..=close).rev() {
        match bytes[i] {
            b']' => depth += 1,
            b'[' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Every `fn NAME … { … }` of `code`, with the attributes above it read from `text`.
fn functions(code: &str, text: &str) -> Vec<Function> {
    let mut found = Vec::new();
    for (at, _) in code.match_indices("fn ") {
        if !word_starts(code, at) {
            continue;
        }
        let rest = &code[at + 3..];
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue; // `fn(` the type
        }
        // The body: the first `{` outside the signature's brackets, unless a `;` ends a
        // declaration first (`[u8; 4]` is no end).
        let Some(open) = body_start(code, at + 3) else {
            continue;
        };
        let Some(close) = matching(code, open) else {
            continue;
        };
        found.push(Function {
            name,
            attributes: attributes_before(code, text, at),
            body: open..close + 1,
        });
    }
    found
}

/// The `{` that opens the body of the function whose signature starts at `from`, or `None`
/// when a `;` outside brackets ends it first (a declaration in a trait).
fn body_start(code: &str, from: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in code.bytes().enumerate().skip(from) {
        match b {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth = depth.saturating_sub(1),
            b'{' if depth == 0 => return Some(i),
            b';' if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// The attributes (`#[…]`) just above the item whose keyword `fn` is at `at`, skipping its
/// qualifiers (`pub`, `pub(crate)`, `pub(super)`, `async`, `const`, `unsafe`).
fn attributes_before(code: &str, text: &str, at: usize) -> Vec<String> {
    let mut attributes = Vec::new();
    let mut end = at;
    loop {
        let before = code[..end].trim_end();
        if let Some(stripped) = [
            "pub(crate)",
            "pub(super)",
            "pub",
            "async",
            "const",
            "unsafe",
        ]
        .iter()
        .find_map(|q| before.strip_suffix(q))
        {
            end = stripped.len();
            continue;
        }
        if !before.ends_with(']') {
            break;
        }
        let Some(open) = opening(code, before.len() - 1) else {
            break;
        };
        if !code[..open].ends_with('#') {
            break;
        }
        attributes.push(text[open - 1..before.len()].to_string());
        end = open - 1;
    }
    attributes.reverse();
    attributes
}

/// `text` with comments and the insides of string and character literals turned into spaces
/// (newlines kept), so that every byte keeps its offset.
fn blank_comments_and_literals(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for b in &mut out[from..to] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    };
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        if rest.starts_with(b"//") {
            let end = rest
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |n| i + n);
            blank(&mut out, i, end);
            i = end;
        } else if rest.starts_with(b"/*") {
            let (mut depth, mut j) = (0usize, i);
            while j < bytes.len() {
                if bytes[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if bytes[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if let Some(hashes) = raw_string_start(bytes, i) {
            // r"…", r#"…"#, br"…": no escapes inside; it ends at `"` and as many `#`.
            let open = i + bytes[i..].iter().position(|&b| b == b'"').unwrap_or(0) + 1;
            let mut closing = vec![b'"'];
            closing.extend(std::iter::repeat_n(b'#', hashes));
            let end = bytes[open..]
                .windows(closing.len())
                .position(|w| w == closing.as_slice())
                .map_or(bytes.len(), |n| open + n);
            blank(&mut out, open, end);
            i = end + closing.len();
        } else if bytes[i] == b'"' {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != b'"' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i + 1, j.min(bytes.len()));
            i = j + 1;
        } else if bytes[i] == b'\'' {
            // A character literal ('x', '\n', '\''), or else a lifetime ('a), left as it is.
            let end = if rest.get(1) == Some(&b'\\') {
                rest.iter()
                    .skip(2)
                    .position(|&b| b == b'\'')
                    .map(|n| i + 2 + n)
            } else {
                let width = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (bytes.get(i + 1 + width) == Some(&b'\'')).then_some(i + 1 + width)
            };
            match end {
                Some(end) => {
                    blank(&mut out, i + 1, end);
                    i = end + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    // Only ASCII bytes were replaced, and only whole characters: still UTF-8.
    String::from_utf8(out).unwrap_or_else(|e| panic!("blanking broke UTF-8: {e}"))
}

/// If a raw string literal (`r"`, `r#"`, `br"`, `cr"`) starts at `i`, how many `#` it has.
fn raw_string_start(bytes: &[u8], i: usize) -> Option<usize> {
    let before_ok = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
    if !before_ok {
        return None;
    }
    let mut j = i;
    if matches!(bytes.get(j), Some(b'b' | b'c')) {
        j += 1;
    }
    if bytes.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = bytes[j..].iter().take_while(|&&b| b == b'#').count();
    (bytes.get(j + hashes) == Some(&b'"')).then_some(hashes)
}
