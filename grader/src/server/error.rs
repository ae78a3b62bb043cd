//! Why the grader has no Redis server, said so that the person reading it knows what to do.
//!
//! Every variant of [`ServerError`] ends with a remedy: the variable to set, the command to run,
//! the line of configuration to change. The causes it carries come from the other modules of
//! [`server`](super), which word them the same way (see [`explain`](super::probe::explain)).

use std::path::PathBuf;

use super::DEFAULT_IMAGE;
use super::password::redacted;
use super::probe::MIN_VERSION;

/// What a person can do when no source works, for [`ServerError::NothingAvailable`].
fn remedies() -> String {
    format!(
        "To give the grader a Redis 7+ server, do one of:\n  \
         - set REDIS_URL=redis://HOST:PORT to a server you run;\n  \
         - install Docker and run `docker pull {DEFAULT_IMAGE}` (or build the local image with \
         `.ci/build-redis-image` and set REDIS_IMAGE=redis-course:local);\n  \
         - install redis-server (Debian/Ubuntu: `apt-get install redis-server`, macOS: \
         `brew install redis`), or set REDIS_SERVER=/path/to/redis-server."
    )
}

/// Why no Redis server is available to the grader. Every message says what to do about it.
///
/// The error is `Clone` because [`shared`](super::shared) hands the same failure to every caller
/// in the process.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// `GRADER_REDIS` holds a value other than `url`, `container` or `process`.
    #[error(
        "GRADER_REDIS={value:?} is not a known source: use url, container or process, \
         or unset it to let the grader choose"
    )]
    BadChoice {
        /// The value found.
        value: String,
    },

    /// `GRADER_NODES` holds a value other than `container` or `process`.
    #[error(
        "GRADER_NODES={value:?} is not a source for Redlock's nodes: use container or process, \
         or unset it to let the nodes follow GRADER_REDIS"
    )]
    BadNodesChoice {
        /// The value found.
        value: String,
    },

    /// `GRADER_REDIS=url` without a `REDIS_URL`.
    #[error("GRADER_REDIS=url, but REDIS_URL is not set: set REDIS_URL=redis://HOST:PORT")]
    UrlMissing,

    /// The server named by `REDIS_URL` cannot be used.
    #[error(
        "the Redis server at REDIS_URL ({url}) cannot be used: {cause}. Check that it runs and \
         that the URL is right, or unset REDIS_URL to let the grader start its own server"
    )]
    UrlUnusable {
        /// The URL, password hidden.
        url: String,
        /// What went wrong, with its own remedy when there is one.
        cause: String,
    },

    /// The server answers but is older than the grader needs.
    #[error(
        "{server} runs Redis {version}, but the grader needs Redis {}.{} or newer \
         (the scenarios use PEXPIRETIME). {remedy}",
        MIN_VERSION.0, MIN_VERSION.1
    )]
    TooOld {
        /// Which server.
        server: String,
        /// The version it reports.
        version: String,
        /// What to do, for this source.
        remedy: String,
    },

    /// The server answers, but refuses a command every check needs.
    #[error(
        "{server} refuses {command}, which the grader needs ({why}); it answered: {reply}. {remedy}"
    )]
    CommandRefused {
        /// Which server.
        server: String,
        /// The command, e.g. `PEXPIRETIME`.
        command: String,
        /// What the grader uses it for.
        why: String,
        /// The server's reply.
        reply: String,
        /// What to change: the configuration or the ACL user.
        remedy: String,
    },

    /// No Docker engine answers, or it answers in a way the client cannot use.
    #[error(
        "no usable Docker engine: {cause}. Start Docker (or set DOCKER_HOST), \
         or set GRADER_REDIS=process to use a local redis-server"
    )]
    DockerUnavailable {
        /// The engine's or the client's answer.
        cause: String,
    },

    /// The grader's Docker helper (`course-docker`), which makes its Docker calls, cannot be
    /// built or started.
    #[error("the grader's Docker helper is not available: {cause}. {remedy}")]
    DockerHelper {
        /// Why not.
        cause: String,
        /// What to do.
        remedy: String,
    },

    /// Docker answers, but the image is not on this machine and could not be pulled.
    #[error(
        "the Redis image {image} is not on this machine and could not be pulled: {cause}. {remedy}"
    )]
    ImageUnavailable {
        /// The image, as `REDIS_IMAGE` or [`DEFAULT_IMAGE`] names it.
        image: String,
        /// Why the pull failed.
        cause: String,
        /// Where to get the image, or which other source to use.
        remedy: String,
    },

    /// Docker answers, but the Redis container did not start.
    #[error("the Redis container from image {image} did not start: {cause}. {remedy}")]
    ContainerFailed {
        /// The image.
        image: String,
        /// What went wrong.
        cause: String,
        /// What to check.
        remedy: String,
    },

    /// No `redis-server` executable was found.
    #[error(
        "no redis-server found: {detail}. Install it (Debian/Ubuntu: `apt-get install \
         redis-server`, macOS: `brew install redis`) or set REDIS_SERVER=/path/to/redis-server"
    )]
    ProcessNotFound {
        /// Where the grader looked.
        detail: String,
    },

    /// A `redis-server` was found but did not start or did not answer.
    #[error("{path} did not start: {cause}{log}")]
    ProcessFailed {
        /// The executable.
        path: PathBuf,
        /// What went wrong.
        cause: String,
        /// The server's last lines of output, if any.
        log: String,
    },

    /// No source worked while choosing automatically; `tried` says what happened to each.
    #[error(
        "no Redis server for the grader. Tried:\n{}\n{}",
        bullet_list(tried),
        remedies()
    )]
    NothingAvailable {
        /// One line per source.
        tried: Vec<String>,
    },

    /// The server was available but a new connection to it failed. Made by
    /// [`ServerError::connect`], which hides the URL's password.
    #[error("could not connect to the grader's Redis at {url}: {cause}")]
    Connect {
        /// The URL, password hidden.
        url: String,
        /// What went wrong, with its remedy.
        cause: String,
    },

    /// The operating system's random source gave no password for a server the grader starts.
    #[error(
        "the operating system's random source failed ({cause}): the grader gives every Redis \
         server it starts a password of its own, drawn from it, and starts none without one. \
         Check that /dev/urandom (or getrandom(2)) works here, or set REDIS_URL to a server \
         you run"
    )]
    NoRandomness {
        /// The random source's error.
        cause: String,
    },
}

impl ServerError {
    /// The error in a few words, for a note beside the source chosen instead:
    /// `the image redis:7.4 is not here and could not be pulled`.
    pub fn in_brief(&self) -> String {
        match self {
            ServerError::ImageUnavailable { image, .. } => {
                format!("the image {image} is not here and could not be pulled")
            }
            ServerError::ContainerFailed { image, .. } => {
                format!("a container from {image} did not start")
            }
            other => {
                let text = other.to_string();
                let first = text.lines().next().unwrap_or_default();
                // The sentence that says what happened, without the remedy after it.
                let what = first.split(". ").next().unwrap_or(first);
                match what.char_indices().nth(120) {
                    Some((cut, _)) => format!("{}…", &what[..cut]),
                    None => what.to_string(),
                }
            }
        }
    }

    /// A [`ServerError::Connect`] to `url`, shown with its password masked ([`redacted`]).
    pub fn connect(url: &str, cause: impl Into<String>) -> ServerError {
        ServerError::Connect {
            url: redacted(url),
            cause: cause.into(),
        }
    }
}

fn bullet_list(items: &[String]) -> String {
    items
        .iter()
        .map(|item| format!("  - {item}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_in_brief_is_one_short_line() {
        let errors = [
            ServerError::ImageUnavailable {
                image: "redis:7.4".into(),
                cause: "pull access denied\nrepository does not exist".into(),
                remedy: "Run `docker pull redis:7.4`.".into(),
            },
            ServerError::NothingAvailable {
                tried: vec!["REDIS_URL: not set".into(), "Docker: no".into()],
            },
            ServerError::DockerUnavailable {
                cause: "x".repeat(400),
            },
        ];
        assert_eq!(
            errors[0].in_brief(),
            "the image redis:7.4 is not here and could not be pulled"
        );
        for error in errors {
            let brief = error.in_brief();
            assert!(!brief.contains('\n'), "{brief}");
            assert!(brief.chars().count() <= 121, "{brief}");
        }
    }
}
