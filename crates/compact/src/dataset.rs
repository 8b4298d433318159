//! A dataset: a directory of Parquet files, each sorted by the same key
//! columns, and a manifest listing them with their key bounds.
//!
//! The manifest (`_strata_manifest.json`) is versioned and replaced
//! atomically: a new one is written to a temporary, synced, and renamed
//! over the old. It is the dataset's commit point: a reader that loads it
//! sees one generation whole. Files a compaction writes are named
//! `part-GENERATION-N.parquet`; files in the directory that the manifest
//! does not list (left by a run that stopped) are removed by the next
//! run, as are strata's temporaries.
//!
//! # Executing a compaction
//!
//! [`execute`]: merge the picked files into new ones (each written to a
//! temporary, then renamed) -> write and rename the new manifest ->
//! remove the replaced files. A failure at any step leaves a manifest
//! whose files all exist and whose rows are exactly the rows before.

use std::{
    fmt,
    fs::File,
    io::Write,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};

use crate::{
    merge::{MergeConfig, MergedFile, for_each_key_batch, merge_files, not_sorted},
    planner::{Plan, PlannerOptions, plan},
    rowsets::RowsetInput,
};

/// The manifest's file name inside a dataset directory.
pub const MANIFEST: &str = "_strata_manifest.json";

/// The file a running compaction holds (it names the process): another
/// run of the same dataset waits for nothing and fails at once.
pub const LOCK: &str = "_strata_compact.lock";

/// The manifest format this crate writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// Errors of datasets and merges.
#[derive(Debug)]
#[non_exhaustive]
pub enum DatasetError {
    /// An operating-system error on a path.
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A Parquet file could not be read or written.
    Parquet {
        /// The file.
        path: PathBuf,
        /// The error.
        source: parquet::errors::ParquetError,
    },
    /// An output file could not be written.
    Write {
        /// The file.
        path: PathBuf,
        /// The error.
        source: Box<strata_io::Error>,
    },
    /// The dataset or a request is not valid; the message says why.
    Invalid(String),
    /// A fault injected by a test hook at this step.
    Injected(Step),
}

impl DatasetError {
    pub(crate) fn io(action: &'static str, path: &Path, source: std::io::Error) -> Self {
        DatasetError::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn write(path: &Path, source: strata_io::Error) -> Self {
        DatasetError::Write {
            path: path.to_path_buf(),
            source: Box::new(source),
        }
    }

    pub(crate) fn parquet(path: &Path, source: parquet::errors::ParquetError) -> Self {
        DatasetError::Parquet {
            path: path.to_path_buf(),
            source,
        }
    }
}

impl fmt::Display for DatasetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DatasetError::Io {
                action,
                path,
                source,
            } => write!(f, "cannot {action} {}: {source}", path.display()),
            DatasetError::Parquet { path, source } => {
                write!(f, "{}: parquet: {source}", path.display())
            }
            DatasetError::Write { path, source } => {
                write!(f, "cannot write {}: {source}", path.display())
            }
            DatasetError::Invalid(m) => write!(f, "{m}"),
            DatasetError::Injected(step) => write!(f, "injected failure at {step:?}"),
        }
    }
}

impl std::error::Error for DatasetError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DatasetError::Io { source, .. } => Some(source),
            DatasetError::Parquet { source, .. } => Some(source),
            DatasetError::Write { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}

/// One file of a dataset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// The file's name inside the dataset directory.
    pub name: String,
    /// Rows in it.
    pub rows: u64,
    /// Its size in bytes.
    pub bytes: u64,
    /// The strata-row encoding of its smallest key, in hex.
    pub min_key: String,
    /// The strata-row encoding of its largest key, in hex.
    pub max_key: String,
}

/// The list of a dataset's files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT_VERSION`] when written.
    pub format: u32,
    /// Increases by one with every change.
    pub generation: u64,
    /// The key columns every file is sorted by, most significant first.
    pub key: Vec<String>,
    /// The files.
    pub files: Vec<FileEntry>,
    /// Files this generation replaced, to be removed (the next run removes
    /// any a stopped run left).
    #[serde(default)]
    pub obsolete: Vec<String>,
}

/// Hex text of bytes (lowercase).
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Bytes of hex text.
///
/// # Errors
///
/// [`DatasetError::Invalid`] for text that is not even-length hex.
pub fn from_hex(text: &str) -> Result<Vec<u8>, DatasetError> {
    let bad = || DatasetError::Invalid(format!("'{text}' is not a hex key"));
    if !text.len().is_multiple_of(2) {
        return Err(bad());
    }
    (0..text.len())
        .step_by(2)
        .map(|i| {
            text.get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(bad)
        })
        .collect()
}

impl Manifest {
    /// Reads `dir`'s manifest.
    ///
    /// # Errors
    ///
    /// [`DatasetError::Io`] when it cannot be read, [`DatasetError::Invalid`]
    /// when it is not a manifest of a known format, or lists a file twice.
    pub fn load(dir: &Path) -> Result<Manifest, DatasetError> {
        let path = dir.join(MANIFEST);
        let text =
            std::fs::read_to_string(&path).map_err(|e| DatasetError::io("read", &path, e))?;
        let m: Manifest = serde_json::from_str(&text).map_err(|e| {
            DatasetError::Invalid(format!("{} is not a valid manifest: {e}", path.display()))
        })?;
        if m.format != FORMAT_VERSION {
            return Err(DatasetError::Invalid(format!(
                "{} has format {}, this build reads {FORMAT_VERSION}",
                path.display(),
                m.format
            )));
        }
        let mut names: Vec<&str> = m.files.iter().map(|f| f.name.as_str()).collect();
        names.sort_unstable();
        if names.windows(2).any(|w| w[0] == w[1]) || names.iter().any(|n| n.contains('/')) {
            return Err(DatasetError::Invalid(format!(
                "{} lists a file twice or a path outside the dataset",
                path.display()
            )));
        }
        Ok(m)
    }

    /// Writes the manifest to `dir` atomically: a synced temporary renamed
    /// over the old one.
    ///
    /// # Errors
    ///
    /// [`DatasetError::Io`] when writing or renaming fails (the old
    /// manifest is then untouched).
    pub fn store(&self, dir: &Path) -> Result<(), DatasetError> {
        let path = dir.join(MANIFEST);
        let temp = dir.join(format!(".{MANIFEST}.{}.strata-tmp", std::process::id()));
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| DatasetError::Invalid(format!("cannot write the manifest: {e}")))?;
        let write = || -> std::io::Result<()> {
            let mut f = File::create(&temp)?;
            f.write_all(text.as_bytes())?;
            f.write_all(b"\n")?;
            f.sync_all()?;
            std::fs::rename(&temp, &path)?;
            // The rename itself is durable once the directory is synced.
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
            Ok(())
        };
        write().map_err(|e| {
            let _ = std::fs::remove_file(&temp);
            DatasetError::io("write", &path, e)
        })
    }

    /// Total rows.
    pub fn rows(&self) -> u64 {
        self.files.iter().map(|f| f.rows).sum()
    }
}

/// Builds a manifest for the Parquet files in `dir` (every `*.parquet`
/// not starting with `.`), sorted by `key`: each file's key bounds are its
/// first and last rows' keys. With `verify`, every file is read whole and
/// checked to be sorted. Writes the manifest and returns it.
///
/// # Errors
///
/// [`DatasetError::Invalid`] for an existing manifest, no files, a missing
/// key column, differing schemas, or (with `verify`) an unsorted file.
pub fn init(dir: &Path, key: &[String], verify: bool) -> Result<Manifest, DatasetError> {
    if key.is_empty() {
        return Err(DatasetError::Invalid("name at least one key column".into()));
    }
    if dir.join(MANIFEST).exists() {
        return Err(DatasetError::Invalid(format!(
            "{} already has a manifest",
            dir.display()
        )));
    }
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| DatasetError::io("list", dir, e))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".parquet") && !n.starts_with('.'))
        .collect();
    names.sort();
    if names.is_empty() {
        return Err(DatasetError::Invalid(format!(
            "{} has no .parquet files",
            dir.display()
        )));
    }
    let mut files = Vec::with_capacity(names.len());
    for name in names {
        let path = dir.join(&name);
        let (rows, min_key, max_key) = bounds(&path, key, verify)?;
        let bytes = std::fs::metadata(&path)
            .map_err(|e| DatasetError::io("stat", &path, e))?
            .len();
        files.push(FileEntry {
            name,
            rows,
            bytes,
            min_key: to_hex(&min_key),
            max_key: to_hex(&max_key),
        });
    }
    let m = Manifest {
        format: FORMAT_VERSION,
        generation: 1,
        key: key.to_vec(),
        files,
        obsolete: Vec::new(),
    };
    m.store(dir)?;
    Ok(m)
}

/// Rows and first/last encoded keys of a sorted file; with `verify`, also
/// checks every row is not below the one before.
fn bounds(
    path: &Path,
    key: &[String],
    verify: bool,
) -> Result<(u64, Vec<u8>, Vec<u8>), DatasetError> {
    let mut first: Option<Vec<u8>> = None;
    let mut last: Vec<u8> = Vec::new();
    let rows = for_each_key_batch(path, key, 8192, |keys, _| {
        let n = keys.num_rows();
        if n == 0 {
            return Ok(true);
        }
        if verify {
            // Each row against the one before, the first against the last
            // row of the batch before.
            let behind = first.is_some() && keys.row(0).as_bytes() < last.as_slice();
            if behind || (1..n).any(|i| keys.row(i).as_bytes() < keys.row(i - 1).as_bytes()) {
                return Err(not_sorted(path, key));
            }
        }
        if first.is_none() {
            first = Some(keys.row(0).as_bytes().to_vec());
        }
        last = keys.row(n - 1).as_bytes().to_vec();
        Ok(true)
    })?;
    Ok((rows, first.unwrap_or_default(), last))
}

/// The compaction lock of a dataset; released when dropped.
struct Lock {
    path: PathBuf,
}

impl Lock {
    /// Takes `dir`'s lock. A lock whose process is gone (a run that was
    /// killed) is taken over.
    fn acquire(dir: &Path) -> Result<Lock, DatasetError> {
        let path = dir.join(LOCK);
        for attempt in 0..2 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut f) => {
                    let _ = write!(f, "{}", std::process::id());
                    return Ok(Lock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt == 0 => {
                    let pid = std::fs::read_to_string(&path)
                        .ok()
                        .and_then(|s| s.trim().parse::<u32>().ok());
                    if pid.is_some_and(|p| !process_alive(p)) {
                        let _ = std::fs::remove_file(&path);
                        continue;
                    }
                    return Err(DatasetError::Invalid(format!(
                        "another compaction of {} is running (process {}); if none is, remove {}",
                        dir.display(),
                        pid.map_or("unknown".into(), |p| p.to_string()),
                        path.display()
                    )));
                }
                Err(e) => return Err(DatasetError::io("create", &path, e)),
            }
        }
        Err(DatasetError::Invalid(format!(
            "cannot take the compaction lock {}",
            path.display()
        )))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Whether process `pid` runs (on systems without `/proc`: assumed so).
fn process_alive(pid: u32) -> bool {
    let proc = Path::new("/proc");
    !proc.is_dir() || proc.join(pid.to_string()).exists()
}

/// The steps of [`execute`], for fault injection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Before anything is written.
    Start,
    /// After the merged files are written, before the manifest.
    Merged,
    /// After the new manifest is in place, before old files are removed.
    Committed,
    /// After the replaced files are removed.
    Done,
}

/// What [`execute`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Executed {
    /// The new manifest.
    pub manifest: Manifest,
    /// Names of the replaced files.
    pub replaced: Vec<String>,
    /// The files written.
    pub written: Vec<MergedFile>,
}

/// Removes files of `dir` that `manifest` does not list and strata wrote
/// (`part-*.parquet`) or the manifest marks obsolete, and strata's
/// temporaries: what a stopped run left. Returns the names removed. Not
/// for use while a compaction of `dir` runs: its unfinished outputs look
/// the same ([`execute`] calls this holding the dataset's lock).
pub fn remove_leftovers(dir: &Path, manifest: &Manifest) -> Vec<String> {
    let listed: std::collections::HashSet<&str> =
        manifest.files.iter().map(|f| f.name.as_str()).collect();
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return removed;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let ours = (name.starts_with("part-") && name.ends_with(".parquet"))
            || (name.starts_with('.') && name.ends_with(".strata-tmp"))
            || manifest.obsolete.contains(&name);
        if ours && !listed.contains(name.as_str()) && std::fs::remove_file(e.path()).is_ok() {
            removed.push(name);
        }
    }
    removed.sort();
    removed
}

/// Merges the manifest's files at indices `picked` into files of about
/// `target_file_bytes`, swaps the manifest, then removes the replaced
/// files. `hook` is called at each [`Step`]; an error from it stops the
/// run there, as a crash would.
///
/// # Errors
///
/// As [`merge_files`] and [`Manifest::store`]; [`DatasetError::Invalid`]
/// for an index out of range.
pub fn execute(
    dir: &Path,
    picked: &[usize],
    target_file_bytes: u64,
    hook: &dyn Fn(Step) -> Result<(), DatasetError>,
) -> Result<Executed, DatasetError> {
    // Held to the end: another run's leftover-removal would delete this
    // run's outputs.
    let _lock = Lock::acquire(dir)?;
    let manifest = Manifest::load(dir)?;
    remove_leftovers(dir, &manifest);
    if let Some(&i) = picked.iter().find(|&&i| i >= manifest.files.len()) {
        return Err(DatasetError::Invalid(format!(
            "file index {i} is out of range: the dataset has {} files",
            manifest.files.len()
        )));
    }
    let mut picked = picked.to_vec();
    picked.sort_unstable();
    picked.dedup();
    hook(Step::Start)?;
    let inputs: Vec<PathBuf> = picked
        .iter()
        .map(|&i| dir.join(&manifest.files[i].name))
        .collect();
    let generation = manifest.generation + 1;
    let cfg = MergeConfig {
        key: manifest.key.clone(),
        target_file_bytes: target_file_bytes.max(1),
        batch_rows: 8192,
        threads: 0,
    };
    let written = merge_files(
        &inputs,
        dir,
        &|n| format!("part-{generation:06}-{n:08}.parquet"),
        &cfg,
    )?;
    let fail = |e: DatasetError| {
        for w in &written {
            let _ = std::fs::remove_file(&w.path);
        }
        e
    };
    hook(Step::Merged).map_err(fail)?;
    let replaced: Vec<String> = picked
        .iter()
        .map(|&i| manifest.files[i].name.clone())
        .collect();
    let mut files: Vec<FileEntry> = manifest
        .files
        .iter()
        .enumerate()
        .filter(|(i, _)| picked.binary_search(i).is_err())
        .map(|(_, f)| f.clone())
        .collect();
    for w in &written {
        files.push(FileEntry {
            name: w
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            rows: w.rows,
            bytes: w.bytes,
            min_key: to_hex(&w.min_key),
            max_key: to_hex(&w.max_key),
        });
    }
    let next = Manifest {
        format: FORMAT_VERSION,
        generation,
        key: manifest.key.clone(),
        files,
        obsolete: replaced.clone(),
    };
    next.store(dir).map_err(fail)?;
    hook(Step::Committed)?;
    for name in &replaced {
        let _ = std::fs::remove_file(dir.join(name));
    }
    hook(Step::Done)?;
    Ok(Executed {
        manifest: next,
        replaced,
        written,
    })
}

/// The manifest's files as planner inputs: input `i` is file `i`, its
/// bytes and its encoded key bounds (which order like the keys).
///
/// # Errors
///
/// [`DatasetError::Invalid`] for a bound that is not hex.
pub fn rowsets(manifest: &Manifest) -> Result<Vec<RowsetInput>, DatasetError> {
    manifest
        .files
        .iter()
        .map(|f| {
            Ok(RowsetInput::new(
                f.bytes,
                from_hex(&f.min_key)?,
                from_hex(&f.max_key)?,
            ))
        })
        .collect()
}

/// Plans a compaction of the dataset in `dir`.
///
/// # Errors
///
/// As [`Manifest::load`] and [`rowsets`].
pub fn plan_dataset(dir: &Path, opts: &PlannerOptions) -> Result<(Manifest, Plan), DatasetError> {
    let manifest = Manifest::load(dir)?;
    let p = plan(&rowsets(&manifest)?, opts);
    Ok((manifest, p))
}

/// Plans a compaction of `dir` and, when the plan picks anything,
/// executes it ([`execute`]). Returns the plan and what was done.
///
/// # Errors
///
/// As [`plan_dataset`] and [`execute`].
pub fn run(
    dir: &Path,
    opts: &PlannerOptions,
    target_file_bytes: u64,
    hook: &dyn Fn(Step) -> Result<(), DatasetError>,
) -> Result<(Plan, Option<Executed>), DatasetError> {
    let (manifest, p) = plan_dataset(dir, opts)?;
    if p.picked.is_empty() {
        // Clean up after a stopped run, unless a compaction is running
        // (its outputs look like leftovers until it commits).
        if let Ok(_lock) = Lock::acquire(dir) {
            remove_leftovers(dir, &manifest);
        }
        return Ok((p, None));
    }
    let picked: Vec<usize> = p.picked.iter().map(|&i| i as usize).collect();
    let done = execute(dir, &picked, target_file_bytes, hook)?;
    Ok((p, Some(done)))
}
