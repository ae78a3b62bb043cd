//! A run's checks, exercise by exercise: which exercises are not started, and
//! where the learner goes next.
//!
//! A first grading of the stubs fails every check, each on a `todo!()`: sixty
//! lines that say the same thing. So an exercise whose every check stopped at
//! a stub is one line ([`untouched_line`]), and the run ends with the one
//! exercise to work on and its chapter ([`next_step`]). Both the libtest
//! report of `cargo test -p exercises` and the views of `cargo course` judge
//! "not started" here.

use crate::exercise;
use crate::outcome::Outcome;

/// The checks of a run, cut into runs of one exercise each, in their order:
/// `(exercise, its items)`. `name` gives an item's check name.
pub fn by_exercise<'a, T>(
    items: &'a [T],
    name: impl Fn(&'a T) -> &'a str,
) -> Vec<(&'a str, &'a [T])> {
    let exercises: Vec<&'a str> = items
        .iter()
        .map(|item| exercise::of_check(name(item)))
        .collect();
    let mut groups = Vec::new();
    let mut start = 0;
    for end in 1..=items.len() {
        if end == items.len() || exercises[end] != exercises[start] {
            groups.push((exercises[start], &items[start..end]));
            start = end;
        }
    }
    groups
}

/// Whether checks that came to `outcomes` are an exercise not started: two or
/// more checks, every one stopped at a stub. (One check alone keeps its own
/// line and message, which name the function to write.)
pub fn untouched<'a>(outcomes: impl IntoIterator<Item = &'a Outcome>) -> bool {
    let mut count = 0;
    for outcome in outcomes {
        if !matches!(outcome, Outcome::NotStarted { .. }) {
            return false;
        }
        count += 1;
    }
    count > 1
}

/// The line that stands for an untouched exercise's `checks` checks:
/// `acquire: 8 checks, not started — fill in exercises/src/acquire.rs`.
pub fn untouched_line(exercise: &str, checks: usize) -> String {
    match exercise::file_of(exercise) {
        Some(file) => format!("{exercise}: {checks} checks, not started — fill in {file}"),
        None => format!(
            "{exercise}: {checks} checks, not started — they play the book's stories with your \
             whole lock, once the exercises are filled in"
        ),
    }
}

/// Where to go next, after a run whose checks came to `results` (in the
/// course's order): the first exercise with a check that did not pass, its
/// file, its chapter and the command that grades it alone. `None` when every
/// check passed, or when the grader could not run one (what to do then is
/// said above the results).
pub fn next_step(results: &[(&str, &Outcome)]) -> Option<String> {
    if results
        .iter()
        .any(|(_, o)| matches!(o, Outcome::NotRun { .. }))
    {
        return None;
    }
    let (name, checks) = by_exercise(results, |(name, _)| name)
        .into_iter()
        .find(|(_, checks)| checks.iter().any(|(_, o)| !o.passed()))?;
    let passed = checks.iter().filter(|(_, o)| o.passed()).count();
    let chapter = exercise::chapter_of(name).line();
    let grade_alone = format!("cargo test -p exercises {name}::");
    let place = exercise::file_of(name).map_or_else(
        || "the book's stories, played with your whole lock".to_string(),
        |file| format!("in {file}"),
    );
    let first = if passed == 0 && checks.iter().all(|(_, o)| is_stub(o)) {
        format!("Begin with {name}, {place}. Read chapter {chapter}.")
    } else {
        format!(
            "Next: {name}, {place}: {passed} of {} checks pass. Read chapter {chapter}.",
            checks.len()
        )
    };
    Some(format!(
        "{first}\nGrade it alone with `{grade_alone}`, or run `cargo course`, which grades on \
         every save."
    ))
}

fn is_stub(outcome: &Outcome) -> bool {
    matches!(outcome, Outcome::NotStarted { .. })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exercise::SCENARIOS;

    fn stub() -> Outcome {
        Outcome::NotStarted {
            message: "not started: `acquire` in exercises/src/acquire.rs still says todo!(…)"
                .into(),
        }
    }

    fn failed() -> Outcome {
        Outcome::Failed {
            report: "✗ broke".into(),
        }
    }

    #[test]
    fn checks_group_by_exercise_in_their_order() {
        let names = ["token::a", "token::b", "acquire::a", "scenarios::x"];
        let groups = by_exercise(&names, |n| n);
        let shape: Vec<(&str, usize)> = groups.iter().map(|(x, c)| (*x, c.len())).collect();
        assert_eq!(shape, [("token", 2), ("acquire", 1), ("scenarios", 1)]);
    }

    #[test]
    fn only_an_exercise_of_stubs_alone_is_untouched() {
        assert!(untouched(&[stub(), stub()]));
        assert!(!untouched(&[stub(), failed()]));
        assert!(!untouched(&[stub(), Outcome::Passed]));
        assert!(!untouched(&[stub()]), "one check keeps its own message");
        assert!(!untouched(&[]));
        assert_eq!(
            untouched_line("acquire", 7),
            "acquire: 7 checks, not started — fill in exercises/src/acquire.rs"
        );
        assert!(untouched_line(SCENARIOS, 11).starts_with("scenarios: 11 checks, not started"));
    }

    #[test]
    fn the_next_step_is_the_first_exercise_not_passing_with_its_chapter() {
        let (s, f, p) = (stub(), failed(), Outcome::Passed);
        let stubs = [("token::a", &s), ("token::b", &s), ("acquire::a", &s)];
        let step = next_step(&stubs).expect("a step");
        assert!(
            step.starts_with(
                "Begin with token, in exercises/src/token.rs. Read chapter 1, Why a lock"
            ),
            "{step}"
        );
        assert!(step.contains("`cargo test -p exercises token::`"), "{step}");
        assert!(
            step.contains(
                "— http://localhost:3000/single-instance.html \
                 (offline: book/src/single-instance.md)."
            ),
            "the chapter's served page and its file: {step}"
        );

        let halfway = [
            ("token::a", &p),
            ("token::b", &p),
            ("release::a", &p),
            ("release::b", &f),
        ];
        let step = next_step(&halfway).expect("a step");
        assert!(
            step.starts_with("Next: release, in exercises/src/release.rs: 1 of 2 checks pass."),
            "{step}"
        );
        assert!(step.contains("chapter 2, Releasing"), "{step}");

        assert_eq!(next_step(&[("token::a", &p)]), None, "all passed");
        let trouble = Outcome::NotRun {
            reason: "no Redis".into(),
        };
        assert_eq!(next_step(&[("token::a", &trouble), ("token::b", &s)]), None);
    }
}
