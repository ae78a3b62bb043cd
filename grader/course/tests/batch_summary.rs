//! `summary.html` of `cargo course batch`, from a class made by hand: what an
//! instructor looks for first comes first, a check not started is not a
//! failure, a student who submitted nothing is apart from one who struggles,
//! and the results go beside the submissions, not among them. The layout
//! test (ignored: it needs Chromium; `.ci/run` runs it) measures the page at
//! 1280 and 390 px: nothing may be wider than the screen.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use course::batch::standing::{self, Standing};
use course::batch::summary::{self, DEFAULT_BOOK};
use course::batch::{Graded, results_folder};
use course::results::{CheckResult, Results};
use grader::checks::CHECKS;
use grader::harness::Outcome;
use grader::report::Report;
use grader::verdict::{Property, Violation};

fn stub() -> Outcome {
    Outcome::NotStarted {
        message: "not started: `new_token` in exercises/src/token.rs still says todo!(…)".into(),
    }
}

fn broke(check: &str, rule: Property) -> Outcome {
    let violation = Violation::anytime(rule, "it broke");
    Outcome::Failed {
        report: Report::broken(check, "your lock", violation, vec![]).to_string(),
    }
}

/// A student whose every check comes to what `outcome` says of it.
fn student(name: &str, outcome: impl Fn(&str) -> Outcome) -> Graded {
    let checks = CHECKS
        .iter()
        .map(|c| CheckResult {
            name: c.name.to_string(),
            outcome: outcome(c.name),
            printed: String::new(),
            duration_ms: 40,
        })
        .collect();
    Graded {
        student: name.to_string(),
        changed: Vec::new(),
        results: Ok(Results::Graded { checks }),
        took: Duration::from_secs(30),
    }
}

/// Five students: two at work who break the release rule (one the TTL rule
/// too), one who passes everything, one who submitted the stubs (and a harness
/// of their own), one whose code does not compile, and one the grader could
/// not grade.
fn class() -> Vec<Graded> {
    let halfway = |name: &str| {
        student(name, |check| match check {
            c if c.starts_with("token::") => Outcome::Passed,
            "release::slow_job" => broke(check, Property::ReleaseSparesOthers),
            "acquire::sets_the_ttl_in_milliseconds" if name == "ada" => {
                broke(check, Property::LockHasTtl)
            }
            c if c.starts_with("acquire::") => Outcome::Passed,
            _ => stub(),
        })
    };
    let mut stubs = student("bo", |_| stub());
    stubs.changed = vec!["exercises/tests/grade.rs".into()];
    vec![
        halfway("ada"),
        stubs,
        Graded {
            results: Ok(Results::CompileError {
                output: "error[E0425]".into(),
                not_run: CHECKS.iter().map(|c| c.name.to_string()).collect(),
            }),
            ..student("cy", |_| stub())
        },
        Graded {
            results: Err("the submission has no exercises/src folder".into()),
            ..student("di", |_| stub())
        },
        halfway("eve"),
        student("fay", |_| Outcome::Passed),
    ]
}

/// The text from `from` to the next heading.
fn section<'a>(html: &'a str, from: &str) -> &'a str {
    let start = html
        .find(from)
        .unwrap_or_else(|| panic!("no {from:?} in:\n{html}"));
    let rest = &html[start..];
    let end = rest[from.len()..]
        .find("<h2>")
        .map_or(rest.len(), |e| e + from.len());
    &rest[..end]
}

#[test]
fn the_summary_leads_with_the_rules_and_keeps_not_started_apart() {
    let class = class();
    let standings: Vec<Standing> = class.iter().map(standing::standing).collect();
    assert_eq!(
        standings,
        [
            Standing::Working,
            Standing::NothingSubmitted,
            Standing::DidNotCompile,
            Standing::NotGraded,
            Standing::Working,
            Standing::Working
        ]
    );
    let html = summary::html(&class, &[], DEFAULT_BOOK);

    // The rules first, the most broken first, each with its chapter's link.
    let rules = html.find("The rules the class breaks most").expect("rules");
    let students = html.find("Students at work").expect("students");
    assert!(rules < students, "{html}");
    let rules = section(&html, "The rules the class breaks most");
    let release = rules
        .find(&lock_timeline::html::escape(
            Property::ReleaseSparesOthers.rule(),
        ))
        .expect("release");
    let ttl = rules
        .find(&lock_timeline::html::escape(Property::LockHasTtl.rule()))
        .expect("ttl");
    assert!(release < ttl, "two students before one:\n{rules}");
    assert!(
        rules.contains("<a href=\"http://localhost:3000/releasing.html\">chapter 2</a>"),
        "{rules}"
    );
    assert!(rules.contains("<td class=\"who\">ada, eve</td>"), "{rules}");

    // The working students only, a column per exercise; not started is not failed.
    let table = section(&html, "Students at work");
    for name in ["ada", "eve", "fay"] {
        assert!(table.contains(&format!(">{name}</td>")), "{name}:\n{table}");
    }
    for name in ["bo", "cy", "di"] {
        assert!(
            !table.contains(&format!(">{name}</td>")),
            "{name}:\n{table}"
        );
    }
    let exercises = grader::exercise::EXERCISES.len() + 1;
    assert_eq!(
        table.matches("<td class=\"x ").count(),
        3 * exercises,
        "a cell per exercise and student:\n{table}"
    );
    assert!(
        table.contains("<li class=\"pass\">✓ unique</li>"),
        "{table}"
    );
    assert!(
        table.contains("<li class=\"fail\">✗ slow_job</li>"),
        "{table}"
    );
    assert!(
        table.contains("<li class=\"todo\">○ explored</li>"),
        "{table}"
    );
    assert!(
        table.contains(
            "<td class=\"x todo\" data-label=\"fencing\"><details><summary>not started</summary>"
        ),
        "{table}"
    );

    // The student who submitted nothing, apart, with the file they changed.
    let nothing = section(&html, "Submitted nothing yet");
    assert!(
        nothing.contains(
            "bo <span class=\"flag\">(changed, ignored: exercises/tests/grade.rs)</span>"
        ),
        "{nothing}"
    );
    let not_graded = section(&html, "Not graded");
    assert!(
        not_graded.contains("cy") && not_graded.contains("did not compile"),
        "{not_graded}"
    );
    assert!(
        not_graded.contains("no exercises/src folder"),
        "{not_graded}"
    );

    // Checks by failures among those at work; the stubs of one who submitted nothing are not failures.
    let checks = section(&html, "Checks failed, by how many students at work");
    assert!(
        checks.contains(
            "release::slow_job<br><small>exercises/src/release.rs</small></td>\
             <td class=\"n\" data-label=\"failed\">2</td>\
             <td class=\"n\" data-label=\"not started\">0</td>"
        ),
        "{checks}"
    );
    assert!(!checks.contains("fencing::"), "only stubs there:\n{checks}");
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("batch-summary-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

#[test]
fn the_results_go_beside_the_submissions_or_where_asked_never_inside() {
    let root = scratch("folder");
    let submissions = root.join("class");
    fs::create_dir_all(&submissions).expect("folder");
    assert_eq!(
        results_folder(&submissions, None).expect("a default"),
        root.join("class-results")
    );
    assert_eq!(
        results_folder(&submissions.join("."), None).expect("a default"),
        root.join("class-results"),
        "class/. is class"
    );
    assert_eq!(
        results_folder(&submissions, Some(&root.join("marks"))).expect("as asked"),
        root.join("marks")
    );
    for inside in [submissions.clone(), submissions.join("out")] {
        let refused = results_folder(&submissions, Some(&inside))
            .expect_err("inside the submissions")
            .to_string();
        assert!(
            refused.contains("inside the submissions folder") && refused.contains("outside it"),
            "{refused}"
        );
    }
    let _ = fs::remove_dir_all(&root);
}

/// A class of `n`: the hand-made five, then students at every stage, with
/// long names.
fn big_class(n: usize) -> Vec<Graded> {
    let mut class = class();
    for i in class.len()..n {
        let name = format!("student-with-a-rather-long-folder-name-{i:03}");
        let reached = i % CHECKS.len();
        class.push(student(&name, |check| {
            let at = CHECKS.iter().position(|c| c.name == check).unwrap_or(0);
            match at.cmp(&reached) {
                std::cmp::Ordering::Less => Outcome::Passed,
                std::cmp::Ordering::Equal => broke(check, Property::ALL[i % Property::ALL.len()]),
                std::cmp::Ordering::Greater => stub(),
            }
        }));
    }
    class
}

/// A page that shows `summary` in frames 1280 and 390 px wide and writes
/// what it measures into itself: for each width, whether the page is wider
/// than its frame with every `<details>` closed and with every one open, and
/// the first elements that stick out.
const MEASURE: &str = r#"<!DOCTYPE html><html><body>
<iframe id="w1280" src="summary.html" style="width:1280px;height:800px;border:0"></iframe>
<iframe id="w390" src="summary.html" style="width:390px;height:800px;border:0"></iframe>
<script>
window.addEventListener('load', () => {
  const lines = [];
  for (const id of ['w1280', 'w390']) {
    const frame = document.getElementById(id);
    const doc = frame.contentDocument, win = frame.contentWindow;
    for (const open of [false, true]) {
      doc.querySelectorAll('details').forEach(d => { d.open = open; });
      const page = doc.documentElement;
      const out = [...doc.body.querySelectorAll('*')]
        .filter(e => e.getBoundingClientRect().right > page.clientWidth + 1)
        .slice(0, 3)
        .map(e => e.tagName + '.' + e.className);
      lines.push(`${id} open=${open} inner=${win.innerWidth} scroll=${page.scrollWidth} client=${page.clientWidth} out=${out.join(',')}`);
    }
  }
  const pre = document.createElement('pre');
  pre.id = 'measured';
  pre.textContent = lines.join('\n');
  document.body.appendChild(pre);
});
</script></body></html>
"#;

/// What Chromium measured of the page in `dir`.
fn measured(dir: &Path) -> String {
    let page = dir.join("measure.html");
    fs::write(&page, MEASURE).expect("writes the measuring page");
    let out = Command::new("chromium")
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--allow-file-access-from-files",
            "--window-size=1700,1000",
            "--virtual-time-budget=20000",
            "--dump-dom",
        ])
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs (apt-get install chromium)");
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom.find("<pre id=\"measured\">").unwrap_or_else(|| {
        panic!(
            "the page measured nothing:\n{dom}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let rest = &dom[start + "<pre id=\"measured\">".len()..];
    rest[..rest.find("</pre>").unwrap_or(rest.len())].to_string()
}

#[test]
#[ignore = "needs Chromium (apt-get install chromium); .ci/run runs it: \
            cargo test -p course --test batch_summary -- --ignored"]
fn a_class_of_200_fits_1280_px_and_a_phone_with_every_cell_open() {
    let dir = scratch("layout");
    let html = summary::html(&big_class(200), &[], DEFAULT_BOOK);
    fs::write(dir.join("summary.html"), &html).expect("writes the summary");
    let measured = measured(&dir);
    let lines: Vec<&str> = measured.lines().collect();
    assert_eq!(lines.len(), 4, "{measured}");
    for line in lines {
        let field = |name: &str| {
            line.split_whitespace()
                .find_map(|f| f.strip_prefix(&format!("{name}=")))
                .unwrap_or_else(|| panic!("no {name} in {line}"))
        };
        let width = if line.starts_with("w1280") {
            "1280"
        } else {
            "390"
        };
        assert_eq!(
            field("inner"),
            width,
            "the frame is as wide as meant: {line}"
        );
        assert_eq!(
            field("scroll"),
            field("client"),
            "the page is wider than {width} px: {line}"
        );
        assert_eq!(field("out"), "", "these stick out at {width} px: {line}");
    }
    eprintln!(
        "summary.html of 200 students, {} KiB:\n{measured}",
        html.len() / 1024
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn the_line_per_student_says_who_submitted_nothing() {
    let class = class();
    let lines: Vec<String> = class.iter().map(course::batch::report::line).collect();
    assert!(
        lines[1].starts_with("bo: 0/") && lines[1].contains("[submitted nothing"),
        "{lines:?}"
    );
    assert!(lines[2].ends_with("[did not compile]"), "{lines:?}");
    assert!(!lines[0].contains('['), "{lines:?}");
}
