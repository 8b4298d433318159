//! A sort's output stays out of sight until the whole sort is done.
//!
//! Everything a sort writes for its output goes into a hidden staging
//! directory ([`Staging`]), a [`PendingDir`] of strata-store's `output`
//! module: `.NAME.PID.strata-tmp` beside the output, or
//! `.strata-sort.PID.strata-tmp` inside it when the output is a directory
//! that exists. No glob of the output (`out.parquet`, `dir/*.parquet`)
//! sees a file of it before [`Staging::publish`], which moves the finished
//! output to its name: the one file renamed onto the output, a new
//! directory renamed whole, or the files of an existing directory renamed
//! into it one by one, after which the part files of an earlier sort that
//! this one did not write are removed. Dropping a staging directory
//! unpublished removes it with everything in it; one left by a killed
//! sort is removed by the next sort to the same output, once that sort's
//! process is gone (the name holds its id).
//!
//! With a [`SortProgress`], creating, publishing and
//! [`SortProgress::interrupt`] take turns on one lock: an interrupt either
//! finds the output published (complete) or removes it and stops the
//! publication for good.

use std::{
    fs,
    path::{Path, PathBuf},
    sync::Arc,
};

use strata_store::output::PendingDir;

use crate::{
    error::Error,
    progress::{Publication, SortProgress},
};

/// How a staged output reaches its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// One file, staged under the output's name and renamed onto it.
    File,
    /// A directory that does not exist yet: the staging directory, beside
    /// it, is renamed to it.
    NewDir,
    /// A directory that exists: staged inside it, the files are renamed
    /// into it, and part files of an earlier sort that this one did not
    /// write are removed.
    IntoDir,
}

/// The hidden directory a sort writes its output into.
#[derive(Debug)]
pub(crate) struct Staging {
    pending: PendingDir,
    output: PathBuf,
    layout: Layout,
    progress: Option<Arc<SortProgress>>,
}

/// The last component of `path`.
fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

impl Staging {
    /// Creates the staging directory for `output`, after removing those a
    /// killed sort left for it.
    ///
    /// # Errors
    /// [`Error::Interrupted`] when `progress` was interrupted already;
    /// [`Error::Store`] (IO) when the directory cannot be created.
    pub(crate) fn create(
        output: &Path,
        layout: Layout,
        overwrite: bool,
        progress: Option<Arc<SortProgress>>,
    ) -> Result<Staging, Error> {
        let create = || match layout {
            Layout::File => PendingDir::for_file(output, overwrite),
            Layout::NewDir => PendingDir::create(output),
            Layout::IntoDir => PendingDir::within(output, "strata-sort", overwrite),
        };
        let pending = match &progress {
            Some(p) => {
                let mut state = p.publication();
                if matches!(*state, Publication::Interrupted) {
                    return Err(Error::Interrupted);
                }
                let pending = create()?;
                *state = Publication::Staged(pending.path().to_path_buf());
                pending
            }
            None => create()?,
        };
        Ok(Staging {
            pending,
            output: output.to_path_buf(),
            layout,
            progress,
        })
    }

    /// The directory the output's files are written into.
    pub(crate) fn dir(&self) -> &Path {
        self.pending.path()
    }

    /// Where a one-file output is written.
    pub(crate) fn file(&self) -> PathBuf {
        self.dir().join(file_name(&self.output))
    }

    /// Moves the staged `files` (in the staging directory) to their names;
    /// returns the names.
    ///
    /// # Errors
    /// [`Error::Interrupted`] when the sort was interrupted;
    /// [`Error::Store`]: the output appeared meanwhile (and overwriting is
    /// off), or a rename failed.
    pub(crate) fn publish(self, files: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
        let Staging {
            pending,
            output,
            layout,
            progress,
        } = self;
        let mut state = progress.as_deref().map(SortProgress::publication);
        if state
            .as_deref()
            .is_some_and(|s| matches!(s, Publication::Interrupted))
        {
            return Err(Error::Interrupted);
        }
        // A directory that was new must still be.
        if layout == Layout::NewDir && output.exists() {
            return Err(Error::Store(strata_store::Error::OutputExists {
                path: output,
                count: 1,
            }));
        }
        pending.commit()?;
        let names = match layout {
            Layout::File => vec![output],
            Layout::NewDir | Layout::IntoDir => {
                let names: Vec<PathBuf> = files.iter().map(|f| output.join(file_name(f))).collect();
                if layout == Layout::IntoDir {
                    remove_stale_parts(&output, &names);
                }
                names
            }
        };
        if let Some(s) = state.as_deref_mut() {
            *s = Publication::Published;
        }
        Ok(names)
    }
}

/// Whether `name` is a part file of a directory output, named as the sort
/// names them (`part-` and eight digits): other writers' `part-*` files
/// (a compacted dataset's `part-GGGGGG-NNNNNNNN.parquet`, Spark's
/// `part-00000-UUID.snappy.parquet`) are never taken for one.
fn is_part(name: &str) -> bool {
    name.strip_prefix("part-")
        .and_then(|n| n.strip_suffix(".parquet"))
        .is_some_and(|digits| digits.len() == 8 && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// Removes the part files in `dir` of an earlier sort that this one did
/// not write (an overwrite with fewer files).
fn remove_stale_parts(dir: &Path, written: &[PathBuf]) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if is_part(&e.file_name().to_string_lossy()) && !written.contains(&p) {
            let _ = fs::remove_file(&p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_sorts_own_part_names_are_parts() {
        assert!(is_part("part-00000000.parquet"));
        assert!(is_part("part-12345678.parquet"));
        for other in [
            "part-000002-00000000.parquet",
            "part-00000-6f1c2a.snappy.parquet",
            "part-0000000.parquet",
            "part-0000000a.parquet",
            "part-00000000.parquet.bak",
            "data.parquet",
        ] {
            assert!(!is_part(other), "{other}");
        }
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_staged_file_appears_only_when_published() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("out.parquet");
        let s = Staging::create(&out, Layout::File, false, None).unwrap();
        fs::write(s.file(), b"x").unwrap();
        assert!(!out.exists());
        assert!(names(d.path())[0].starts_with(".out.parquet."));
        assert_eq!(s.publish(&[]).unwrap(), vec![out.clone()]);
        assert_eq!(names(d.path()), ["out.parquet"]);
        // Without overwrite an output that appeared is kept; dropped
        // unpublished, nothing is left.
        let s = Staging::create(&out, Layout::File, false, None).unwrap();
        fs::write(s.file(), b"y").unwrap();
        assert!(matches!(s.publish(&[]), Err(Error::Store(_))));
        assert_eq!(fs::read(&out).unwrap(), b"x");
        assert_eq!(names(d.path()), ["out.parquet"]);
    }

    #[test]
    fn directories_are_published_whole_and_stale_staging_is_removed() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("sorted");
        // A killed sort's staging directory.
        // (Process ids stop below 2^22 on Linux.)
        let stale = d.path().join(".sorted.999999999.strata-tmp");
        fs::create_dir(&stale).unwrap();
        fs::write(stale.join("part-00000000.parquet"), b"old").unwrap();
        let s = Staging::create(&out, Layout::NewDir, false, None).unwrap();
        assert!(!stale.exists());
        let part = s.dir().join("part-00000000.parquet");
        fs::write(&part, b"new").unwrap();
        assert!(!out.exists());
        let got = s.publish(&[part]).unwrap();
        assert_eq!(got, vec![out.join("part-00000000.parquet")]);
        assert_eq!(names(d.path()), ["sorted"]);
        assert_eq!(names(&out), ["part-00000000.parquet"]);

        // Into the existing directory: one part replaces two, other files
        // stay.
        fs::write(out.join("part-00000001.parquet"), b"old").unwrap();
        fs::write(out.join("notes.txt"), b"mine").unwrap();
        let s = Staging::create(&out, Layout::IntoDir, true, None).unwrap();
        let part = s.dir().join("part-00000000.parquet");
        fs::write(&part, b"newer").unwrap();
        assert_eq!(names(&out).len(), 4, "{:?}", names(&out));
        s.publish(&[part]).unwrap();
        assert_eq!(names(&out), ["notes.txt", "part-00000000.parquet"]);
        assert_eq!(
            fs::read(out.join("part-00000000.parquet")).unwrap(),
            b"newer"
        );
    }

    #[test]
    fn an_interrupt_removes_the_staged_output_or_finds_it_complete() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("out.arrow");
        let p = Arc::new(SortProgress::default());
        let s = Staging::create(&out, Layout::File, false, Some(p.clone())).unwrap();
        fs::write(s.file(), b"x").unwrap();
        assert!(!p.interrupt(), "nothing was published");
        assert!(p.interrupted());
        assert!(names(d.path()).is_empty());
        assert!(matches!(s.publish(&[]), Err(Error::Interrupted)));
        assert!(!out.exists());
        assert!(matches!(
            Staging::create(&out, Layout::File, false, Some(p)),
            Err(Error::Interrupted)
        ));
        assert!(names(d.path()).is_empty());

        // Published first: the interrupt keeps the complete output.
        let p = Arc::new(SortProgress::default());
        let s = Staging::create(&out, Layout::File, false, Some(p.clone())).unwrap();
        fs::write(s.file(), b"x").unwrap();
        s.publish(&[]).unwrap();
        assert!(p.interrupt(), "the output was complete");
        assert!(!p.interrupted());
        assert_eq!(names(d.path()), ["out.arrow"]);
    }
}
