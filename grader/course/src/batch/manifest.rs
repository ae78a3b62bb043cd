//! The manifest of the workspace a submission is built in: the course's root
//! `Cargo.toml` cut down to the learner's crate and the runner.
//!
//! The members go, but for those two. Settings for one package
//! (`[profile.dev.package.NAME]`) stay for the packages the two crates are
//! built with, and go for the others: cargo warns of a setting for a package
//! the build does not hold in every compile error a student reads, and the
//! settings that stay are what keeps the runner quick (redis-rs's reply
//! parser runs for every command a submission sends, and unoptimised it is
//! most of what the runner costs). Which packages the two crates are built
//! with is read from the course's `Cargo.lock`, which the workspace shares.

use std::collections::{BTreeMap, BTreeSet};

use super::super::error::CourseError;

/// The packages of the workspace a submission is built in.
const MEMBERS: [&str; 2] = ["exercises", "lock-runner"];

/// The course's root manifest with its members cut down to the two crates a
/// submission's build needs, and the settings of packages they are not built
/// with left out; `lock` is the course's `Cargo.lock`.
pub(super) fn cut_down(manifest: &str, lock: &str) -> Result<String, CourseError> {
    let built_with = built_with(lock);
    let mut found = false;
    // Inside a `[profile.*.package.NAME]` table of a package the build does not hold.
    let mut in_dropped_profile = false;
    // Inside a list of members written over several lines, which goes with its first line.
    let mut in_list = false;
    let lines: Vec<String> = manifest
        .lines()
        .filter_map(|line| {
            let trimmed = line.trim_start();
            if in_list {
                in_list = !trimmed.contains(']');
                return None;
            }
            if trimmed.starts_with('[') {
                in_dropped_profile =
                    package_setting(trimmed).is_some_and(|name| !built_with.contains(name));
            }
            if in_dropped_profile {
                return None;
            }
            let members = trimmed.starts_with("members");
            if members || trimmed.starts_with("default-members") {
                in_list = !trimmed.contains(']');
            }
            Some(if members {
                found = true;
                "members = [\"exercises\", \"grader/runner\"]".to_string()
            } else if trimmed.starts_with("default-members") {
                "default-members = [\"exercises\"]".to_string()
            } else {
                line.to_string()
            })
        })
        .collect();
    if !found {
        return Err(CourseError::Usage(
            "the course's Cargo.toml has no `members = [...]` line in [workspace]: the batch \
             cannot build a submission's crate on its own"
                .to_string(),
        ));
    }
    Ok(lines.join("\n") + "\n")
}

/// The package a `[profile.PROFILE.package.NAME]` header sets, if it is one
/// (`NAME` may be quoted).
fn package_setting(header: &str) -> Option<&str> {
    let inner = header.strip_prefix("[profile.")?.split(']').next()?;
    let (_, name) = inner.split_once(".package.")?;
    Some(name.trim_matches('"'))
}

/// The names of the packages [`MEMBERS`] are built with, themselves included:
/// the closure of their dependencies in `lock` (a `Cargo.lock`, whose
/// `[[package]]` tables list each package's `dependencies` as `"NAME"` or
/// `"NAME VERSION"`). Dependencies of every version of a name are followed,
/// which can only keep a setting more.
fn built_with(lock: &str) -> BTreeSet<String> {
    let mut dependencies: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut name: Option<String> = None;
    let mut in_dependencies = false;
    for line in lock.lines().map(str::trim) {
        if line == "[[package]]" {
            name = None;
            in_dependencies = false;
        } else if let Some(value) = line.strip_prefix("name = ") {
            name = Some(value.trim_matches('"').to_owned());
        } else if line.starts_with("dependencies = [") {
            in_dependencies = !line.ends_with(']');
        } else if in_dependencies && line == "]" {
            in_dependencies = false;
        } else if in_dependencies && let Some(package) = &name {
            let dependency = line.trim_end_matches(',').trim_matches('"');
            let dependency = dependency.split(' ').next().unwrap_or(dependency);
            dependencies
                .entry(package.clone())
                .or_default()
                .push(dependency.to_owned());
        }
    }
    let mut reached: BTreeSet<String> = BTreeSet::new();
    let mut next: Vec<String> = MEMBERS.iter().map(|m| (*m).to_owned()).collect();
    while let Some(package) = next.pop() {
        if reached.insert(package.clone()) {
            next.extend(dependencies.get(&package).into_iter().flatten().cloned());
        }
    }
    reached
}

#[cfg(test)]
mod tests {
    use super::cut_down;

    const LOCK: &str = "version = 4\n\n[[package]]\nname = \"combine\"\nversion = \"4.6.7\"\n\
                        dependencies = [\n \"bytes\",\n \"memchr 2.7.4\",\n]\n\n\
                        [[package]]\nname = \"exercises\"\nversion = \"0.1.0\"\n\
                        dependencies = [\n \"lock-runner\",\n \"redis\",\n]\n\n\
                        [[package]]\nname = \"insta\"\nversion = \"1.49.0\"\n\n\
                        [[package]]\nname = \"lock-runner\"\nversion = \"0.1.0\"\n\
                        dependencies = [\n \"redis\",\n]\n\n\
                        [[package]]\nname = \"redis\"\nversion = \"1.8.1\"\n\
                        dependencies = [\n \"combine\",\n]\n";

    #[test]
    fn members_written_over_several_lines_are_cut_down_whole() {
        let manifest = "[workspace]\nresolver = \"3\"\nmembers = [\n    \"grader\",\n    \
                        \"exercises\",\n]\ndefault-members = [\"grader\"]\n\n\
                        [workspace.package]\nedition = \"2024\"\n";
        assert_eq!(
            cut_down(manifest, LOCK).expect("a manifest with members"),
            "[workspace]\nresolver = \"3\"\nmembers = [\"exercises\", \"grader/runner\"]\n\
             default-members = [\"exercises\"]\n\n[workspace.package]\nedition = \"2024\"\n"
        );
    }

    #[test]
    fn settings_stay_for_the_packages_a_submission_is_built_with_only() {
        let manifest = "[workspace]\nmembers = [\"grader\", \"exercises\"]\n\
                        [profile.dev.package.insta]\nopt-level = 3\n\
                        [profile.dev.package.redis]\nopt-level = 2\n\
                        [profile.dev.package.\"combine\"]\nopt-level = 2\n";
        assert_eq!(
            cut_down(manifest, LOCK).expect("a manifest with members"),
            "[workspace]\nmembers = [\"exercises\", \"grader/runner\"]\n\
             [profile.dev.package.redis]\nopt-level = 2\n\
             [profile.dev.package.\"combine\"]\nopt-level = 2\n"
        );
    }

    #[test]
    fn a_manifest_without_members_is_refused() {
        assert!(cut_down("[workspace]\nresolver = \"3\"\n", LOCK).is_err());
    }
}
