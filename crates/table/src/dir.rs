//! Where a table lives: a local directory or a prefix in an object store
//! (`s3://bucket/prefix/table`), and the few operations its metadata
//! needs there: read a file, list a directory, create a file only if it
//! is absent (the commit), replace one, and read a data file's size,
//! modification time and footer.
//!
//! Paths inside a table are relative and `/`-separated (`metadata/v3.
//! metadata.json`); [`TableDir::at`] gives the absolute location that
//! metadata records and messages name: a local path, or the object's URL.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::UNIX_EPOCH,
};

use parquet::file::metadata::ParquetMetaDataReader;
use strata_store::{
    location::{Kind, StoreConfig, parse_dir},
    output::{write_atomically, write_new},
    upload::ObjectDir,
};

use crate::{
    Error,
    stats::{self, FileFacts},
};

/// A table's root.
#[derive(Debug, Clone)]
pub enum TableDir {
    /// A local directory (absolute).
    Local(PathBuf),
    /// A prefix in an object store, and its URL without a trailing `/`.
    Object(Arc<ObjectDir>, String),
}

impl TableDir {
    /// The table at `location`: a local path (made absolute), a
    /// `file://` URL, or an `s3://` URL (with S3 settings from the
    /// `AWS_*` variables and `cfg`).
    ///
    /// # Errors
    /// [`Error::Store`] for a URL that does not parse or a store that
    /// cannot be opened.
    pub fn open(location: &str, cfg: &StoreConfig) -> Result<TableDir, Error> {
        if !location.contains("://") {
            return TableDir::local(Path::new(location));
        }
        let loc = parse_dir(location, cfg)?;
        match (loc.kind, loc.file) {
            (Kind::Local, Some(file)) => TableDir::local(&file),
            (Kind::Local, None) => TableDir::local(Path::new(location)),
            (Kind::S3, _) => {
                let url = location.trim_end_matches('/').to_string();
                Ok(TableDir::Object(
                    Arc::new(ObjectDir::new(loc.store, loc.path, &url)?),
                    url,
                ))
            }
        }
    }

    /// The local directory `dir`, made absolute.
    ///
    /// # Errors
    /// [`Error::Io`] when the current directory cannot be read.
    pub fn local(dir: &Path) -> Result<TableDir, Error> {
        Ok(TableDir::Local(
            std::path::absolute(dir).map_err(|e| Error::io("resolve", dir, e))?,
        ))
    }

    /// The table's root as metadata records it and messages name it.
    pub fn root(&self) -> PathBuf {
        match self {
            TableDir::Local(p) => p.clone(),
            TableDir::Object(_, url) => PathBuf::from(url),
        }
    }

    /// The absolute location of `rel` (a local path, or an object's URL).
    pub fn at(&self, rel: &str) -> PathBuf {
        match self {
            TableDir::Local(p) => p.join(rel),
            TableDir::Object(_, url) => PathBuf::from(format!("{url}/{rel}")),
        }
    }

    /// `rel`'s location as text (what Iceberg's metadata records).
    pub fn uri(&self, rel: &str) -> String {
        self.at(rel).to_string_lossy().into_owned()
    }

    /// The path relative to the root of `location`, an absolute location
    /// under it (a local path, a `file://` or an object URL); `None` for
    /// one elsewhere.
    pub fn relative(&self, location: &str) -> Option<String> {
        match self {
            TableDir::Local(p) => {
                let loc = location.strip_prefix("file://").unwrap_or(location);
                let rel = Path::new(loc).strip_prefix(p).ok()?;
                let parts: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                Some(parts.join("/"))
            }
            TableDir::Object(_, url) => location
                .strip_prefix(url.as_str())?
                .strip_prefix('/')
                .map(str::to_string),
        }
    }

    /// Whether the table is in an object store.
    pub fn is_remote(&self) -> bool {
        matches!(self, TableDir::Object(..))
    }

    /// The bytes of `rel`; `None` when there is no such file.
    ///
    /// # Errors
    /// [`Error::Io`] or [`Error::Store`] when it cannot be read.
    pub fn read(&self, rel: &str) -> Result<Option<Vec<u8>>, Error> {
        match self {
            TableDir::Local(p) => {
                let path = p.join(rel);
                match std::fs::read(&path) {
                    Ok(b) => Ok(Some(b)),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(Error::io("read", &path, e)),
                }
            }
            TableDir::Object(d, _) => Ok(d.get(rel)?.map(|b| b.to_vec())),
        }
    }

    /// The bytes of data file `rel` (`None` when it does not exist), as
    /// one shared buffer: a local file is mapped into memory rather than
    /// copied (a table's data files are written once under a new name and
    /// never changed in place), an object fetched whole.
    ///
    /// # Errors
    /// IO or store errors.
    pub fn read_shared(&self, rel: &str) -> Result<Option<bytes::Bytes>, Error> {
        match self {
            TableDir::Local(p) => {
                let path = p.join(rel);
                let file = match std::fs::File::open(&path) {
                    Ok(f) => f,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                    Err(e) => return Err(Error::io("read", &path, e)),
                };
                let len = file
                    .metadata()
                    .map_err(|e| Error::io("read", &path, e))?
                    .len();
                if let Some(b) = strata_store::source::map_file(&file, len) {
                    return Ok(Some(b));
                }
                Ok(self.read(rel)?.map(bytes::Bytes::from))
            }
            TableDir::Object(d, _) => Ok(d.get(rel)?),
        }
    }

    /// The bytes of the file at `location`, an absolute location that
    /// metadata recorded: under the table's root, or (for a local table)
    /// any local path.
    ///
    /// # Errors
    /// [`Error::BadTable`] for a location outside an object-store table;
    /// IO or store errors, a missing file too.
    pub fn read_location(&self, location: &str) -> Result<Vec<u8>, Error> {
        let gone = || missing(Path::new(location));
        match (self.relative(location), self) {
            (Some(rel), _) => self.read(&rel)?.ok_or_else(gone),
            (None, TableDir::Local(_)) => {
                let path = Path::new(location.strip_prefix("file://").unwrap_or(location));
                std::fs::read(path).map_err(|e| Error::io("read", path, e))
            }
            (None, TableDir::Object(..)) => Err(Error::BadTable {
                path: self.root(),
                reason: format!("its metadata names {location}, which is outside the table"),
            }),
        }
    }

    /// The names of the files directly in directory `rel`; `None` when
    /// it does not exist (in an object store: holds no object).
    ///
    /// # Errors
    /// [`Error::Io`] or [`Error::Store`] when it cannot be listed.
    pub fn list(&self, rel: &str) -> Result<Option<Vec<String>>, Error> {
        match self {
            TableDir::Local(p) => {
                let path = p.join(rel);
                match std::fs::read_dir(&path) {
                    Ok(r) => Ok(Some(
                        r.flatten()
                            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                            .map(|e| e.file_name().to_string_lossy().into_owned())
                            .collect(),
                    )),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(Error::io("list", &path, e)),
                }
            }
            TableDir::Object(d, _) => {
                let names: Vec<String> = d.list_under(rel)?.into_iter().map(|(n, _)| n).collect();
                Ok((!names.is_empty()).then_some(names))
            }
        }
    }

    /// Every file under directory `rel` (empty for the whole table), at
    /// any depth: its path relative to the root, its size and its last
    /// modification (milliseconds since the epoch). Symbolic links are
    /// not followed.
    ///
    /// # Errors
    /// IO or store errors.
    pub fn list_all(&self, rel: &str) -> Result<Vec<(String, u64, i64)>, Error> {
        match self {
            TableDir::Local(root) => {
                let mut out = Vec::new();
                let mut stack = vec![rel.trim_end_matches('/').to_string()];
                while let Some(dir) = stack.pop() {
                    let path = if dir.is_empty() {
                        root.clone()
                    } else {
                        root.join(&dir)
                    };
                    let entries = match std::fs::read_dir(&path) {
                        Ok(r) => r,
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                        Err(e) => return Err(Error::io("list", &path, e)),
                    };
                    for entry in entries {
                        let entry = entry.map_err(|e| Error::io("list", &path, e))?;
                        let name = entry.file_name().to_string_lossy().into_owned();
                        let child = if dir.is_empty() {
                            name
                        } else {
                            format!("{dir}/{name}")
                        };
                        let meta = entry
                            .metadata()
                            .map_err(|e| Error::io("read the metadata of", &entry.path(), e))?;
                        if meta.is_dir() {
                            stack.push(child);
                        } else if meta.is_file() {
                            let modified = meta
                                .modified()
                                .ok()
                                .and_then(|m| m.duration_since(UNIX_EPOCH).ok())
                                .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
                            out.push((child, meta.len(), modified));
                        }
                    }
                }
                out.sort();
                Ok(out)
            }
            TableDir::Object(d, _) => {
                let mut out = d.list_all(rel)?;
                out.sort();
                Ok(out)
            }
        }
    }

    /// Whether directory `rel` exists (in an object store: holds an
    /// object).
    ///
    /// # Errors
    /// As [`TableDir::list`].
    pub fn has_dir(&self, rel: &str) -> Result<bool, Error> {
        match self {
            TableDir::Local(p) => Ok(p.join(rel).is_dir()),
            TableDir::Object(..) => Ok(self.list(rel)?.is_some()),
        }
    }

    /// Writes `bytes` as `rel` only if no file of that name exists, in
    /// one step (locally a link that never replaces, in an object store a
    /// conditional put): of two writers racing for one name, exactly one
    /// gets it. Parent directories are made.
    ///
    /// # Errors
    /// [`Error::Store`] with `strata_store::Error::OutputExists` when the
    /// file exists; IO or store errors.
    pub fn put_new(&self, rel: &str, bytes: &[u8]) -> Result<(), Error> {
        match self {
            TableDir::Local(p) => {
                let path = p.join(rel);
                make_parent(&path)?;
                write_new(&path, bytes, true)?;
                Ok(())
            }
            TableDir::Object(d, _) => Ok(d.put(rel, bytes.to_vec(), true)?),
        }
    }

    /// A new file `rel` to be written as a stream: a local temporary
    /// (written past the page cache, see [`strata_store::direct`]), synced
    /// and linked into place by [`NewFile::finish`] (which never
    /// replaces a file), or a buffer put to the store only if nothing is
    /// there. What is dropped unfinished leaves nothing.
    ///
    /// # Errors
    /// IO errors creating the temporary.
    pub fn create_new(&self, rel: &str) -> Result<NewFile, Error> {
        match self {
            TableDir::Local(p) => {
                let path = p.join(rel);
                make_parent(&path)?;
                // Started as if it may replace: the claim is `commit_new`'s.
                // Written past the page cache, on a thread of its own.
                let (pending, file) =
                    strata_store::output::PendingFile::create_direct(path.clone(), true)?;
                Ok(NewFile::Local {
                    pending: pending.durable(true),
                    file,
                    path,
                    bytes: 0,
                })
            }
            TableDir::Object(d, _) => Ok(NewFile::Object {
                dir: d.clone(),
                rel: rel.to_string(),
                body: Vec::new(),
            }),
        }
    }

    /// Writes `bytes` as `rel`, replacing a file there in one step.
    ///
    /// # Errors
    /// IO or store errors.
    pub fn put(&self, rel: &str, bytes: &[u8]) -> Result<(), Error> {
        match self {
            TableDir::Local(p) => {
                let path = p.join(rel);
                make_parent(&path)?;
                write_atomically(&path, bytes, true, true)?;
                Ok(())
            }
            TableDir::Object(d, _) => Ok(d.put(rel, bytes.to_vec(), false)?),
        }
    }

    /// Removes `rel` (a missing file is not an error).
    ///
    /// # Errors
    /// IO or store errors.
    pub fn remove(&self, rel: &str) -> Result<(), Error> {
        match self {
            TableDir::Local(p) => {
                let path = p.join(rel);
                match std::fs::remove_file(&path) {
                    Ok(()) => Ok(()),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                    Err(e) => Err(Error::io("remove", &path, e)),
                }
            }
            TableDir::Object(d, _) => Ok(d.remove(rel)?),
        }
    }

    /// The directories directly in directory `rel` whose names `keep`
    /// accepts (locally; an object store has no directories).
    ///
    /// # Errors
    /// IO errors other than a missing directory.
    pub fn dirs_in(&self, rel: &str, keep: impl Fn(&str) -> bool) -> Result<Vec<String>, Error> {
        let TableDir::Local(root) = self else {
            return Ok(Vec::new());
        };
        let path = if rel.is_empty() {
            root.clone()
        } else {
            root.join(rel)
        };
        let entries = match std::fs::read_dir(&path) {
            Ok(r) => r,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io("list", &path, e)),
        };
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().is_ok_and(|t| t.is_dir()) && keep(&name) {
                out.push(if rel.is_empty() {
                    name
                } else {
                    format!("{rel}/{name}")
                });
            }
        }
        out.sort();
        Ok(out)
    }

    /// Removes directory `rel` and everything in it (locally; in an
    /// object store, every object under it).
    ///
    /// # Errors
    /// IO or store errors.
    pub fn remove_tree(&self, rel: &str) -> Result<(), Error> {
        match self {
            TableDir::Local(p) => {
                let path = p.join(rel);
                match std::fs::remove_dir_all(&path) {
                    Ok(()) => Ok(()),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                    Err(e) => Err(Error::io("remove", &path, e)),
                }
            }
            TableDir::Object(d, _) => {
                for (name, ..) in d.list_all(rel)? {
                    d.remove(&name)?;
                }
                Ok(())
            }
        }
    }

    /// Removes directory `rel` when it is empty (locally; an object store
    /// has no directories).
    pub fn remove_empty_dir(&self, rel: &str) {
        if let TableDir::Local(p) = self {
            let _ = std::fs::remove_dir(p.join(rel));
        }
    }

    /// `rel`'s last modification, in milliseconds since the epoch.
    ///
    /// # Errors
    /// IO or store errors, a missing file too.
    pub fn modified_ms(&self, rel: &str) -> Result<i64, Error> {
        match self {
            TableDir::Local(p) => {
                let path = p.join(rel);
                let modified = std::fs::metadata(&path)
                    .and_then(|m| m.modified())
                    .map_err(|e| Error::io("read the modification time of", &path, e))?;
                Ok(modified
                    .duration_since(UNIX_EPOCH)
                    .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
                    .unwrap_or(0))
            }
            TableDir::Object(d, _) => match d.head(rel)? {
                Some((_, ms)) => Ok(ms),
                None => Err(missing(&self.at(rel))),
            },
        }
    }

    /// The facts of data file `rel`, from its footer.
    ///
    /// # Errors
    /// [`Error::Parquet`] for a footer that does not read; IO or store
    /// errors, a missing file too.
    pub fn facts(&self, rel: &str) -> Result<FileFacts, Error> {
        match self {
            TableDir::Local(p) => stats::read_file(&p.join(rel)),
            TableDir::Object(d, _) => {
                let at = self.at(rel);
                let Some((size, _)) = d.head(rel)? else {
                    return Err(missing(&at));
                };
                let bad = |reason: String| Error::Parquet {
                    path: at.clone(),
                    source: parquet::errors::ParquetError::General(reason),
                };
                if size < 12 {
                    return Err(bad(format!("{size} bytes is too short for Parquet")));
                }
                let tail = d.get_range(rel, size - 8..size)?;
                let footer = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
                if &tail[4..] != b"PAR1" || footer + 8 > size {
                    return Err(bad("no Parquet footer at its end".into()));
                }
                let bytes = d.get_range(rel, size - 8 - footer..size - 8)?;
                let md = ParquetMetaDataReader::decode_metadata(&bytes).map_err(|source| {
                    Error::Parquet {
                        path: at.clone(),
                        source,
                    }
                })?;
                Ok(stats::facts(&md, size))
            }
        }
    }
}

impl std::fmt::Display for TableDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TableDir::Local(p) => write!(f, "{}", p.display()),
            TableDir::Object(_, url) => f.write_str(url),
        }
    }
}

/// Makes the parent directory of `path`.
fn make_parent(path: &Path) -> Result<(), Error> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
    }
    Ok(())
}

/// A file that is not there.
fn missing(at: &Path) -> Error {
    Error::io(
        "read",
        at,
        std::io::Error::new(std::io::ErrorKind::NotFound, "no such object"),
    )
}

/// A file of a table being written (see [`TableDir::create_new`]).
pub enum NewFile {
    /// A local temporary.
    Local {
        /// The temporary, claimed at the finish.
        pending: strata_store::output::PendingFile,
        /// Its writer.
        file: strata_store::direct::DirectWriter,
        /// The final path, for errors.
        path: PathBuf,
        /// Bytes written.
        bytes: u64,
    },
    /// An object, put whole at the finish.
    Object {
        /// The table's store.
        dir: Arc<ObjectDir>,
        /// The object's name under it.
        rel: String,
        /// Its bytes.
        body: Vec<u8>,
    },
}

impl std::fmt::Debug for NewFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NewFile::Local { path, .. } => write!(f, "NewFile({})", path.display()),
            NewFile::Object { rel, .. } => write!(f, "NewFile({rel})"),
        }
    }
}

impl std::io::Write for NewFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            NewFile::Local { file, bytes, .. } => {
                let n = file.write(buf)?;
                *bytes += n as u64;
                Ok(n)
            }
            NewFile::Object { body, .. } => std::io::Write::write(body, buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            NewFile::Local { file, .. } => file.flush(),
            NewFile::Object { .. } => Ok(()),
        }
    }
}

impl NewFile {
    /// Makes the file visible under its name, complete: the local
    /// temporary synced and linked into place, the object put. Returns
    /// its size.
    ///
    /// # Errors
    /// IO or store errors; [`Error::Store`] with an existing-output error
    /// when a file of the name appeared meanwhile.
    pub fn finish(self) -> Result<u64, Error> {
        match self {
            NewFile::Local {
                pending,
                file,
                path,
                bytes,
            } => {
                let file = file.finish().map_err(|e| Error::io("write", &path, e))?;
                drop(file);
                pending.commit_new()?;
                Ok(bytes)
            }
            NewFile::Object { dir, rel, body } => {
                let n = body.len() as u64;
                dir.put(&rel, body, true)?;
                Ok(n)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_local_table_creates_once_replaces_and_lists() {
        let tmp = tempfile::tempdir().unwrap();
        let d = TableDir::local(tmp.path()).unwrap();
        assert_eq!(d.read("metadata/v1.metadata.json").unwrap(), None);
        assert_eq!(d.list("metadata").unwrap(), None);
        d.put_new("metadata/v1.metadata.json", b"one").unwrap();
        let e = d.put_new("metadata/v1.metadata.json", b"two").unwrap_err();
        assert!(
            matches!(e, Error::Store(strata_store::Error::OutputExists { .. })),
            "{e}"
        );
        assert_eq!(
            d.read("metadata/v1.metadata.json").unwrap().as_deref(),
            Some(&b"one"[..])
        );
        d.put("metadata/version-hint.text", b"1").unwrap();
        d.put("metadata/version-hint.text", b"2").unwrap();
        let mut names = d.list("metadata").unwrap().unwrap();
        names.sort();
        assert_eq!(names, ["v1.metadata.json", "version-hint.text"]);
        assert!(d.has_dir("metadata").unwrap());
        assert!(d.modified_ms("metadata/version-hint.text").unwrap() > 0);
        let at = d.uri("data/x.parquet");
        assert_eq!(d.relative(&at).as_deref(), Some("data/x.parquet"));
        assert_eq!(
            d.relative(&format!("file://{at}")).as_deref(),
            Some("data/x.parquet")
        );
        assert_eq!(d.relative("/elsewhere/x.parquet"), None);
        d.remove("metadata/version-hint.text").unwrap();
        d.remove("metadata/version-hint.text").unwrap();
        assert!(d.facts("metadata/v1.metadata.json").is_err());
    }
}
