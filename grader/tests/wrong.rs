//! Every wrong lock in the catalogue fails the check it is meant to fail,
//! naming the rule it breaks, with a report a learner can act on.

use grader::catalogue::wrong::ALL;
use grader::checks;
use grader::report::Verdict;

/// Replaces what differs from run to run (a random sample token, an
/// estimate from it) so that the report's snapshot is stable.
fn stable(report: &str) -> String {
    let mut out = String::new();
    for line in report.lines() {
        let line = match (line.find("such as \""), line.find("\") vary")) {
            (Some(a), Some(b)) if a < b => {
                format!("{}such as <sample>{}", &line[..a], &line[b + 1..])
            }
            _ => line.to_string(),
        };
        let line = match (line.find("only about "), line.find(" bits")) {
            (Some(a), Some(b)) if a < b => format!("{}only about <n>{}", &line[..a], &line[b..]),
            _ => line,
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[test]
fn every_wrong_lock_fails_its_check_with_its_rule() {
    for wrong in ALL {
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
