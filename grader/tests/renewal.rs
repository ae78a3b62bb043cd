//! The `extend` and `keeper` exercises against their catalogue: every wrong renewal is caught
//! by the explorer too, every correct variant passes, and a wrong renewal
//! fails no check of the keeper, which renews with the reference's. That every wrong
//! renewal and keeper fails its own check with its rule and a
//! snapshot-tested report is `tests/wrong.rs`'s test, over both catalogues.

use grader::checks::{self, CHECKS};
use grader::report::Verdict;
use lock_catalogue::renewal::{VARIANTS, WRONG};

#[test]
fn every_wrong_renewal_is_caught_by_the_explorer_too() {
    let explored = checks::named("extend::explored").expect("a check");
    for wrong in WRONG.iter().filter(|w| w.fails.starts_with("extend::")) {
        let verdict = explored
            .run(&wrong.lock)
            .unwrap_or_else(|e| panic!("{}: {e}", wrong.lock.name));
        assert!(
            matches!(verdict, Verdict::Fail(_)),
            "{:?} passed extend::explored",
            wrong.lock.name
        );
    }
}

/// The correct variants differ from the reference in `extend` or
/// `keep_alive` only, which no other exercise's check calls.
#[test]
fn every_correct_renewal_and_keeper_passes() {
    for lock in VARIANTS {
        for check in CHECKS
            .iter()
            .filter(|c| c.name.starts_with("extend::") || c.name.starts_with("keeper::"))
        {
            let verdict = check
                .run(lock)
                .unwrap_or_else(|e| panic!("{}: {e}", check.name));
            if let Verdict::Fail(report) = &verdict {
                panic!("the correct variant {:?} failed:\n{report}", lock.name);
            }
            assert_eq!(verdict, Verdict::Pass, "{:?} on {}", lock.name, check.name);
        }
    }
}

/// The book's scenario, as a check, fails the keeper the book shows failing.
#[test]
fn the_renewal_pause_check_fails_a_keeper_that_never_tells_the_job() {
    let never_tells = WRONG
        .iter()
        .find(|w| w.lock.name == "keeper that never tells the job")
        .expect("in the catalogue");
    let verdict = checks::named("keeper::renewal_pause")
        .expect("a check")
        .run(&never_tells.lock)
        .expect("runs");
    let Verdict::Fail(report) = verdict else {
        panic!("the keeper that never tells the job passed keeper::renewal_pause");
    };
    assert_eq!(
        report.property(),
        Some(grader::verdict::Property::KeeperStopsJob),
        "{report}"
    );
}

/// Each check grades one exercise: the keeper's checks hand the keeper the
/// reference's `extend`, so a wrong `extend` with a correct keeper fails
/// extend's checks (`tests/wrong.rs`) and none of the keeper's.
#[test]
fn a_wrong_extend_fails_no_keeper_check() {
    let wrong_extends: Vec<_> = WRONG
        .iter()
        .filter(|w| w.fails.starts_with("extend::"))
        .collect();
    assert!(wrong_extends.len() >= 5, "{}", wrong_extends.len());
    for wrong in wrong_extends {
        for check in CHECKS.iter().filter(|c| c.name.starts_with("keeper::")) {
            let verdict = check
                .run(&wrong.lock)
                .unwrap_or_else(|e| panic!("{}: {e}", check.name));
            if let Verdict::Fail(report) = &verdict {
                panic!("{:?} failed {}:\n{report}", wrong.lock.name, check.name);
            }
            assert_eq!(
                verdict,
                Verdict::Pass,
                "{:?} on {}",
                wrong.lock.name,
                check.name
            );
        }
    }
}
