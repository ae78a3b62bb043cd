//! The book's chapters the grader points at, each written once.
//!
//! An exercise names the chapter that explains it, and so does every rule a
//! report can name ([`crate::verdict::Rule`]); both point at one of these
//! values, so a chapter's number, file and title cannot drift apart between
//! the exercise table, the reports and the loop. Reports, the harness's
//! "Begin with" line and `cargo course` all name a chapter with
//! [`Chapter::line`]: its page in the book that `book/serve` serves, and its
//! file for a reader without the server; the class summary links the page.

/// Where `book/serve` serves the book: chapter links point there.
pub const SERVED_BOOK: &str = "http://localhost:3000/";

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
    /// The chapter as a reader finds it, the one way every report and the
    /// loop name it: number, title, its page in the served book and, for a
    /// reader without `book/serve`, its file, e.g. `2, Releasing: check, then
    /// delete, in one step — http://localhost:3000/releasing.html (offline:
    /// book/src/releasing.md)`.
    pub fn line(&self) -> String {
        format!(
            "{}, {} — {} (offline: {})",
            self.number,
            self.title,
            self.url(),
            self.path()
        )
    }

    /// Its file, from the repository's root.
    pub fn path(&self) -> String {
        format!("book/src/{}", self.file)
    }

    /// Its page in the built book, beside the others: `releasing.html`.
    pub fn page(&self) -> String {
        let stem = self.file.strip_suffix(".md").unwrap_or(self.file);
        format!("{stem}.html")
    }

    /// Its page where `book/serve` serves it.
    pub fn url(&self) -> String {
        format!("{SERVED_BOOK}{}", self.page())
    }
}

/// Every chapter the grader names, in the book's order (a test holds them to
/// `book/src/SUMMARY.md`).
pub const ALL: &[&Chapter] = &[
    &SINGLE_INSTANCE,
    &RELEASING,
    &TIMEOUT,
    &RENEWAL,
    &FENCING,
    &FENCING_STORAGE,
    &REDLOCK_PRACTICE,
    &REDLOCK_DEBATE,
];

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

/// Chapter 7: the debate about Redlock, where a finished course reads on.
pub const REDLOCK_DEBATE: Chapter = Chapter {
    number: "7",
    file: "redlock.md",
    title: "The Redlock debate",
};
