//! Files that appear under their final name only when complete.
//!
//! A [`PendingFile`] is created as a hidden temporary beside its target
//! (`.NAME.PID.strata-tmp`), written, and renamed onto the target by
//! [`PendingFile::commit`]. Dropping it uncommitted deletes the temporary,
//! so an error leaves nothing that looks finished; a process killed
//! outright leaves only a hidden `.strata-tmp` file, which the next run for
//! the same target removes ([`remove_stale_temporaries`]).
//!
//! A [`PendingDir`] does the same for a whole new directory: its files
//! are written inside a hidden `.NAME.PID.strata-tmp` directory beside
//! the target, and one rename makes them all visible at once.
//!
//! A durable file ([`PendingFile::durable`], [`write_atomically`] with
//! `durable`) is also synced before the rename and its directory after it,
//! so once the commit returns the file survives a crash of the machine:
//! compaction's manifest and outputs, and the JSON summaries, use it.

use std::{
    fs::{self, File, OpenOptions},
    io::Write,
    path::{Path, PathBuf},
};

use crate::{Error, direct::DirectWriter};

/// Suffix of every temporary strata writes.
pub const TEMP_SUFFIX: &str = ".strata-tmp";

/// An output file under construction.
#[derive(Debug)]
pub struct PendingFile {
    temp: PathBuf,
    target: PathBuf,
    overwrite: bool,
    durable: bool,
    synced: bool,
    committed: bool,
}

fn temp_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    target.with_file_name(format!(".{name}.{}{TEMP_SUFFIX}", std::process::id()))
}

impl PendingFile {
    /// Creates the temporary for `target` and returns it open for writing.
    ///
    /// # Errors
    /// [`Error::Io`] when the temporary cannot be created.
    pub fn create(target: PathBuf, overwrite: bool) -> Result<(PendingFile, File), Error> {
        let temp = temp_path(&target);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .map_err(|e| Error::io("create", &temp, e))?;
        Ok((
            PendingFile {
                temp,
                target,
                overwrite,
                durable: false,
                synced: false,
                committed: false,
            },
            file,
        ))
    }

    /// [`PendingFile::create`], the temporary written through a
    /// [`DirectWriter`] (for large sequential outputs: `O_DIRECT`, past the
    /// page cache).
    ///
    /// # Errors
    /// [`Error::Io`] when the temporary cannot be created or its writing
    /// thread started.
    pub fn create_direct(
        target: PathBuf,
        overwrite: bool,
    ) -> Result<(PendingFile, DirectWriter), Error> {
        PendingFile::create_direct_chunked(target, overwrite, crate::direct::CHUNK_BYTES)
    }

    /// [`PendingFile::create_direct`] with the writer's buffers of
    /// `chunk_bytes` ([`DirectWriter::with_chunk_bytes`]).
    ///
    /// # Errors
    /// As [`PendingFile::create_direct`].
    pub fn create_direct_chunked(
        target: PathBuf,
        overwrite: bool,
        chunk_bytes: usize,
    ) -> Result<(PendingFile, DirectWriter), Error> {
        let (pending, file) = PendingFile::create(target, overwrite)?;
        let direct = DirectWriter::with_chunk_bytes(file, &pending.temp, chunk_bytes)
            .map_err(|e| Error::io("write", &pending.temp, e))?;
        Ok((pending, direct))
    }

    /// Makes the commit durable: the temporary's data is synced before
    /// the rename and the directory after it.
    #[must_use]
    pub fn durable(mut self, durable: bool) -> Self {
        self.durable = durable;
        self
    }

    /// Starts one output file: an existing `target` is an error unless
    /// `overwrite`, temporaries a killed run left for it are removed, and
    /// the new temporary is returned open for writing.
    ///
    /// # Errors
    /// [`Error::OutputExists`] for an existing target without `overwrite`;
    /// [`Error::Io`] when the temporary cannot be created.
    pub fn start(target: &Path, overwrite: bool) -> Result<(PendingFile, File), Error> {
        if !overwrite && target.exists() {
            return Err(Error::OutputExists {
                path: target.to_path_buf(),
                count: 1,
            });
        }
        remove_stale_temporaries(target);
        PendingFile::create(target.to_path_buf(), overwrite)
    }

    /// The final path.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Syncs the temporary's data to disk (before the commit, so that a
    /// full or failing disk is found while nothing is visible).
    ///
    /// # Errors
    /// [`Error::Io`] when the temporary cannot be opened or synced.
    pub fn sync(&mut self) -> Result<(), Error> {
        OpenOptions::new()
            .write(true)
            .open(&self.temp)
            .and_then(|f| f.sync_all())
            .map_err(|e| Error::io("sync", &self.temp, e))?;
        self.synced = true;
        Ok(())
    }

    /// Moves the finished temporary onto the target.
    ///
    /// # Errors
    /// [`Error::OutputExists`] when the target appeared meanwhile and
    /// overwriting is off; [`Error::Io`] when the rename fails.
    pub fn commit(mut self) -> Result<PathBuf, Error> {
        if !self.overwrite && self.target.exists() {
            return Err(Error::OutputExists {
                path: self.target.clone(),
                count: 1,
            });
        }
        if self.durable && !self.synced {
            self.sync()?;
        }
        fs::rename(&self.temp, &self.target)
            .map_err(|e| Error::io("rename into", &self.target, e))?;
        self.committed = true;
        if self.durable {
            sync_dir(&self.target);
        }
        Ok(self.target.clone())
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_file(&self.temp);
        }
    }
}

/// Syncs the directory of `target`, making a rename into it durable. A
/// directory that cannot be opened or synced (some file systems refuse)
/// is left as it is: the rename itself has happened.
fn sync_dir(target: &Path) {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Writes `bytes` to `target` through a temporary renamed when complete
/// (synced first, and the directory after, when `durable`). With
/// `overwrite` an existing target is replaced in one step; without, it is
/// an error and the target is kept.
///
/// # Errors
/// [`Error::OutputExists`] for an existing target without `overwrite`;
/// [`Error::Io`] when writing, syncing or renaming fails (the temporary is
/// removed).
pub fn write_atomically(
    target: &Path,
    bytes: &[u8],
    overwrite: bool,
    durable: bool,
) -> Result<PathBuf, Error> {
    write_pending(target, bytes, overwrite, durable)?.commit()
}

/// [`write_atomically`] up to the commit: `bytes` are written to the
/// temporary (and synced when `durable`), so that all that is left to
/// fail is the rename. For an output that must be known to be writable
/// before other outputs appear (a run's summary beside its data files).
///
/// # Errors
/// As [`write_atomically`], for everything before the rename.
pub fn write_pending(
    target: &Path,
    bytes: &[u8],
    overwrite: bool,
    durable: bool,
) -> Result<PendingFile, Error> {
    let (pending, mut file) = PendingFile::start(target, overwrite)?;
    file.write_all(bytes)
        .map_err(|e| Error::io("write", target, e))?;
    drop(file);
    let mut pending = pending.durable(durable);
    if durable {
        pending.sync()?;
    }
    Ok(pending)
}

/// A directory under construction: a hidden temporary directory beside
/// its target (`.NAME.PID.strata-tmp`), renamed onto the target by
/// [`PendingDir::commit`], so that a glob of the target sees none of its
/// files or all of them. Dropping it uncommitted removes it and all it
/// holds.
#[derive(Debug)]
pub struct PendingDir {
    temp: PathBuf,
    target: PathBuf,
    committed: bool,
}

impl PendingDir {
    /// Starts `target` as a pending directory when it is missing or an
    /// empty directory, and its parent exists; `None` otherwise (files
    /// are then written in the target itself, each as a
    /// [`PendingFile`]). Temporaries that killed runs left for `target`
    /// are removed first.
    pub fn start(target: &Path) -> Option<PendingDir> {
        let empty = match fs::read_dir(target) {
            Ok(mut entries) => entries.next().is_none(),
            Err(e) => e.kind() == std::io::ErrorKind::NotFound && !target.exists(),
        };
        if !empty || target.file_name().is_none() {
            return None;
        }
        remove_stale_temporaries(target);
        let temp = temp_path(target);
        fs::create_dir(&temp).ok()?;
        Some(PendingDir {
            temp,
            target: target.to_path_buf(),
            committed: false,
        })
    }

    /// The temporary directory, where the files go.
    pub fn path(&self) -> &Path {
        &self.temp
    }

    /// The final path.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Renames the temporary onto the target (a missing or empty
    /// directory, which takes the target's permissions). Where one rename
    /// cannot do it (the target is a mount point, or files appeared in it
    /// meanwhile), each entry is renamed into the target instead, an
    /// existing name being an error.
    ///
    /// # Errors
    /// [`Error::OutputExists`] for an entry that appeared in the target
    /// meanwhile; [`Error::Io`] when a rename fails.
    pub fn commit(mut self) -> Result<PathBuf, Error> {
        if let Ok(meta) = fs::metadata(&self.target) {
            let _ = fs::set_permissions(&self.temp, meta.permissions());
        }
        if fs::rename(&self.temp, &self.target).is_err() {
            let entries = fs::read_dir(&self.temp).map_err(|e| Error::io("read", &self.temp, e))?;
            for entry in entries {
                let entry = entry.map_err(|e| Error::io("read", &self.temp, e))?;
                let to = self.target.join(entry.file_name());
                if to.exists() {
                    return Err(Error::OutputExists { path: to, count: 1 });
                }
                fs::rename(entry.path(), &to).map_err(|e| Error::io("rename into", &to, e))?;
            }
            let _ = fs::remove_dir(&self.temp);
        }
        self.committed = true;
        sync_dir(&self.target);
        Ok(self.target.clone())
    }
}

impl Drop for PendingDir {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.temp);
        }
    }
}

/// Removes temporaries that an earlier, killed run left for `target`.
pub fn remove_stale_temporaries(target: &Path) {
    let (Some(dir), Some(name)) = (target.parent(), target.file_name()) else {
        return;
    };
    let prefix = format!(".{}.", name.to_string_lossy());
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let n = entry.file_name();
        let n = n.to_string_lossy();
        if n.starts_with(&prefix) && n.ends_with(TEMP_SUFFIX) {
            let p = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                let _ = fs::remove_dir_all(p);
            } else {
                let _ = fs::remove_file(p);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_atomically_replaces_or_keeps() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("summary.json");
        for durable in [false, true] {
            write_atomically(&target, b"one", true, durable).unwrap();
            assert_eq!(fs::read(&target).unwrap(), b"one");
            write_atomically(&target, b"two", true, durable).unwrap();
            assert_eq!(fs::read(&target).unwrap(), b"two");
            let e = write_atomically(&target, b"three", false, durable).unwrap_err();
            assert!(matches!(e, Error::OutputExists { .. }), "{e}");
            assert_eq!(fs::read(&target).unwrap(), b"two");
            fs::remove_file(&target).unwrap();
        }
        // Only the target is left: no temporaries.
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert!(names.is_empty(), "{names:?}");
        // A target in a missing directory is an error, not a panic.
        let e = write_atomically(&dir.path().join("no/such.json"), b"x", true, true).unwrap_err();
        assert!(matches!(e, Error::Io { .. }), "{e}");
    }

    #[test]
    fn commit_renames_and_drop_cleans() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.parquet");
        let (p, mut f) = PendingFile::create(target.clone(), false).unwrap();
        f.write_all(b"x").unwrap();
        assert!(!target.exists());
        p.commit().unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"x");

        let other = dir.path().join("b.parquet");
        let (p, _f) = PendingFile::create(other.clone(), false).unwrap();
        drop(p);
        assert!(!other.exists());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);

        // The same through a direct writer.
        let direct = dir.path().join("c.parquet");
        let (p, mut w) = PendingFile::create_direct(direct.clone(), false).unwrap();
        w.write_all(b"yz").unwrap();
        drop(w.finish().unwrap());
        assert!(!direct.exists());
        p.commit().unwrap();
        assert_eq!(fs::read(&direct).unwrap(), b"yz");
        let (p, w) = PendingFile::create_direct(other.clone(), false).unwrap();
        drop(w);
        drop(p);
        assert!(!other.exists());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn commit_refuses_to_clobber() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.parquet");
        fs::write(&target, b"old").unwrap();
        let (p, _f) = PendingFile::create(target.clone(), false).unwrap();
        assert!(matches!(p.commit(), Err(Error::OutputExists { .. })));
        assert_eq!(fs::read(&target).unwrap(), b"old");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_pending_directory_appears_whole() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("out");
        // Missing target: files appear only with the commit.
        let d = PendingDir::start(&target).unwrap();
        fs::write(d.path().join("a.parquet"), b"a").unwrap();
        fs::write(d.path().join("b.parquet"), b"b").unwrap();
        assert!(!target.exists());
        let n = d.path().file_name().unwrap().to_string_lossy().into_owned();
        assert!(n.starts_with(".out.") && n.ends_with(TEMP_SUFFIX), "{n}");
        d.commit().unwrap();
        assert_eq!(files(&target), ["a.parquet", "b.parquet"]);
        assert_eq!(files(root.path()), ["out"]);
        // A non-empty target is not replaced.
        assert!(PendingDir::start(&target).is_none());
        // An empty target is, and keeps its permissions.
        use std::os::unix::fs::PermissionsExt;
        let empty = root.path().join("empty");
        fs::create_dir(&empty).unwrap();
        fs::set_permissions(&empty, fs::Permissions::from_mode(0o700)).unwrap();
        let d = PendingDir::start(&empty).unwrap();
        fs::write(d.path().join("c.arrow"), b"c").unwrap();
        d.commit().unwrap();
        assert_eq!(files(&empty), ["c.arrow"]);
        let mode = fs::metadata(&empty).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        // Dropped uncommitted: gone with its files; a killed run's
        // directory is removed by the next start.
        let d = PendingDir::start(&root.path().join("x")).unwrap();
        fs::write(d.path().join("c.arrow"), b"c").unwrap();
        drop(d);
        fs::create_dir(root.path().join(".y.1.strata-tmp")).unwrap();
        fs::write(root.path().join(".y.1.strata-tmp/f"), b"").unwrap();
        let d = PendingDir::start(&root.path().join("y")).unwrap();
        drop(d);
        assert_eq!(files(root.path()), ["empty", "out"]);
    }

    fn files(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn stale_temporaries_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.parquet");
        fs::write(dir.path().join(".a.parquet.1.strata-tmp"), b"").unwrap();
        fs::write(dir.path().join(".b.parquet.1.strata-tmp"), b"").unwrap();
        remove_stale_temporaries(&target);
        let left: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(left, vec![".b.parquet.1.strata-tmp".to_string()]);
    }
}
