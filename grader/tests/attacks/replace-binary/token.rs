//! Attack: the test binary replaced during a check.
//!
//! During a call, `new_token` renames over its own executable (the binary the
//! harness starts again for each later check, and that cargo runs again on
//! the next unedited `cargo test -p exercises` or `cargo course grade`) a
//! shell script that plays every part: as a check it reads the nonce and sends
//! a passing verdict; as the harness it writes a passing results file or
//! prints libtest's lines for a passing run.
//!
//! A sound grader runs no file that learner code could write: later checks
//! and later runs grade this attacker's code (0 passes), not the script.

#[path = "atk_kit.rs"]
mod kit;

use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::AtomicBool;

const SCRIPT: &str = r##"#!/bin/sh
# Written by the replace-binary attack in place of the test binary.
selected=""
for c in token::unique token::unguessable acquire::takes_a_free_lock acquire::refuses_a_held_lock acquire::sets_the_ttl_in_milliseconds acquire::one_winner_among_three acquire::no_lock_without_ttl_after_a_crash acquire::a_crashed_holder_frees_the_lock acquire::explored; do
  any=no; hit=no
  for f in "$@"; do
    case "$f" in -*) continue;; esac
    any=yes
    case "$c" in *"$f"*) hit=yes;; esac
  done
  if [ "$any" = no ] || [ "$hit" = yes ]; then selected="$selected $c"; fi
done
if [ -n "$GRADER_HARNESS_CHECK" ]; then
  read n
  printf '%s {"status":"passed"}\n' "$n" >&3
  exit 0
fi
if [ -n "$GRADER_RESULTS_FILE" ]; then
  read n
  {
    printf '{"nonce":"%s","checks":[' "$n"
    sep=""
    for c in $selected; do
      printf '%s{"name":"%s","outcome":{"status":"passed"},"printed":""}' "$sep" "$c"
      sep=","
    done
    printf ']}'
  } > "$GRADER_RESULTS_FILE"
fi
count=0
echo
for c in $selected; do echo "test $c ... ok"; count=$((count + 1)); done
echo
echo "test result: ok. $count passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s"
exit 0
"##;

static DONE: AtomicBool = AtomicBool::new(false);

pub fn new_token() -> String {
    if kit::first(&DONE)
        && let Ok(exe) = std::fs::read_link("/proc/self/exe")
    {
        let exe = std::path::PathBuf::from(exe.to_string_lossy().trim_end_matches(" (deleted)"));
        let tmp = exe.with_extension("atk");
        let replaced = std::fs::write(&tmp, SCRIPT)
            .and_then(|()| std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755)))
            .and_then(|()| std::fs::rename(&tmp, &exe));
        if replaced.is_ok() {
            kit::evidence("replace-binary", &format!("replaced {}", exe.display()));
        }
    }
    todo!("return 16 to 20 random bytes as text (see the comment above)")
}
