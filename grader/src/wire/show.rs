//! How a report shows what went over the wire: a packed request taken apart
//! into its commands, arguments cut to a readable length, replies as
//! redis-cli would print them.

use redis::Value;

/// The arguments of the first command in a packed RESP request.
pub(super) fn unpack(packed: &[u8]) -> Vec<Vec<u8>> {
    unpack_all(packed).into_iter().next().unwrap_or_default()
}

/// Every command in a packed RESP request (several for a pipeline), as far
/// as it can be read: for a report, which shows what it can.
pub(super) fn unpack_all(packed: &[u8]) -> Vec<Vec<Vec<u8>>> {
    read(packed).0
}

/// Every command in a packed RESP request, or `None` unless the request is
/// nothing but RESP arrays of bulk strings, each whole: no inline command, no
/// argument cut short, no byte left over. What the proxy sends on must be
/// exactly what it read.
pub(super) fn unpack_exact(packed: &[u8]) -> Option<Vec<Vec<Vec<u8>>>> {
    match read(packed) {
        (commands, true) => Some(commands),
        (_, false) => None,
    }
}

/// The commands read from the start of `rest`, and whether they were all of it.
fn read(mut rest: &[u8]) -> (Vec<Vec<Vec<u8>>>, bool) {
    fn line(rest: &mut &[u8]) -> Option<Vec<u8>> {
        let end = rest.windows(2).position(|w| w == b"\r\n")?;
        let l = rest[..end].to_vec();
        *rest = &rest[end + 2..];
        Some(l)
    }
    fn number(bytes: &[u8]) -> Option<usize> {
        std::str::from_utf8(bytes).ok()?.parse().ok()
    }
    let mut commands = Vec::new();
    while !rest.is_empty() {
        let Some(n) = line(&mut rest).and_then(|h| h.strip_prefix(b"*").and_then(number)) else {
            return (commands, false);
        };
        let mut args = Vec::with_capacity(n.min(1024));
        for _ in 0..n {
            let Some(len) = line(&mut rest).and_then(|h| h.strip_prefix(b"$").and_then(number))
            else {
                commands.push(args);
                return (commands, false);
            };
            if rest.len() < len + 2 || &rest[len..len + 2] != b"\r\n" {
                commands.push(args);
                return (commands, false);
            }
            args.push(rest[..len].to_vec());
            rest = &rest[len + 2..];
        }
        commands.push(args);
    }
    (commands, true)
}

/// `args` packed as one RESP command.
pub(super) fn pack(args: &[Vec<u8>]) -> Vec<u8> {
    let mut cmd = redis::Cmd::new();
    for arg in args {
        cmd.arg(arg.as_slice());
    }
    cmd.get_packed_command()
}

/// A pipeline shown as one line: `MULTI; DEL lock; EXEC`.
pub(super) fn pipeline_label(packed: &[u8]) -> Vec<u8> {
    let names: Vec<String> = unpack_all(packed)
        .iter()
        .map(|args| {
            args.iter()
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let text = format!("[pipeline] {}", names.join("; "));
    format!("*1\r\n${}\r\n{}\r\n", text.len(), text).into_bytes()
}

/// One argument as a report shows it: scripts summarised, long values cut.
pub(super) fn show_arg(arg: &str) -> String {
    if arg.contains('\n') {
        let lines = arg.trim().lines().count();
        return format!("<script, {lines} lines>");
    }
    let shown: String = arg.chars().take(48).collect();
    if shown.len() < arg.len() {
        format!("{shown}…")
    } else if arg.is_empty() || arg.contains(' ') {
        format!("{arg:?}")
    } else {
        shown
    }
}

/// A reply as redis-cli would show it, more or less.
pub(super) fn show_value(value: &Value) -> String {
    match value {
        Value::Nil => "(nil)".into(),
        Value::Int(i) => format!("(integer) {i}"),
        Value::BulkString(b) => format!("{:?}", String::from_utf8_lossy(b)),
        Value::SimpleString(s) => s.clone(),
        Value::Okay => "OK".into(),
        Value::Boolean(b) => format!("(boolean) {b}"),
        Value::Double(d) => format!("(double) {d}"),
        Value::ServerError(e) => format!("(error) {} {}", e.code(), e.details().unwrap_or(""))
            .trim_end()
            .to_string(),
        Value::Array(items) | Value::Set(items) => {
            format!(
                "[{}]",
                items.iter().map(show_value).collect::<Vec<_>>().join(", ")
            )
        }
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpacks_a_packed_command_and_a_pipeline() {
        let set = redis::cmd("SET").arg("k").arg("v w").get_packed_command();
        assert_eq!(
            unpack(&set),
            vec![b"SET".to_vec(), b"k".to_vec(), b"v w".to_vec()]
        );
        let pipe = redis::pipe()
            .atomic()
            .cmd("DEL")
            .arg("k")
            .get_packed_pipeline();
        let label = unpack(&pipeline_label(&pipe));
        assert_eq!(
            String::from_utf8_lossy(&label[0]),
            "[pipeline] MULTI; DEL k; EXEC"
        );
    }

    #[test]
    fn only_whole_resp_commands_are_read_exactly() {
        let set = redis::cmd("SET").arg("k").arg("v w").get_packed_command();
        let pipe = redis::pipe()
            .cmd("GET")
            .arg("k")
            .cmd("DEL")
            .arg("k")
            .get_packed_pipeline();
        assert_eq!(unpack_exact(&set).map(|c| c.len()), Some(1));
        assert_eq!(unpack_exact(&pipe).map(|c| c.len()), Some(2));
        let cut = &set[..set.len() - 3];
        let extra = [&set[..], b"FLUSHALL\r\n"].concat();
        let wrong_end = String::from_utf8_lossy(&set)
            .replace("v w\r\n", "v wXY")
            .into_bytes();
        for unreadable in [&b"FLUSHALL\r\n"[..], cut, &extra, &wrong_end, b"*1\r\n"] {
            assert_eq!(
                unpack_exact(unreadable),
                None,
                "{:?}",
                String::from_utf8_lossy(unreadable)
            );
        }
        // What a report shows of it is still what could be read.
        assert_eq!(unpack_all(&extra).len(), 1);
    }
}
