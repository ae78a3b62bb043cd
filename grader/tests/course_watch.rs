//! `cargo course`, driven as a learner drives it: in a terminal.
//!
//! The watch loop runs in a tmux pane (a real pseudo-terminal, with raw
//! keys) on a scratch copy of this workspace. The test saves files the way an
//! editor does and reads the screen: a stub says "not started", a finished
//! exercise is announced with the next one and its chapter, a compile error
//! shows cargo's text and the loop goes on, a broken rule shows its report
//! with its first hint and `h` climbs its hints one at a time, `j` and `k`
//! scroll the list of checks on a short terminal, and the progress file remembers
//! all of it after `q`. It also measures the time from a save to the new
//! verdict on screen (the course's target: under 3 s once built).
//!
//! Needs tmux and a Redis the grader can find (see the README), and is run
//! on its own (`-- --ignored`): it builds a workspace of its own. The scratch
//! copy builds in a target directory of its own under `target/tmp`, kept
//! between runs: the first run builds the grader once (minutes), later ones
//! only the exercises.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The time a build from cold may take.
const COLD: Duration = Duration::from_secs(1800);
/// The time one grading may take once built.
const WARM: Duration = Duration::from_secs(120);

struct Pane {
    socket: String,
}

impl Pane {
    fn start(dir: &Path, command: &str) -> Pane {
        let pane = Pane {
            socket: format!("course-watch-test-{}", std::process::id()),
        };
        let status = Command::new("tmux")
            .args([
                "-L",
                &pane.socket,
                "new-session",
                "-d",
                "-x",
                "160",
                "-y",
                "70",
                "-c",
            ])
            .arg(dir)
            .arg(command)
            .status()
            .expect("tmux runs (the watch loop's tests need it: apt-get install tmux)");
        assert!(status.success(), "tmux could not start a session");
        pane
    }

    fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-t", "0"])
            .output()
            .expect("tmux capture-pane runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn keys(&self, keys: &str) {
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-t", "0", "-l", keys])
            .status()
            .expect("tmux send-keys runs");
        assert!(status.success());
    }

    /// Makes the terminal `rows` lines high; the loop redraws at that height.
    fn resize(&self, rows: u16) {
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "resize-window", "-t", "0", "-y"])
            .arg(rows.to_string())
            .status()
            .expect("tmux resize-window runs");
        assert!(status.success(), "tmux could not resize the window");
    }

    fn alive(&self) -> bool {
        Command::new("tmux")
            .args(["-L", &self.socket, "has-session"])
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// Waits until the screen satisfies `ready`, and returns it with the time it took.
    fn wait(
        &self,
        what: &str,
        limit: Duration,
        ready: impl Fn(&str) -> bool,
    ) -> (String, Duration) {
        let started = Instant::now();
        loop {
            let screen = self.screen();
            if ready(&screen) {
                return (screen, started.elapsed());
            }
            assert!(
                started.elapsed() < limit,
                "waited {limit:?} for {what}; the screen shows:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

/// A copy of the workspace's files (tracked, or new and not ignored).
fn scratch_copy(into: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let work = into.join("work");
    let _ = fs::remove_dir_all(&work);
    let listed = Command::new("git")
        .arg("-C")
        .arg(&root)
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .output()
        .expect("git lists the workspace's files");
    assert!(listed.status.success(), "git ls-files failed");
    for name in listed.stdout.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let name = String::from_utf8_lossy(name).into_owned();
        let from = root.join(&name);
        if !from.is_file() {
            continue;
        }
        let to = work.join(&name);
        fs::create_dir_all(to.parent().expect("a file has a folder")).expect("mkdir");
        fs::copy(&from, &to).expect("copy a workspace file");
        // The grader keeps its time, so that the kept build of it stays fresh;
        // the learner's files are new on every run, and always built anew.
        if !name.starts_with("exercises/src/") {
            let modified = fs::metadata(&from).and_then(|m| m.modified());
            let copy = fs::File::options().write(true).open(&to);
            if let (Ok(modified), Ok(copy)) = (modified, copy) {
                let _ = copy.set_modified(modified);
            }
        }
    }
    // `reset` takes stubs from git: the copy is a repository of its own.
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "course",
        ],
    ] {
        let ok = Command::new("git").arg("-C").arg(&work).args(args).status();
        assert!(
            ok.is_ok_and(|s| s.success()),
            "git {args:?} in the scratch copy"
        );
    }
    work
}

/// Writes `text` to `path` as an editor does: a new file renamed over the old.
fn save(path: &Path, text: &str) {
    let partial = path.with_extension("rs.swp");
    fs::write(&partial, text).expect("write");
    fs::rename(&partial, path).expect("rename");
}

/// The processes (pid and command) whose working folder is in `dir`: the
/// loop's cargo and test binaries run there.
fn running_in(dir: &Path) -> Vec<(u32, String)> {
    let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let cwd = fs::read_link(entry.path().join("cwd"));
        if cwd.is_ok_and(|cwd| cwd.starts_with(&dir)) {
            let command = fs::read_to_string(entry.path().join("cmdline"))
                .unwrap_or_default()
                .replace('\0', " ");
            found.push((pid, command));
        }
    }
    found
}

fn reference(work: &Path, exercise: &str) -> String {
    fs::read_to_string(work.join(format!("grader/src/reference/{exercise}.rs"))).expect("reference")
}

#[test]
#[ignore = "builds a scratch copy of the workspace (minutes when cold) and needs tmux: \
            cargo test -p grader --test course_watch -- --ignored"]
fn the_watch_loop_follows_the_learner() {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("course-watch");
    let work = scratch_copy(&base);
    let target = base.join("target");
    let built = Command::new(env!("CARGO"))
        // The profile the `cargo course` alias builds with (.cargo/config.toml), which the judge
        // shares: the grader is compiled once for both.
        .args([
            "build",
            "--quiet",
            "--profile",
            "judge",
            "-p",
            "course",
            "--bin",
            "course",
        ])
        .current_dir(&work)
        .env("CARGO_TARGET_DIR", &target)
        .status()
        .expect("cargo runs");
    assert!(built.success(), "the scratch copy's course command builds");
    let course = target.join("judge/course");
    let pane = Pane::start(
        &work,
        &format!("CARGO_TARGET_DIR={} {}", target.display(), course.display()),
    );
    let src = work.join("exercises/src");

    // On start: the first exercise, a stub.
    let (screen, cold) = pane.wait("the first verdict", COLD, |s| {
        s.contains("▶ token") && s.contains("not started") && s.contains("watching")
    });
    assert!(screen.contains("0/2"), "{screen}");
    assert!(
        screen.contains("h hint · n/p"),
        "the keys are shown:\n{screen}"
    );

    // A finished exercise is announced, with the next one and its chapter.
    let started = Instant::now();
    save(&src.join("token.rs"), &reference(&work, "token"));
    let (screen, _) = pane.wait("token to pass", WARM, |s| {
        s.contains("✓ token passes all 2 checks")
    });
    let to_verdict = started.elapsed();
    assert!(
        screen.contains("Next: acquire, in exercises/src/acquire.rs; read chapter 1,"),
        "{screen}"
    );
    assert!(screen.contains("▶ acquire"), "{screen}");

    // A compile error shows cargo's text; the loop goes on.
    save(&src.join("acquire.rs"), "pub fn acquire( {\n");
    let (screen, _) = pane.wait("the compile error", WARM, |s| {
        s.contains("Your code does not compile") && s.contains("error")
    });
    assert!(
        screen.contains("acquire.rs"),
        "cargo names the file:\n{screen}"
    );

    // A broken rule: its report, then its hints one at a time.
    let without_nx = reference(&work, "acquire").replace(".arg(\"NX\")", "");
    let started = Instant::now();
    save(&src.join("acquire.rs"), &without_nx);
    pane.wait("the broken rule", WARM, |s| s.contains("Broken rule:"));
    let to_report = started.elapsed();
    let (screen, _) = pane.wait("the scenarios after it", WARM, |s| {
        s.contains("Broken rule:") && s.contains("watching")
    });
    assert!(screen.contains("▶ acquire"), "{screen}");
    // The report holds the first hint; h climbs to the next, never back.
    assert!(screen.contains("Hint 1 of 3:"), "{screen}");
    assert!(!screen.contains("Hint 2 of 3:"), "{screen}");
    assert!(screen.contains("h shows hint 2 of 3"), "{screen}");
    pane.keys("h");
    let (screen, _) = pane.wait("the second hint", WARM, |s| {
        s.contains("Hint 2 of 3:") && !s.contains("Hint 3 of 3:")
    });
    assert!(screen.contains("Hint 1 of 3:"), "{screen}");
    pane.keys("h");
    pane.wait("the third hint", WARM, |s| {
        s.contains("Hint 2 of 3:") && s.contains("Hint 3 of 3:") && !s.contains("h shows hint")
    });

    // n, p and l move around without grading.
    pane.keys("n");
    pane.wait("the next exercise", WARM, |s| s.contains("▶ release"));
    pane.keys("p");
    pane.wait("back to acquire", WARM, |s| s.contains("▶ acquire"));
    pane.keys("l");
    // An exercise not started is one line in the list.
    pane.wait("the list", WARM, |s| {
        s.contains("Every check") && s.contains("storage: 8 checks, not started — fill in")
    });
    pane.keys("l");

    // On a short terminal the list is a screenful at a time: j and k scroll it.
    pane.resize(16);
    pane.keys("l");
    let (top, _) = pane.wait("the list's first screenful", WARM, |s| {
        s.contains("Every check") && s.contains("more lines: j scrolls down")
    });
    assert!(!top.contains("l goes back."), "{top}");
    pane.keys("jj");
    pane.wait("the list two lines down", WARM, |s| {
        s.contains("… 2 lines above: k scrolls up") && !s.contains("Every check")
    });
    pane.keys("k");
    pane.wait("the list one line back", WARM, |s| {
        s.contains("… 1 lines above: k scrolls up")
    });
    pane.keys(&"j".repeat(60));
    pane.wait("the list's end", WARM, |s| {
        s.contains("l goes back.") && !s.contains("more lines: j scrolls down")
    });
    // Back on the whole terminal, l returns to the exercise.
    pane.resize(70);
    pane.keys("l");
    pane.wait("acquire again", WARM, |s| s.contains("▶ acquire"));

    // q quits in the middle of a grading, stops it, and leaves the progress behind.
    save(&src.join("release.rs"), &reference(&work, "release"));
    pane.wait("a grading under way", WARM, |s| {
        s.contains("grading…") || s.contains("building your code…")
    });
    pane.keys("q");
    let started = Instant::now();
    while pane.alive() && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut left = running_in(&work);
    while !left.is_empty() && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
        left = running_in(&work);
    }
    assert!(
        left.is_empty(),
        "quitting left the grading running: {left:?}"
    );
    let progress = fs::read_to_string(work.join(".course-progress")).expect("progress was kept");
    assert!(progress.contains("done = token\n"), "{progress}");
    assert!(progress.contains("exercise = acquire\n"), "{progress}");
    assert!(
        progress
            .contains("hints for acquire must never take a lock that another client holds = 3\n")
            || progress.contains(
                "hints for when several clients race for a free lock, exactly one wins = 3\n"
            ),
        "the third hint of the rule, by its words:\n{progress}"
    );

    eprintln!(
        "cargo course: first verdict {:.1} s (build included); save → verdict {:.2} s (token \
         passes), {:.2} s (acquire breaks a rule, after a compile error)",
        cold.as_secs_f64(),
        to_verdict.as_secs_f64(),
        to_report.as_secs_f64()
    );
}
