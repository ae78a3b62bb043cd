//! The connection your functions are handed: Redis, through the judge.
//!
//! It behaves like a `redis::Connection` (your functions are generic over
//! `ConnectionLike`, and cannot tell the difference), but it is a link to the
//! judge's proxy, not to Redis: the judge receives each command, lets it through
//! to its own Redis or refuses it, may step in before it goes out, and sends the
//! reply back. A pipeline travels as one message, so the judge sees it as the
//! one step it is.

use std::cell::RefCell;
use std::io::{self, BufReader, BufWriter, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use redis::{ConnectionLike, Parser, RedisResult, Value};

use crate::protocol::{self, HELLO};

/// A link to the judge, named by the judge.
pub struct Connection {
    reader: BufReader<UnixStream>,
    writer: BufWriter<UnixStream>,
    parser: Parser,
}

impl Connection {
    /// Connects to the judge's socket and says which link this is.
    pub(crate) fn open(socket: &std::path::Path, name: &str) -> io::Result<Connection> {
        let stream = UnixStream::connect(socket)?;
        let mut connection = Connection {
            reader: BufReader::new(stream.try_clone()?),
            writer: BufWriter::new(stream),
            parser: Parser::new(),
        };
        connection.send(&[HELLO.into(), name.into()])?;
        Ok(connection)
    }

    /// Reads one message the judge sent on its own (an order, on the control
    /// link): `None` when the judge closed the link.
    pub(crate) fn receive(&mut self) -> io::Result<Option<Vec<Vec<u8>>>> {
        protocol::read_message(&mut self.parser, &mut self.reader)
    }

    /// Sends one message.
    pub(crate) fn send(&mut self, parts: &[Vec<u8>]) -> io::Result<()> {
        protocol::write_message(&mut self.writer, parts)?;
        self.writer.flush()
    }

    /// Sends one message and reads the judge's reply to it.
    fn ask(&mut self, parts: &[Vec<u8>]) -> RedisResult<Value> {
        self.send(parts)?;
        protocol::read_reply(&mut self.parser, &mut self.reader)
    }

    /// `extend(key, token, ttl)`, as the judge runs it: the renewal a keeper
    /// is handed. The judge runs the `extend` its check chose, on this call's
    /// connection, and answers what it returned (or Redis's error).
    pub fn extend(
        &mut self,
        key: &str,
        token: &str,
        ttl: std::time::Duration,
    ) -> RedisResult<bool> {
        let parts = [
            b"EXTEND".to_vec(),
            key.as_bytes().to_vec(),
            token.as_bytes().to_vec(),
            ttl.as_millis().to_string().into_bytes(),
        ];
        match self.ask(&parts)? {
            Value::Int(renewed) => Ok(renewed == 1),
            other => {
                Err(io::Error::other(format!("the judge answered EXTEND with {other:?}")).into())
            }
        }
    }

    /// The judge's clock: the time since some fixed instant, on its virtual time.
    pub(crate) fn clock(&mut self) -> Duration {
        match self.ask(&[b"CLOCK".to_vec()]) {
            Ok(Value::Int(nanos)) => Duration::from_nanos(u64::try_from(nanos).unwrap_or(0)),
            // The judge is gone: the call is over whatever the clock says.
            _ => Duration::MAX,
        }
    }
}

impl ConnectionLike for Connection {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        self.ask(&[b"ONE".to_vec(), cmd.to_vec()])
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        let parts = [
            b"PIPE".to_vec(),
            cmd.to_vec(),
            offset.to_string().into_bytes(),
            count.to_string().into_bytes(),
        ];
        match self.ask(&parts)? {
            Value::Array(values) => Ok(values),
            other => Ok(vec![other]),
        }
    }

    fn get_db(&self) -> i64 {
        0
    }

    fn check_connection(&mut self) -> bool {
        true
    }

    fn is_open(&self) -> bool {
        true
    }
}

/// Redlock's clock, answered by the judge on the call's home link.
pub(crate) struct Clock<'a>(pub(crate) RefCell<&'a mut Connection>);

impl Clock<'_> {
    /// The time now, as the judge says.
    pub(crate) fn now(&self) -> Duration {
        self.0.borrow_mut().clock()
    }
}
