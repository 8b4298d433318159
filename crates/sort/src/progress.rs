//! How far a sort has come, polled by a progress display, and where its
//! output stands, for a signal handler that stops it ([`SortProgress`]).

use std::{
    path::{Path, PathBuf},
    sync::{Arc, atomic::AtomicU64},
};

/// How far a sort has come, for a progress display that polls it from
/// another thread.
#[derive(Debug, Default)]
pub struct SortProgress {
    /// Rows of the inputs, when known (the sum of their footers' counts).
    pub input_rows: AtomicU64,
    /// Rows read so far.
    pub rows_read: AtomicU64,
    /// Runs spilled so far.
    pub runs: AtomicU64,
    /// Rows written by the merges so far (every merge level counts).
    pub rows_merged: Arc<AtomicU64>,
    /// Rows the merges write in all (the input's rows once per level).
    pub rows_to_merge: AtomicU64,
    /// The spill directory while the sort has one, for a signal handler
    /// that removes it before the process exits.
    pub spill_dir: std::sync::Mutex<Option<PathBuf>>,
    /// Where the output stands, for [`SortProgress::interrupt`].
    pub(crate) output: std::sync::Mutex<Publication>,
}

/// Where a sort's output stands.
#[derive(Debug, Default)]
pub(crate) enum Publication {
    /// Not started: no staging directory yet.
    #[default]
    Writing,
    /// Being written into this hidden staging directory.
    Staged(PathBuf),
    /// Moved to its name: complete.
    Published,
    /// Interrupted before it was published: it never will be.
    Interrupted,
}

impl SortProgress {
    /// For a signal handler, before it ends the process: stops the sort
    /// from publishing its output and removes what it has written so far
    /// (the staged output and the spill directory), unless the output is
    /// published already. A publication under way is waited for. Returns
    /// whether the output is complete under its name (and so was kept).
    ///
    /// The sort's threads may still be writing while this runs; once the
    /// staging directory is gone they cannot make new files in it, and
    /// their errors end the sort (see [`SortProgress::interrupted`]).
    pub fn interrupt(&self) -> bool {
        let complete = {
            let mut state = self.publication();
            match std::mem::replace(&mut *state, Publication::Interrupted) {
                Publication::Published => {
                    *state = Publication::Published;
                    true
                }
                Publication::Staged(dir) => {
                    remove_until_gone(&dir);
                    false
                }
                Publication::Writing | Publication::Interrupted => false,
            }
        };
        let spill = self.spill_dir.lock().ok().and_then(|d| d.clone());
        if let Some(d) = spill {
            remove_until_gone(&d);
        }
        complete
    }

    /// Whether [`SortProgress::interrupt`] stopped the sort before its
    /// output was published: an error the sort returns after that comes
    /// from the removal of its files, not from the inputs or the disk.
    pub fn interrupted(&self) -> bool {
        matches!(*self.publication(), Publication::Interrupted)
    }

    /// The output's state, locked.
    pub(crate) fn publication(&self) -> std::sync::MutexGuard<'_, Publication> {
        self.output
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Removes the directory `dir` and everything in it, again until it is
/// gone: threads still writing may create a file in it between the
/// listing and the last `rmdir` (once it is gone, no file can be created
/// in it).
fn remove_until_gone(dir: &Path) {
    for _ in 0..100 {
        let _ = std::fs::remove_dir_all(dir);
        if !dir.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
