//! The password of a server the grader starts, and keeping it out of what people read.
//!
//! Every Redis server the grader starts itself (the shared one, Redlock's nodes, the failover
//! pair) requires a password of its own, drawn fresh for each server: otherwise any process on
//! the machine that finds the port (a classmate's lock under test in a class batch, say) could
//! send it `FLUSHALL` or `CONFIG SET`. A `REDIS_URL` the user gives is used as given, with
//! whatever password it carries.
//!
//! A password goes from here to two places only: the server's configuration (`requirepass`,
//! which in Redis 7 is the password of the `default` user, the one the grader's own connections
//! sign in as) and the URLs the grader connects with, `redis://:PASSWORD@HOST:PORT`, which
//! redis-rs turns into an `AUTH` on every connection it opens. Wherever a URL is shown, it goes
//! through [`redacted`] first, and a [`Password`] shows as `***` when debug-printed; it has no
//! `Display` at all.

use std::fmt;

use super::ServerError;

/// How many random bytes a password holds: 128 bits.
const PASSWORD_BYTES: usize = 16;

/// A server's password: [`PASSWORD_BYTES`] from the operating system's random source, in
/// lowercase hex, so that it needs no quoting on a command line, in a configuration line or in
/// a URL.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl Password {
    /// A fresh password, or why the random source could not give one.
    pub(crate) fn fresh() -> Result<Password, ServerError> {
        crate::random::hex::<PASSWORD_BYTES>()
            .map(Password)
            .map_err(|e| ServerError::NoRandomness {
                cause: e.to_string(),
            })
    }

    /// A password read back from where the grader put it (a container's command line, for the
    /// sweep of another run); `None` unless it has the shape of one of the grader's.
    pub(crate) fn parse(text: &str) -> Option<Password> {
        let shaped = text.len() == 2 * PASSWORD_BYTES
            && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        shaped.then(|| Password(text.to_owned()))
    }

    /// The password itself, for a server's configuration or an `AUTH`: never for a message.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// The URL that signs in to the server at `host`:`port` as its `default` user.
    pub(crate) fn url(&self, host: &str, port: u16) -> String {
        format!("redis://:{}@{host}:{port}", self.0)
    }

    /// The URL that signs in to the server listening on the Unix socket `socket` as its `default`
    /// user: redis-rs reads the password from the query (`redis+unix:///PATH?pass=PASSWORD`).
    pub(crate) fn unix_url(&self, socket: &std::path::Path) -> String {
        format!("redis+unix://{}?pass={}", socket.display(), self.0)
    }

    /// `text` with every occurrence of the password masked, for a server's log lines that a
    /// message quotes.
    pub(crate) fn hide_in(&self, text: &str) -> String {
        text.replace(&self.0, "***")
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(***)")
    }
}

/// `url` with its user and password masked (`redis://***@HOST:PORT`, and in a Unix socket's
/// URL `redis+unix:///PATH?pass=***`), for every message, report and log line that shows a URL.
/// A URL without them is returned as it is.
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    if let Some((path, query)) = rest.split_once('?') {
        let masked: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name @ ("pass" | "user"), _)) => format!("{name}=***"),
                _ => pair.to_owned(),
            })
            .collect();
        return redacted(&format!("{scheme}://{path}")) + "?" + &masked.join("&");
    }
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://***@{}", &rest[at + 1..]),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_fresh_long_and_hex() {
        let (a, b) = (
            Password::fresh().unwrap_or_else(|e| panic!("{e}")),
            Password::fresh().unwrap_or_else(|e| panic!("{e}")),
        );
        assert_ne!(a, b, "each server gets a password of its own");
        assert_eq!(a.expose().len(), 32, "128 bits in hex");
        assert_eq!(Password::parse(a.expose()), Some(a.clone()));
        assert_eq!(Password::parse("not-a-password"), None);
        assert_eq!(Password::parse(&a.expose().to_uppercase()), None);
    }

    #[test]
    fn a_password_never_prints() {
        let password = Password::fresh().unwrap_or_else(|e| panic!("{e}"));
        let url = password.url("127.0.0.1", 6379);
        assert_eq!(
            url,
            format!("redis://:{}@127.0.0.1:6379", password.expose())
        );
        for shown in [format!("{password:?}"), redacted(&url)] {
            assert!(!shown.contains(password.expose()), "{shown}");
        }
        assert_eq!(redacted(&url), "redis://***@127.0.0.1:6379");
        let log = format!(">>> 'requirepass {}'", password.expose());
        assert_eq!(password.hide_in(&log), ">>> 'requirepass ***'");
    }

    #[test]
    fn a_unix_sockets_url_hides_its_password_in_the_query() {
        let password = Password::fresh().unwrap_or_else(|e| panic!("{e}"));
        let url = password.unix_url(std::path::Path::new("/tmp/f/redis.sock"));
        assert_eq!(
            url,
            format!("redis+unix:///tmp/f/redis.sock?pass={}", password.expose())
        );
        assert_eq!(redacted(&url), "redis+unix:///tmp/f/redis.sock?pass=***");
        assert_eq!(
            redacted("redis+unix:///s?db=1&user=u&pass=p"),
            "redis+unix:///s?db=1&user=***&pass=***"
        );
    }

    #[test]
    fn urls_are_redacted_up_to_their_host() {
        assert_eq!(
            redacted("redis://:s3cret@host:6379/0"),
            "redis://***@host:6379/0"
        );
        assert_eq!(
            redacted("redis://user:s3cret@host:6379"),
            "redis://***@host:6379"
        );
        assert_eq!(redacted("redis://host:6379"), "redis://host:6379");
        assert_eq!(redacted("not a url"), "not a url");
    }
}
