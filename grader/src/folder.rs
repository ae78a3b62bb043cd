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
//! and its runner's folders live as long as it does. Each folder's name holds
//! the pid of the process that made it, so the process that waited for it,
//! the harness, removes what it left ([`sweep_left_by`]), and a harness does
//! the same for itself as it exits: a learner who grades on every save for a
//! week does not fill the temporary directory with empty folders.

use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

/// A folder only this user may enter, removed when dropped.
#[derive(Debug)]
pub struct PrivateFolder {
    path: PathBuf,
}

impl PrivateFolder {
    /// Makes `grader-PURPOSE-PID-RANDOM` in the temporary directory, mode 0700.
    pub fn new(purpose: &str) -> io::Result<PrivateFolder> {
        let random = crate::random::hex::<8>().map_err(|e| io::Error::other(e.to_string()))?;
        let name = format!("grader-{purpose}-{}-{random}", std::process::id());
        let path = std::env::temp_dir().join(name);
        std::fs::DirBuilder::new().mode(0o700).create(&path)?;
        Ok(PrivateFolder { path })
    }

    /// Where the folder is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Removes the folders that the process `pid` made with [`PrivateFolder::new`]
/// and left behind, with what is in them: call it once that process has ended,
/// or from the process itself as it exits. Only folders of this user whose
/// names have the shape of one (`grader-PURPOSE-PID-RANDOM`) go; a symbolic
/// link of that name is left alone. What cannot be removed is left.
pub fn sweep_left_by(pid: u32) {
    let temp = std::env::temp_dir();
    let Ok(entries) = std::fs::read_dir(&temp) else {
        return;
    };
    let user = rustix::process::geteuid();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if made_by(name) != Some(pid) {
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

/// The pid in a private folder's name, `grader-PURPOSE-PID-RANDOM` (RANDOM:
/// sixteen hex digits), or `None` for a name of another shape.
fn made_by(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("grader-")?;
    let (rest, random) = rest.rsplit_once('-')?;
    let (purpose, pid) = rest.rsplit_once('-')?;
    let shaped =
        !purpose.is_empty() && random.len() == 16 && random.bytes().all(|b| b.is_ascii_hexdigit());
    shaped.then(|| pid.parse().ok()).flatten()
}

impl Drop for PrivateFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::{PrivateFolder, made_by, sweep_left_by};
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

    #[test]
    fn only_names_of_a_private_folders_shape_tell_a_pid() {
        assert_eq!(made_by("grader-redis-4242-0123456789abcdef"), Some(4242));
        assert_eq!(made_by("grader-a-b-7-0123456789ABCDEF"), Some(7));
        assert_eq!(
            made_by("grader-redis-4242-0123"),
            None,
            "too short a random part"
        );
        assert_eq!(made_by("grader-4242-0123456789abcdef"), None, "no purpose");
        assert_eq!(made_by("grader-redis-x-0123456789abcdef"), None, "no pid");
        assert_eq!(made_by("other-redis-4242-0123456789abcdef"), None);
    }

    /// A folder held by a process that exits, as a check's server's is, goes
    /// once the process that waited for it sweeps; another process's stays,
    /// and so does a symbolic link that only has the shape of a name.
    #[test]
    fn a_sweep_removes_the_folders_an_ended_process_left_and_nothing_else() {
        let exe = std::env::current_exe().expect("this test binary");
        // A process that makes a folder and exits without dropping it: this test, in a child.
        let child = std::process::Command::new(exe)
            .args([
                "--exact",
                "folder::tests::leave_a_folder_behind",
                "--ignored",
                "--nocapture",
            ])
            .env("GRADER_TEST_LEAVE_FOLDER", "1")
            .output()
            .expect("the child runs");
        assert!(child.status.success(), "{child:?}");
        let left = String::from_utf8_lossy(&child.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("left: ").map(std::path::PathBuf::from))
            .expect("the child says what it left");
        assert!(left.exists(), "the child left {left:?} behind");
        let pid = made_by(&left.file_name().unwrap().to_string_lossy()).expect("a pid");
        // Someone else's folder, and a link of the same shape that points at it.
        let mine = PrivateFolder::new("test").expect("a folder");
        let link = std::env::temp_dir().join(format!("grader-link-{pid}-0123456789abcdef"));
        std::os::unix::fs::symlink(mine.path(), &link).expect("a link");
        sweep_left_by(pid);
        assert!(!left.exists(), "the ended process's folder goes");
        assert!(mine.path().exists(), "another process's folder stays");
        assert!(
            std::fs::symlink_metadata(&link).is_ok(),
            "a link is left alone"
        );
        std::fs::remove_file(&link).expect("the link goes");
    }

    /// Run by the test above in a process of its own: makes a folder and exits without
    /// dropping it.
    #[test]
    #[ignore = "run by a_sweep_removes_the_folders_an_ended_process_left_and_nothing_else"]
    fn leave_a_folder_behind() {
        if std::env::var_os("GRADER_TEST_LEAVE_FOLDER").is_none() {
            return;
        }
        let folder = PrivateFolder::new("test").expect("a folder");
        println!("left: {}", folder.path().display());
        std::mem::forget(folder);
        std::process::exit(0);
    }
}
