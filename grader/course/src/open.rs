//! `cargo course open [CHECK]`: step through your own failed run in the
//! book's player.
//!
//! A scenario check that fails keeps its run as a timeline file
//! ([`grader::recording`]). This command puts that run, beside a correct
//! lock's run of the same story (the book's own `book/timelines/NAME.json`),
//! on one page with the book's player (`book/theme/timeline-*.js` and its
//! CSS), writes the page to `target/course/player.html`, and serves it on
//! localhost until Ctrl-C. The page holds everything it needs, so it also
//! opens straight from the file. Only the checks that play a whole story
//! have a run: the others call one function and their report already shows
//! every command it sent.

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use grader::checks::CHECKS;
use grader::recording;
use grader::timeline::Timeline;
use grader::timeline::html::{escape, json_for_script};

use super::error::CourseError;

/// The port tried first; a free one is taken when it is in use.
pub const PORT: u16 = 3001;

/// The player's files in the book, in the order the page loads them.
const THEME: [&str; 3] = [
    "timeline-common.js",
    "timeline-messages.js",
    "timeline-player.js",
];

/// Where the kept runs of the course at `root` are: `course/runs` in its
/// target directory.
pub fn runs_dir(root: &Path) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let target = if target.is_relative() {
        root.join(target)
    } else {
        target
    };
    target.join(recording::RUNS_SUBDIR)
}

/// Opens the kept run of `check` (or of the first check that has one) in
/// the course at `root`; serves it unless `serve` is false.
pub fn run(root: &Path, check: Option<&str>, serve: bool) -> Result<ExitCode, CourseError> {
    let runs = runs_dir(root);
    let (check, path) = find(&runs, check)?;
    let mine = read_timeline(&path)?;
    let reference = read_timeline(
        &root
            .join("book/timelines")
            .join(format!("{}.json", mine.name)),
    )
    .ok();
    let html = page(root, &check, mine, reference)?;
    let out = runs.parent().unwrap_or(&runs).join("player.html");
    fs::write(&out, &html).map_err(|source| CourseError::File {
        what: "could not write the player's page to",
        path: out.clone(),
        source,
    })?;
    println!("Your run of {check} is in the player: {}", out.display());
    if serve {
        serve_page(&html)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The kept run of `check`, or of the first check in the course's order
/// that has one.
fn find(runs: &Path, check: Option<&str>) -> Result<(String, PathBuf), CourseError> {
    let kept: Vec<(String, PathBuf)> = CHECKS
        .iter()
        .map(|c| (c.name.to_string(), recording::file(runs, c.name)))
        .filter(|(_, path)| path.is_file())
        .collect();
    let found = match check {
        Some(wanted) => kept
            .iter()
            .find(|(name, _)| name == wanted || name.ends_with(&format!("::{wanted}"))),
        None => kept.first(),
    };
    found.cloned().ok_or_else(|| {
        let have = if kept.is_empty() {
            "No failed run is kept right now.".to_string()
        } else {
            let names: Vec<&str> = kept.iter().map(|(n, _)| n.as_str()).collect();
            format!("Kept runs: {}.", names.join(", "))
        };
        CourseError::Usage(format!(
            "{have} A run is kept when a check that plays one of the book's stories fails (every \
             scenarios:: check, and some of each exercise's); the other checks' reports already \
             show every command your code sent. Grade with `cargo course` or `cargo test -p \
             exercises`, then open again."
        ))
    })
}

fn read_timeline(path: &Path) -> Result<Timeline, CourseError> {
    let text = fs::read_to_string(path).map_err(|source| CourseError::File {
        what: "could not read the run",
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| {
        CourseError::Usage(format!(
            "the run in {} is not a timeline ({e}): grade again to write it anew",
            path.display()
        ))
    })
}

/// The page: the player, starting on `mine`, with `reference` beside it.
pub fn page(
    root: &Path,
    check: &str,
    mut mine: Timeline,
    reference: Option<Timeline>,
) -> Result<String, CourseError> {
    let theme = root.join("book/theme");
    let read = |name: &str| {
        let path = theme.join(name);
        fs::read_to_string(&path).map_err(|source| CourseError::File {
            what: "could not read the book's player from",
            path,
            source,
        })
    };
    let css = read("timeline-player.css")?;
    let mut scripts = String::new();
    for name in THEME {
        scripts.push_str(&format!("<script>\n{}\n</script>\n", read(name)?));
    }
    let story = mine.name.clone();
    mine.name = format!("your-{story}");
    let mut labels = BTreeMap::new();
    labels.insert(mine.name.clone(), format!("Your run of {check}"));
    let mut timelines = vec![mine.clone()];
    if let Some(reference) = reference {
        labels.insert(reference.name.clone(), "A correct lock's run".to_string());
        timelines.push(reference);
    }
    let data = serde_json::json!({ "timelines": timelines, "labels": labels });
    let data = json_for_script(&data.to_string());
    Ok(format!(
        r#"<!DOCTYPE html>
<html lang="en" class="light">
<head>
<meta charset="utf-8">
<title>Your run of {check}</title>
<style>
:root {{ --bg: #ffffff; --fg: #333333; --links: #20609f; --quote-border: #d0d0d0; --searchbar-border-color: #aaaaaa; }}
body {{ background: var(--bg); color: var(--fg); font-family: sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }}
</style>
<style>
{css}
</style>
</head>
<body>
<h1>Your run of <code>{check}</code></h1>
<p>{story_text}</p>
<p>Step through it second by second; the menu also holds a correct lock's run of the same story, to compare.</p>
<div class="tl-player" id="player-yours" data-timeline-player="{name}"></div>
<script type="application/json" data-timelines="">{data}</script>
{scripts}</body>
</html>
"#,
        check = escape(check),
        story_text = escape(&mine.story),
        name = escape(&mine.name),
    ))
}

/// Serves `html` at every path of a local port until the process is stopped.
fn serve_page(html: &str) -> Result<(), CourseError> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, PORT))
        .or_else(|_| TcpListener::bind((Ipv4Addr::LOCALHOST, 0)))
        .map_err(|source| CourseError::System {
            what: "could not open a local port for the player",
            source,
        })?;
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(PORT);
    println!("Serving it on http://localhost:{port}/ (Ctrl-C stops).");
    serve_on(&listener, html, None);
    Ok(())
}

/// Answers requests on `listener` with `html` (at most `requests`, if given).
fn serve_on(listener: &TcpListener, html: &str, requests: Option<usize>) {
    for stream in listener
        .incoming()
        .flatten()
        .take(requests.unwrap_or(usize::MAX))
    {
        // One request at a time: a client that sends nothing must not hold the others up.
        let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(5)));
        let mut reader = BufReader::new(&stream);
        let mut request = String::new();
        // The request line; the headers are read and ignored.
        if reader.read_line(&mut request).is_err() {
            continue;
        }
        let mut header = String::new();
        while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
            header.clear();
        }
        let (status, body) = if request.starts_with("GET ") {
            ("200 OK", html)
        } else {
            ("405 Method Not Allowed", "only GET\n")
        };
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = (&stream).write_all(response.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::net::TcpStream;

    use super::*;

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    fn book_timeline(name: &str) -> Timeline {
        let path = root().join(format!("book/timelines/{name}.json"));
        read_timeline(&path).expect("the book's timeline reads")
    }

    #[test]
    fn the_page_starts_the_player_on_your_run_beside_a_correct_one() {
        let mut mine = book_timeline("slow-job-plain-del");
        mine.name = "slow-job".into();
        mine.story = "A <b>slow</b> job".into();
        let html = page(
            &root(),
            "release::slow_job",
            mine,
            Some(book_timeline("slow-job")),
        )
        .expect("the page is made");
        assert!(
            html.contains(r#"data-timeline-player="your-slow-job""#),
            "starts on your run"
        );
        assert!(html.contains(r#""name":"your-slow-job""#));
        assert!(
            html.contains(r#""name":"slow-job""#),
            "the correct run is in the menu"
        );
        assert!(html.contains(r#""your-slow-job":"Your run of release::slow_job""#));
        assert!(
            html.contains("A &lt;b&gt;slow&lt;/b&gt; job"),
            "text is escaped"
        );
        for script in THEME {
            let source = fs::read_to_string(root().join("book/theme").join(script)).unwrap();
            assert!(html.contains(&source), "{script} is on the page");
        }
        let data = html
            .split(r#"<script type="application/json" data-timelines="">"#)
            .nth(1)
            .and_then(|rest| rest.split("</script>").next())
            .expect("the data is on the page");
        let parsed: serde_json::Value = serde_json::from_str(data).expect("the data is JSON");
        assert_eq!(parsed["timelines"].as_array().map(Vec::len), Some(2));
    }

    #[test]
    fn no_kept_run_says_which_checks_keep_one() {
        let empty = std::env::temp_dir().join(format!("no-runs-{}", std::process::id()));
        let err = find(&empty, None).expect_err("nothing to open").to_string();
        assert!(err.contains("No failed run is kept"), "{err}");
        assert!(err.contains("scenarios::"), "{err}");
    }

    #[test]
    fn the_server_answers_with_the_page() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("a free port");
        let port = listener.local_addr().expect("its address").port();
        let server = std::thread::spawn(move || serve_on(&listener, "<p>the page</p>", Some(1)));
        let mut stream = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).expect("connects");
        stream
            .write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .expect("sends");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).expect("reads");
        server.join().expect("the server ends after one request");
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
        assert!(answer.ends_with("<p>the page</p>"), "{answer}");
    }
}
