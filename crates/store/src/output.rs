//! Files that appear under their final name only when complete.
//!
//! A [`PendingFile`] is created as a hidden temporary beside its target
//! (`.NAME.PID.strata-tmp`), written, and renamed onto the target by
//! [`PendingFile::commit`]. Dropping it uncommitted deletes the temporary,
//! so an error leaves nothing that looks finished; a process killed
//! outright leaves only a hidden `.strata-tmp` file, which the next run for
//! the same target removes once that process is gone
//! ([`remove_stale_temporaries`]; the name holds its id).
//!
//! A [`PendingDir`] does the same for several files: they are written
//! inside a hidden `.NAME.PID.strata-tmp` directory, and the commit makes
//! them visible. For a new directory it sits beside the target and one
//! rename makes them all visible at once; for files of a directory that
//! exists, even an empty one (which may be a mount point or a link to
//! another disk), or for one file ([`PendingDir::for_file`]), it sits in
//! that directory and its files are renamed into it one by one.
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

/// Temporaries this process made: the first is `.NAME.PID.strata-tmp`,
/// each later one `.NAME.PID-N.strata-tmp`, so that two threads writing
/// one target never share a temporary.
static TEMPORARIES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn temp_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let pid = std::process::id();
    let tag = match TEMPORARIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed) {
        0 => pid.to_string(),
        n => format!("{pid}-{n}"),
    };
    target.with_file_name(format!(".{name}.{tag}{TEMP_SUFFIX}"))
}

/// Whether `rest` ends a temporary's name after its process id: the
/// suffix, or `-N` and the suffix.
fn temp_rest(rest: &str) -> bool {
    rest == TEMP_SUFFIX
        || rest.strip_prefix('-').is_some_and(|r| {
            r.strip_suffix(TEMP_SUFFIX)
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
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

impl PendingFile {
    /// Moves the finished temporary onto the target only if no file is
    /// there, in one step (a hard link, which never replaces, then the
    /// temporary's removal): of two writers racing for one name, exactly
    /// one wins. For commits that claim the next version of a table.
    ///
    /// # Errors
    /// [`Error::OutputExists`] when the target exists (the temporary is
    /// removed, the target untouched); [`Error::Io`] when the link fails
    /// otherwise.
    pub fn commit_new(mut self) -> Result<PathBuf, Error> {
        if self.durable && !self.synced {
            self.sync()?;
        }
        match fs::hard_link(&self.temp, &self.target) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(Error::OutputExists {
                    path: self.target.clone(),
                    count: 1,
                });
            }
            Err(e) => return Err(Error::io("link into", &self.target, e)),
        }
        // The target holds the bytes now; the temporary's name goes (its
        // drop would too).
        let _ = fs::remove_file(&self.temp);
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
    sync(parent_dir(target));
}

/// The directory `target` is in (`.` for a bare name).
fn parent_dir(target: &Path) -> &Path {
    or_dot(target.parent().unwrap_or(Path::new("")))
}

/// `dir`, or `.` for the empty path.
fn or_dot(dir: &Path) -> &Path {
    if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    }
}

/// Syncs the directory `dir`, as [`sync_dir`] does its target's.
fn sync(dir: &Path) {
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

/// Writes `bytes` to `target` only if no file of that name exists, in one
/// step ([`PendingFile::commit_new`]): of two writers racing for one
/// name, exactly one gets it. Synced before the link (and the directory
/// after) when `durable`. For commits that claim a table's next version.
///
/// # Errors
/// [`Error::OutputExists`] when the target exists (it is left as it was);
/// [`Error::Io`] when writing, syncing or linking fails (the temporary is
/// removed).
pub fn write_new(target: &Path, bytes: &[u8], durable: bool) -> Result<PathBuf, Error> {
    // Started as if it may replace (no check of the name now): the claim
    // is `commit_new`'s, which never replaces.
    write_pending(target, bytes, true, durable)?.commit_new()
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

/// A directory of files under construction: a hidden temporary directory
/// (`.NAME.PID.strata-tmp`) whose files [`PendingDir::commit`] makes
/// visible, so that a glob of the target sees none of them before. Made
/// for a new directory ([`PendingDir::start`], [`PendingDir::create`]),
/// it sits beside the target and one rename makes the whole directory
/// appear; made for files of a directory that exists
/// ([`PendingDir::within`], [`PendingDir::for_file`]), it sits in that
/// directory and its files are renamed into it one by one. Dropping it
/// uncommitted removes it and all it holds.
#[derive(Debug)]
pub struct PendingDir {
    temp: PathBuf,
    target: PathBuf,
    publish: Publish,
    committed: bool,
}

/// How a [`PendingDir`] reaches its target.
#[derive(Debug, Clone, Copy)]
enum Publish {
    /// Renamed onto the target whole, else entry by entry, an existing
    /// name being an error.
    Whole,
    /// Entry by entry into the target, an existing name replaced when
    /// `replace`, else an error.
    Entries { replace: bool },
}

impl PendingDir {
    /// Starts `target` as a pending directory when it is missing or an
    /// empty directory, and its parent exists; `None` otherwise (files
    /// are then written in the target itself, each as a
    /// [`PendingFile`]). A missing target is staged beside it and appears
    /// by one rename ([`PendingDir::create`]); an empty one is staged
    /// inside itself ([`PendingDir::within`]), since it may be a mount
    /// point or a link to another disk than its parent's, where a
    /// directory beside it could not be renamed onto it. Temporaries that
    /// killed runs left for `target` are removed first.
    pub fn start(target: &Path) -> Option<PendingDir> {
        let name = target.file_name()?.to_str()?;
        match fs::symlink_metadata(target) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => PendingDir::create(target).ok(),
            Ok(_) => {
                let empty = fs::read_dir(target).ok()?.next().is_none();
                if empty {
                    PendingDir::within(target, name, false).ok()
                } else {
                    None
                }
            }
            Err(_) => None,
        }
    }

    /// Creates the temporary for the new directory `target` beside it
    /// (renamed onto it whole by the commit), after removing those that
    /// killed runs left for it.
    ///
    /// # Errors
    /// [`Error::Io`] when the temporary cannot be created.
    pub fn create(target: &Path) -> Result<PendingDir, Error> {
        PendingDir::make(target, target, Publish::Whole)
    }

    /// Creates a temporary inside the existing directory `dir`, named for
    /// `name` (`dir/.NAME.PID.strata-tmp`), after removing those that
    /// killed runs left there; the commit renames its entries into `dir`
    /// one by one, replacing files of the same names when `replace`.
    ///
    /// # Errors
    /// [`Error::Io`] when the temporary cannot be created.
    pub fn within(dir: &Path, name: &str, replace: bool) -> Result<PendingDir, Error> {
        PendingDir::make(&dir.join(name), dir, Publish::Entries { replace })
    }

    /// A temporary for the one file `target`, beside it: the file is
    /// written in it under the target's name (`path()/NAME`), and the
    /// commit renames it onto the target, an existing one replaced only
    /// when `replace`.
    ///
    /// # Errors
    /// [`Error::Io`] when the temporary cannot be created.
    pub fn for_file(target: &Path, replace: bool) -> Result<PendingDir, Error> {
        let name = target.file_name().unwrap_or_default().to_string_lossy();
        let dir = target.parent().unwrap_or(Path::new(""));
        PendingDir::within(dir, &name, replace)
    }

    /// Creates the temporary named for `named` (`.NAME.PID.strata-tmp`,
    /// or `.NAME.PID-N.strata-tmp` past the process's first, beside it)
    /// that is published into or onto `target`.
    fn make(named: &Path, target: &Path, publish: Publish) -> Result<PendingDir, Error> {
        remove_stale_temporaries(named);
        let temp = temp_path(named);
        fs::create_dir(&temp).map_err(|e| Error::io("create", &temp, e))?;
        Ok(PendingDir {
            temp,
            target: target.to_path_buf(),
            publish,
            committed: false,
        })
    }

    /// The temporary directory, where the files go.
    pub fn path(&self) -> &Path {
        &self.temp
    }

    /// The final path: the new directory, or the one the files go into.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Makes the files visible. A new directory's temporary is renamed
    /// onto the target (still missing, or an empty directory made
    /// meanwhile, whose permissions it takes); where one rename cannot do
    /// it (files appeared in the target meanwhile), each entry
    /// is renamed into the target instead, an existing name being an
    /// error. Otherwise the entries are renamed into the target one by
    /// one, in order of name.
    ///
    /// # Errors
    /// [`Error::OutputExists`] for an entry whose name is taken in the
    /// target (unless replacing); [`Error::Io`] when a rename fails.
    pub fn commit(mut self) -> Result<PathBuf, Error> {
        let renamed = match self.publish {
            Publish::Whole => {
                if let Ok(meta) = fs::metadata(&self.target) {
                    let _ = fs::set_permissions(&self.temp, meta.permissions());
                }
                fs::rename(&self.temp, &self.target).is_ok()
            }
            Publish::Entries { .. } => false,
        };
        if !renamed {
            self.move_entries()?;
            let _ = fs::remove_dir_all(&self.temp);
        }
        self.committed = true;
        match self.publish {
            Publish::Whole => sync_dir(&self.target),
            Publish::Entries { .. } => sync(or_dot(&self.target)),
        }
        Ok(self.target.clone())
    }

    /// Renames the entries of the temporary into the target. A directory
    /// whose name the target holds as a directory already is merged into
    /// it, entry by entry (a partitioned output written into the
    /// directories of an earlier one), so only files can be taken.
    fn move_entries(&self) -> Result<(), Error> {
        let replace = matches!(self.publish, Publish::Entries { replace: true });
        // Every name is checked before the first rename, so a taken one
        // leaves none of the files visible.
        if !replace {
            let mut taken = Vec::new();
            taken_names(&self.temp, &self.target, &mut taken)?;
            if let Some(first) = taken.first() {
                return Err(Error::OutputExists {
                    path: first.clone(),
                    count: taken.len(),
                });
            }
        }
        move_tree(&self.temp, &self.target)
    }
}

/// The entries of directory `dir`, by name.
fn sorted_names(dir: &Path) -> Result<Vec<std::ffi::OsString>, Error> {
    let mut names: Vec<_> = fs::read_dir(dir)
        .and_then(|entries| entries.map(|e| e.map(|e| e.file_name())).collect())
        .map_err(|e| Error::io("read", dir, e))?;
    names.sort();
    Ok(names)
}

/// Whether `path` is a directory (not a link to one).
fn is_dir(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// Adds to `taken` the paths under `to` that moving the tree `from` into
/// it would replace: files, and directories where `from` has a file.
fn taken_names(from: &Path, to: &Path, taken: &mut Vec<PathBuf>) -> Result<(), Error> {
    for name in sorted_names(from)? {
        let (src, dst) = (from.join(&name), to.join(&name));
        if fs::symlink_metadata(&dst).is_err() {
            continue;
        }
        if is_dir(&src) && is_dir(&dst) {
            taken_names(&src, &dst, taken)?;
        } else {
            taken.push(dst);
        }
    }
    Ok(())
}

/// Renames every entry of `from` into `to`, merging directories that
/// both hold.
fn move_tree(from: &Path, to: &Path) -> Result<(), Error> {
    for name in sorted_names(from)? {
        let (src, dst) = (from.join(&name), to.join(&name));
        if is_dir(&src) && is_dir(&dst) {
            move_tree(&src, &dst)?;
            sync(&dst);
        } else {
            fs::rename(&src, &dst).map_err(|e| Error::io("rename into", &dst, e))?;
        }
    }
    Ok(())
}

impl Drop for PendingDir {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.temp);
        }
    }
}

/// Removes the temporaries (files or directories) that earlier runs left
/// for `target`: `.NAME.PID.strata-tmp` beside it, where process `PID`
/// is gone or is this one (a process of the same id before it). Those of
/// running processes are kept.
pub fn remove_stale_temporaries(target: &Path) {
    let Some(name) = target.file_name() else {
        return;
    };
    // This process's first temporary for the target is a process's
    // before it of the same id (this one writes the target after this
    // call); its later ones may be other threads' and stay.
    let own = target.with_file_name(format!(
        ".{}.{}{TEMP_SUFFIX}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let _ = fs::remove_dir_all(&own).or_else(|_| fs::remove_file(&own));
    let prefix = format!(".{}.", name.to_string_lossy());
    remove_dead(parent_dir(target), &prefix, temp_rest);
}

/// Whether the file name `name` is a strata temporary
/// (`.NAME.PID.strata-tmp`) that [`remove_stale_temporaries`] would remove:
/// its process is gone, or has this process's id (a process before it).
/// For callers that clean a directory of other writers' leftovers
/// without knowing their targets.
pub fn is_stale_temporary(name: &str) -> bool {
    name.starts_with('.')
        && name
            .strip_suffix(TEMP_SUFFIX)
            .and_then(|n| n.rsplit_once('.'))
            .and_then(|(_, tag)| {
                let pid = tag.split_once('-').map_or(tag, |(pid, n)| {
                    if n.bytes().all(|b| b.is_ascii_digit()) && !n.is_empty() {
                        pid
                    } else {
                        ""
                    }
                });
                pid.parse::<u32>().ok()
            })
            .is_some_and(|pid| pid == std::process::id() || process_gone(pid))
}

/// Removes the entries of `dir` named for a process that is gone:
/// `PREFIX<pid>` alone or followed by `-` and more (the scheme of a
/// temporary directory made with a random part after the process id).
/// Those of running processes and of this one are kept.
pub fn remove_orphans(dir: &Path, prefix: &str) {
    remove_dead(dir, prefix, |rest| rest.is_empty() || rest.starts_with('-'));
}

/// Removes the entries of `dir` named `PREFIX<pid>REST`, with `rest`
/// true of `REST`, whose process `pid` is gone (not this one).
fn remove_dead(dir: &Path, prefix: &str, rest: impl Fn(&str) -> bool) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        let Some(tail) = n.strip_prefix(prefix) else {
            continue;
        };
        let digits = tail.len() - tail.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let Ok(pid) = tail[..digits].parse::<u32>() else {
            continue;
        };
        if rest(&tail[digits..]) && pid != std::process::id() && process_gone(pid) {
            let p = e.path();
            let _ = fs::remove_dir_all(&p).or_else(|_| fs::remove_file(&p));
        }
    }
}

/// Whether no process `pid` runs (Linux: no `/proc/<pid>`); false where
/// that cannot be told, so that nothing of a running process is removed.
pub fn process_gone(pid: u32) -> bool {
    cfg!(target_os = "linux")
        && Path::new("/proc/self").exists()
        && !Path::new("/proc").join(pid.to_string()).exists()
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
        // An empty target is staged inside itself (it may be a mount
        // point), and keeps its permissions.
        use std::os::unix::fs::PermissionsExt;
        let empty = root.path().join("empty");
        fs::create_dir(&empty).unwrap();
        fs::set_permissions(&empty, fs::Permissions::from_mode(0o700)).unwrap();
        let d = PendingDir::start(&empty).unwrap();
        assert_eq!(d.path().parent(), Some(empty.as_path()));
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
        // (Process ids stop below 2^22 on Linux.)
        fs::create_dir(root.path().join(".y.999999999.strata-tmp")).unwrap();
        fs::write(root.path().join(".y.999999999.strata-tmp/f"), b"").unwrap();
        let d = PendingDir::start(&root.path().join("y")).unwrap();
        drop(d);
        assert_eq!(files(root.path()), ["empty", "out"]);
    }

    #[test]
    fn a_taken_name_leaves_none_of_the_files_visible() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("out");
        fs::create_dir(&out).unwrap();
        let d = PendingDir::within(&out, "out", false).unwrap();
        for name in ["a.parquet", "b.parquet", "c.parquet"] {
            fs::write(d.path().join(name), b"new").unwrap();
        }
        fs::write(out.join("b.parquet"), b"theirs").unwrap();
        let e = d.commit().unwrap_err();
        assert!(matches!(e, Error::OutputExists { count: 1, .. }), "{e}");
        assert_eq!(files(&out), ["b.parquet"]);
        assert_eq!(fs::read(out.join("b.parquet")).unwrap(), b"theirs");
    }

    #[test]
    fn a_link_to_an_empty_directory_stays_a_link() {
        let root = tempfile::tempdir().unwrap();
        let elsewhere = root.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        let link = root.path().join("out");
        std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        let d = PendingDir::start(&link).unwrap();
        fs::write(d.path().join("a.parquet"), b"a").unwrap();
        assert!(files(&elsewhere).iter().all(|n| n.starts_with('.')));
        d.commit().unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(files(&elsewhere), ["a.parquet"]);
        assert_eq!(files(root.path()), ["elsewhere", "out"]);
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
    fn files_are_published_into_a_directory_that_exists() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("out");
        fs::create_dir(&out).unwrap();
        fs::write(out.join("a.parquet"), b"old").unwrap();
        fs::write(out.join("notes.txt"), b"mine").unwrap();
        // Without replacing, a name that is taken is an error and keeps
        // the file; the temporary is removed when dropped.
        let d = PendingDir::within(&out, "job", false).unwrap();
        let temp = d.path().file_name().unwrap().to_string_lossy().into_owned();
        let rest = temp
            .strip_prefix(&format!(".job.{}", std::process::id()))
            .unwrap();
        assert_eq!(d.path().parent(), Some(out.as_path()));
        assert!(temp_rest(rest), "{temp}");
        fs::write(d.path().join("a.parquet"), b"new").unwrap();
        fs::write(d.path().join("b.parquet"), b"new").unwrap();
        assert_eq!(
            files(&out),
            [
                d.path().file_name().unwrap().to_str().unwrap(),
                "a.parquet",
                "notes.txt"
            ]
        );
        let e = d.commit().unwrap_err();
        assert!(
            matches!(e, Error::OutputExists { ref path, .. } if path == &out.join("a.parquet")),
            "{e}"
        );
        assert_eq!(fs::read(out.join("a.parquet")).unwrap(), b"old");
        assert_eq!(files(&out), ["a.parquet", "notes.txt"]);
        // Replacing: every file is moved in, the others stay.
        let d = PendingDir::within(&out, "job", true).unwrap();
        fs::write(d.path().join("a.parquet"), b"new").unwrap();
        fs::write(d.path().join("b.parquet"), b"new").unwrap();
        assert_eq!(d.commit().unwrap(), out);
        assert_eq!(files(&out), ["a.parquet", "b.parquet", "notes.txt"]);
        assert_eq!(fs::read(out.join("a.parquet")).unwrap(), b"new");
    }

    #[test]
    fn one_file_is_published_from_its_own_directory() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("out.arrow");
        let d = PendingDir::for_file(&target, false).unwrap();
        assert_eq!(d.target(), root.path());
        fs::write(d.path().join("out.arrow"), b"x").unwrap();
        assert!(!target.exists());
        d.commit().unwrap();
        assert_eq!(files(root.path()), ["out.arrow"]);
        // An existing file is kept unless replaced.
        let d = PendingDir::for_file(&target, false).unwrap();
        fs::write(d.path().join("out.arrow"), b"y").unwrap();
        assert!(matches!(d.commit(), Err(Error::OutputExists { .. })));
        assert_eq!(fs::read(&target).unwrap(), b"x");
        let d = PendingDir::for_file(&target, true).unwrap();
        fs::write(d.path().join("out.arrow"), b"y").unwrap();
        d.commit().unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"y");
        assert_eq!(files(root.path()), ["out.arrow"]);
    }

    #[test]
    fn stale_temporaries_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.parquet");
        // A process that runs: the test's parent.
        let live = std::os::unix::process::parent_id();
        let own = std::process::id();
        for name in [
            // Of processes that are gone, or of this one: removed.
            ".a.parquet.999999999.strata-tmp".to_string(),
            format!(".a.parquet.{own}.strata-tmp"),
            // Of a running process, or of other targets: kept.
            format!(".a.parquet.{live}.strata-tmp"),
            ".b.parquet.999999999.strata-tmp".to_string(),
            ".a.parquet.x.999999999.strata-tmp".to_string(),
            // A later temporary of a gone process: removed; of this
            // one (another thread's): kept.
            ".a.parquet.999999999-7.strata-tmp".to_string(),
            format!(".a.parquet.{own}-3.strata-tmp"),
        ] {
            fs::write(dir.path().join(name), b"").unwrap();
        }
        fs::create_dir(dir.path().join(".a.parquet.999999998.strata-tmp")).unwrap();
        fs::write(dir.path().join(".a.parquet.999999998.strata-tmp/f"), b"").unwrap();
        remove_stale_temporaries(&target);
        let mut kept = vec![
            format!(".a.parquet.{live}.strata-tmp"),
            format!(".a.parquet.{own}-3.strata-tmp"),
            ".a.parquet.x.999999999.strata-tmp".to_string(),
            ".b.parquet.999999999.strata-tmp".to_string(),
        ];
        kept.sort();
        assert_eq!(files(dir.path()), kept);
    }

    #[test]
    fn orphans_of_gone_processes_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let live = std::os::unix::process::parent_id();
        let own = std::process::id();
        for name in [
            ".spill-999999999-x1".to_string(),
            ".spill-999999999".to_string(),
            format!(".spill-{live}-x2"),
            format!(".spill-{own}-x3"),
            ".spill-999999999x".to_string(),
            ".other-999999999-x".to_string(),
        ] {
            fs::create_dir(dir.path().join(name)).unwrap();
        }
        remove_orphans(dir.path(), ".spill-");
        let mut kept = vec![
            format!(".spill-{live}-x2"),
            format!(".spill-{own}-x3"),
            ".spill-999999999x".to_string(),
            ".other-999999999-x".to_string(),
        ];
        kept.sort();
        assert_eq!(files(dir.path()), kept);
        assert!(!process_gone(own) && !process_gone(live));
        assert!(process_gone(999_999_999));
    }

    #[test]
    fn threads_writing_one_target_never_share_a_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("v1.json");
        let wins: usize = std::thread::scope(|sc| {
            let handles: Vec<_> = (0..8)
                .map(|i| {
                    let target = &target;
                    sc.spawn(move || {
                        write_new(target, format!("{i}").as_bytes(), false).is_ok() as usize
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(wins, 1);
        assert_eq!(files(dir.path()), ["v1.json"]);
        assert!(is_stale_temporary(".x.parquet.999999999-4.strata-tmp"));
        assert!(!is_stale_temporary(".x.parquet.999999999-.strata-tmp"));
        assert!(!is_stale_temporary(".x.parquet.999999999-a.strata-tmp"));
    }
}
