//! Where a dataset lives: a local directory, or a prefix in an object
//! store (`s3://bucket/prefix`, or any [`ObjectStore`]).
//!
//! The dataset logic ([`crate::dataset`]) sees a few operations: read and
//! replace the manifest, list and remove the files, hold the compaction
//! lock, and make the merge's inputs and outputs local files.
//!
//! * **Directory:** the manifest is replaced by a synced temporary renamed
//!   over it; the lock is a file created exclusively that names the
//!   process; the merge reads and writes in place.
//! * **Object store:** one `PUT` replaces the manifest (a reader's `GET`
//!   sees the old or the new object, never a mix); the lock is an object
//!   created only if absent (`If-None-Match: *`); the picked inputs are
//!   downloaded to a local temporary directory (the budget bounds their
//!   size), merged there, and each output is uploaded under its final name
//!   with [`strata_store::upload`] (every file's parts are sent before any
//!   upload completes; an upload appears whole or not at all) before the
//!   manifest names it.

use std::{
    io::Write,
    path::{Path, PathBuf},
    sync::Arc,
};

use futures::{StreamExt, TryStreamExt};
use object_store::{
    ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, path::Path as ObjectPath,
};
use strata_store::location::{Kind, StoreConfig, parse_dir};

use crate::Error;

pub mod manifest;

/// The manifest's file name inside a dataset directory.
pub const MANIFEST: &str = "_strata_manifest.json";

/// The file a running compaction holds (it names the process): another
/// run of the same dataset waits for nothing and fails at once.
pub const LOCK: &str = "_strata_compact.lock";

/// Objects downloaded at once.
const TRANSFERS: usize = 8;

/// A dataset's place: a directory or an object-store prefix.
pub struct Dataset {
    inner: Inner,
}

enum Inner {
    Local(PathBuf),
    Object(ObjectDir),
}

/// An object-store prefix: strata-store's, which lists, removes and uploads,
/// and the few requests a dataset adds (manifest, lock, downloads).
struct ObjectDir(strata_store::upload::ObjectDir);

impl std::fmt::Debug for Dataset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Dataset({})", self.display())
    }
}

impl Dataset {
    /// The dataset in directory `dir`.
    pub fn local(dir: impl Into<PathBuf>) -> Dataset {
        Dataset {
            inner: Inner::Local(dir.into()),
        }
    }

    /// The dataset under `prefix` in `store`, named `display` in messages.
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] when the IO runtime cannot start.
    pub fn object(
        store: Arc<dyn ObjectStore>,
        prefix: ObjectPath,
        display: impl Into<String>,
    ) -> Result<Dataset, Error> {
        let dir = strata_store::upload::ObjectDir::new(store, prefix, &display.into())
            .map_err(|e| Error::Invalid(e.to_string()))?;
        Ok(Dataset {
            inner: Inner::Object(ObjectDir(dir)),
        })
    }

    /// A local directory, a `file://` URL or an `s3://bucket/prefix` URL;
    /// S3 settings as [`StoreConfig`] describes.
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] for a location that cannot be parsed.
    pub fn open(location: &str, cfg: &StoreConfig) -> Result<Dataset, Error> {
        let trimmed = location.trim_end_matches('/');
        let loc = parse_dir(
            if trimmed.is_empty() {
                location
            } else {
                trimmed
            },
            cfg,
        )
        .map_err(|e| Error::Invalid(format!("{location}: {e}")))?;
        match (loc.kind, loc.file) {
            // A plain path keeps the spelling the user gave, for messages.
            (Kind::Local, _) if !location.contains("://") => Ok(Dataset::local(location)),
            (Kind::Local, Some(dir)) => Ok(Dataset::local(dir)),
            _ => Dataset::object(loc.store, loc.path, trimmed),
        }
    }

    /// The location, for messages.
    pub fn display(&self) -> String {
        match &self.inner {
            Inner::Local(d) => d.display().to_string(),
            Inner::Object(o) => o.display().to_string(),
        }
    }

    /// The directory, for a local dataset.
    pub fn dir(&self) -> Option<&Path> {
        match &self.inner {
            Inner::Local(d) => Some(d),
            Inner::Object(_) => None,
        }
    }

    /// A file's location, for messages.
    pub(crate) fn file_display(&self, name: &str) -> String {
        match &self.inner {
            Inner::Local(d) => d.join(name).display().to_string(),
            Inner::Object(o) => o.0.display(name),
        }
    }

    /// The manifest's text, or `None` when there is none.
    pub(crate) fn read_manifest(&self) -> Result<Option<String>, Error> {
        match &self.inner {
            Inner::Local(d) => {
                let path = d.join(MANIFEST);
                match std::fs::read_to_string(&path) {
                    Ok(t) => Ok(Some(t)),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(Error::io("read", &path, e)),
                }
            }
            Inner::Object(o) => o.rt().block_on(async {
                match o.store().get(&o.child(MANIFEST)).await {
                    Ok(r) => {
                        let bytes = r.bytes().await.map_err(|e| o.error("read", MANIFEST, e))?;
                        String::from_utf8(bytes.to_vec()).map(Some).map_err(|_| {
                            Error::Invalid(format!(
                                "{} is not a valid manifest: not UTF-8",
                                self.file_display(MANIFEST)
                            ))
                        })
                    }
                    Err(object_store::Error::NotFound { .. }) => Ok(None),
                    Err(e) => Err(o.error("read", MANIFEST, e)),
                }
            }),
        }
    }

    /// Replaces the manifest with `text` in one step.
    pub(crate) fn write_manifest(&self, text: &str) -> Result<(), Error> {
        match &self.inner {
            Inner::Local(dir) => {
                strata_store::output::write_atomically(
                    &dir.join(MANIFEST),
                    text.as_bytes(),
                    true,
                    true,
                )?;
                Ok(())
            }
            Inner::Object(o) => o.rt().block_on(async {
                o.store()
                    .put(
                        &o.child(MANIFEST),
                        PutPayload::from(text.as_bytes().to_vec()),
                    )
                    .await
                    .map(|_| ())
                    .map_err(|e| o.error("write", MANIFEST, e))
            }),
        }
    }

    /// The names and sizes of the dataset's files (not in subdirectories).
    pub(crate) fn list(&self) -> Result<Vec<(String, u64)>, Error> {
        let mut out = match &self.inner {
            Inner::Local(d) => {
                let mut out = Vec::new();
                for e in std::fs::read_dir(d).map_err(|e| Error::io("list", d, e))? {
                    let e = e.map_err(|e| Error::io("list", d, e))?;
                    let meta = e
                        .metadata()
                        .map_err(|err| Error::io("stat", &e.path(), err))?;
                    if meta.is_file() {
                        out.push((e.file_name().to_string_lossy().into_owned(), meta.len()));
                    }
                }
                out
            }
            Inner::Object(o) => o.0.list().map_err(file_error(o.display().to_string()))?,
        };
        out.sort();
        Ok(out)
    }

    /// Removes file `name` (a missing file is not an error).
    pub(crate) fn remove(&self, name: &str) -> Result<(), Error> {
        match &self.inner {
            Inner::Local(d) => match std::fs::remove_file(d.join(name)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(Error::io("remove", &d.join(name), e))
                }
                _ => Ok(()),
            },
            Inner::Object(o) => {
                o.0.remove(name)
                    .map_err(file_error(self.file_display(name)))
            }
        }
    }

    /// Takes replaced file `name` out of the dataset: for a directory, a
    /// rename to `hidden`, removed after the directory is synced; an
    /// object store has no rename, and the file is removed where it is.
    /// Returns the name to remove.
    pub(crate) fn retire(&self, name: &str, hidden: String) -> String {
        match &self.inner {
            Inner::Local(d) => match std::fs::rename(d.join(name), d.join(&hidden)) {
                Ok(()) => hidden,
                Err(_) => name.to_string(),
            },
            Inner::Object(_) => name.to_string(),
        }
    }

    /// Renames file `hidden` back to `name` (a directory only: an object
    /// store never holds hidden names).
    pub(crate) fn restore(&self, hidden: &str, name: &str) -> Result<(), Error> {
        match &self.inner {
            Inner::Local(d) => std::fs::rename(d.join(hidden), d.join(name))
                .map_err(|e| Error::io("rename into", &d.join(name), e)),
            Inner::Object(o) => Err(Error::Invalid(format!(
                "{} holds no hidden files to put back",
                o.display()
            ))),
        }
    }

    /// Takes the compaction lock, released when the guard drops. A local
    /// lock is an operating-system file lock, released by the kernel when
    /// its process ends however it ends; an object-store lock cannot be
    /// checked that way, so the message says how to remove it.
    pub(crate) fn lock(&self) -> Result<LockGuard<'_>, Error> {
        match &self.inner {
            Inner::Local(d) => local_lock(d).map(|held| LockGuard {
                dataset: self,
                local: Some(held),
            }),
            Inner::Object(o) => {
                let text = format!(
                    "{{\"pid\": {}, \"since_unix_s\": {}}}\n",
                    std::process::id(),
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_secs())
                );
                let opts = PutOptions {
                    mode: PutMode::Create,
                    ..Default::default()
                };
                o.rt().block_on(async {
                    match o
                        .store()
                        .put_opts(&o.child(LOCK), PutPayload::from(text.into_bytes()), opts)
                        .await
                    {
                        Ok(_) => Ok(LockGuard {
                            dataset: self,
                            local: None,
                        }),
                        Err(object_store::Error::AlreadyExists { .. }) => {
                            Err(Error::Invalid(format!(
                                "another compaction of {} is running; if none is, remove {}",
                                o.display(),
                                self.file_display(LOCK)
                            )))
                        }
                        Err(e) => Err(o.error("create", LOCK, e)),
                    }
                })
            }
        }
    }

    /// Local paths to read the files `names` from: the files themselves
    /// for a directory; downloads into `scratch` for an object store.
    pub(crate) fn stage(&self, names: &[String], scratch: &Path) -> Result<Vec<PathBuf>, Error> {
        match &self.inner {
            Inner::Local(d) => Ok(names.iter().map(|n| d.join(n)).collect()),
            Inner::Object(o) => {
                let paths: Vec<PathBuf> = (0..names.len())
                    .map(|i| scratch.join(format!("in-{i:06}.parquet")))
                    .collect();
                o.rt().block_on(
                    futures::stream::iter(names.iter().zip(&paths))
                        .map(|(name, path)| o.download(name, path))
                        .buffer_unordered(TRANSFERS)
                        .try_collect::<Vec<()>>(),
                )?;
                Ok(paths)
            }
        }
    }

    /// Where the merge writes its outputs: the dataset's directory, or
    /// `scratch` for an object store (then [`Dataset::reveal`] uploads).
    pub(crate) fn out_dir(&self, scratch: &Path) -> PathBuf {
        match &self.inner {
            Inner::Local(d) => d.clone(),
            Inner::Object(_) => scratch.to_path_buf(),
        }
    }

    /// Makes the local files `outputs` (path, final name) the dataset's
    /// files of their final names: renames for a directory (the outputs
    /// are written there under hidden names), uploads for an object store.
    /// On failure, those made so far are removed.
    pub(crate) fn reveal(&self, outputs: &[(PathBuf, String)]) -> Result<(), Error> {
        let names: Vec<&str> = outputs.iter().map(|(_, n)| n.as_str()).collect();
        let undo = |done: &[&str]| {
            for n in done {
                let _ = self.remove(n);
            }
        };
        let o = match &self.inner {
            Inner::Object(o) => o,
            Inner::Local(dir) => {
                for (i, (path, name)) in outputs.iter().enumerate() {
                    let target = dir.join(name);
                    if let Err(e) = std::fs::rename(path, &target) {
                        undo(&names[..i]);
                        return Err(Error::io("rename into", &target, e));
                    }
                }
                return Ok(());
            }
        };
        // Every file's parts are sent before any upload completes (an
        // upload dropped unfinished is aborted).
        let result = (|| -> Result<(), Error> {
            let mut uploads = Vec::with_capacity(outputs.len());
            for (path, name) in outputs {
                let io = file_error(self.file_display(name));
                let mut up = o.0.create(name).map_err(&io)?;
                let mut file = std::fs::File::open(path).map_err(|e| Error::io("open", path, e))?;
                std::io::copy(&mut file, &mut up).map_err(|e| Error::io("upload", path, e))?;
                up.seal().map_err(&io)?;
                uploads.push((up, io));
            }
            for (up, io) in uploads {
                up.commit().map_err(io)?;
            }
            Ok(())
        })();
        if let Err(e) = result {
            undo(&names);
            return Err(e);
        }
        Ok(())
    }

    /// Readies `text` to replace the manifest in one step later
    /// ([`Dataset::commit_manifest`]): for a directory, a temporary beside
    /// it, written and synced.
    pub(crate) fn prepare_manifest(&self, text: &str) -> Result<PreparedManifest, Error> {
        match &self.inner {
            Inner::Local(dir) => {
                let target = dir.join(MANIFEST);
                let (pending, mut file) = strata_store::output::PendingFile::start(&target, true)?;
                file.write_all(text.as_bytes())
                    .and_then(|()| file.sync_all())
                    .map_err(|e| Error::io("write", &target, e))?;
                Ok(PreparedManifest::Local(pending))
            }
            Inner::Object(_) => Ok(PreparedManifest::Object(text.to_string())),
        }
    }

    /// Replaces the manifest with a prepared one: a rename, or one `PUT`.
    pub(crate) fn commit_manifest(&self, prepared: PreparedManifest) -> Result<(), Error> {
        match prepared {
            PreparedManifest::Local(pending) => {
                pending.commit()?;
                Ok(())
            }
            PreparedManifest::Object(text) => self.write_manifest(&text),
        }
    }

    /// Makes the renames and removals in a directory durable (syncs it);
    /// nothing for an object store.
    pub(crate) fn sync(&self) {
        if let Inner::Local(dir) = &self.inner
            && let Ok(d) = std::fs::File::open(dir)
        {
            let _ = d.sync_all();
        }
    }
}

/// A manifest ready to replace the current one ([`Dataset::prepare_manifest`]).
pub(crate) enum PreparedManifest {
    /// A synced temporary, renamed over the manifest by its commit.
    Local(strata_store::output::PendingFile),
    /// The text, for one `PUT`.
    Object(String),
}

impl Dataset {
    /// The footer of Parquet file `name`: its metadata and Arrow schema
    /// (one tail read on an object store).
    pub(crate) fn parquet_footer(
        &self,
        name: &str,
    ) -> Result<
        (
            Arc<parquet::file::metadata::ParquetMetaData>,
            arrow_schema::SchemaRef,
        ),
        Error,
    > {
        match &self.inner {
            Inner::Local(d) => {
                let path = d.join(name);
                let file = std::fs::File::open(&path).map_err(|e| Error::io("open", &path, e))?;
                // The footer is decoded and checked as every reader does.
                let b =
                    strata_parquet::read::open(file, Default::default()).map_err(|e| match e {
                        strata_parquet::read::ReadError::Parquet(e) => Error::parquet(&path, e),
                        e => Error::Invalid(format!("{}: {e}", path.display())),
                    })?;
                Ok((Arc::clone(b.metadata()), Arc::clone(b.schema())))
            }
            Inner::Object(o) => {
                let io = file_error(self.file_display(name));
                o.rt().block_on(async {
                    let source = o.source(name).await.map_err(&io)?;
                    let f = strata_scan::parquet::ParquetFile::open(source, None)
                        .await
                        .map_err(&io)?;
                    Ok((Arc::clone(f.metadata()), f.schema()))
                })
            }
        }
    }

    /// Reads the `key` columns of file `name` (only their byte ranges, on
    /// an object store) and calls `each` with every batch of them (the
    /// key columns in the file's order).
    pub(crate) fn scan_columns(
        &self,
        name: &str,
        key: &[String],
        each: &mut dyn FnMut(&arrow_array::RecordBatch) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let io = file_error(self.file_display(name));
        let o = match &self.inner {
            Inner::Local(dir) => return scan_local_columns(&dir.join(name), key, each),
            Inner::Object(o) => o,
        };
        o.rt().block_on(async {
            let source = o.source(name).await.map_err(&io)?;
            let file = strata_scan::ScanFile::open(source).await.map_err(&io)?;
            let req = strata_scan::ScanRequest {
                columns: Some(key.to_vec()),
                ..Default::default()
            };
            let mut stream = file.stream(&req).map_err(&io)?;
            while let Some(b) = stream.next().await {
                each(&b.map_err(&io)?)?;
            }
            Ok(())
        })
    }
}

/// [`Dataset::scan_columns`] for a local file.
fn scan_local_columns(
    path: &Path,
    key: &[String],
    each: &mut dyn FnMut(&arrow_array::RecordBatch) -> Result<(), Error>,
) -> Result<(), Error> {
    use strata_parquet::read;
    let read_error = |e: read::ReadError| match e {
        read::ReadError::Parquet(e) => Error::parquet(path, e),
        e => Error::Invalid(format!("{}: {e}", path.display())),
    };
    let file = std::fs::File::open(path).map_err(|e| Error::io("open", path, e))?;
    let builder = read::open(file, Default::default()).map_err(read_error)?;
    let mut roots = Vec::with_capacity(key.len());
    for k in key {
        let i = builder.schema().index_of(k).map_err(|_| {
            Error::Invalid(format!(
                "{}: the file has no key column '{k}'",
                path.display()
            ))
        })?;
        roots.push(i);
    }
    let mask = parquet::arrow::ProjectionMask::roots(builder.parquet_schema(), roots);
    let builder = builder.with_projection(mask).with_batch_size(8192);
    let mut reader = read::build(builder).map_err(read_error)?;
    while let Some(b) = read::next_batch(&mut reader).map_err(read_error)? {
        each(&b)?;
    }
    Ok(())
}

/// Holds a dataset's compaction lock.
pub(crate) struct LockGuard<'a> {
    dataset: &'a Dataset,
    /// The lock file and its open, locked handle, for a local dataset
    /// (the lock is released when the handle closes, after the file is
    /// removed).
    local: Option<(PathBuf, std::fs::File)>,
}

impl Drop for LockGuard<'_> {
    fn drop(&mut self) {
        match &self.local {
            Some((path, _held)) => {
                let _ = std::fs::remove_file(path);
            }
            None => {
                let _ = self.dataset.remove(LOCK);
            }
        }
    }
}

/// Makes errors about the file at `location` dataset errors.
fn file_error<E: std::error::Error + Send + Sync + 'static>(
    location: String,
) -> impl Fn(E) -> Error {
    move |e| Error::File {
        path: PathBuf::from(&location),
        source: Box::new(e),
    }
}

impl ObjectDir {
    fn rt(&self) -> &tokio::runtime::Runtime {
        self.0.runtime()
    }

    fn store(&self) -> &Arc<dyn ObjectStore> {
        self.0.store()
    }

    fn child(&self, name: &str) -> ObjectPath {
        self.0.path(name)
    }

    /// The prefix, for messages.
    fn display(&self) -> &str {
        self.0.prefix_display()
    }

    /// Opens object `name` for range reads.
    async fn source(&self, name: &str) -> Result<strata_store::source::Source, strata_scan::Error> {
        Ok(strata_store::source::Source::open(
            Arc::clone(self.store()),
            self.child(name),
            self.0.display(name),
            strata_store::location::remote_fetch_options(),
        )
        .await?)
    }

    fn error(&self, action: &'static str, name: &str, e: object_store::Error) -> Error {
        Error::ObjectStore {
            action,
            location: self.0.display(name),
            source: Box::new(e),
        }
    }

    /// Streams object `name` into the file `path`.
    async fn download(&self, name: &str, path: &Path) -> Result<(), Error> {
        let result = self
            .store()
            .get(&self.child(name))
            .await
            .map_err(|e| self.error("read", name, e))?;
        let mut file = std::fs::File::create(path).map_err(|e| Error::io("create", path, e))?;
        let mut stream = result.into_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| self.error("read", name, e))?;
            file.write_all(&chunk)
                .map_err(|e| Error::io("write", path, e))?;
        }
        Ok(())
    }
}

/// Takes `dir`'s lock: the lock file, created if missing, held with the
/// operating system's exclusive file lock (`flock`). The kernel releases it
/// when the process ends, killed or not, so a killed run's lock file is
/// simply taken again, and two processes can never both hold it, however
/// they race. Its text is the holder's process id, for messages. The
/// holder removes the file when done, still holding it; a process that
/// locked a file removed or replaced meanwhile tries again.
fn local_lock(dir: &Path) -> Result<(PathBuf, std::fs::File), Error> {
    use std::os::unix::fs::MetadataExt;
    let path = dir.join(LOCK);
    for _ in 0..16 {
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::io("create", &path, e))?;
        match f.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let pid = std::fs::read_to_string(&path)
                    .ok()
                    .and_then(|s| s.trim().parse::<u32>().ok());
                return Err(Error::Invalid(format!(
                    "another compaction of {} is running (process {})",
                    dir.display(),
                    pid.map_or("unknown".into(), |p| p.to_string()),
                )));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io("lock", &path, e)),
        }
        let same = match (f.metadata(), std::fs::metadata(&path)) {
            (Ok(held), Ok(named)) => held.dev() == named.dev() && held.ino() == named.ino(),
            _ => false,
        };
        if !same {
            continue;
        }
        f.set_len(0).map_err(|e| Error::io("write", &path, e))?;
        write!(f, "{}", std::process::id()).map_err(|e| Error::io("write", &path, e))?;
        return Ok((path, f));
    }
    Err(Error::Invalid(format!(
        "cannot take the compaction lock {}: it is replaced as fast as it is taken",
        path.display()
    )))
}
