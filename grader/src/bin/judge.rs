//! The judge of `cargo test -p exercises`: the learner's runner builds it
//! (`grader/runner/src/launch.rs`) and hands over to it, with the runner's
//! path in `GRADER_RUNNER`; it runs every check in a process of its own (this
//! program again) and makes every verdict ([`grader::harness::judge`]).
//!
//! It holds the grader and nothing else: no command line of its own, no
//! watch loop, no batch (those are `cargo course`, the crate `course`), so
//! that a learner's first `cargo test -p exercises` builds no more than it
//! needs.

fn main() {
    if grader::harness::is_judge() {
        grader::harness::judge();
    }
    eprintln!(
        "error: this is the grader's judge, which `cargo test -p exercises` starts with your \
         runner; run that (or `cargo course`) instead"
    );
    std::process::exit(2)
}
