//! Every wrong lock in the catalogue fails the check it is meant to fail,
//! naming the rule it breaks, with a report a learner can act on.

use grader::checks;
use grader::report::Verdict;
use lock_catalogue::every_wrong;
use lock_catalogue::wrong::ALL;

/// Replaces what differs from run to run in a count of random bits (a
/// sample token, the bits a clock or a counter moves) so that the report's
/// snapshot is stable.
fn stable(report: &str) -> String {
    let mut out = String::new();
    for line in report.lines() {
        let line = if line.contains(" random bits, read as ") {
            let line = mask(line, "(e.g. \"", "\")", "<sample>");
            mask(&line, "carry ", " random bits", "<n>")
        } else {
            line.to_string()
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// `line` with what lies between `before` and the last `after` replaced by
/// `with`.
fn mask(line: &str, before: &str, after: &str, with: &str) -> String {
    match (line.find(before), line.rfind(after)) {
        (Some(a), Some(b)) if a + before.len() <= b => {
            format!("{}{with}{}", &line[..a + before.len()], &line[b..])
        }
        _ => line.to_string(),
    }
}

#[test]
fn every_wrong_lock_fails_its_check_with_its_rule() {
    // The renewal catalogue (the `extend` and `keeper` exercises) and the locks that swallow
    // errors are held to the same rule.
    for wrong in every_wrong() {
        let check =
            checks::named(wrong.fails).unwrap_or_else(|| panic!("no check {}", wrong.fails));
        let verdict = check
            .run(&wrong.lock)
            .unwrap_or_else(|e| panic!("{}: {e}", wrong.lock.name));
        let Verdict::Fail(report) = verdict else {
            panic!(
                "{:?} should fail {}, but got {verdict:?}",
                wrong.lock.name, wrong.fails
            );
        };
        assert_eq!(
            report.property(),
            Some(wrong.breaks),
            "{:?} on {}:\n{report}",
            wrong.lock.name,
            wrong.fails
        );
        let name = wrong.lock.name.replace(' ', "-");
        insta::with_settings!({ snapshot_suffix => name, prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!("report", stable(&report.to_string()));
        });
    }
}

#[test]
fn the_timestamp_token_is_also_caught_as_guessable_not_only_repeated() {
    let timestamp = ALL
        .iter()
        .find(|w| w.lock.name == "timestamp token")
        .expect("in the catalogue");
    let verdict = checks::named("token::unique")
        .expect("a check")
        .run(&timestamp.lock)
        .expect("runs");
    // Unique it is: the counter sees to that. Guessable it stays.
    assert_eq!(verdict, Verdict::Pass);
}
