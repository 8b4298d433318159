//! What a sort is asked to do and what it reports: sort keys and sizes as
//! the command line writes them ([`SortKey`], [`SortKeys`], [`ByteSize`]),
//! the [`SortConfig`] and the [`SortSummary`], and the checks of a
//! configuration against the file system made before anything is read
//! (the inputs found, the output's format and place).

use std::{
    fmt, fs,
    path::{Path, PathBuf},
    str::FromStr,
    sync::Arc,
};
use strata_store::FromStore as _;

use arrow_schema::SortOptions;
use strata_parquet::{Compression, DEFAULT_ZSTD_LEVEL, Format};

use crate::{
    error::{Error, short_bytes},
    progress::SortProgress,
};

/// The memory limit used when none is given: 4 GiB.
pub const DEFAULT_MEMORY_LIMIT: u64 = 4 << 30;

/// One sort key: a column (a field inside structs by its dotted path,
/// `home.zip`) and its order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SortKey {
    /// The column name, or the dotted path of a field inside structs.
    pub column: String,
    /// Direction and null placement; Arrow's default (ascending, nulls
    /// first) unless suffixes say otherwise.
    pub options: SortOptions,
}

impl FromStr for SortKey {
    type Err = Error;

    /// Parses `COL[:asc|:desc][:nulls_first|:nulls_last]` (suffixes in any
    /// order, case-insensitive).
    fn from_str(s: &str) -> Result<Self, Error> {
        let spec = s.trim();
        let mut parts = spec.split(':');
        let column = parts.next().unwrap_or_default();
        if column.is_empty() {
            return Err(Error::InvalidConfig(format!(
                "empty column name in sort key '{spec}'"
            )));
        }
        let mut descending = None;
        let mut nulls_first = None;
        for suffix in parts {
            let (slot, value) = match suffix.to_ascii_lowercase().as_str() {
                "asc" => (&mut descending, false),
                "desc" => (&mut descending, true),
                "nulls_first" => (&mut nulls_first, true),
                "nulls_last" => (&mut nulls_first, false),
                _ => {
                    return Err(Error::InvalidConfig(format!(
                        "bad sort key suffix ':{suffix}' in '{spec}' (expected :asc, :desc, \
                         :nulls_first or :nulls_last)"
                    )));
                }
            };
            if slot.replace(value).is_some() {
                return Err(Error::InvalidConfig(format!(
                    "sort key suffix ':{suffix}' in '{spec}' repeats or contradicts an earlier one"
                )));
            }
        }
        let default = SortOptions::default();
        Ok(SortKey {
            column: column.to_string(),
            options: SortOptions {
                descending: descending.unwrap_or(default.descending),
                nulls_first: nulls_first.unwrap_or(default.nulls_first),
            },
        })
    }
}

impl fmt::Display for SortKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.column)?;
        if self.options.descending {
            f.write_str(":desc")?;
        }
        f.write_str(if self.options.nulls_first {
            ":nulls_first"
        } else {
            ":nulls_last"
        })
    }
}

/// A comma-separated list of [`SortKey`]s, most significant first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SortKeys(pub Vec<SortKey>);

impl FromStr for SortKeys {
    type Err = Error;

    /// Parses `KEY[,KEY...]`; at least one key is required.
    fn from_str(s: &str) -> Result<Self, Error> {
        if s.trim().is_empty() {
            return Err(Error::InvalidConfig(
                "--by needs at least one column (COL[:desc][:nulls_first|:nulls_last],...)".into(),
            ));
        }
        s.split(',')
            .map(str::parse)
            .collect::<Result<Vec<_>, _>>()
            .map(SortKeys)
    }
}

/// A byte count parsed from `123`, `64KiB`, `1.5 GiB`, `10MB` and the like
/// (units B, KB, MB, GB, TB in powers of 1000 and KiB, MiB, GiB, TiB in
/// powers of 1024, case-insensitive).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteSize(pub u64);

impl FromStr for ByteSize {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        strata_gen::parse_byte_size(s)
            .map(ByteSize)
            .map_err(Error::InvalidConfig)
    }
}

impl fmt::Display for ByteSize {
    /// `1.5 GiB`; plain `N bytes` below 1 KiB.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&short_bytes(self.0))
    }
}

/// What to sort, by what, and where to.
#[derive(Debug, Clone)]
pub struct SortConfig {
    /// The inputs: Parquet or Arrow IPC files (each format found from its
    /// magic bytes), or directories, which stand for the `.parquet`,
    /// `.arrow`, `.ipc` and `.feather` files directly in them (by name).
    /// All have the same schema; their rows are sorted together.
    pub inputs: Vec<PathBuf>,
    /// The output file, whose extension picks the format
    /// ([`Format::for_output`]); with [`SortConfig::target_file_bytes`], a
    /// directory of Parquet files.
    pub output: PathBuf,
    /// The keys, most significant first.
    pub keys: Vec<SortKey>,
    /// The memory the sort may use. An input whose sort fits is sorted in
    /// memory; a larger one is cut into sorted runs spilled to disk and
    /// merged.
    pub memory_limit: u64,
    /// Replace an existing output.
    pub overwrite: bool,
    /// Where runs are spilled (a new directory inside it, removed at the
    /// end); `None`: next to the output.
    pub spill_dir: Option<PathBuf>,
    /// Write a directory of Parquet files of about this size each, merged
    /// on all threads, instead of one file.
    pub target_file_bytes: Option<u64>,
    /// Threads for sorting runs and for a directory output's merge (0: one
    /// per CPU).
    pub threads: usize,
    /// Counters a progress display can poll, and the way to interrupt
    /// the sort ([`SortProgress::interrupt`]).
    pub progress: Option<Arc<SortProgress>>,
    /// The output's codec, Parquet and IPC alike (IPC takes none, lz4 or
    /// zstd). [`SortConfig::new`]: zstd at the default level.
    pub compression: Compression,
}

impl SortConfig {
    /// Sorting `input` into the file `output` by `keys`, with the default
    /// memory limit, spilling next to the output.
    pub fn new(input: impl Into<PathBuf>, output: impl Into<PathBuf>, keys: Vec<SortKey>) -> Self {
        SortConfig {
            inputs: vec![input.into()],
            output: output.into(),
            keys,
            memory_limit: DEFAULT_MEMORY_LIMIT,
            overwrite: false,
            spill_dir: None,
            target_file_bytes: None,
            threads: 0,
            progress: None,
            compression: Compression::Zstd(DEFAULT_ZSTD_LEVEL),
        }
    }
}

/// What a [`sort_file`](crate::sort_file) run did.
#[derive(Debug, Clone)]
pub struct SortSummary {
    /// Rows sorted.
    pub rows: u64,
    /// The input's format.
    pub input_format: Format,
    /// The output's format.
    pub output_format: Format,
    /// Size of the input file.
    pub input_bytes: u64,
    /// Size of the output file.
    pub output_bytes: u64,
    /// In-memory size of the input's batches.
    pub input_memory: u64,
    /// Bytes of the encoded sort keys.
    pub row_bytes: u64,
    /// The full memory estimate checked against the limit.
    pub memory_estimate: u64,
    /// Seconds reading the input.
    pub read_s: f64,
    /// Seconds concatenating the batches and encoding the keys.
    pub encode_s: f64,
    /// Seconds sorting the row indices.
    pub sort_s: f64,
    /// Seconds gathering the columns in sorted order (into a Parquet
    /// output, chunk by chunk as they are encoded and written: all but
    /// closing the last row group and the file).
    pub gather_s: f64,
    /// Seconds writing the output (for an external sort, the merges).
    pub write_s: f64,
    /// Seconds in all.
    pub elapsed_s: f64,
    /// Sorted runs spilled to disk; 0 for a sort in memory.
    pub runs: u64,
    /// Merges of runs into longer runs before the last merge.
    pub merge_levels: u64,
    /// Bytes written to the spill directory.
    pub spill_bytes: u64,
    /// The files written, in key order (one unless the output is a
    /// directory).
    pub output_files: Vec<PathBuf>,
    /// The process's peak resident memory at the end, where the system
    /// tells it (Linux).
    pub peak_rss: Option<u64>,
}

fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (fs::metadata(a), fs::metadata(b))
            && x.dev() == y.dev()
            && x.ino() == y.ino()
        {
            return true;
        }
    }
    matches!((fs::canonicalize(a), fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
}

pub(crate) fn file_len(path: &Path) -> Result<u64, Error> {
    Ok(fs::metadata(path)
        .map_err(|e| Error::io("stat", path, e))?
        .len())
}

/// Where a sort writes.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// One file in this format.
    File(Format),
    /// A directory of Parquet files; whether it was there before.
    Dir { existed: bool },
}

/// Checks what can be checked before reading anything: the keys, the
/// inputs, the output format and directory, and the output against the
/// inputs. Returns the input files (directories expanded) and the target.
pub(crate) fn preflight(cfg: &SortConfig) -> Result<(Vec<PathBuf>, Target), Error> {
    if cfg.keys.is_empty() {
        return Err(Error::InvalidConfig(
            "--by needs at least one column".into(),
        ));
    }
    if cfg.memory_limit == 0 {
        return Err(Error::InvalidConfig(
            "the memory limit must be above 0".into(),
        ));
    }
    if cfg.target_file_bytes == Some(0) {
        return Err(Error::InvalidConfig(
            "the target file size must be above 0".into(),
        ));
    }
    let inputs = expand_inputs(&cfg.inputs)?;
    let target = match cfg.target_file_bytes {
        None => {
            let format = Format::for_output(&cfg.output).map_err(Error::from_format)?;
            if cfg.output.exists() {
                if let Some(i) = inputs.iter().find(|i| same_file(i, &cfg.output)) {
                    return Err(Error::InvalidConfig(format!(
                        "output {} is the input file {}; write the sorted copy elsewhere",
                        cfg.output.display(),
                        i.display()
                    )));
                }
                if cfg.output.is_dir() {
                    return Err(Error::InvalidConfig(format!(
                        "output {} is a directory",
                        cfg.output.display()
                    )));
                }
                if !cfg.overwrite {
                    return Err(Error::Store(strata_store::Error::OutputExists {
                        path: cfg.output.clone(),
                        count: 1,
                    }));
                }
            }
            if format == Format::Ipc && cfg.compression == Compression::Snappy {
                return Err(Error::InvalidConfig(format!(
                    "compression snappy is not available for the Arrow IPC output {} \
                     (use none, lz4 or zstd)",
                    cfg.output.display()
                )));
            }
            Target::File(format)
        }
        Some(_) => {
            let existed = cfg.output.exists();
            if existed {
                if !cfg.output.is_dir() {
                    return Err(Error::InvalidConfig(format!(
                        "output {} is a file; with a target file size the output is a directory",
                        cfg.output.display()
                    )));
                }
                if inputs
                    .iter()
                    .any(|i| same_file(output_parent(i), &cfg.output))
                {
                    return Err(Error::InvalidConfig(format!(
                        "output directory {} holds an input; write the sorted files elsewhere",
                        cfg.output.display()
                    )));
                }
                // Hidden temporaries (a killed sort's staging directory)
                // are not outputs: the sort removes them.
                let count = fs::read_dir(&cfg.output)
                    .map_err(|e| Error::io("read", &cfg.output, e))?
                    .flatten()
                    .filter(|e| {
                        !e.file_name()
                            .to_string_lossy()
                            .ends_with(strata_store::output::TEMP_SUFFIX)
                    })
                    .count();
                if count > 0 && !cfg.overwrite {
                    return Err(Error::Store(strata_store::Error::OutputExists {
                        path: cfg.output.clone(),
                        count,
                    }));
                }
            }
            Target::Dir { existed }
        }
    };
    let parent = output_parent(&cfg.output);
    if !parent.is_dir() {
        return Err(Error::InvalidConfig(format!(
            "output directory {} does not exist",
            parent.display()
        )));
    }
    if let Some(d) = &cfg.spill_dir
        && !d.is_dir()
    {
        return Err(Error::InvalidConfig(format!(
            "spill directory {} does not exist or is not a directory",
            d.display()
        )));
    }
    Ok((inputs, target))
}

/// The directory `path` is in (`.` for a bare name).
pub(crate) fn output_parent(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Input files: files as given, directories as the data files directly
/// in them, by name.
pub(crate) fn expand_inputs(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    if inputs.is_empty() {
        return Err(Error::InvalidConfig("no input to sort".into()));
    }
    let mut files = Vec::new();
    for input in inputs {
        if input.is_file() {
            files.push(input.clone());
        } else if input.is_dir() {
            let mut found: Vec<PathBuf> = fs::read_dir(input)
                .map_err(|e| Error::io("read", input, e))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.is_file()
                        && p.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                            ["parquet", "arrow", "ipc", "feather"]
                                .contains(&e.to_ascii_lowercase().as_str())
                        })
                })
                .collect();
            if found.is_empty() {
                return Err(Error::InvalidConfig(format!(
                    "input directory {} holds no .parquet, .arrow, .ipc or .feather file",
                    input.display()
                )));
            }
            found.sort();
            files.extend(found);
        } else {
            return Err(Error::InvalidConfig(format!(
                "input {} does not exist or is not a file",
                input.display()
            )));
        }
    }
    Ok(files)
}
