//! The exit statuses of `strata`, in one place: the table below is the
//! one the README and the guide (docs/src/troubleshooting.md) show (a test
//! keeps the three the same), and the top-level `--help` prints it.
//!
//! | status | meaning |
//! |---|---|
//! | 0 | success (also `--help`, `--version`, and output cut short by a closed pipe) |
//! | 1 | a check ran and failed: `generate --verify-distribution` found a share off by more than 5 standard errors, or `infer --compare` found generated data out of bounds |
//! | 2 | an error: a bad flag or spec, unreadable or corrupt input, an existing or unwritable output, an object-store failure; nothing partial is left behind |
//! | 3 | `bench --baseline NAME --fail-on-regression`: one of strata's cases regressed |
//! | 130 | interrupted by Ctrl-C or SIGTERM; files of the unfinished run were removed |

/// The run did what was asked.
pub const SUCCESS: u8 = 0;
/// A check ran and found the data off ([`CheckFailed`]).
pub const CHECK_FAILED: u8 = 1;
/// An error: the message says what and where.
pub const ERROR: u8 = 2;
/// A bad command line (same status as [`ERROR`]: both mean "not done").
pub const USAGE: u8 = 2;
/// `strata bench --fail-on-regression`: a case regressed.
pub const REGRESSION: u8 = 3;
/// Interrupted by Ctrl-C or SIGTERM (128 + SIGINT, as shells report it).
pub const INTERRUPTED: u8 = 130;

/// An error meaning "the check ran, and the data failed it": exit status
/// [`CHECK_FAILED`] rather than [`ERROR`].
#[derive(Debug)]
pub struct CheckFailed(pub String);

impl std::fmt::Display for CheckFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CheckFailed {}

/// The table of the module docs, for `strata --help`.
pub(crate) fn table() -> String {
    let mut out = String::from("Exit status:\n");
    for line in include_str!("exit.rs").lines() {
        let Some(row) = line.strip_prefix("//! | ") else {
            continue;
        };
        let Some((status, meaning)) = row.trim_end_matches(" |").split_once(" | ") else {
            continue;
        };
        if status.parse::<u8>().is_ok() {
            out.push_str(&format!("  {status:>3}  {}\n", meaning.replace('`', "")));
        }
    }
    out
}
