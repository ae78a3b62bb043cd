//! `cargo course open [CHECK]`: step through your own failed run in the
//! book's player.
//!
//! A scenario check that fails keeps its run as a timeline file
//! ([`grader::recording`]). This command puts that run, beside a correct
//! lock's run of the same story (the book's own `book/timelines/NAME.json`),
//! on one page with the book's player (the same `book/theme/timeline-*`
//! scripts and styles the book loads), writes the page to
//! `target/course/player.html`, and prints its `file://` address. Only the
//! checks that play a whole story have a run: the others call one function
//! and their report already shows every command it sent.
//!
//! The page is opened as a file, as `cargo doc` opens its pages, not served:
//! its scripts, styles and data are inline and it fetches nothing (the book's
//! what-if grids, the only part of the player that fetches, are not on it),
//! so a browser shows it from the disk exactly as it would from a server. A
//! server would add a port, a process that blocks until Ctrl-C and an HTTP
//! stack to keep, for a page that changes only when the learner grades again
//! and opens again. Where the browser runs on another machine (over ssh), the
//! one file is all there is to copy.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use grader::checks::CHECKS;
use grader::recording;
use grader::timeline::Timeline;
use grader::timeline::html::{escape, json_for_script};

use super::error::CourseError;

/// The player's scripts in `book/theme`, in the order the book loads them
/// (`additional-js` in `book/book.toml`; a test holds the two together).
const SCRIPTS: [&str; 6] = [
    "timeline-common.js",
    "timeline-calls.js",
    "timeline-messages.js",
    "timeline-what-if.js",
    "timeline-predict.js",
    "timeline-player.js",
];

/// The player's styles in `book/theme` (`additional-css` in `book/book.toml`).
const STYLES: [&str; 2] = ["timeline-player.css", "timeline-what-if.css"];

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

/// Writes the player's page for the kept run of `check` (or of the first
/// check that has one) in the course at `root`, and says where it is.
pub fn run(root: &Path, check: Option<&str>) -> Result<ExitCode, CourseError> {
    let (check, out) = write_page(root, &runs_dir(root), check)?;
    // An address the terminal can follow; the path itself if it cannot be one.
    let address = fs::canonicalize(&out)
        .ok()
        .and_then(|path| url::Url::from_file_path(path).ok())
        .map_or_else(|| out.display().to_string(), String::from);
    println!(
        "Your run of {check} is in the book's player: open {address} in your browser. The page \
         holds everything it needs: it opens from the file, also copied elsewhere."
    );
    Ok(ExitCode::SUCCESS)
}

/// Writes the page for the kept run of `check` in `runs` beside that folder,
/// as `player.html`; returns the check's full name and the page's path.
fn write_page(
    root: &Path,
    runs: &Path,
    check: Option<&str>,
) -> Result<(String, PathBuf), CourseError> {
    let (check, path) = find(runs, check)?;
    let mine = read_timeline(&path)?;
    let reference = read_timeline(
        &root
            .join("book/timelines")
            .join(format!("{}.json", mine.name)),
    )
    .ok();
    let html = page(root, &check, mine, reference)?;
    let out = runs.parent().unwrap_or(runs).join("player.html");
    fs::write(&out, &html).map_err(|source| CourseError::File {
        what: "could not write the player's page to",
        path: out.clone(),
        source,
    })?;
    Ok((check, out))
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
    let mut css = String::new();
    for name in STYLES {
        css.push_str(&read(name)?);
        css.push('\n');
    }
    let mut scripts = String::new();
    for name in SCRIPTS {
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

#[cfg(test)]
mod tests {
    use std::process::Command;

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
        for file in SCRIPTS.iter().chain(&STYLES) {
            let source = fs::read_to_string(root().join("book/theme").join(file)).unwrap();
            assert!(html.contains(&source), "{file} is on the page");
        }
        let data = data_of(&html);
        assert_eq!(data["timelines"].as_array().map(Vec::len), Some(2));
    }

    /// The timelines the page embeds for the player.
    fn data_of(html: &str) -> serde_json::Value {
        let data = html
            .split(r#"<script type="application/json" data-timelines="">"#)
            .nth(1)
            .and_then(|rest| rest.split("</script>").next())
            .expect("the data is on the page");
        serde_json::from_str(data).expect("the data is JSON")
    }

    #[test]
    fn no_kept_run_says_which_checks_keep_one() {
        let empty = std::env::temp_dir().join(format!("no-runs-{}", std::process::id()));
        let err = find(&empty, None).expect_err("nothing to open").to_string();
        assert!(err.contains("No failed run is kept"), "{err}");
        assert!(err.contains("scenarios::"), "{err}");
    }

    /// A fresh folder of kept runs holding the book's gc-pause run as the
    /// kept run of `scenarios::gc_pause`.
    fn kept_gc_pause(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let runs = dir.join("course/runs");
        fs::create_dir_all(&runs).expect("mkdir");
        fs::copy(
            root().join("book/timelines/gc-pause.json"),
            recording::file(&runs, "scenarios::gc_pause"),
        )
        .expect("copies a run");
        runs
    }

    #[test]
    fn the_page_is_written_beside_the_runs_and_loads_nothing_from_elsewhere() {
        let runs = kept_gc_pause("player-page");
        let (check, out) = write_page(&root(), &runs, Some("gc_pause")).expect("the page");
        assert_eq!(check, "scenarios::gc_pause");
        assert_eq!(out, runs.parent().expect("a parent").join("player.html"));
        let html = fs::read_to_string(&out).expect("the page was written");
        assert!(html.contains(r#"data-timeline-player="your-gc-pause""#));
        // Opened from the file, the page has no server to ask for anything.
        for outside in ["<script src", "<link", "@import"] {
            assert!(!html.contains(outside), "the page asks for more: {outside}");
        }
        // The what-if grids are what the player would fetch.
        assert_eq!(data_of(&html).get("what_if"), None);
        let _ = fs::remove_dir_all(runs.parent().and_then(Path::parent).expect("the folder"));
    }

    /// The quoted `theme/timeline-*` names of `key`'s line in `book/book.toml`.
    fn book_loads(key: &str) -> Vec<String> {
        let book = fs::read_to_string(root().join("book/book.toml")).expect("book.toml");
        let line = book
            .lines()
            .find(|l| l.starts_with(&format!("{key} =")))
            .unwrap_or_else(|| panic!("book.toml has no {key}"));
        line.split('"')
            .filter_map(|item| item.strip_prefix("theme/"))
            .filter(|name| name.starts_with("timeline-"))
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn the_page_loads_the_players_files_the_book_loads_in_its_order() {
        assert_eq!(book_loads("additional-js"), SCRIPTS);
        assert_eq!(book_loads("additional-css"), STYLES);
    }

    #[test]
    #[ignore = "needs Chromium (apt-get install chromium): \
                cargo test -p course --lib open -- --ignored"]
    fn the_player_builds_when_a_browser_opens_the_file() {
        let runs = kept_gc_pause("player-browser");
        let (_, out) = write_page(&root(), &runs, None).expect("the page");
        let browser = Command::new("chromium")
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--virtual-time-budget=5000",
                "--dump-dom",
            ])
            .arg(
                url::Url::from_file_path(&out)
                    .expect("an absolute path")
                    .as_str(),
            )
            .output()
            .expect("chromium runs (apt-get install chromium)");
        let dom = String::from_utf8_lossy(&browser.stdout);
        // The player fills its container with controls; a script that fails leaves it empty.
        for built in [
            r#"data-role="status""#,
            r#"data-role="strip""#,
            "Your run of scenarios::gc_pause",
        ] {
            assert!(
                dom.contains(built),
                "no {built} in the page as Chromium built it:\n{dom}\n{}",
                String::from_utf8_lossy(&browser.stderr)
            );
        }
        let _ = fs::remove_dir_all(runs.parent().and_then(Path::parent).expect("the folder"));
    }
}
