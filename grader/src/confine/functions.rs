//! Redis functions in libraries of the check's own.
//!
//! A library's name and its functions' names are global to the server: two
//! checks that load `mylock` with `FUNCTION LOAD REPLACE` would replace each
//! other's code, and a call would run whichever loaded last. So the wire
//! gives every library and function of a check one prefix of its own: it puts
//! it in front of the name in the library's `#!lua name=` line, in front of
//! every name the library registers (through `redis.register_function`,
//! wrapped by a line of Lua put before the library's second line, so that
//! line numbers in Redis's errors stay the learner's), and in front of the
//! name an `FCALL` calls. After a load, the grader looks at what the library
//! registered ([`registered`]): a function that got around the wrapper
//! (registered under a name without the prefix) has its library deleted and
//! the load refused.

use redis::Value;

/// The name the wrapper takes the place of `redis.register_function` under.
const WRAPPER: &str = "__course_register_function";

/// `code`, a library for `FUNCTION LOAD`, with its name and the names it
/// registers made to start with `prefix`; or why it cannot be.
pub fn library(code: &[u8], prefix: &str) -> Result<Vec<u8>, String> {
    let code =
        std::str::from_utf8(code).map_err(|_| "a library's code must be UTF-8 text".to_owned())?;
    let (shebang, body) = code.split_once('\n').unwrap_or((code, ""));
    if !shebang.starts_with("#!") {
        // Redis refuses it (no engine named); nothing is loaded.
        return Ok(code.as_bytes().to_vec());
    }
    let shebang: Vec<String> = shebang
        .split(' ')
        .map(|part| match part.strip_prefix("name=") {
            Some(name) => format!("name={prefix}{name}"),
            None => part.to_owned(),
        })
        .collect();
    // Lua's standard functions (`type`, `tostring`) are not there while a
    // library loads: the table form is told apart by its lone argument.
    let wrapper = format!(
        "local {WRAPPER} do local register = redis.register_function {WRAPPER} = function(name, \
         callback) if callback == nil then name.function_name = '{prefix}' .. \
         name.function_name return register(name) end return register('{prefix}' .. name, \
         callback) end end "
    );
    let body = body.replace("redis.register_function", WRAPPER);
    Ok(format!("{}\n{wrapper}{body}", shebang.join(" ")).into_bytes())
}

/// The library name in a `FUNCTION LOAD` reply, as the learner named it.
pub fn reply_name(reply: Value, prefix: &str) -> Value {
    let strip = |name: &[u8]| {
        name.strip_prefix(prefix.as_bytes())
            .unwrap_or(name)
            .to_vec()
    };
    match reply {
        Value::BulkString(name) => Value::BulkString(strip(&name)),
        Value::SimpleString(name) => {
            Value::SimpleString(String::from_utf8_lossy(&strip(name.as_bytes())).into_owned())
        }
        other => other,
    }
}

/// The names of the functions in a `FUNCTION LIST` reply (RESP2 or RESP3).
pub fn registered(list: &Value) -> Vec<String> {
    fn text(v: &Value) -> Option<String> {
        match v {
            Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
            Value::SimpleString(s) => Some(s.clone()),
            _ => None,
        }
    }
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Array(items) => {
                for pair in items.windows(2) {
                    if text(&pair[0]).as_deref() == Some("name")
                        && let Some(name) = text(&pair[1])
                    {
                        out.push(name);
                    }
                }
                items.iter().for_each(|i| walk(i, out));
            }
            Value::Map(pairs) => {
                for (k, v) in pairs {
                    if text(k).as_deref() == Some("name")
                        && let Some(name) = text(v)
                    {
                        out.push(name);
                    }
                    walk(v, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(list, &mut out);
    out
}

/// A name for [`crate::confine::Namespace`]'s functions: `text` with every
/// character Redis does not allow in a function's name made `_`.
pub fn allowed(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_s_name_and_functions_get_the_prefix_and_keep_their_lines() {
        let code = "#!lua name=mylock\nredis.register_function('unlock', function(k, a) return 1 end)\nredis.register_function{function_name='peek', callback=function() return 0 end}";
        let out =
            String::from_utf8(library(code.as_bytes(), "p_").expect("rewritten")).expect("text");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert_eq!(lines[0], "#!lua name=p_mylock");
        assert!(
            lines[1].contains("__course_register_function('unlock'"),
            "{out}"
        );
        assert!(lines[2].starts_with("__course_register_function{"), "{out}");
        assert!(library(&[0xff, 0xfe], "p_").is_err());
    }

    #[test]
    fn the_names_a_library_registered_are_read_from_either_protocol() {
        let resp2 = Value::Array(vec![Value::Array(vec![
            Value::BulkString(b"library_name".to_vec()),
            Value::BulkString(b"p_mylock".to_vec()),
            Value::BulkString(b"functions".to_vec()),
            Value::Array(vec![Value::Array(vec![
                Value::BulkString(b"name".to_vec()),
                Value::BulkString(b"p_unlock".to_vec()),
            ])]),
        ])]);
        assert_eq!(registered(&resp2), ["p_unlock"]);
        assert_eq!(
            reply_name(Value::BulkString(b"p_mylock".to_vec()), "p_"),
            Value::BulkString(b"mylock".to_vec())
        );
    }
}
