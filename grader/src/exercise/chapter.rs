//! The book's chapters the grader points at, each written once.
//!
//! An exercise names the chapter that explains it, and so does every rule a
//! report can name ([`crate::verdict::Rule`]); both point at one of these
//! values, so a chapter's number, file and title cannot drift apart between
//! the exercise table, the reports and the loop.

/// A chapter of the book, as its table of contents shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chapter {
    /// Its number in the table of contents (`4.1`).
    pub number: &'static str,
    /// Its file, under `book/src/`.
    pub file: &'static str,
    /// Its title, as its first heading reads.
    pub title: &'static str,
}

impl Chapter {
    /// The chapter as a reader finds it: number, title and file, e.g.
    /// `2, Releasing: check, then delete, in one step (book/src/releasing.md)`.
    pub fn line(&self) -> String {
        format!("{}, {} ({})", self.number, self.title, self.path())
    }

    /// Its file, from the repository's root.
    pub fn path(&self) -> String {
        format!("book/src/{}", self.file)
    }
}

/// Chapter 1: tokens and the single-instance acquire.
pub const SINGLE_INSTANCE: Chapter = Chapter {
    number: "1",
    file: "single-instance.md",
    title: "Why a lock, and the single-instance lock",
};

/// Chapter 2: release.
pub const RELEASING: Chapter = Chapter {
    number: "2",
    file: "releasing.md",
    title: "Releasing: check, then delete, in one step",
};

/// Chapter 3: the stories of a lock whose timeout runs out.
pub const TIMEOUT: Chapter = Chapter {
    number: "3",
    file: "timeout.md",
    title: "The timeout is the danger",
};

/// Chapter 3.1: extend and the lease keeper.
pub const RENEWAL: Chapter = Chapter {
    number: "3.1",
    file: "renewal.md",
    title: "Renewal and the watchdog",
};

/// Chapter 4: fencing tokens.
pub const FENCING: Chapter = Chapter {
    number: "4",
    file: "fencing.md",
    title: "Fencing tokens",
};

/// Chapter 4.1: the storage that checks fencing tokens.
pub const FENCING_STORAGE: Chapter = Chapter {
    number: "4.1",
    file: "fencing-storage.md",
    title: "The storage's side",
};

/// Chapter 6: Redlock.
pub const REDLOCK_PRACTICE: Chapter = Chapter {
    number: "6",
    file: "redlock-practice.md",
    title: "Redlock in practice",
};
