//! A failed scenario check keeps its run for the book's player, and a pass
//! forgets it (`grader::recording`, read by `cargo course open`).

use std::path::Path;

use grader::checks;
use grader::recording::{self, RUNS_DIR_VAR};
use grader::reference::LOCK as REFERENCE;
use grader::report::Verdict;
use grader::timeline::Timeline;
use lock_catalogue::wrong::ALL;

#[test]
fn a_failed_scenario_keeps_its_run_until_it_passes() {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("kept-runs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // SAFETY: this test binary has this one test, so no other thread reads the environment yet.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var(RUNS_DIR_VAR, &dir)
    };
    let check = checks::named("release::slow_job").expect("the slow-job check");
    let kept = recording::file(&dir, check.name);

    // The book's own slow-job mistake (book/timelines/slow-job-plain-del.json).
    let wrong = ALL
        .iter()
        .find(|w| w.lock.name == "plain DEL release")
        .expect("the catalogue has the plain DEL release");
    let verdict = check.run(&wrong.lock).expect("the check runs");
    assert!(matches!(verdict, Verdict::Fail(_)), "{verdict:?}");
    let text = std::fs::read_to_string(&kept).expect("the failed run is kept");
    let run: Timeline = serde_json::from_str(&text).expect("the kept run is a timeline");
    run.validate("slow-job")
        .expect("the kept run is a whole timeline of its story");
    assert_eq!(run.implementation, wrong.lock.name);
    assert!(
        !run.messages.is_empty(),
        "the player's message diagram has the commands"
    );

    let verdict = check.run(&REFERENCE).expect("the check runs");
    assert_eq!(verdict, Verdict::Pass);
    assert!(!kept.exists(), "a pass forgets the failed run");

    let direct = checks::named("release::releases_its_own_lock").expect("a direct check");
    direct.run(&wrong.lock).expect("the check runs");
    assert!(
        !recording::file(&dir, direct.name).exists(),
        "a check that plays no story keeps no run"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
