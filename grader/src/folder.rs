//! A folder of this process's own in the temporary directory, for the sockets
//! it listens on: the judge's socket for a runner, a Redis server's socket.
//!
//! A Unix socket is reached through its folder, so the folder is the lock on
//! the door: it is made with mode 0700, under a name with random bytes in it,
//! and made, never taken over (creating a folder that exists fails), so that
//! another user of the machine can neither enter it nor have made it first.
//! It is removed, with what is in it, when its [`PrivateFolder`] is dropped.
//!
//! A folder held until the process ends is not dropped, though: a check's
//! process ends with `exit` (or is killed at its time limit), and its server's
//! and its runner's folders live as long as it does; so do a test binary's.
//! A process that exits removes the folders it made and still holds (an
//! `atexit` handler). One that is killed cannot: each folder's name holds a
//! tag, random, that the harness handed the check's process ([`TAG_VAR`]), so
//! the harness removes what that process left once it has waited for it
//! ([`sweep_tagged`]), and a harness does the same for its own tag as it
//! exits. A learner who grades on every save for a week does not fill the
//! temporary directory with empty folders. A tag, not a pid: two harnesses in
//! two pid namespaces that share one temporary directory may see the same pid,
//! and one would remove the other's live sockets.

use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once, OnceLock};

/// The folders this process made and still holds, which its exit removes.
static HELD: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The variable through which a harness hands a check's process the tag its folders' names
/// carry: sixteen hex digits.
pub const TAG_VAR: &str = "GRADER_FOLDER_TAG";

/// A folder only this user may enter, removed when dropped.
#[derive(Debug)]
pub struct PrivateFolder {
    path: PathBuf,
}

impl PrivateFolder {
    /// Makes `grader-PURPOSE-TAG-RANDOM` in the temporary directory, mode 0700, with this
    /// process's tag ([`own_tag`]).
    pub fn new(purpose: &str) -> io::Result<PrivateFolder> {
        let random = new_tag()?;
        let name = format!("grader-{purpose}-{}-{random}", own_tag()?);
        let path = std::env::temp_dir().join(name);
        std::fs::DirBuilder::new().mode(0o700).create(&path)?;
        hold_until_exit(&path);
        Ok(PrivateFolder { path })
    }

    /// Where the folder is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A fresh tag: sixteen random hex digits.
pub fn new_tag() -> io::Result<String> {
    crate::random::hex::<8>().map_err(|e| io::Error::other(e.to_string()))
}

/// This process's tag: the one its harness handed it in [`TAG_VAR`], or else one drawn for it
/// alone, the first time it is asked for.
pub fn own_tag() -> io::Result<&'static str> {
    static TAG: OnceLock<String> = OnceLock::new();
    if let Some(tag) = TAG.get() {
        return Ok(tag);
    }
    let handed = std::env::var(TAG_VAR).ok().filter(|t| is_tag(t));
    let tag = match handed {
        Some(tag) => tag,
        None => new_tag()?,
    };
    Ok(TAG.get_or_init(|| tag))
}

/// Whether `text` has a tag's shape: sixteen hex digits.
fn is_tag(text: &str) -> bool {
    text.len() == 16 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Removes the folders made with [`PrivateFolder::new`] under `tag` and left behind, with what
/// is in them: call it once the process given that tag has ended, or with [`own_tag`] from a
/// process as it exits. Only folders of this user whose names have the shape of one
/// (`grader-PURPOSE-TAG-RANDOM`) go; a symbolic link of that name is left alone. What cannot
/// be removed is left.
pub fn sweep_tagged(tag: &str) {
    let temp = std::env::temp_dir();
    let Ok(entries) = std::fs::read_dir(&temp) else {
        return;
    };
    let user = rustix::process::geteuid();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if tag_of(name) != Some(tag) {
            continue;
        }
        let path = entry.path();
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() && meta.uid() == user.as_raw() => {
                let _ = std::fs::remove_dir_all(&path);
            }
            _ => {}
        }
    }
}

/// The tag in a private folder's name, `grader-PURPOSE-TAG-RANDOM` (TAG and RANDOM: sixteen
/// hex digits each), or `None` for a name of another shape.
fn tag_of(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("grader-")?;
    let (rest, random) = rest.rsplit_once('-')?;
    let (purpose, tag) = rest.rsplit_once('-')?;
    (!purpose.is_empty() && is_tag(random) && is_tag(tag)).then_some(tag)
}

/// Notes `path` for removal at this process's exit, registering the handler the first time.
fn hold_until_exit(path: &Path) {
    static HANDLER: Once = Once::new();
    HANDLER.call_once(|| {
        // Without it, a harness's sweep still removes what an exit leaves.
        crate::sys::at_exit(remove_held_at_exit);
    });
    if let Ok(mut held) = HELD.lock() {
        held.push(path.to_owned());
    }
}

/// Removes the folders this process still holds, as it exits.
extern "C" fn remove_held_at_exit() {
    // Unwinding out of an atexit handler would abort the process mid-exit; and a lock another
    // thread holds as the process ends is left to the sweeps rather than waited for.
    let _ = std::panic::catch_unwind(|| {
        if let Ok(mut held) = HELD.try_lock() {
            for path in held.drain(..) {
                let _ = std::fs::remove_dir_all(&path);
            }
        }
    });
}

impl Drop for PrivateFolder {
    fn drop(&mut self) {
        if let Ok(mut held) = HELD.lock() {
            held.retain(|p| p != &self.path);
        }
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::{PrivateFolder, TAG_VAR, new_tag, sweep_tagged, tag_of};
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_private_folder_is_its_owners_alone_and_goes_when_dropped() {
        let (a, b) = (PrivateFolder::new("test"), PrivateFolder::new("test"));
        let (a, b) = (a.expect("a folder"), b.expect("a folder"));
        assert_ne!(a.path(), b.path(), "each folder has a name of its own");
        let mode = std::fs::metadata(a.path())
            .expect("it exists")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700, "no one else may enter it");
        std::fs::write(a.path().join("inside"), "x").expect("a file inside");
        let path = a.path().to_owned();
        drop(a);
        assert!(!path.exists(), "the folder goes with what is in it");
    }

    const TAG: &str = "00112233445566ff";

    #[test]
    fn only_names_of_a_private_folders_shape_tell_a_tag() {
        assert_eq!(
            tag_of("grader-redis-00112233445566ff-0123456789abcdef"),
            Some(TAG)
        );
        assert_eq!(
            tag_of("grader-a-b-00112233445566ff-0123456789ABCDEF"),
            Some(TAG)
        );
        assert_eq!(
            tag_of("grader-redis-00112233445566ff-0123"),
            None,
            "too short a random part"
        );
        assert_eq!(
            tag_of("grader-00112233445566ff-0123456789abcdef"),
            None,
            "no purpose"
        );
        assert_eq!(
            tag_of("grader-redis-4242-0123456789abcdef"),
            None,
            "a pid is no tag"
        );
        assert_eq!(
            tag_of("other-redis-00112233445566ff-0123456789abcdef"),
            None
        );
    }

    /// A folder held by a process that is killed, as a check's server's may be, goes once the
    /// process that waited for it sweeps its tag; a folder under another tag stays (another
    /// harness's, in another pid namespace, whatever its pid), and so does a symbolic link that
    /// only has the shape of a name.
    #[test]
    fn a_sweep_removes_the_folders_an_ended_process_left_and_nothing_else() {
        let tag = new_tag().expect("a tag");
        let (status, left) = child_making_a_folder("abort", Some(&tag));
        // Killed (here: aborted), it ran no exit handler.
        assert!(!status.success(), "{status:?}");
        assert!(left.exists(), "the child left {left:?} behind");
        let name = left.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(tag_of(&name), Some(tag.as_str()), "the tag it was handed");
        // This process's folder (another tag), and a link of the child's shape that points at it.
        let mine = PrivateFolder::new("test").expect("a folder");
        let link = std::env::temp_dir().join(format!("grader-link-{tag}-0123456789abcdef"));
        std::os::unix::fs::symlink(mine.path(), &link).expect("a link");
        sweep_tagged(&tag);
        assert!(!left.exists(), "the ended process's folder goes");
        assert!(mine.path().exists(), "another process's folder stays");
        assert!(
            std::fs::symlink_metadata(&link).is_ok(),
            "a link is left alone"
        );
        std::fs::remove_file(&link).expect("the link goes");
    }

    /// A process that exits while a static still holds its folder, as a check's process and a
    /// test binary do, takes the folder with it.
    #[test]
    fn an_exit_removes_the_folders_still_held() {
        let (status, made) = child_making_a_folder("exit", None);
        assert!(status.success(), "{status:?}");
        assert!(!made.exists(), "the exit left {made:?} behind");
    }

    /// Runs [`leave_a_folder_behind`] in a child process of this test binary, ending `how`
    /// (`exit` or `abort`) and handed `tag`, if any: how it ended, and the folder it made.
    fn child_making_a_folder(
        how: &str,
        tag: Option<&str>,
    ) -> (std::process::ExitStatus, std::path::PathBuf) {
        let exe = std::env::current_exe().expect("this test binary");
        let mut command = std::process::Command::new(exe);
        command
            .args([
                "--exact",
                "folder::tests::leave_a_folder_behind",
                "--ignored",
                "--nocapture",
            ])
            .env("GRADER_TEST_LEAVE_FOLDER", how);
        if let Some(tag) = tag {
            command.env(TAG_VAR, tag);
        }
        let child = command.output().expect("the child runs");
        let made = String::from_utf8_lossy(&child.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("left: ").map(std::path::PathBuf::from))
            .unwrap_or_else(|| panic!("the child says what it made: {child:?}"));
        (child.status, made)
    }

    /// Run by the tests above in a process of their own: makes a folder and ends without
    /// dropping it, by `exit` (`GRADER_TEST_LEAVE_FOLDER=exit`) or as if killed (`abort`, which
    /// runs no exit handler).
    #[test]
    #[ignore = "run in a child process by the two tests above"]
    fn leave_a_folder_behind() {
        let Some(how) = std::env::var_os("GRADER_TEST_LEAVE_FOLDER") else {
            return;
        };
        let folder = PrivateFolder::new("test").expect("a folder");
        println!("left: {}", folder.path().display());
        std::mem::forget(folder);
        if how == "exit" {
            std::process::exit(0);
        }
        std::process::abort();
    }
}
