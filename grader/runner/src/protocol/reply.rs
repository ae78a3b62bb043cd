//! Redis's replies, as the judge sends them back to the learner's connection.
//!
//! A reply is Redis's own value in RESP, or the [`Fault`] the judge's
//! connection gave instead (the command was refused, the node did not
//! answer): `[0, value]` or `[1, fault]`.

use std::io::{self, Read, Write};

use redis::{Parser, RedisResult, Value};

use super::Fault;

/// Writes a reply to a command: Redis's value, or the connection's fault.
pub fn write_reply<W: Write>(to: &mut W, reply: &RedisResult<Value>) -> io::Result<()> {
    let mut out = Vec::new();
    out.extend_from_slice(b"*2\r\n");
    match reply {
        Ok(value) => {
            out.extend_from_slice(b":0\r\n");
            encode_value(&mut out, value);
        }
        Err(e) => {
            out.extend_from_slice(b":1\r\n");
            let parts = Fault::of(e).parts();
            encode_value(
                &mut out,
                &Value::Array(parts.into_iter().map(Value::BulkString).collect()),
            );
        }
    }
    to.write_all(&out)?;
    to.flush()
}

/// Reads a reply written by [`write_reply`].
pub fn read_reply<R: Read>(parser: &mut Parser, from: R) -> RedisResult<Value> {
    match parser.parse_value(from)? {
        Value::Array(mut items) if items.len() == 2 => {
            let body = items.pop().unwrap_or(Value::Nil);
            match items.pop() {
                Some(Value::Int(0)) => Ok(body),
                Some(Value::Int(1)) => {
                    let Value::Array(parts) = body else {
                        return Err(io::Error::other("a fault that is not an array").into());
                    };
                    let parts: Vec<Vec<u8>> = parts
                        .into_iter()
                        .map(|p| match p {
                            Value::BulkString(b) => b,
                            _ => Vec::new(),
                        })
                        .collect();
                    let fault =
                        Fault::from_parts(&parts).map_err(|e| io::Error::other(e.to_string()))?;
                    Err(fault.error())
                }
                _ => Err(io::Error::other("a reply that is neither a value nor a fault").into()),
            }
        }
        _ => Err(io::Error::other("a reply outside the runner's protocol").into()),
    }
}

/// Writes `value` as RESP (RESP3's own types where a value has one).
pub fn encode_value(out: &mut Vec<u8>, value: &Value) {
    let line = |out: &mut Vec<u8>, prefix: char, text: &str| {
        out.extend_from_slice(format!("{prefix}{text}\r\n").as_bytes());
    };
    let bulk = |out: &mut Vec<u8>, prefix: char, bytes: &[u8]| {
        out.extend_from_slice(format!("{prefix}{}\r\n", bytes.len()).as_bytes());
        out.extend_from_slice(bytes);
        out.extend_from_slice(b"\r\n");
    };
    match value {
        Value::Nil => out.extend_from_slice(b"$-1\r\n"),
        Value::Int(n) => line(out, ':', &n.to_string()),
        Value::BulkString(bytes) => bulk(out, '$', bytes),
        Value::SimpleString(s) => line(out, '+', s),
        Value::Okay => out.extend_from_slice(b"+OK\r\n"),
        Value::Array(items) | Value::Set(items) => {
            let prefix = if matches!(value, Value::Set(_)) {
                '~'
            } else {
                '*'
            };
            line(out, prefix, &items.len().to_string());
            for item in items {
                encode_value(out, item);
            }
        }
        Value::Map(pairs) => {
            line(out, '%', &pairs.len().to_string());
            for (k, v) in pairs {
                encode_value(out, k);
                encode_value(out, v);
            }
        }
        Value::Double(d) => line(out, ',', &d.to_string()),
        Value::Boolean(b) => line(out, '#', if *b { "t" } else { "f" }),
        Value::VerbatimString { text, .. } => bulk(out, '$', text.as_bytes()),
        Value::ServerError(e) => {
            let text = match e.details() {
                Some(details) => format!("{} {details}", e.code()),
                None => e.code().to_string(),
            };
            line(out, '-', &text);
        }
        Value::Attribute { data, .. } => encode_value(out, data),
        Value::Push { data, .. } => {
            line(out, '>', &data.len().to_string());
            for item in data {
                encode_value(out, item);
            }
        }
        // A number too large for an i64, as RESP3 writes it (redis-rs keeps its digits).
        #[allow(unreachable_patterns)]
        other => bulk(out, '$', format!("{other:?}").as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::REFUSED;
    use redis::{ErrorKind, RedisError};

    #[test]
    fn replies_read_back_as_written() {
        let values = [
            Value::Nil,
            Value::Okay,
            Value::Int(-7),
            Value::BulkString(b"a\r\nb".to_vec()),
            Value::Array(vec![
                Value::Int(1),
                Value::Nil,
                Value::SimpleString("QUEUED".into()),
            ]),
        ];
        for value in values {
            let mut bytes = Vec::new();
            write_reply(&mut bytes, &Ok(value.clone())).expect("writes to a vector");
            let read = read_reply(&mut Parser::new(), bytes.as_slice()).expect("reads back");
            assert_eq!(read, value);
        }
        let mut bytes = Vec::new();
        let refused = RedisError::from((ErrorKind::Client, REFUSED, "why".to_string()));
        write_reply(&mut bytes, &Err(refused.clone())).expect("writes to a vector");
        let read = read_reply(&mut Parser::new(), bytes.as_slice());
        assert_eq!(read.map_err(|e| e.to_string()), Err(refused.to_string()));
    }
}
