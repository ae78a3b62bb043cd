//! The whole book builds with the pinned mdBook, and what it builds holds
//! together: every internal link and anchor resolves, no directive is left
//! unexpanded, and the build leaves the work tree as it found it.
//!
//! This runs the real `mdbook` 0.5.4 and `mdbook-quiz` 0.5.0 binaries (as a
//! reader's `book/serve` would), so a missing timeline, a malformed quiz or a
//! broken link fails here. The timeline preprocessor is the binary cargo
//! built for this test, handed to mdBook through its environment override,
//! rather than a nested `cargo run` that would wait on this very build.
//! Without the pinned tools the test fails and says how to install them: it
//! never passes by skipping.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const MDBOOK_VERSION: &str = "0.5.4";
const MDBOOK_QUIZ_VERSION: &str = "0.5.0";
const INSTALL_HINT: &str = "run `book/serve install` (it runs `cargo install mdbook --locked --version 0.5.4` and `cargo install mdbook-quiz --locked --version 0.5.0`)";

/// Builds the book and checks the output. One test, because the checks
/// share one build, which takes a few seconds.
#[test]
fn the_book_builds_and_its_links_resolve() {
    let book = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("book/preprocessor has a parent")
        .to_path_buf();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("book-html");
    let _ = fs::remove_dir_all(&out);

    let quizzes_before = snapshot_dir(&book.join("quizzes"));
    let git_before = git_status(&book);

    let elapsed = build(&book, &out);
    eprintln!("book built in {:.1} s", elapsed.as_secs_f64());

    let mut failures = Vec::new();
    check_unchanged_quizzes(
        &quizzes_before,
        &snapshot_dir(&book.join("quizzes")),
        &mut failures,
    );
    if let (Some(before), Some(after)) = (git_before, git_status(&book)) {
        let new: Vec<_> = after.difference(&before).collect();
        if !new.is_empty() {
            failures.push(format!(
                "the build changed the work tree (git status, book/): {new:?}; build output belongs in ignored folders"
            ));
        }
    }
    let pages = html_pages(&out);
    assert!(
        !pages.is_empty(),
        "mdbook wrote no HTML pages into {}",
        out.display()
    );
    check_links(&out, &pages, &mut failures);
    check_directives_expanded(&out, &pages, &mut failures);
    check_player_data(&out, &pages, &mut failures);

    assert!(
        failures.is_empty(),
        "the built book (in {}) has {} problem(s):\n- {}",
        out.display(),
        failures.len(),
        failures.join("\n- ")
    );
}

/// Runs the pinned `mdbook build` into `out`, failing with mdBook's output
/// (which names the broken chapter, timeline or quiz) if it fails.
fn build(book: &Path, out: &Path) -> std::time::Duration {
    let mdbook = pinned_tool("mdbook", MDBOOK_VERSION);
    let quiz = pinned_tool("mdbook-quiz", MDBOOK_QUIZ_VERSION);
    // mdBook finds `mdbook-quiz` on PATH; put the pinned one first.
    let quiz_dir = quiz
        .parent()
        .expect("a binary lives in a folder")
        .to_path_buf();
    let path = std::env::join_paths(std::iter::once(quiz_dir).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH entries contain no separator");
    // Single quotes keep a path with spaces in one piece when mdBook splits
    // the command into words.
    let preprocessor = format!("'{}'", env!("CARGO_BIN_EXE_mdbook-timeline"));

    let started = Instant::now();
    let output = Command::new(&mdbook)
        .arg("build")
        .arg(book)
        .arg("--dest-dir")
        .arg(out)
        .env("PATH", path)
        .env("MDBOOK_PREPROCESSOR__TIMELINE__COMMAND", preprocessor)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}; {INSTALL_HINT}", mdbook.display()));
    let elapsed = started.elapsed();
    assert!(
        output.status.success(),
        "`mdbook build` failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    // mdBook reports some problems (unbalanced HTML in a chapter, a
    // preprocessor's warning) only as warnings, but they mean a broken page.
    let log = String::from_utf8_lossy(&output.stderr);
    let warnings: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("WARN") || l.contains("ERROR"))
        .collect();
    assert!(
        warnings.is_empty(),
        "`mdbook build` warned:\n{}",
        warnings.join("\n")
    );
    elapsed
}

/// Finds `name` where `cargo install` puts it (then on PATH) and checks that
/// it is the pinned version.
fn pinned_tool(name: &str, version: &str) -> PathBuf {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let install_root = std::env::var_os("CARGO_INSTALL_ROOT").map(PathBuf::from);
    let path = std::env::var_os("PATH").unwrap_or_default();
    let candidates = install_root
        .into_iter()
        .chain(cargo_home)
        .map(|root| root.join("bin"))
        .chain(std::env::split_paths(&path))
        .map(|dir| dir.join(name));
    let mut seen = Vec::new();
    for candidate in candidates {
        let Ok(output) = Command::new(&candidate).arg("--version").output() else {
            continue;
        };
        let text = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        let found = text
            .rsplit(' ')
            .next()
            .unwrap_or("")
            .trim_start_matches('v');
        if found == version {
            return candidate;
        }
        seen.push(format!("{} is {text:?}", candidate.display()));
    }
    panic!(
        "{name} {version} is not installed (found: {}); {INSTALL_HINT}",
        if seen.is_empty() {
            "none".to_owned()
        } else {
            seen.join(", ")
        }
    );
}

/// The contents of every file in `dir`, to notice a build that rewrites
/// them (mdbook-quiz adds an `id` to each question that lacks one).
fn snapshot_dir(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let Ok(entries) = fs::read_dir(dir) else {
        return BTreeMap::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter_map(|p| fs::read(&p).ok().map(|bytes| (p, bytes)))
        .collect()
}

fn check_unchanged_quizzes(
    before: &BTreeMap<PathBuf, Vec<u8>>,
    after: &BTreeMap<PathBuf, Vec<u8>>,
    failures: &mut Vec<String>,
) {
    for (path, bytes) in after {
        if before.get(path) != Some(bytes) {
            failures.push(format!(
                "mdbook-quiz wrote question ids into {}: commit that change (it happens once per new question)",
                path.display()
            ));
        }
    }
}

/// `git status --porcelain` of the book folder, or `None` outside a git
/// work tree (an unpacked source archive, say).
fn git_status(book: &Path) -> Option<BTreeSet<String>> {
    let output = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=all", "--", "."])
        .current_dir(book)
        .output()
        .ok()?;
    output.status.success().then(|| {
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(str::to_owned)
            .collect()
    })
}

/// Every `.html` file under `out`, relative to it.
fn html_pages(out: &Path) -> Vec<PathBuf> {
    fn walk(root: &Path, dir: &Path, pages: &mut Vec<PathBuf>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                walk(root, &path, pages);
            } else if path.extension().is_some_and(|e| e == "html")
                && let Ok(rel) = path.strip_prefix(root)
            {
                pages.push(rel.to_path_buf());
            }
        }
    }
    let mut pages = Vec::new();
    walk(out, out, &mut pages);
    pages.sort();
    pages
}

fn read(out: &Path, page: &Path) -> String {
    fs::read_to_string(out.join(page))
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", page.display()))
}

/// The values of `attr="..."` in `html`. mdBook writes every attribute
/// double-quoted, so a scan is enough.
fn attr_values<'a>(html: &'a str, attr: &str) -> Vec<&'a str> {
    let needle = format!(" {attr}=\"");
    let mut values = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find(&needle) {
        rest = &rest[i + needle.len()..];
        if let Some(end) = rest.find('"') {
            values.push(&rest[..end]);
            rest = &rest[end..];
        }
    }
    values
}

/// Every relative `href` and `src` must name a file of the output, and
/// every `#fragment` an `id` in that file.
fn check_links(out: &Path, pages: &[PathBuf], failures: &mut Vec<String>) {
    let mut ids: HashMap<PathBuf, BTreeSet<String>> = HashMap::new();
    for page in pages {
        // 404.html resolves its links against `<base href="/">`, the site's
        // root, not its own folder; its links are the sidebar's, checked on
        // every other page.
        if page == Path::new("404.html") {
            continue;
        }
        let html = read(out, page);
        for link in attr_values(&html, "href")
            .into_iter()
            .chain(attr_values(&html, "src"))
        {
            let link = link.replace("&amp;", "&");
            if is_external(&link) {
                continue;
            }
            let (path_part, fragment) = match link.split_once('#') {
                Some((p, f)) => (p, Some(f)),
                None => (link.as_str(), None),
            };
            let path_part = path_part.split('?').next().unwrap_or("");
            let target = if path_part.is_empty() {
                page.clone()
            } else {
                match resolve(page, &percent_decode(path_part)) {
                    Some(t) => t,
                    None => {
                        failures.push(format!("{}: link {link:?} leaves the book", page.display()));
                        continue;
                    }
                }
            };
            let target = if out.join(&target).is_dir() {
                target.join("index.html")
            } else {
                target
            };
            if !out.join(&target).is_file() {
                failures.push(format!(
                    "{}: link {link:?}: no such file {}",
                    page.display(),
                    target.display()
                ));
                continue;
            }
            let Some(fragment) = fragment.filter(|f| !f.is_empty()) else {
                continue;
            };
            if target.extension().is_none_or(|e| e != "html") {
                continue;
            }
            let target_ids = ids.entry(target.clone()).or_insert_with(|| {
                let html = read(out, &target);
                attr_values(&html, "id")
                    .into_iter()
                    .chain(attr_values(&html, "name"))
                    .map(str::to_owned)
                    .collect()
            });
            if !target_ids.contains(&percent_decode(fragment)) {
                failures.push(format!(
                    "{}: link {link:?}: {} has no id {fragment:?}",
                    page.display(),
                    target.display()
                ));
            }
        }
    }
}

fn is_external(link: &str) -> bool {
    link.starts_with("//")
        || link.split_once(':').is_some_and(|(scheme, _)| {
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        })
}

/// `page`'s folder joined with `link`, normalized; `None` if it climbs out
/// of the output folder.
fn resolve(page: &Path, link: &str) -> Option<PathBuf> {
    let mut parts: Vec<String> = page
        .parent()
        .map(|p| {
            p.components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    for component in Path::new(link).components() {
        match component {
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => parts.clear(),
        }
    }
    Some(parts.iter().collect())
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A `{{#timeline}}`, `{{#player}}` or `{{#quiz}}` left in a page outside
/// code means its preprocessor did not run.
fn check_directives_expanded(out: &Path, pages: &[PathBuf], failures: &mut Vec<String>) {
    for page in pages {
        let prose = strip_elements(&read(out, page), &["code", "pre", "script"]);
        for keyword in ["{{#timeline", "{{#player", "{{#quiz"] {
            if prose.contains(keyword) {
                failures.push(format!(
                    "{}: `{keyword} ...}}}}` was not expanded",
                    page.display()
                ));
            }
        }
    }
}

/// `html` without the contents of the named elements.
fn strip_elements(html: &str, names: &[&str]) -> String {
    let mut text = html.to_owned();
    for name in names {
        let (open, close) = (format!("<{name}"), format!("</{name}>"));
        let mut kept = String::with_capacity(text.len());
        let mut rest = text.as_str();
        while let Some(start) = rest.find(&open) {
            kept.push_str(&rest[..start]);
            match rest[start..].find(&close) {
                Some(end) => rest = &rest[start + end + close.len()..],
                None => {
                    rest = "";
                }
            }
        }
        kept.push_str(rest);
        text = kept;
    }
    text
}

/// Every page with a player carries the timelines' data exactly once (the
/// print page, which joins all chapters, may carry it once per chapter).
fn check_player_data(out: &Path, pages: &[PathBuf], failures: &mut Vec<String>) {
    for page in pages {
        if page == Path::new("print.html") {
            continue;
        }
        let html = read(out, page);
        let players = html.matches("data-timeline-player=").count();
        let data = html.matches("data-timelines=").count();
        if players > 0 && data != 1 {
            failures.push(format!(
                "{}: {players} player(s) but {data} embedded timeline data block(s), expected 1",
                page.display()
            ));
        }
    }
}
