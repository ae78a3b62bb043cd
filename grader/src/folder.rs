//! A folder of this process's own in the temporary directory, for the sockets
//! it listens on: the judge's socket for a runner, a Redis server's socket.
//!
//! A Unix socket is reached through its folder, so the folder is the lock on
//! the door: it is made with mode 0700, under a name with random bytes in it,
//! and made, never taken over (creating a folder that exists fails), so that
//! another user of the machine can neither enter it nor have made it first.
//! It is removed, with what is in it, when its [`PrivateFolder`] is dropped.

use std::io;
use std::os::unix::fs::DirBuilderExt;
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

impl Drop for PrivateFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::PrivateFolder;
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
}
