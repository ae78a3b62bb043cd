//! `cargo course doctor`: what grading and the book need, what is here, and
//! what to install for each missing piece.
//!
//! It asks the same questions as the grader's own choice of Redis
//! ([`grader::server`]), in the same order, without starting anything: is
//! `GRADER_REDIS` forcing a source, is `REDIS_URL` set (and does that server
//! answer, with Redis 7 or newer), does a Docker engine answer and does it
//! hold the image, is there a `redis-server` and of which version. Then it
//! names the source a run would use, and why. The book's tools are looked up
//! where `book/serve` installs them, at the versions it pins. Nothing here
//! needs a network beyond a `REDIS_URL` that names another machine. The
//! command exits non-zero when no source of Redis would work, since grading
//! cannot run then; a missing book tool is only reported.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use super::grade::course_root;
use grader::server::{self, DEFAULT_IMAGE};

/// One thing looked at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// What was looked at, e.g. `redis-server`.
    pub piece: &'static str,
    /// Whether it is there and usable.
    pub ok: bool,
    /// What was found.
    pub detail: String,
    /// What to do when it is missing or unusable.
    pub remedy: Option<String>,
}

/// What the doctor found.
#[derive(Clone, Debug)]
pub struct Diagnosis {
    /// The Redis sources, in the grader's order.
    pub redis: Vec<Finding>,
    /// The source a run would use and why, or why none would work.
    pub choice: Result<String, String>,
    /// The book's tools.
    pub book: Vec<Finding>,
}

impl Diagnosis {
    /// Whether `cargo test -p exercises` could find a Redis.
    pub fn can_grade(&self) -> bool {
        self.choice.is_ok()
    }
}

/// Looks at everything, from this process's environment.
pub fn diagnose() -> Diagnosis {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let forced = env("GRADER_REDIS").unwrap_or_default();

    let url = match env("REDIS_URL") {
        None => Finding {
            piece: "REDIS_URL",
            ok: false,
            detail: "not set".to_string(),
            remedy: Some(
                "set REDIS_URL=redis://HOST:PORT to grade against a server of your own".into(),
            ),
        },
        Some(url) => match server::at_url(&url) {
            Ok(found) => Finding {
                piece: "REDIS_URL",
                ok: true,
                detail: found.to_string(),
                remedy: None,
            },
            Err(e) => Finding {
                piece: "REDIS_URL",
                ok: false,
                detail: format!("set, but unusable: {e}"),
                remedy: Some("fix REDIS_URL, or unset it to let the grader start Redis".into()),
            },
        },
    };

    let image = env("REDIS_IMAGE").unwrap_or_else(|| DEFAULT_IMAGE.to_string());
    let docker = match server::docker_available() {
        Err(e) => Finding {
            piece: "Docker",
            ok: false,
            detail: format!("no engine answers ({e})"),
            remedy: Some(
                "install and start Docker (docs.docker.com/engine/install), or use redis-server"
                    .into(),
            ),
        },
        Ok(()) => match server::image_present(&image) {
            Ok(true) => Finding {
                piece: "Docker",
                ok: true,
                detail: format!("the engine answers and holds the image {image}"),
                remedy: None,
            },
            Ok(false) => Finding {
                piece: "Docker",
                ok: false,
                detail: format!("the engine answers, but the image {image} is not here"),
                remedy: Some(format!(
                    "`docker pull {image}` where a registry is reachable, or \
                     `.ci/build-redis-image` and REDIS_IMAGE=redis-course:local"
                )),
            },
            Err(e) => Finding {
                piece: "Docker",
                ok: false,
                detail: format!("the engine answers, but not about the image {image}: {e}"),
                remedy: Some("check the engine with `docker image ls`".into()),
            },
        },
    };

    let process = match server::local_redis_server() {
        Err(e) => Finding {
            piece: "redis-server",
            ok: false,
            detail: e.to_string(),
            remedy: Some(
                "`apt-get install redis-server` (Debian, Ubuntu), `brew install redis` (macOS), \
                 or REDIS_SERVER=/path/to/redis-server"
                    .into(),
            ),
        },
        Ok(path) => match server::redis_server_version(&path) {
            Some(v) if server::version_supported(&v) => Finding {
                piece: "redis-server",
                ok: true,
                detail: format!("{}, version {v}", path.display()),
                remedy: None,
            },
            found => Finding {
                piece: "redis-server",
                ok: false,
                detail: format!(
                    "{}, version {}: the grader needs 7.0 or newer",
                    path.display(),
                    found.as_deref().unwrap_or("unknown")
                ),
                remedy: Some("install Redis 7 or newer, or point REDIS_SERVER at one".into()),
            },
        },
    };

    let choice = choose(&forced, &url, &docker, &process);
    Diagnosis {
        redis: vec![url, docker, process],
        choice,
        book: book_tools(),
    }
}

/// The source the grader would pick, as `server::shared` picks it.
fn choose(
    forced: &str,
    url: &Finding,
    docker: &Finding,
    process: &Finding,
) -> Result<String, String> {
    let why_not = |f: &Finding| format!("{}: {}", f.piece, f.detail);
    match forced.trim() {
        "url" if url.ok => Ok(format!(
            "REDIS_URL, because GRADER_REDIS=url ({})",
            url.detail
        )),
        "url" => Err(format!("GRADER_REDIS=url, but {}", why_not(url))),
        "container" if docker.ok => Ok("a container, because GRADER_REDIS=container".to_string()),
        "container" => Err(format!("GRADER_REDIS=container, but {}", why_not(docker))),
        "process" if process.ok => Ok(format!(
            "redis-server ({}), because GRADER_REDIS=process",
            process.detail
        )),
        "process" => Err(format!("GRADER_REDIS=process, but {}", why_not(process))),
        "" | "auto" => {
            if url.detail != "not set" {
                // A server the user named is never replaced by another.
                return if url.ok {
                    Ok(format!("REDIS_URL ({}), because it is set", url.detail))
                } else {
                    Err(format!("REDIS_URL is set but unusable: {}", url.detail))
                };
            }
            if docker.ok {
                Ok(format!(
                    "a container ({}), because REDIS_URL is not set and Docker answers",
                    docker.detail
                ))
            } else if process.ok {
                Ok(format!(
                    "redis-server ({}), because REDIS_URL is not set and Docker is not usable",
                    process.detail
                ))
            } else {
                Err("none of REDIS_URL, Docker and redis-server is usable".to_string())
            }
        }
        other => Err(format!(
            "GRADER_REDIS={other:?} is none of url, container, process: fix or unset it"
        )),
    }
}

/// The book's tools, at the versions `book/serve` pins.
fn book_tools() -> Vec<Finding> {
    let serve = std::fs::read_to_string(course_root().join("book/serve")).unwrap_or_default();
    let pinned = |var: &str| {
        serve
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{var}=")))
            .map(|v| v.trim().to_string())
    };
    [
        ("mdbook", pinned("MDBOOK_VERSION")),
        ("mdbook-quiz", pinned("MDBOOK_QUIZ_VERSION")),
    ]
    .into_iter()
    .map(|(tool, wanted)| {
        let wanted = wanted.unwrap_or_else(|| "?".to_string());
        let remedy = Some(format!(
            "`book/serve install` (or `cargo install --locked {tool} --version {wanted}`)"
        ));
        match tool_version(tool) {
            Some((path, v)) if v == wanted => Finding {
                piece: tool,
                ok: true,
                detail: format!("{v} ({})", path.display()),
                remedy: None,
            },
            Some((path, v)) => Finding {
                piece: tool,
                ok: false,
                detail: format!("{v} ({}), but the book pins {wanted}", path.display()),
                remedy,
            },
            None => Finding {
                piece: tool,
                ok: false,
                detail: "not installed".to_string(),
                remedy,
            },
        }
    })
    .collect()
}

/// Where `tool` is (cargo's bin folder first, as `book/serve` looks) and the
/// version it reports.
fn tool_version(tool: &str) -> Option<(PathBuf, String)> {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")));
    let mut candidates: Vec<PathBuf> = cargo_home
        .map(|h| h.join("bin").join(tool))
        .into_iter()
        .collect();
    let path = std::env::var_os("PATH").unwrap_or_default();
    candidates.extend(std::env::split_paths(&path).map(|dir| dir.join(tool)));
    candidates
        .into_iter()
        .filter(|c| c.is_file())
        .find_map(|c| {
            let output = Command::new(&c).arg("--version").output().ok()?;
            let text = String::from_utf8_lossy(&output.stdout);
            let version = text
                .split_whitespace()
                .last()?
                .trim_start_matches('v')
                .to_string();
            Some((c, version))
        })
}

/// The report, as printed.
pub fn render(diagnosis: &Diagnosis) -> String {
    let mut out = String::new();
    let section = |out: &mut String, title: &str, findings: &[Finding]| {
        out.push_str(title);
        out.push('\n');
        for f in findings {
            let mark = if f.ok { "ok " } else { "-- " };
            out.push_str(&format!("  {mark}{:<13} {}\n", f.piece, f.detail));
            if let Some(remedy) = &f.remedy {
                out.push_str(&format!("  {:<16} to use it: {remedy}\n", ""));
            }
        }
    };
    section(
        &mut out,
        "Redis (the grader takes the first that works, in this order)",
        &diagnosis.redis,
    );
    match &diagnosis.choice {
        Ok(why) => out.push_str(&format!("  => grading uses {why}\n")),
        Err(why) => out.push_str(&format!(
            "  => grading cannot run: {why}.\n     Install one of the pieces above (redis-server \
             is the quickest), then run `cargo course doctor` again.\n"
        )),
    }
    out.push('\n');
    section(&mut out, "The book (book/serve)", &diagnosis.book);
    out
}

/// `cargo course doctor`: prints the report; fails when grading cannot run.
pub fn command() -> ExitCode {
    let diagnosis = diagnose();
    print!("{}", render(&diagnosis));
    if diagnosis.can_grade() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
