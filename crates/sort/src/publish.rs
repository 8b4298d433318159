//! A sort's output stays out of sight until the whole sort is done.
//!
//! Everything a sort writes for its output goes into a hidden staging
//! directory ([`Staging`]): `.NAME.staging-PID.strata-tmp` beside the
//! output, or inside it when the output is a directory that exists. No
//! glob of the output (`out.parquet`, `dir/*.parquet`) sees a file of it
//! before [`Staging::publish`], which moves the finished output to its
//! name: the one file renamed onto the output, a new directory renamed
//! whole, or the files of an existing directory renamed into it one by
//! one (replacing the part files of an earlier sort). Dropping a staging
//! directory unpublished removes it with everything in it; one left by a
//! killed sort is removed by the next sort to the same output, once that
//! sort's process is gone (the name holds its id).
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

use strata_store::output::TEMP_SUFFIX;

use crate::{
    Error,
    external::{Publication, SortProgress},
    output_parent,
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
    dir: PathBuf,
    output: PathBuf,
    layout: Layout,
    overwrite: bool,
    progress: Option<Arc<SortProgress>>,
    published: bool,
}

/// The last component of `path`.
fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The prefix of the staging directories for `name`.
fn staging_prefix(name: &str) -> String {
    format!(".{name}.staging-")
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
        let (parent, name) = match layout {
            Layout::IntoDir => (output.to_path_buf(), "strata-sort".to_string()),
            Layout::File | Layout::NewDir => {
                (output_parent(output).to_path_buf(), file_name(output))
            }
        };
        remove_stale(&parent, &name);
        let dir = parent.join(format!(
            "{}{}{TEMP_SUFFIX}",
            staging_prefix(&name),
            std::process::id()
        ));
        // Left by an earlier process of this id, which is gone.
        let _ = fs::remove_dir_all(&dir);
        let create = || fs::create_dir(&dir).map_err(|e| Error::io("create", &dir, e));
        match &progress {
            Some(p) => {
                let mut state = p.publication();
                if matches!(*state, Publication::Interrupted) {
                    return Err(Error::Interrupted);
                }
                create()?;
                *state = Publication::Staged(dir.clone());
            }
            None => create()?,
        }
        Ok(Staging {
            dir,
            output: output.to_path_buf(),
            layout,
            overwrite,
            progress,
            published: false,
        })
    }

    /// The directory the output's files are written into.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where a one-file output is written.
    pub(crate) fn file(&self) -> PathBuf {
        self.dir.join(file_name(&self.output))
    }

    /// Moves the staged `files` (in the staging directory) to their names;
    /// returns the names.
    ///
    /// # Errors
    /// [`Error::Interrupted`] when the sort was interrupted;
    /// [`Error::Store`]: the output appeared meanwhile (and overwriting is
    /// off), or a rename failed.
    pub(crate) fn publish(mut self, files: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
        let progress = self.progress.clone();
        let mut state = progress.as_deref().map(SortProgress::publication);
        if state
            .as_deref()
            .is_some_and(|s| matches!(s, Publication::Interrupted))
        {
            return Err(Error::Interrupted);
        }
        let names = self.move_into_place(files)?;
        self.published = true;
        if let Some(s) = state.as_deref_mut() {
            *s = Publication::Published;
        }
        Ok(names)
    }

    fn move_into_place(&self, files: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
        let exists = || {
            Error::Store(strata_store::Error::OutputExists {
                path: self.output.clone(),
                count: 1,
            })
        };
        let rename = |from: &Path, to: &Path| {
            fs::rename(from, to).map_err(|e| Error::io("rename into", to, e))
        };
        match self.layout {
            Layout::File => {
                if !self.overwrite && self.output.exists() {
                    return Err(exists());
                }
                rename(&self.file(), &self.output)?;
                let _ = fs::remove_dir(&self.dir);
                Ok(vec![self.output.clone()])
            }
            Layout::NewDir => {
                if self.output.exists() {
                    return Err(exists());
                }
                rename(&self.dir, &self.output)?;
                Ok(files
                    .iter()
                    .map(|f| self.output.join(file_name(f)))
                    .collect())
            }
            Layout::IntoDir => {
                let mut names = Vec::with_capacity(files.len());
                for f in files {
                    let name = self.output.join(file_name(f));
                    rename(f, &name)?;
                    names.push(name);
                }
                remove_stale_parts(&self.output, &names);
                let _ = fs::remove_dir_all(&self.dir);
                Ok(names)
            }
        }
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.published {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

/// Removes the staging directories a killed sort left in `parent` for
/// `name`: those whose process is gone (another sort to the same output
/// may be running).
fn remove_stale(parent: &Path, name: &str) {
    let prefix = staging_prefix(name);
    remove_dead(parent, &prefix, TEMP_SUFFIX);
}

/// Removes the entries of `dir` named `PREFIX<pid>[...]SUFFIX` whose
/// process `pid` is gone (on Linux, where that can be told; elsewhere
/// none).
pub(crate) fn remove_dead(dir: &Path, prefix: &str, suffix: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = n.strip_prefix(prefix).filter(|_| n.ends_with(suffix)) else {
            continue;
        };
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let Ok(pid) = digits.parse::<u32>() else {
            continue;
        };
        if pid != std::process::id() && process_gone(pid) {
            let p = e.path();
            let _ = fs::remove_dir_all(&p).or_else(|_| fs::remove_file(&p));
        }
    }
}

/// Whether no process `pid` runs (Linux: no `/proc/<pid>`); false where
/// it cannot be told.
fn process_gone(pid: u32) -> bool {
    cfg!(target_os = "linux")
        && Path::new("/proc/self").exists()
        && !Path::new("/proc").join(pid.to_string()).exists()
}

/// Whether `name` is a part file of a directory output.
pub(crate) fn is_part(name: &str) -> bool {
    name.starts_with("part-") && name.ends_with(".parquet")
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
        assert!(names(d.path())[0].starts_with(".out.parquet.staging-"));
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
        let stale = d.path().join(".sorted.staging-999999999.strata-tmp");
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
