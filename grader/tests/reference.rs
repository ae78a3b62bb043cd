//! The reference lock passes every check, and every timeline of the book,
//! played with the lock it names, matches its snapshot.

use grader::Verdict;
use grader::checks::CHECKS;
use grader::reference::LOCK as REFERENCE;
use lock_catalogue::demos;

#[test]
fn the_reference_lock_passes_every_check() {
    for check in CHECKS {
        let verdict = check
            .run(&REFERENCE)
            .unwrap_or_else(|e| panic!("{}: {e}", check.name));
        assert_eq!(
            verdict,
            Verdict::Pass,
            "{} failed on the reference lock",
            check.name
        );
    }
}

#[test]
fn every_timeline_matches_its_snapshot() {
    for demo in demos::all() {
        let timeline = demo
            .timeline()
            .unwrap_or_else(|e| panic!("{}: {e}", demo.name));
        insta::with_settings!({ snapshot_suffix => demo.name, prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!("timeline", timeline.render(None));
        });
    }
}
