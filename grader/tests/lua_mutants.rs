//! Every mutant of the reference's Lua scripts is caught by a check, or is
//! listed as equivalent with the reason; an equivalent one must indeed pass
//! every check. `grader/mutants.md` holds the same run as a report
//! (`.ci/mutants` writes it).

use lock_catalogue::mutants::{self, Judged, Scripted};

#[test]
fn the_unmutated_scripts_pass_every_check() {
    // The mutants' functions read their reply as the reference does: with
    // the reference's own script in place, nothing fails.
    for script in Scripted::ALL {
        let source = script.source().expect("the script is in the reference");
        let judged = mutants::judge(script, source).expect("Redis answers");
        assert_eq!(judged, Judged::Survived, "{script:?}");
    }
}

#[test]
fn every_lua_mutant_is_caught_or_equivalent() {
    let mut holes = Vec::new();
    for mutant in mutants::all() {
        let judged = mutant.judge().expect("Redis answers");
        match (judged, mutants::equivalent(&mutant)) {
            (Judged::Caught { .. }, None) | (Judged::Survived, Some(_)) => {}
            (Judged::Survived, None) => holes.push(format!(
                "{} survived every check: `{}` became `{}`",
                mutant.id(),
                mutant.mutation.before,
                mutant.mutation.after
            )),
            (Judged::Caught { check, .. }, Some(_)) => holes.push(format!(
                "{} is listed as equivalent, but {check} fails on it",
                mutant.id()
            )),
        }
    }
    assert!(holes.is_empty(), "{}", holes.join("\n"));
}

#[test]
fn every_fixed_answer_mutant_is_caught() {
    for (name, lock) in mutants::fixed::ALL {
        let judged =
            mutants::judge_lock(lock, mutants::fixed::exercise(name)).expect("Redis answers");
        assert_ne!(judged, Judged::Survived, "{name} survived every check");
    }
}
