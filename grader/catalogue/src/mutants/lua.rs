//! Mutations of a Lua script, one small change each.
//!
//! `cargo mutants` changes Rust code but never looks inside a string, and the
//! reference's safety lives in its Lua: the comparison that fences a stale
//! token, the `redis.call` that stores it, the `or 0` that reads a missing
//! field as zero. This mutator makes, for one script, every variant with one
//! such piece changed, as a learner might get it wrong:
//!
//! - each comparison negated (`<` to `>=`, `==` to `~=`) and each order
//!   comparison moved by one (`<` to `<=`);
//! - each `redis.call` dropped: a call standing alone as a statement is left
//!   out, one inside an expression reads as `false` (Redis's nil);
//! - each `KEYS[i]` or `ARGV[i]` pointed at another index the script uses, or
//!   at the other table with the same index;
//! - each `or 0` dropped;
//! - each option of a command changed: `"NX"` dropped, `"PX"` (milliseconds)
//!   made `"EX"` (seconds) and back;
//! - each `tonumber(…)` dropped, leaving the string Redis stored;
//! - each returned value changed: `0` and `1` swapped, `false` and `true`
//!   swapped, any other expression returned plus one.
//!
//! It works on the text, outside string literals, which is all the
//! reference's short scripts need; it is not a Lua parser.

/// One mutation of a script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mutation {
    /// The kind of change, e.g. `"negate comparison"`.
    pub operator: &'static str,
    /// The 1-based line of the script the change is on.
    pub line: usize,
    /// That line before the change, trimmed.
    pub before: String,
    /// That line after the change, trimmed (empty when the line is dropped).
    pub after: String,
    /// The whole mutated script.
    pub source: String,
}

/// Every mutation of `source`, in the order of the text, without two that
/// give the same script.
pub fn mutations(source: &str) -> Vec<Mutation> {
    let code = code_mask(source);
    let mut out: Vec<Mutation> = Vec::new();
    let mut add = |operator: &'static str, start: usize, end: usize, with: &str| {
        let mutated = format!("{}{with}{}", &source[..start], &source[end..]);
        if mutated != source && !out.iter().any(|m| m.source == mutated) {
            out.push(describe(operator, source, start, mutated));
        }
    };
    comparisons(source, &code, &mut add);
    dropped_calls(source, &code, &mut add);
    indexes(source, &code, &mut add);
    for start in find_all(source, &code, " or 0") {
        add("drop or 0", start, start + " or 0".len(), "");
    }
    options(source, &mut add);
    for start in find_all(source, &code, "tonumber(") {
        if let Some(end) = closing(source, &code, start + "tonumber".len()) {
            let inside = &source[start + "tonumber(".len()..end - 1];
            add("drop tonumber", start, end, inside);
        }
    }
    returns(source, &code, &mut add);
    out.sort_by_key(|m| m.line);
    out
}

/// For each byte of `source`, whether it is code (not inside a string).
fn code_mask(source: &str) -> Vec<bool> {
    let mut mask = Vec::with_capacity(source.len());
    let mut quote: Option<u8> = None;
    let mut escaped = false;
    for &b in source.as_bytes() {
        match quote {
            Some(q) => {
                mask.push(false);
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == q {
                    quote = None;
                }
            }
            None if b == b'"' || b == b'\'' => {
                quote = Some(b);
                mask.push(false);
            }
            None => mask.push(true),
        }
    }
    mask
}

/// The starts of `needle` in `source`, where it lies wholly in code.
fn find_all(source: &str, code: &[bool], needle: &str) -> Vec<usize> {
    source
        .match_indices(needle)
        .map(|(i, _)| i)
        .filter(|&i| code[i..i + needle.len()].iter().all(|&c| c))
        .collect()
}

/// The mutation that replaced what starts at `start` to give `mutated`.
fn describe(operator: &'static str, source: &str, start: usize, mutated: String) -> Mutation {
    let line = source[..start].matches('\n').count();
    let before = source.lines().nth(line).unwrap_or("").trim().to_string();
    // The same line in the mutant: the lines above it are unchanged.
    let after = mutated.lines().nth(line).unwrap_or("").trim().to_string();
    let after = if mutated.lines().count() < source.lines().count() {
        String::new()
    } else {
        after
    };
    Mutation {
        operator,
        line: line + 1,
        before,
        after,
        source: mutated,
    }
}

/// Negates each comparison, and moves each order comparison by one.
fn comparisons(
    source: &str,
    code: &[bool],
    add: &mut impl FnMut(&'static str, usize, usize, &str),
) {
    const NEGATED: &[(&str, &str)] = &[
        ("==", "~="),
        ("~=", "=="),
        ("<=", ">"),
        (">=", "<"),
        ("<", ">="),
        (">", "<="),
    ];
    const MOVED: &[(&str, &str)] = &[("<=", "<"), (">=", ">"), ("<", "<="), (">", ">=")];
    let bytes = source.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let two = source.get(i..i + 2).unwrap_or("");
        let one = source.get(i..i + 1).unwrap_or("");
        let op = [two, one]
            .into_iter()
            .find(|op| NEGATED.iter().any(|(from, _)| from == op));
        match op {
            // `=` alone is an assignment, and `<` or `>` inside `<=` was
            // taken with it.
            Some(op) if code[i] => {
                let end = i + op.len();
                for (operator, table) in [
                    ("negate comparison", NEGATED),
                    ("move comparison by one", MOVED),
                ] {
                    for (from, to) in table {
                        if *from == op {
                            add(operator, i, end, to);
                        }
                    }
                }
                i = end;
            }
            _ => i += 1,
        }
    }
}

/// Drops each `redis.call(…)`.
fn dropped_calls(
    source: &str,
    code: &[bool],
    add: &mut impl FnMut(&'static str, usize, usize, &str),
) {
    for start in find_all(source, code, "redis.call(") {
        let Some(end) = closing(source, code, start + "redis.call".len()) else {
            continue;
        };
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[end..]
            .find('\n')
            .map_or(source.len(), |i| end + i + 1);
        let alone =
            source[line_start..start].trim().is_empty() && source[end..line_end].trim().is_empty();
        if alone {
            add("drop redis.call", line_start, line_end, "");
        } else {
            add("drop redis.call", start, end, "false");
        }
    }
}

/// The end (one past the `)`) of the parenthesis opening at `open`.
fn closing(source: &str, code: &[bool], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in source.bytes().enumerate().skip(open) {
        if !code[i] {
            continue;
        }
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Points each `KEYS[i]` and `ARGV[i]` elsewhere.
fn indexes(source: &str, code: &[bool], add: &mut impl FnMut(&'static str, usize, usize, &str)) {
    let used = |table: &str| -> Vec<String> {
        let mut seen: Vec<String> = Vec::new();
        for start in find_all(source, code, &format!("{table}[")) {
            if let Some(index) = index_at(source, start + table.len() + 1)
                && !seen.contains(&index)
            {
                seen.push(index);
            }
        }
        seen
    };
    for (table, other) in [("KEYS", "ARGV"), ("ARGV", "KEYS")] {
        let mine = used(table);
        let theirs = used(other);
        for start in find_all(source, code, &format!("{table}[")) {
            let Some(index) = index_at(source, start + table.len() + 1) else {
                continue;
            };
            let end = start + table.len() + 2 + index.len();
            for to in mine.iter().filter(|i| **i != index) {
                add("swap index", start, end, &format!("{table}[{to}]"));
            }
            if theirs.contains(&index) {
                add(
                    "swap KEYS and ARGV",
                    start,
                    end,
                    &format!("{other}[{index}]"),
                );
            }
        }
    }
}

/// The digits of an index starting at `at`, when a `]` follows them.
fn index_at(source: &str, at: usize) -> Option<String> {
    let digits: String = source[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let rest = &source[at + digits.len()..];
    (!digits.is_empty() && rest.starts_with(']')).then_some(digits)
}

/// Changes each option of a command: drops `"NX"`, swaps `"PX"` and `"EX"`.
fn options(source: &str, add: &mut impl FnMut(&'static str, usize, usize, &str)) {
    for (start, _) in source.match_indices(", \"NX\"") {
        add("change command option", start, start + ", \"NX\"".len(), "");
    }
    for (from, to) in [("\"PX\"", "\"EX\""), ("\"EX\"", "\"PX\"")] {
        for (start, _) in source.match_indices(from) {
            add("change command option", start, start + from.len(), to);
        }
    }
}

/// Changes each returned value.
fn returns(source: &str, code: &[bool], add: &mut impl FnMut(&'static str, usize, usize, &str)) {
    for start in find_all(source, code, "return ") {
        let value_start = start + "return ".len();
        let line_end = source[value_start..]
            .find('\n')
            .map_or(source.len(), |i| value_start + i);
        let mut value = source[value_start..line_end].trim_end();
        if let Some(v) = value.strip_suffix(" end") {
            value = v.trim_end();
        }
        let value_end = value_start + value.len();
        let changed = match value {
            "0" => "1".to_string(),
            "1" => "0".to_string(),
            "false" => "true".to_string(),
            "true" => "false".to_string(),
            other => format!("({other}) + 1"),
        };
        add("change returned value", value_start, value_end, &changed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = r#"
local highest = tonumber(redis.call("HGET", KEYS[1], "a<b")) or 0
if tonumber(ARGV[1]) < highest then
    return 0
end
redis.call("HSET", KEYS[1], "fence", ARGV[2])
return 1
"#;

    fn afters(operator: &str) -> Vec<String> {
        mutations(SCRIPT)
            .into_iter()
            .filter(|m| m.operator == operator)
            .map(|m| m.after)
            .collect()
    }

    #[test]
    fn comparisons_are_negated_and_moved_but_not_inside_strings() {
        assert_eq!(
            afters("negate comparison"),
            ["if tonumber(ARGV[1]) >= highest then"]
        );
        assert_eq!(
            afters("move comparison by one"),
            ["if tonumber(ARGV[1]) <= highest then"]
        );
    }

    #[test]
    fn a_call_alone_is_dropped_and_one_in_an_expression_reads_false() {
        assert_eq!(
            afters("drop redis.call"),
            ["local highest = tonumber(false) or 0", ""]
        );
        let dropped = mutations(SCRIPT)
            .into_iter()
            .find(|m| m.after.is_empty())
            .expect("the HSET line is dropped");
        assert!(!dropped.source.contains("HSET"));
        assert_eq!(dropped.line, 6);
    }

    #[test]
    fn indexes_point_elsewhere_within_what_the_script_uses() {
        assert_eq!(
            afters("swap index"),
            [
                "if tonumber(ARGV[2]) < highest then",
                "redis.call(\"HSET\", KEYS[1], \"fence\", ARGV[1])",
            ]
        );
        assert_eq!(
            afters("swap KEYS and ARGV"),
            [
                "local highest = tonumber(redis.call(\"HGET\", ARGV[1], \"a<b\")) or 0",
                "if tonumber(KEYS[1]) < highest then",
                "redis.call(\"HSET\", ARGV[1], \"fence\", ARGV[2])",
            ]
        );
    }

    #[test]
    fn or_zero_is_dropped_and_returns_change() {
        assert_eq!(
            afters("drop or 0"),
            ["local highest = tonumber(redis.call(\"HGET\", KEYS[1], \"a<b\"))"]
        );
        assert_eq!(afters("change returned value"), ["return 1", "return 0"]);
    }

    #[test]
    fn options_change_and_tonumber_drops() {
        let set = "if redis.call(\"SET\", KEYS[1], ARGV[1], \"NX\", \"PX\", ARGV[2]) then";
        let changed: Vec<String> = mutations(set)
            .into_iter()
            .filter(|m| m.operator == "change command option")
            .map(|m| m.after)
            .collect();
        assert_eq!(
            changed,
            [
                "if redis.call(\"SET\", KEYS[1], ARGV[1], \"PX\", ARGV[2]) then",
                "if redis.call(\"SET\", KEYS[1], ARGV[1], \"NX\", \"EX\", ARGV[2]) then",
            ]
        );
        assert_eq!(
            afters("drop tonumber"),
            [
                "local highest = redis.call(\"HGET\", KEYS[1], \"a<b\") or 0",
                "if ARGV[1] < highest then",
            ]
        );
    }

    #[test]
    fn no_two_mutations_give_the_same_script() {
        let all = mutations(SCRIPT);
        for (i, a) in all.iter().enumerate() {
            assert!(all[i + 1..].iter().all(|b| b.source != a.source));
            assert_ne!(a.source, SCRIPT);
        }
    }
}
