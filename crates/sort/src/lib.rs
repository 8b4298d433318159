//! Sorting Parquet and Arrow IPC files by key columns, of any size, and
//! the stable k-way [`merge`] of sorted Parquet runs that compaction and
//! the external sort share. Both order rows by the same
//! [`strata_row::KeyColumns`] encoding.
//!
//! [`sort_file`] reads the batches of its inputs (each format found from
//! the magic bytes) in order. When the whole sort fits the memory limit it
//! encodes the key columns with [`strata_row::RowEncoder`] into
//! byte-comparable rows, sorts the rows by those bytes (stably) and writes
//! them in the format the output's extension names: into Parquet, gathered
//! chunk by chunk as the direct encoder writes them, past the page cache
//! ([`strata_store::direct::DirectWriter`]); into IPC, gathered whole
//! first. A larger input is cut into runs that are sorted on
//! all cores and spilled to disk as Parquet, then merged (the `external`
//! module).
//!
//! # Guarantees
//!
//! * The output has the first input's schema (field and schema metadata,
//!   nullability and dictionary types included) and the same rows.
//! * The sort is stable: rows with equal keys keep their input order, so
//!   the output depends only on the inputs and the keys, never on the
//!   memory limit, the thread count or the number of runs.
//! * Reading holds at most one run (two fifths of the limit) and the
//!   merges size their batches to the limit's other part, on top of what
//!   a sort needs whatever its limit ([`memory_floor`]: the process, the
//!   largest input row group decoded, the output's writer).
//! * The output appears only complete: it is written into a hidden staging
//!   directory and renamed into place when the whole sort is done (the
//!   `publish` module), so no glob of the output sees part of it; an
//!   existing output is replaced only when asked, and never when it is an
//!   input. The spill directory and the staged output are removed however
//!   the sort ends, an interrupt ([`SortProgress::interrupt`]) included.
//! * The output is compressed by [`SortConfig::compression`], Parquet and
//!   IPC alike.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{ArrayRef, Int32Array, RecordBatch};
//! use strata_sort::{SortKey, sort_batch};
//!
//! let batch = RecordBatch::try_from_iter([(
//!     "x",
//!     Arc::new(Int32Array::from(vec![Some(3), None, Some(1)])) as ArrayRef,
//! )])
//! .unwrap();
//! let keys: Vec<SortKey> = vec!["x:desc:nulls_last".parse().unwrap()];
//! let sorted = sort_batch(&batch, &keys).unwrap();
//! let x = sorted.column(0).as_any().downcast_ref::<Int32Array>().unwrap();
//! assert_eq!(x.iter().collect::<Vec<_>>(), vec![Some(3), Some(1), None]);
//! ```

use std::{
    fmt, fs,
    path::{Path, PathBuf},
    str::FromStr,
    sync::Arc,
    time::Instant,
};

use arrow_array::{ArrayRef, RecordBatch, UInt32Array};
use arrow_schema::{DataType, FieldRef, Schema, SchemaRef, SortOptions};
use rayon::prelude::*;
use strata_row::{KeyColumns, Rows};

use strata_parquet::{
    Compression, DEFAULT_ROW_GROUP_ROWS, DEFAULT_ZSTD_LEVEL, Format, guard,
    sink::{FileSink, SinkOptions},
};
use strata_store::output::PendingFile;

mod dictionaries;
mod error;
mod external;
pub mod merge;
mod publish;
mod rows;

use publish::{Layout, Staging};

pub use external::SortProgress;

pub use error::Error;
use error::short_bytes;

/// The memory limit used when none is given: 4 GiB.
pub const DEFAULT_MEMORY_LIMIT: u64 = 4 << 30;

/// One sort key: a top-level column and its order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SortKey {
    /// The column name.
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
        let bad = |why: &str| Error::InvalidConfig(format!("bad size '{s}': {why}"));
        let t = s.trim();
        let split = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(t.len());
        let (number, unit) = t.split_at(split);
        let multiplier: u64 = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 1,
            "kb" => 1_000,
            "mb" => 1_000_000,
            "gb" => 1_000_000_000,
            "tb" => 1_000_000_000_000,
            "kib" => 1 << 10,
            "mib" => 1 << 20,
            "gib" => 1 << 30,
            "tib" => 1 << 40,
            _ => {
                return Err(bad(
                    "expected a number with an optional unit B, KB, MB, GB, TB, KiB, MiB, GiB or TiB",
                ));
            }
        };
        let bytes = if number.contains('.') {
            let v: f64 = number.parse().map_err(|_| bad("not a number"))?;
            let b = (v * multiplier as f64).round();
            if !b.is_finite() || b >= u64::MAX as f64 {
                return Err(bad("too large"));
            }
            b as u64
        } else {
            let v: u64 = number.parse().map_err(|_| bad("not a number"))?;
            v.checked_mul(multiplier).ok_or_else(|| bad("too large"))?
        };
        if bytes == 0 {
            return Err(bad("must be greater than zero"));
        }
        Ok(ByteSize(bytes))
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

/// What a [`sort_file`] run did.
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

/// A file read whole into memory.
#[derive(Debug, Clone)]
pub struct Input {
    /// Its format.
    pub format: Format,
    /// Its schema, metadata included.
    pub schema: SchemaRef,
    /// Its batches.
    pub batches: Vec<RecordBatch>,
    /// Rows in its largest row group (Parquet only).
    pub row_group_rows: Option<usize>,
}

/// A format error of `strata-parquet` ([`Format::detect`],
/// [`Format::for_output`]) as this crate's: an unusable setting stays
/// [`Error::InvalidConfig`].
fn format_error(e: strata_parquet::Error) -> Error {
    match e {
        strata_parquet::Error::InvalidConfig(m) => Error::InvalidConfig(m),
        e => e.into(),
    }
}

/// Reads every batch of a Parquet or Arrow IPC file, its format found
/// from the magic bytes.
///
/// # Errors
/// [`Error::Store`] (IO) when it cannot be opened or read, [`Error::InvalidConfig`]
/// when it is neither format, [`Error::Read`] naming the file around a
/// decoding error.
pub fn read_input(path: &Path) -> Result<Input, Error> {
    // The decoders may panic on malformed data they do not check: that is
    // an error about the file, and prints nothing.
    let read =
        guard::catch(|| read_any(path)).unwrap_or_else(|p| Err(Error::Invalid(p.to_string())));
    read.map_err(|e| input_error(path, e))
}

/// An error reading the input `path` as the user sees it: IO errors and
/// bad settings as they are, anything about the file's contents as an
/// [`Error::Read`] naming it.
fn input_error(path: &Path, e: Error) -> Error {
    match e {
        e @ (Error::Store(strata_store::Error::Io { .. }) | Error::InvalidConfig(_)) => e,
        e => Error::Read {
            path: path.to_path_buf(),
            source: Box::new(e),
        },
    }
}

/// Reads the file through strata-scan's readers, the path every strata
/// command reads a user's file by: footers, blocks and buffers are checked
/// against the file before decoding.
fn read_any(path: &Path) -> Result<Input, Error> {
    let format = Format::detect(path).map_err(format_error)?;
    // Unmapped, as in `read_into`.
    let source = strata_store::source::Source::open_file(
        path,
        path.display().to_string(),
        Default::default(),
    )?
    .without_map();
    let mut scanner = strata_scan::Scanner::open(source)?;
    let row_group_rows = match scanner.file() {
        strata_scan::ScanFile::Parquet(f) => largest_row_group(f.metadata()),
        strata_scan::ScanFile::Ipc(_) => None,
    };
    let schema = scanner.file().schema();
    let mut batches = Vec::new();
    scanner.scan(&strata_scan::ScanRequest::default(), |b| {
        batches.push(b.clone());
        Ok(())
    })?;
    Ok(Input {
        format,
        schema,
        batches,
        row_group_rows,
    })
}

/// The key columns of a schema and the row encoder for them.
#[derive(Debug)]
pub struct Sorter {
    keys: KeyColumns,
}

impl Sorter {
    /// Resolves `keys` against `schema` and builds the row encoder.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] for no keys, [`Error::UnknownColumn`] for a
    /// name the schema lacks, [`Error::UnsupportedSortKey`] for a column
    /// whose type the row encoder cannot order, [`Error::Row`] otherwise.
    pub fn new(schema: &Schema, keys: &[SortKey]) -> Result<Self, Error> {
        if keys.is_empty() {
            return Err(Error::InvalidConfig(
                "sorting needs at least one key column".into(),
            ));
        }
        let named: Vec<(&str, SortOptions)> = keys
            .iter()
            .map(|k| (k.column.as_str(), k.options))
            .collect();
        match KeyColumns::new(schema, &named) {
            Ok(keys) => Ok(Sorter { keys }),
            Err(strata_row::Error::UnknownColumn { name, available }) => {
                Err(Error::UnknownColumn { name, available })
            }
            Err(strata_row::Error::UnsupportedKey {
                column,
                data_type,
                source,
            }) => Err(Error::UnsupportedSortKey {
                column,
                data_type,
                source: *source,
            }),
            Err(e) => Err(Error::Row(e)),
        }
    }

    /// Encodes the key columns of `batch` (which has the schema given to
    /// [`Sorter::new`]).
    ///
    /// # Errors
    /// [`Error::Row`] when the encoder fails.
    pub fn encode(&self, batch: &RecordBatch) -> Result<Rows, Error> {
        Ok(self.keys.encode(batch)?)
    }

    /// The indices of `rows` in sorted order; equal rows keep their order.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] for more than `u32::MAX` rows.
    pub fn sorted_indices(rows: &Rows) -> Result<Vec<u32>, Error> {
        let n = u32::try_from(rows.num_rows()).map_err(|_| {
            Error::InvalidConfig(format!(
                "cannot sort {} rows in memory (at most {})",
                rows.num_rows(),
                u32::MAX
            ))
        })?;
        // Sorted as (16-byte key prefix, row) pairs on all threads: most
        // comparisons are decided by the prefixes, held in the array being
        // sorted; equal prefixes compare the keys, then the rows (so equal
        // keys keep their input order).
        let mut entries: Vec<([u64; 2], u32)> = (0..n)
            .map(|i| (external::prefix(rows.row(i as usize).as_bytes()), i))
            .collect();
        entries.par_sort_unstable_by(|x, y| {
            x.0.cmp(&y.0)
                .then_with(|| {
                    rows.row(x.1 as usize)
                        .as_bytes()
                        .cmp(rows.row(y.1 as usize).as_bytes())
                })
                .then_with(|| x.1.cmp(&y.1))
        });
        Ok(entries.into_iter().map(|(_, i)| i).collect())
    }
}

/// Sorts one batch by `keys` (stable), with no memory limit.
///
/// # Errors
/// As [`Sorter::new`], [`Sorter::encode`] and [`Sorter::sorted_indices`];
/// [`Error::Arrow`] when gathering fails.
pub fn sort_batch(batch: &RecordBatch, keys: &[SortKey]) -> Result<RecordBatch, Error> {
    let sorter = Sorter::new(batch.schema_ref(), keys)?;
    let rows = sorter.encode(batch)?;
    let indices = UInt32Array::from(Sorter::sorted_indices(&rows)?);
    take_parallel(batch, &indices)
}

/// `batch`'s rows at `indices`, the columns gathered on all threads.
fn take_parallel(batch: &RecordBatch, indices: &UInt32Array) -> Result<RecordBatch, Error> {
    let columns = batch
        .columns()
        .par_iter()
        .map(|c| arrow_select::take::take(c.as_ref(), indices, None))
        .collect::<Result<Vec<_>, _>>()?;
    let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(indices.len()));
    Ok(RecordBatch::try_new_with_options(
        batch.schema(),
        columns,
        &options,
    )?)
}

/// `data_type` with every dictionary replaced by its value type.
fn plain_type(data_type: &DataType) -> DataType {
    let field =
        |f: &FieldRef| Arc::new(f.as_ref().clone().with_data_type(plain_type(f.data_type())));
    match data_type {
        DataType::Dictionary(_, values) => plain_type(values),
        DataType::List(f) => DataType::List(field(f)),
        DataType::LargeList(f) => DataType::LargeList(field(f)),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(field(f), *n),
        DataType::Map(f, sorted) => DataType::Map(field(f), *sorted),
        DataType::Struct(fs) => DataType::Struct(fs.iter().map(field).collect()),
        other => other.clone(),
    }
}

/// The type a column is concatenated and sorted as: its own, except that
/// dictionaries below the top level become their value types.
///
/// Concatenating batches merges top-level dictionaries, but appends nested
/// ones value list after value list, which overflows small key types when
/// every batch brings its own dictionary (as Parquet reads do).
pub(crate) fn working_type(data_type: &DataType) -> DataType {
    match data_type {
        DataType::Dictionary(..) => data_type.clone(),
        other => plain_type(other),
    }
}

/// Casts the columns of `batches` whose [`working_type`] differs; returns
/// the working schema and batches. With fewer than two batches nothing is
/// concatenated, so nothing is cast.
fn to_working(
    schema: &SchemaRef,
    batches: Vec<RecordBatch>,
) -> Result<(SchemaRef, Vec<RecordBatch>), Error> {
    let fields: Vec<FieldRef> = schema
        .fields()
        .iter()
        .map(|f| {
            Arc::new(
                f.as_ref()
                    .clone()
                    .with_data_type(working_type(f.data_type())),
            )
        })
        .collect();
    if batches.len() < 2 || fields.iter().zip(schema.fields()).all(|(a, b)| a == b) {
        return Ok((schema.clone(), batches));
    }
    let working = Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()));
    let batches = batches
        .into_iter()
        .map(|b| {
            let columns = b
                .columns()
                .iter()
                .zip(working.fields())
                .map(|(c, f)| cast_if_needed(c, f.data_type()))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(RecordBatch::try_new(working.clone(), columns)?)
        })
        .collect::<Result<Vec<_>, Error>>()?;
    Ok((working, batches))
}

pub(crate) fn cast_if_needed(column: &ArrayRef, to: &DataType) -> Result<ArrayRef, Error> {
    if column.data_type() == to {
        Ok(column.clone())
    } else {
        Ok(arrow_cast::cast(column, to)?)
    }
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

fn file_len(path: &Path) -> Result<u64, Error> {
    Ok(fs::metadata(path)
        .map_err(|e| Error::io("stat", path, e))?
        .len())
}

/// Where a sort writes.
#[derive(Debug, Clone)]
enum Target {
    /// One file in this format.
    File(Format),
    /// A directory of Parquet files; whether it was there before.
    Dir { existed: bool },
}

/// Checks what can be checked before reading anything: the keys, the
/// inputs, the output format and directory, and the output against the
/// inputs. Returns the input files (directories expanded) and the target.
fn preflight(cfg: &SortConfig) -> Result<(Vec<PathBuf>, Target), Error> {
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
            let format = Format::for_output(&cfg.output).map_err(format_error)?;
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
fn output_parent(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Input files: files as given, directories as the data files directly
/// in them, by name.
fn expand_inputs(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
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

/// The in-memory size of `batches`.
fn memory(batches: &[RecordBatch]) -> u64 {
    batches
        .iter()
        .map(|b| b.get_array_memory_size() as u64)
        .sum()
}

/// The reading phase: batches collect into a run until it reaches its
/// budget, when the run is sorted and spilled.
struct Runs<'a> {
    cfg: &'a SortConfig,
    /// The run's budget of in-memory bytes.
    budget: u64,
    schema: Option<SchemaRef>,
    first_input: PathBuf,
    pending: Vec<RecordBatch>,
    pending_memory: u64,
    spill: Option<external::Spill>,
    rows: u64,
    batch_rows: usize,
    row_group_rows: Option<usize>,
    format: Option<Format>,
}

impl Runs<'_> {
    /// Takes the schema of input `path`: the first input's is the sort's
    /// (and its keys are checked against it), every other must have the
    /// same fields.
    fn schema(&mut self, path: &Path, schema: SchemaRef) -> Result<(), Error> {
        match &self.schema {
            None => {
                // Named errors for bad keys come from the schema as the
                // user sees it.
                Sorter::new(&schema, &self.cfg.keys)?;
                self.schema = Some(schema);
            }
            Some(s) if s.fields() != schema.fields() => {
                return Err(Error::InvalidConfig(format!(
                    "{} has a different schema from {}",
                    path.display(),
                    self.first_input.display()
                )));
            }
            Some(_) => {}
        }
        Ok(())
    }

    /// Adds one batch of input `path`.
    fn push(&mut self, path: &Path, batch: &RecordBatch) -> Result<(), Error> {
        if self
            .schema
            .as_ref()
            .is_some_and(|s| s.fields() != batch.schema_ref().fields())
        {
            return Err(Error::InvalidConfig(format!(
                "a batch of {} does not have the file's schema",
                path.display()
            )));
        }
        if batch.num_rows() == 0 {
            return Ok(());
        }
        self.rows += batch.num_rows() as u64;
        self.batch_rows = self.batch_rows.max(batch.num_rows());
        if let Some(p) = &self.cfg.progress {
            p.rows_read.fetch_add(
                batch.num_rows() as u64,
                std::sync::atomic::Ordering::Relaxed,
            );
        }
        let size = batch.get_array_memory_size() as u64;
        if self.pending_memory + size > self.budget && !self.pending.is_empty() {
            self.spill_pending()?;
        }
        self.pending.push(batch.clone());
        self.pending_memory += size;
        Ok(())
    }

    /// Takes note of a Parquet input's footer: its largest row group (the
    /// output's row groups are at least as large) and its rows (for the
    /// progress bar).
    fn note_parquet(&mut self, md: &parquet::file::metadata::ParquetMetaData) {
        self.row_group_rows = self.row_group_rows.max(largest_row_group(md));
        if let Some(p) = &self.cfg.progress {
            p.input_rows.fetch_add(
                md.file_metadata().num_rows().max(0) as u64,
                std::sync::atomic::Ordering::Relaxed,
            );
        }
    }

    /// Sorts and spills the pending run.
    fn spill_pending(&mut self) -> Result<(), Error> {
        if self.spill.is_none() {
            let schema = self.schema.clone().ok_or_else(|| {
                Error::InvalidConfig("nothing to spill before the first batch".into())
            })?;
            if let Some(f @ Format::Ipc) = self.format {
                return Err(Error::InvalidConfig(format!(
                    "the input is larger than --memory-limit ({}), and a sort that spills \
                     writes Parquet; the output {} is {f}",
                    ByteSize(self.cfg.memory_limit),
                    self.cfg.output.display()
                )));
            }
            let parent = match &self.cfg.spill_dir {
                Some(d) => d.as_path(),
                None => output_parent(&self.cfg.output),
            };
            self.spill = Some(external::Spill::create(
                parent,
                schema,
                &self.cfg.keys,
                self.cfg.progress.clone(),
            )?);
        }
        let batches = std::mem::take(&mut self.pending);
        self.pending_memory = 0;
        let Some(s) = self.spill.as_mut() else {
            return Ok(());
        };
        let sizes: Vec<u64> = batches
            .iter()
            .map(|b| b.get_array_memory_size() as u64)
            .collect();
        let mut rest = batches.into_iter();
        for (run, bytes) in split_runs(&sizes, MAX_RUN_BYTES) {
            s.spill(rest.by_ref().take(run.len()).collect(), bytes)?;
        }
        Ok(())
    }
}

/// Splits batches of `sizes` bytes, in order, into runs of at most `cap`
/// bytes each (a batch larger than `cap` is a run of its own), with each
/// run's bytes.
fn split_runs(sizes: &[u64], cap: u64) -> Vec<(std::ops::Range<usize>, u64)> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0u64);
    for (i, &size) in sizes.iter().enumerate() {
        if bytes + size > cap && i > start {
            out.push((start..i, bytes));
            (start, bytes) = (i, 0);
        }
        bytes += size;
    }
    if start < sizes.len() {
        out.push((start..sizes.len(), bytes));
    }
    out
}

/// The most in-memory bytes of one spilled run, whatever the limit: a run
/// is sorted and its rows gathered in key order, which goes through memory
/// at random, so runs much larger than this spend their time in cache and
/// TLB misses. 140M `events` rows (4 GB of Parquet) at a 1 GiB limit, 2
/// threads: 37 runs of 410 MiB took 194 s to read, sort and spill and 121
/// s to merge; 146 runs of 128 MiB 118 s and 173 s; 73 runs of 256 MiB
/// 119 s and 130 s.
const MAX_RUN_BYTES: u64 = 256 << 20;

/// The most rows in a row group of the file `md` describes.
fn largest_row_group(md: &parquet::file::metadata::ParquetMetaData) -> Option<usize> {
    md.row_groups()
        .iter()
        .map(|g| usize::try_from(g.num_rows()).unwrap_or(0))
        .max()
}

/// Reads every batch of `path` into `runs`. A decoding error is an
/// [`Error::Read`] naming the file; an error of the run (spilling) is
/// returned as it is.
fn read_into(path: &Path, runs: &mut Runs<'_>) -> Result<(), Error> {
    let mut own: Option<Error> = None;
    let read = guard::catch(|| -> Result<(), Error> {
        // Unmapped: the sort keeps what it holds within its memory budget,
        // and a map's pages would stay resident until the file is done.
        let source = strata_store::source::Source::open_file(
            path,
            path.display().to_string(),
            Default::default(),
        )?
        .without_map();
        let mut scanner = strata_scan::Scanner::open(source)?;
        runs.schema(path, scanner.file().schema()).map_err(|e| {
            own = Some(e);
            strata_scan::Error::InvalidConfig("stopped".into())
        })?;
        if let strata_scan::ScanFile::Parquet(f) = scanner.file() {
            runs.note_parquet(f.metadata());
        }
        scanner.scan(&strata_scan::ScanRequest::default(), |b| {
            runs.push(path, b).map_err(|e| {
                own = Some(e);
                strata_scan::Error::InvalidConfig("stopped".into())
            })
        })?;
        Ok(())
    })
    .unwrap_or_else(|p| Err(Error::Invalid(p.to_string())));
    if let Some(e) = own {
        return Err(e);
    }
    read.map_err(|e| input_error(path, e))
}

/// Rows per batch of a parallel Parquet read.
const READ_BATCH_ROWS: usize = 16 * 1024;

/// Reads the Parquet file `path` into `runs`, decoding its row groups on
/// every thread of the current pool, a window of them at a time (as many
/// as there are threads, fewer when their decoded size would pass half the
/// run budget), and pushing their batches in file order.
fn read_parquet_parallel(path: &Path, runs: &mut Runs<'_>) -> Result<(), Error> {
    use parquet::arrow::arrow_reader::{
        ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
    };
    use strata_parquet::read;
    let wrap = |e: Error| input_error(path, e);
    let read_err = |e: read::ReadError| match e {
        read::ReadError::Io(e) => Error::io("read", path, e),
        e => wrap(Error::Invalid(e.to_string())),
    };
    let file = fs::File::open(path).map_err(|e| Error::io("open", path, e))?;
    let builder = read::open(file, ArrowReaderOptions::new()).map_err(read_err)?;
    let md = builder.metadata().clone();
    let schema = builder.schema().clone();
    drop(builder);
    runs.schema(path, schema)?;
    let arrow_md = ArrowReaderMetadata::try_new(md.clone(), ArrowReaderOptions::new())
        .map_err(|e| wrap(Error::Parquet(e)))?;
    runs.note_parquet(&md);
    let threads = rayon::current_num_threads().max(1);
    let groups = md.num_row_groups();
    let footer_bytes = |i: usize| md.row_group(i).total_byte_size().max(0) as f64;
    // Arrow bytes per footer byte, from the groups decoded so far: the
    // footer counts the uncompressed Parquet pages, which for `events`
    // decode to three times as many bytes of Arrow arrays (seven decoded
    // groups at once passed a 256 MiB limit by 60 MB at 8 threads). Until
    // one group is decoded, the window is that one group.
    let mut arrow_per_footer: Option<f64> = None;
    let mut g = 0;
    while g < groups {
        let mut window = 0;
        let mut bytes = 0.0f64;
        let most = if arrow_per_footer.is_some() {
            threads
        } else {
            1
        };
        while g + window < groups && window < most {
            let size = footer_bytes(g + window) * arrow_per_footer.unwrap_or(1.0);
            if window > 0 && bytes + size > (runs.budget / 2) as f64 {
                break;
            }
            bytes += size;
            window += 1;
        }
        let decoded: Vec<Result<Vec<RecordBatch>, Error>> = (g..g + window)
            .into_par_iter()
            .map(|i| {
                let file = fs::File::open(path).map_err(|e| Error::io("open", path, e))?;
                let builder =
                    ParquetRecordBatchReaderBuilder::new_with_metadata(file, arrow_md.clone())
                        .with_row_groups(vec![i])
                        .with_batch_size(READ_BATCH_ROWS);
                let mut reader = read::build(builder).map_err(read_err)?;
                let mut out = Vec::new();
                while let Some(b) = read::next_batch(&mut reader).map_err(read_err)? {
                    out.push(b);
                }
                Ok(out)
            })
            .collect();
        let footer: f64 = (g..g + window).map(footer_bytes).sum();
        let mut arrow = 0u64;
        for batches in decoded {
            let batches = batches?;
            arrow += memory(&batches);
            for b in batches {
                runs.push(path, &b)?;
            }
        }
        if footer > 0.0 && arrow > 0 {
            let ratio = arrow as f64 / footer;
            arrow_per_footer = Some(arrow_per_footer.map_or(ratio, |r| r.max(ratio)));
        }
        g += window;
    }
    Ok(())
}

/// The least memory a sort of given inputs can keep to, and what it is
/// made of ([`memory_floor`]). A `--memory-limit` below it is not kept:
/// the sort still runs, and uses about this much.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryFloor {
    /// The process's resident memory before the sort: its code, stacks and
    /// allocator.
    pub process: u64,
    /// Reading: the largest Parquet row group of the inputs is decoded
    /// whole, and its batches and the decoder's pages are held together
    /// (taken as twice its Arrow size, itself about twice the footer's
    /// uncompressed size).
    pub read: u64,
    /// Writing a Parquet output (or a run): three 1 MiB buffers, and a
    /// zstd context per leaf column when the codec is zstd.
    pub write: u64,
}

impl MemoryFloor {
    /// The floor: all three.
    pub fn total(&self) -> u64 {
        self.process
            .saturating_add(self.read)
            .saturating_add(self.write)
    }
}

/// What a sort of `cfg.inputs` needs whatever its limit ([`MemoryFloor`]),
/// from the inputs' footers and the process's resident memory now. IPC
/// inputs are read a batch at a time and add nothing to the reading part.
/// Measured peak RSS at a 2 MiB limit, 2 threads (a debug build, whose
/// process part is 25 MiB): 250,000 `events` rows in one row group, floor
/// 87.5 MiB, peak 83 MiB; 200,000 `lineitem` rows in four, floor 54.5
/// MiB, peak 62 MiB; 12,000 `wide-u64` rows (50 columns), floor 65.3 MiB,
/// peak 55 MiB.
///
/// # Errors
/// As reading the inputs' footers ([`Error::Read`], [`Error::Store`],
/// [`Error::InvalidConfig`]).
pub fn memory_floor(cfg: &SortConfig) -> Result<MemoryFloor, Error> {
    let mut largest_group = 0u64;
    let mut leaves = 0usize;
    for path in expand_inputs(&cfg.inputs)? {
        match Format::detect(&path).map_err(format_error)? {
            Format::Parquet => {
                let file = fs::File::open(&path).map_err(|e| Error::io("open", &path, e))?;
                let builder = strata_parquet::read::open(
                    file,
                    parquet::arrow::arrow_reader::ArrowReaderOptions::new(),
                )
                .map_err(|e| input_error(&path, Error::Invalid(e.to_string())))?;
                let md = builder.metadata();
                leaves = leaves.max(md.file_metadata().schema_descr().num_columns());
                for g in md.row_groups() {
                    largest_group = largest_group.max(g.total_byte_size().max(0) as u64);
                }
            }
            Format::Ipc => {}
        }
    }
    let zstd = matches!(cfg.compression, Compression::Zstd(_));
    let write = strata_store::direct::memory_bytes(1 << 20) as u64
        + if zstd {
            (leaves as f64 * external::ZSTD_CONTEXT_BYTES) as u64
        } else {
            0
        };
    Ok(MemoryFloor {
        process: current_rss().unwrap_or(0),
        read: largest_group.saturating_mul(4),
        write,
    })
}

/// The process's resident set size now (Linux: `VmRSS`).
fn current_rss() -> Option<u64> {
    proc_status_kb("VmRSS:").map(|kb| kb * 1024)
}

/// A `kB` line of `/proc/self/status`.
fn proc_status_kb(key: &str) -> Option<u64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The process's peak resident set size (Linux: `VmHWM`).
fn peak_rss() -> Option<u64> {
    proc_status_kb("VmHWM:").map(|kb| kb * 1024)
}

/// Sorts the files `cfg.inputs` by `cfg.keys` into `cfg.output`.
///
/// When the whole sort fits in `cfg.memory_limit` it runs in memory: the
/// memory estimate is the input batches' in-memory size, plus the encoded
/// keys, plus the sort's entries, plus the output being built (a Parquet
/// output's open row group; an IPC output's sorted copy, taken to be the
/// input's size again). Otherwise the input is cut into sorted runs
/// of about two fifths of the limit, spilled to a temporary directory (see
/// [`SortConfig::spill_dir`]) and merged; the merges size their batches
/// so that the runs they read and the output row group they build stay
/// within the limit. Both give the same rows in the same order: the stable
/// sort of the inputs in the order given.
///
/// # Errors
/// Bad settings ([`Error::InvalidConfig`], [`Error::Store`]), an
/// unreadable input ([`Error::Read`], [`Error::Store`] (IO)), bad keys (as
/// [`Sorter::new`]), inputs of different schemas, and write errors (of the
/// output or the spill directory). On any error no output file is left,
/// and the spill directory is removed.
pub fn sort_file(cfg: &SortConfig) -> Result<SortSummary, Error> {
    let start = Instant::now();
    let (inputs, target) = preflight(cfg)?;
    let layout = match target {
        Target::File(_) => Layout::File,
        Target::Dir { existed: false } => Layout::NewDir,
        Target::Dir { existed: true } => Layout::IntoDir,
    };
    let staging = Staging::create(&cfg.output, layout, cfg.overwrite, cfg.progress.clone())?;
    let mut input_bytes = 0;
    for i in &inputs {
        input_bytes += file_len(i)?;
    }
    let mut runs = Runs {
        cfg,
        budget: (cfg.memory_limit / 5 * 2).max(1),
        schema: None,
        first_input: inputs[0].clone(),
        pending: Vec::new(),
        pending_memory: 0,
        spill: None,
        rows: 0,
        batch_rows: 1,
        row_group_rows: None,
        format: match target {
            Target::File(f) => Some(f),
            Target::Dir { .. } => None,
        },
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.threads)
        .build()
        .map_err(|e| Error::InvalidConfig(format!("cannot start the sort's threads: {e}")))?;
    let mut input_format = None;
    for path in &inputs {
        let format = Format::detect(path).map_err(format_error)?;
        input_format.get_or_insert(format);
        match format {
            Format::Parquet if pool.current_num_threads() > 1 => {
                pool.install(|| read_parquet_parallel(path, &mut runs))?
            }
            _ => pool.install(|| read_into(path, &mut runs))?,
        }
    }
    let read_s = start.elapsed().as_secs_f64();
    let input_format = input_format.unwrap_or(Format::Parquet);
    let Some(schema) = runs.schema.clone() else {
        return Err(Error::InvalidConfig(format!(
            "{} holds no batch to sort",
            inputs[0].display()
        )));
    };
    if let (None, Target::File(output_format)) = (&runs.spill, &target) {
        let batches = std::mem::take(&mut runs.pending);
        let staged = staging.file();
        let sorted = sort_in_memory(
            cfg,
            &staged,
            &schema,
            batches,
            runs.batch_rows,
            runs.row_group_rows,
        )?;
        match sorted {
            InMemory::Done(mut s) => {
                s.output_files = staging.publish(&[staged])?;
                s.input_format = input_format;
                s.output_format = *output_format;
                s.input_bytes = input_bytes;
                s.read_s = read_s;
                s.elapsed_s = start.elapsed().as_secs_f64();
                s.peak_rss = peak_rss();
                return Ok(s);
            }
            // Over the limit after all: the batches become the only run.
            InMemory::TooLarge(batches) => {
                runs.pending_memory = memory(&batches);
                runs.pending = batches;
            }
        }
    }
    if !runs.pending.is_empty() {
        pool.install(|| runs.spill_pending())?;
    }
    let Some(mut spill) = runs.spill.take() else {
        return Err(Error::InvalidConfig("nothing was read to sort".into()));
    };
    let t = Instant::now();
    let row_bytes = spill.row_bytes.unwrap_or(64.0).max(1.0);
    let threads = match cfg.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    // Half the limit for the runs being read: each run's page readers
    // (a fixed cost) and its batch (with its keys and the rows gathered
    // from it, about three times the batch). The rest is for the output's
    // open row groups and the chunk being gathered.
    let merge_budget = (cfg.memory_limit / 2) as f64;
    let reader_bytes = spill.run_reader_bytes(row_bytes);
    // Fewer rows per batch than this cost more in per-batch work than a
    // further merge level costs.
    const MIN_MERGE_ROWS: usize = 512;
    let per_run = |batch_rows: usize| batch_rows as f64 * row_bytes * 3.0;
    let rows_for = |fan_in: usize, threads: usize| -> usize {
        let readers = (fan_in * threads) as f64;
        let for_batches = (merge_budget - readers * reader_bytes).max(0.0);
        (for_batches / readers / per_run(1)).clamp(0.0, 8192.0) as usize
    };
    let mut fan_in = spill.runs.len().clamp(2, external::MAX_FAN_IN);
    while fan_in > 2 && rows_for(fan_in, 1) < MIN_MERGE_ROWS {
        fan_in = (fan_in / 2).max(2);
    }
    let level_rows = rows_for(fan_in, 1).max(16);
    if let Some(p) = &cfg.progress {
        let levels = (spill.runs.len().max(1) as f64)
            .log(fan_in as f64)
            .ceil()
            .max(1.0);
        p.rows_to_merge.store(
            runs.rows.saturating_mul(levels as u64),
            std::sync::atomic::Ordering::Relaxed,
        );
    }
    pool.install(|| spill.reduce(fan_in, level_rows))?;
    // Each thread of the final merge writes a file of its own, through
    // three buffers and a zstd context per leaf column, whatever its row
    // groups hold (at 8 threads and a 256 MiB limit that passed the limit
    // twice over). They come out of the quarter of the limit left beside
    // the readers and the row groups: buffers of 1/128 of the limit (1 to
    // 8 MiB).
    let write_buffer = usize::try_from(cfg.memory_limit / 128)
        .map_or(strata_store::direct::CHUNK_BYTES, |b| {
            b.clamp(1 << 20, strata_store::direct::CHUNK_BYTES)
        });
    let writer_bytes = spill.output_writer_bytes(write_buffer);
    // As many threads as the budget gives every reader of the final
    // merge at least `MIN_MERGE_ROWS` rows (each thread reads every run)
    // and their writers fit.
    let mut final_threads = threads.clamp(1, 64);
    while final_threads > 1
        && (rows_for(spill.runs.len().max(1), final_threads) < MIN_MERGE_ROWS
            || final_threads as f64 * writer_bytes > (cfg.memory_limit / 4) as f64)
    {
        final_threads -= 1;
    }
    let final_rows = rows_for(spill.runs.len().max(1), final_threads).max(16);
    // A quarter of the limit for the open output row groups, shared by
    // the threads.
    let group_rows = ((cfg.memory_limit / 4) as f64 / row_bytes / final_threads as f64) as usize;
    let group_rows = group_rows.clamp(
        1024,
        runs.row_group_rows
            .unwrap_or(DEFAULT_ROW_GROUP_ROWS)
            .max(1024),
    );
    let merge_cfg = merge::MergeConfig {
        threads: final_threads,
        target_file_bytes: cfg.target_file_bytes.unwrap_or(u64::MAX),
        properties: Some(external::output_properties(group_rows, cfg.compression)?),
        write_buffer_bytes: write_buffer,
        ..merge::MergeConfig::default()
    };
    // Everything is written into the staging directory and published
    // when complete.
    let files = match &target {
        Target::File(_) if final_threads == 1 => {
            let name = staging
                .file()
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            spill.finish(staging.dir(), &|_| name.clone(), merge_cfg, final_rows)?
        }
        Target::File(_) => {
            // Key ranges merged on every thread into parts in the spill
            // directory, then joined into the output without decoding.
            let parts = spill.finish(
                spill.dir(),
                &|n| format!("final-{n:08}.parquet"),
                merge_cfg,
                final_rows,
            )?;
            vec![join_parts(&parts, &staging.file())?]
        }
        Target::Dir { .. } => spill.finish(
            staging.dir(),
            &|n| format!("part-{n:08}.parquet"),
            merge_cfg,
            final_rows,
        )?,
    };
    let staged: Vec<PathBuf> = files.iter().map(|f| f.path.clone()).collect();
    let output_files = staging.publish(&staged)?;
    let write_s = t.elapsed().as_secs_f64();
    let output_bytes = files.iter().map(|f| f.bytes).sum();
    Ok(SortSummary {
        rows: runs.rows,
        input_format,
        output_format: Format::Parquet,
        input_bytes,
        output_bytes,
        input_memory: (row_bytes * runs.rows as f64) as u64,
        row_bytes: 0,
        memory_estimate: cfg.memory_limit,
        read_s,
        encode_s: 0.0,
        sort_s: 0.0,
        gather_s: 0.0,
        write_s,
        elapsed_s: start.elapsed().as_secs_f64(),
        runs: spill.spilled as u64,
        merge_levels: spill.levels as u64,
        spill_bytes: spill.bytes,
        output_files,
        peak_rss: peak_rss(),
    })
}

/// Finishes `out`, the direct writer of `pending`'s temporary, and renames
/// it to `target`; returns the path and its size.
fn commit_direct(
    out: strata_store::direct::DirectWriter,
    pending: PendingFile,
    target: &Path,
) -> Result<(PathBuf, u64), Error> {
    let bytes = out.position();
    drop(out.finish().map_err(|e| Error::io("write", target, e))?);
    let path = pending.commit().map_err(|e| Error::file(target, e))?;
    Ok((path, bytes))
}

/// Joins the merged `parts` (in key order) into the new file `target`,
/// through a temporary renamed when complete.
fn join_parts(parts: &[merge::MergedFile], target: &Path) -> Result<merge::MergedFile, Error> {
    let (pending, sink) = PendingFile::create_direct(target.to_path_buf(), false)
        .map_err(|e| Error::file(target, e))?;
    let paths: Vec<PathBuf> = parts.iter().map(|p| p.path.clone()).collect();
    let out =
        strata_parquet::concat::concat_files(&paths, sink).map_err(|e| Error::file(target, e))?;
    let (path, bytes) = commit_direct(out, pending, target)?;
    for p in &paths {
        let _ = fs::remove_file(p);
    }
    Ok(merge::MergedFile {
        path,
        rows: parts.iter().map(|p| p.rows).sum(),
        bytes,
        min_key: parts.first().map(|p| p.min_key.clone()).unwrap_or_default(),
        max_key: parts.last().map(|p| p.max_key.clone()).unwrap_or_default(),
    })
}

/// What [`sort_in_memory`] did.
enum InMemory {
    Done(SortSummary),
    /// The sort does not fit the limit; the batches, to spill.
    TooLarge(Vec<RecordBatch>),
}

/// The in-memory sort of `batches` into the new file `target` (in the
/// format `cfg.output` names), or the batches back when the estimate is
/// over the limit.
fn sort_in_memory(
    cfg: &SortConfig,
    target: &Path,
    schema: &SchemaRef,
    batches: Vec<RecordBatch>,
    batch_rows: usize,
    row_group_rows: Option<usize>,
) -> Result<InMemory, Error> {
    let output_format = Format::for_output(&cfg.output).map_err(format_error)?;
    if output_format == Format::Parquet {
        return sort_to_parquet(cfg, target, schema, batches, row_group_rows);
    }
    if memory(&batches).saturating_mul(2) > cfg.memory_limit {
        return Ok(InMemory::TooLarge(batches));
    }
    let t = Instant::now();
    let (working, work) = to_working(schema, batches.clone())?;
    let input_memory = memory(&work);
    if input_memory.saturating_mul(2) > cfg.memory_limit {
        return Ok(InMemory::TooLarge(batches));
    }
    let sorter = Sorter::new(&working, &cfg.keys)?;
    let all = arrow_select::concat::concat_batches(&working, &work)?;
    drop(work);
    let rows = sorter.encode(&all)?;
    let encode_s = t.elapsed().as_secs_f64();
    let row_bytes = rows.size() as u64;
    let memory_estimate = input_memory
        .saturating_mul(2)
        .saturating_add(row_bytes)
        .saturating_add(4 * all.num_rows() as u64);
    if memory_estimate > cfg.memory_limit {
        return Ok(InMemory::TooLarge(batches));
    }
    drop(batches);

    let t = Instant::now();
    let indices = Sorter::sorted_indices(&rows)?;
    drop(rows);
    let sort_s = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let sorted = take_parallel(&all, &UInt32Array::from(indices))?;
    drop(all);
    let sorted = if working == *schema {
        sorted
    } else {
        // Back to the input's types: one dictionary per column.
        let columns = sorted
            .columns()
            .iter()
            .zip(schema.fields())
            .map(|(c, f)| cast_if_needed(c, f.data_type()))
            .collect::<Result<Vec<_>, _>>()?;
        RecordBatch::try_new(schema.clone(), columns)?
    };
    let gather_s = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let row_group_rows = row_group_rows.unwrap_or(DEFAULT_ROW_GROUP_ROWS).max(1);
    write_output(
        target,
        cfg.compression,
        output_format,
        &sorted,
        batch_rows.max(1),
        row_group_rows,
    )?;
    let write_s = t.elapsed().as_secs_f64();
    Ok(InMemory::Done(in_memory_summary(
        target,
        output_format,
        (sorted.num_rows() as u64, file_len(target)?),
        (input_memory, row_bytes, memory_estimate),
        [encode_s, sort_s, gather_s, write_s],
    )))
}

/// The in-memory sort into a Parquet file: the keys are encoded batch by
/// batch on all threads, (key prefix, batch, row) entries sorted on all
/// threads, the fixed-width columns laid out row by row
/// ([`rows::RowStore`]), and the rows gathered from the input in chunks on
/// all threads as the direct encoder writes them (its leaf columns on all
/// threads)
/// through a [`DirectWriter`](strata_store::direct::DirectWriter): there
/// is never a sorted copy of the input, and the file bypasses the page
/// cache. The memory estimate is the input, the output's open row group
/// and chunks, the encoded keys and the entries.
fn sort_to_parquet(
    cfg: &SortConfig,
    target: &Path,
    schema: &SchemaRef,
    batches: Vec<RecordBatch>,
    row_group_rows: Option<usize>,
) -> Result<InMemory, Error> {
    let input_memory = memory(&batches);
    let rows: u64 = batches.iter().map(|b| b.num_rows() as u64).sum();
    let group_rows = row_group_rows.unwrap_or(DEFAULT_ROW_GROUP_ROWS).max(1);
    // The output's open row group (its encoded pages) and the chunks being
    // gathered, at the input's bytes per row.
    let per_row = input_memory as f64 / rows.max(1) as f64;
    let threads = rayon::current_num_threads().max(1);
    let output_memory = (per_row * (group_rows + threads * external::SPILL_CHUNK_ROWS) as f64)
        .min(input_memory as f64) as u64
        + rows::extra_bytes(schema, rows);
    if input_memory.saturating_add(output_memory) > cfg.memory_limit {
        return Ok(InMemory::TooLarge(batches));
    }
    let t = Instant::now();
    let sorter = Sorter::new(schema, &cfg.keys)?;
    let keys = external::encode_run(&sorter, &batches)?;
    let encode_s = t.elapsed().as_secs_f64();
    let row_bytes: u64 = keys.iter().map(|k| k.size() as u64).sum();
    // The input, the output being written, the keys and the entries.
    let memory_estimate = input_memory
        .saturating_add(output_memory)
        .saturating_add(row_bytes)
        .saturating_add(external::ENTRY_BYTES * rows);
    if memory_estimate > cfg.memory_limit {
        drop(keys);
        return Ok(InMemory::TooLarge(batches));
    }
    let t = Instant::now();
    let order = external::order_run(&keys);
    drop(keys);
    let sort_s = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let (pending, sink) = PendingFile::create_direct(target.to_path_buf(), false)
        .map_err(|e| Error::file(target, e))?;
    let props = external::output_properties(group_rows, cfg.compression)?;
    let mut writer = strata_parquet::writer::ParquetWriter::try_new(sink, schema.clone(), props)
        .map_err(|e| Error::file(target, e))?;
    let batches = dictionaries::share(batches)?;
    match rows::RowStore::build(schema, batches) {
        Ok(store) => {
            let gather = |pairs: &[(usize, usize)]| store.gather(pairs);
            external::write_gathered(&gather, &order, &mut writer, target)?;
        }
        Err(batches) => external::write_in_order(&batches, &order, &mut writer, target)?,
    }
    drop(order);
    let gather_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let out = writer.finish().map_err(|e| Error::file(target, e))?;
    let (_, output_bytes) = commit_direct(out, pending, target)?;
    let write_s = t.elapsed().as_secs_f64();
    Ok(InMemory::Done(in_memory_summary(
        target,
        Format::Parquet,
        (rows, output_bytes),
        (input_memory, row_bytes, memory_estimate),
        [encode_s, sort_s, gather_s, write_s],
    )))
}

/// The summary of an in-memory sort into `target`: (rows, output bytes),
/// (input memory, key bytes, memory estimate), and the seconds encoding,
/// sorting, gathering and writing. The caller fills in the input and the
/// whole run's times.
fn in_memory_summary(
    target: &Path,
    output_format: Format,
    (rows, output_bytes): (u64, u64),
    (input_memory, row_bytes, memory_estimate): (u64, u64, u64),
    [encode_s, sort_s, gather_s, write_s]: [f64; 4],
) -> SortSummary {
    SortSummary {
        rows,
        input_format: Format::Parquet,
        output_format,
        input_bytes: 0,
        output_bytes,
        input_memory,
        row_bytes,
        memory_estimate,
        read_s: 0.0,
        encode_s,
        sort_s,
        gather_s,
        write_s,
        elapsed_s: 0.0,
        runs: 0,
        merge_levels: 0,
        spill_bytes: 0,
        output_files: vec![target.to_path_buf()],
        peak_rss: None,
    }
}

/// Writes `batch` to the new file `target` through a temporary, in slices
/// of `batch_rows` rows, compressed by `compression`; Parquet in row
/// groups of at most `row_group_rows` rows.
fn write_output(
    target: &Path,
    compression: Compression,
    format: Format,
    batch: &RecordBatch,
    batch_rows: usize,
    row_group_rows: usize,
) -> Result<(), Error> {
    let opts = SinkOptions {
        compression,
        compress_ipc: true,
        row_group_rows: Some(row_group_rows),
        ..SinkOptions::default()
    };
    let mut sink = FileSink::create(target, format, batch.schema_ref(), &opts)?;
    for offset in (0..batch.num_rows()).step_by(batch_rows) {
        sink.write(&batch.slice(offset, batch_rows.min(batch.num_rows() - offset)))?;
    }
    sink.finish()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::{cmp::Ordering, collections::HashMap, sync::Arc};

    use arrow_array::{
        Array, BooleanArray, DictionaryArray, Float64Array, Int32Array, Int64Array, MapArray,
        StringArray,
        builder::{Int32Builder, MapBuilder, StringBuilder},
        types::Int32Type,
    };
    use arrow_ord::ord::make_comparator;
    use arrow_schema::{DataType, Field};

    use super::*;
    use strata_testkit::readback::{multiset_hash, rows_as_text};

    fn random_batch(seed: u64, n: usize) -> RecordBatch {
        let mut r = strata_gen::rng::RowRng::seeded(seed);
        let ints: Int32Array = (0..n)
            .map(|_| (r.next_below(5) != 0).then(|| r.next_below(7) as i32 - 3))
            .collect();
        let floats: Float64Array = (0..n)
            .map(|_| match r.next_below(8) {
                0 => f64::NAN,
                1 => -0.0,
                2 => 0.0,
                _ => (r.next_below(5) as f64) - 2.0,
            })
            .map(Some)
            .collect();
        let words = ["", "a", "ab", "b", "ba", "zz"];
        let strings: StringArray = (0..n)
            .map(|_| (r.next_below(6) != 0).then(|| words[r.next_below(6) as usize]))
            .collect();
        let dict: DictionaryArray<Int32Type> = (0..n)
            .map(|_| {
                (r.next_below(9) != 0).then(|| ["red", "green", "blue"][r.next_below(3) as usize])
            })
            .collect();
        let bools: BooleanArray = (0..n)
            .map(|_| (r.next_below(7) != 0).then(|| r.next_below(2) == 0))
            .collect();
        let ids = Int64Array::from_iter_values(0..n as i64);
        // A fourth fixed-width column: the in-memory sort lays them out row
        // by row.
        let small: arrow_array::UInt16Array = (0..n)
            .map(|_| (r.next_below(4) != 0).then(|| r.next_below(300) as u16))
            .collect();
        RecordBatch::try_from_iter([
            ("i", Arc::new(ints) as ArrayRef),
            ("f", Arc::new(floats) as ArrayRef),
            ("s", Arc::new(strings) as ArrayRef),
            ("d", Arc::new(dict) as ArrayRef),
            ("b", Arc::new(bools) as ArrayRef),
            ("id", Arc::new(ids) as ArrayRef),
            ("u", Arc::new(small) as ArrayRef),
        ])
        .unwrap()
    }

    fn keys(spec: &str) -> Vec<SortKey> {
        spec.parse::<SortKeys>().unwrap().0
    }

    /// Lexicographic order of rows `a` and `b` under `keys`, from Arrow's
    /// own per-column comparators.
    fn compare(batch: &RecordBatch, keys: &[SortKey]) -> impl Fn(usize, usize) -> Ordering + use<> {
        let cmps: Vec<_> = keys
            .iter()
            .map(|k| {
                let c = batch.column_by_name(&k.column).unwrap();
                make_comparator(c.as_ref(), c.as_ref(), k.options).unwrap()
            })
            .collect();
        move |a, b| {
            cmps.iter()
                .map(|c| c(a, b))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        }
    }

    fn ids(batch: &RecordBatch) -> Vec<i64> {
        let c = batch.column_by_name("id").unwrap();
        c.as_any()
            .downcast_ref::<Int64Array>()
            .unwrap()
            .values()
            .to_vec()
    }

    #[test]
    fn parses_sort_keys() {
        let k = keys("a, b:desc ,c:nulls_last:DESC,d:nulls_first,e:asc");
        let o = |descending, nulls_first| SortOptions {
            descending,
            nulls_first,
        };
        let got: Vec<_> = k.iter().map(|k| (k.column.as_str(), k.options)).collect();
        assert_eq!(
            got,
            vec![
                ("a", o(false, true)),
                ("b", o(true, true)),
                ("c", o(true, false)),
                ("d", o(false, true)),
                ("e", o(false, true)),
            ]
        );
        assert_eq!(k[2].to_string(), "c:desc:nulls_last");
        for (bad, needle) in [
            ("a:down", ":down"),
            ("a:desc:asc", ":asc"),
            ("a:nulls_first:nulls_first", ":nulls_first"),
            ("a,,b", "empty column"),
            (":desc", "empty column"),
            ("", "at least one"),
            ("  ", "at least one"),
        ] {
            let e = bad.parse::<SortKeys>().unwrap_err().to_string();
            assert!(e.contains(needle), "{bad}: {e}");
        }
    }

    #[test]
    fn parses_sizes() {
        for (s, n) in [
            ("1", 1),
            ("100B", 100),
            ("1KiB", 1024),
            ("1 kib", 1024),
            ("2MiB", 2 << 20),
            ("4GiB", 4 << 30),
            ("1.5GiB", 3 << 29),
            ("1KB", 1000),
            ("3MB", 3_000_000),
            ("2GB", 2_000_000_000),
            ("1TiB", 1 << 40),
        ] {
            assert_eq!(s.parse::<ByteSize>().unwrap(), ByteSize(n), "{s}");
        }
        for bad in [
            "",
            "GiB",
            "1XB",
            "-1",
            "0",
            "1.2.3MB",
            "99999999999999999999",
            "20000000TiB",
        ] {
            let e = bad.parse::<ByteSize>().unwrap_err().to_string();
            assert!(e.contains(&format!("'{bad}'")), "{e}");
        }
        assert_eq!(ByteSize(1536).to_string(), "1.5 KiB");
        assert_eq!(ByteSize(100).to_string(), "100 bytes");
    }

    #[test]
    fn sorts_random_batches_like_arrows_comparators() {
        for (seed, spec) in [
            (1, "i"),
            (2, "s:desc,i:nulls_last"),
            (3, "f,d:desc:nulls_last"),
            (4, "b:nulls_last,s,f:desc"),
            (5, "d,i:desc:nulls_first,b:desc"),
        ] {
            let batch = random_batch(seed, 3000);
            let k = keys(spec);
            let sorted = sort_batch(&batch, &k).unwrap();
            assert_eq!(sorted.schema(), batch.schema());
            let cmp = compare(&sorted, &k);
            let id = ids(&sorted);
            for r in 1..sorted.num_rows() {
                match cmp(r - 1, r) {
                    Ordering::Less => {}
                    Ordering::Equal => assert!(id[r - 1] < id[r], "{spec}: unstable at {r}"),
                    Ordering::Greater => panic!("{spec}: rows {} and {r} out of order", r - 1),
                }
            }
            let mut before = rows_as_text(&[batch]).unwrap();
            let mut after = rows_as_text(&[sorted]).unwrap();
            assert_eq!(multiset_hash(&mut before), multiset_hash(&mut after));
        }
    }

    #[test]
    fn float_order_is_total() {
        let f = Float64Array::from(vec![
            Some(1.0),
            Some(f64::NAN),
            None,
            Some(-0.0),
            Some(0.0),
            Some(f64::NEG_INFINITY),
        ]);
        let batch = RecordBatch::try_from_iter([("f", Arc::new(f) as ArrayRef)]).unwrap();
        let sorted = sort_batch(&batch, &keys("f")).unwrap();
        let got: Vec<String> = sorted
            .column(0)
            .as_any()
            .downcast_ref::<Float64Array>()
            .unwrap()
            .iter()
            .map(|v| format!("{v:?}"))
            .collect();
        assert_eq!(
            got,
            [
                "None",
                "Some(-inf)",
                "Some(-0.0)",
                "Some(0.0)",
                "Some(1.0)",
                "Some(NaN)"
            ]
        );
    }

    fn map_batch() -> RecordBatch {
        let mut b = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
        for i in 0..4 {
            b.keys().append_value(format!("k{i}"));
            b.values().append_value(i);
            b.append(true).unwrap();
        }
        let m: MapArray = b.finish();
        let id = Int64Array::from_iter_values(0..4);
        RecordBatch::try_from_iter([
            ("m", Arc::new(m) as ArrayRef),
            ("id", Arc::new(id) as ArrayRef),
        ])
        .unwrap()
    }

    #[test]
    fn bad_keys_are_named() {
        let batch = random_batch(9, 10);
        let e = Sorter::new(batch.schema_ref(), &keys("i,nope")).unwrap_err();
        let m = e.to_string();
        assert!(matches!(e, Error::UnknownColumn { .. }), "{e:?}");
        assert!(
            m.contains("'nope'") && m.contains("i, f, s, d, b, id"),
            "{m}"
        );
        assert!(Sorter::new(batch.schema_ref(), &[]).is_err());

        let batch = map_batch();
        let map_type = batch.schema().field(0).data_type().clone();
        let supported =
            strata_row::RowEncoder::new(vec![strata_row::SortField::new(map_type)]).is_ok();
        match Sorter::new(batch.schema_ref(), &keys("id,m")) {
            Err(Error::UnsupportedSortKey { column, .. }) => {
                assert!(!supported);
                assert_eq!(column, "m");
            }
            Ok(_) => assert!(supported, "a map key was accepted"),
            Err(e) => panic!("{e:?}"),
        }
    }

    fn write_ipc(path: &Path, schema: &SchemaRef, batches: &[RecordBatch]) {
        let mut w = strata_parquet::ipc::IpcFileWriter::try_new(
            std::fs::File::create(path).unwrap(),
            schema,
            Default::default(),
        )
        .unwrap();
        for b in batches {
            w.write(b).unwrap();
        }
        w.finish().unwrap();
    }

    fn config(input: &Path, output: &Path, spec: &str) -> SortConfig {
        SortConfig::new(input, output, keys(spec))
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn sorts_a_file_keeping_schema_metadata() {
        let dir = tempfile::tempdir().unwrap();
        let batch = random_batch(11, 5000);
        let fields: Vec<Field> = batch
            .schema()
            .fields()
            .iter()
            .map(|f| {
                f.as_ref().clone().with_metadata(HashMap::from([(
                    "doc".to_string(),
                    format!("column {}", f.name()),
                )]))
            })
            .collect();
        let schema =
            Arc::new(Schema::new(fields).with_metadata(HashMap::from([("k".into(), "v".into())])));
        let batch = batch.with_schema(schema.clone()).unwrap();
        let input = dir.path().join("in.arrow");
        write_ipc(
            &input,
            &schema,
            &[batch.slice(0, 3000), batch.slice(3000, 2000)],
        );
        for out in ["out.parquet", "out.arrow"] {
            let output = dir.path().join(out);
            let s = sort_file(&config(&input, &output, "s:desc,i")).unwrap();
            assert_eq!(s.rows, 5000);
            assert_eq!(s.input_format, Format::Ipc);
            assert_eq!(s.output_bytes, fs::metadata(&output).unwrap().len());
            let back = read_input(&output).unwrap();
            assert_eq!(back.schema, schema, "{out}");
            let sorted = arrow_select::concat::concat_batches(&schema, &back.batches).unwrap();
            assert_eq!(sorted, sort_batch(&batch, &keys("s:desc,i")).unwrap());
        }
        assert_eq!(names(dir.path()), ["in.arrow", "out.arrow", "out.parquet"]);
    }

    #[test]
    fn failures_leave_no_output() {
        let dir = tempfile::tempdir().unwrap();
        let batch = random_batch(12, 2000);
        let input = dir.path().join("in.arrow");
        write_ipc(&input, &batch.schema(), &[batch]);
        let output = dir.path().join("out.parquet");

        // Over the limit with an IPC output: a sort that spills writes
        // Parquet only.
        let mut cfg = config(&input, &dir.path().join("out.arrow"), "i");
        cfg.memory_limit = 1024;
        let e = sort_file(&cfg).unwrap_err();
        assert!(e.to_string().contains("writes Parquet"), "{e}");

        let e = sort_file(&config(&input, &output, "zz")).unwrap_err();
        assert!(matches!(e, Error::UnknownColumn { .. }), "{e:?}");

        let e = sort_file(&config(&input, &input, "i")).unwrap_err();
        assert!(e.to_string().contains("is the input"), "{e}");
        let mut cfg = config(&input, &input, "i");
        cfg.overwrite = true;
        assert!(
            sort_file(&cfg)
                .unwrap_err()
                .to_string()
                .contains("is the input")
        );

        let garbage = dir.path().join("garbage.parquet");
        fs::write(&garbage, b"definitely not columnar data").unwrap();
        let e = sort_file(&config(&garbage, &output, "i")).unwrap_err();
        assert!(e.to_string().contains("not a Parquet or Arrow IPC"), "{e}");

        let truncated = dir.path().join("truncated.arrow");
        let bytes = fs::read(&input).unwrap();
        fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
        let e = sort_file(&config(&truncated, &output, "i")).unwrap_err();
        assert!(matches!(e, Error::Read { .. }), "{e:?}");

        assert_eq!(
            names(dir.path()),
            ["garbage.parquet", "in.arrow", "truncated.arrow"]
        );
    }

    #[test]
    fn the_encoded_keys_count_against_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let batch = random_batch(14, 4000);
        let input = dir.path().join("in.arrow");
        write_ipc(&input, &batch.schema(), std::slice::from_ref(&batch));
        let output = dir.path().join("out.parquet");
        let mut cfg = config(&input, &output, "s,d:desc");
        let s = sort_file(&cfg).unwrap();
        assert_eq!(s.runs, 0);
        assert!(s.row_bytes > 0);
        assert_eq!(
            s.memory_estimate,
            2 * s.input_memory
                + s.row_bytes
                + external::ENTRY_BYTES * s.rows
                + rows::extra_bytes(batch.schema_ref(), s.rows)
        );
        // A validity byte for each nullable fixed-width value (`i`, `u`).
        assert_eq!(rows::extra_bytes(batch.schema_ref(), s.rows), 2 * 4000);
        let want = read_input(&output).unwrap().batches;
        fs::remove_file(&output).unwrap();
        // Enough for the input, its sorted copy and the encoded keys, not
        // for the entries as well: the batches become one spilled run, and
        // the output is the same.
        cfg.memory_limit = 2 * s.input_memory + s.row_bytes;
        let e = sort_file(&cfg).unwrap();
        assert_eq!(e.runs, 1);
        assert_eq!(e.rows, 4000);
        let got = read_input(&output).unwrap().batches;
        assert_eq!(rows_as_text(&got).unwrap(), rows_as_text(&want).unwrap());
        assert_eq!(names(dir.path()), ["in.arrow", "out.parquet"]);
    }

    /// The concatenation of every output file, in order.
    fn read_all(paths: &[PathBuf]) -> Vec<RecordBatch> {
        paths
            .iter()
            .flat_map(|p| read_input(p).unwrap().batches)
            .collect()
    }

    fn write_parquet(path: &Path, batches: &[RecordBatch], group_rows: usize) {
        let props = parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(group_rows))
            .build();
        let file = fs::File::create(path).unwrap();
        let mut w =
            parquet::arrow::ArrowWriter::try_new(file, batches[0].schema(), Some(props)).unwrap();
        for b in batches {
            w.write(b).unwrap();
        }
        w.close().unwrap();
    }

    /// Inputs of every key type, sorted with limits small enough for many
    /// runs and several merge levels, give the rows and order of the
    /// in-memory sort of their concatenation (stable: `id` tells equal
    /// keys apart), as one file and as a directory merged on threads.
    #[test]
    fn external_sort_equals_the_in_memory_sort() {
        let dir = tempfile::tempdir().unwrap();
        let parts: Vec<RecordBatch> = (0..3).map(|i| random_batch(40 + i, 3000)).collect();
        // `id` runs on across the parts, so every row is distinct.
        let parts: Vec<RecordBatch> = parts
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let ids = Int64Array::from_iter_values((0..3000).map(|r| (i * 3000 + r) as i64));
                let mut cols = b.columns().to_vec();
                cols[5] = Arc::new(ids);
                RecordBatch::try_new(b.schema(), cols).unwrap()
            })
            .collect();
        let schema = parts[0].schema();
        let a = dir.path().join("a.parquet");
        write_parquet(
            &a,
            &[parts[0].slice(0, 1000), parts[0].slice(1000, 2000)],
            700,
        );
        let b = dir.path().join("b.arrow");
        write_ipc(
            &b,
            &schema,
            &[parts[1].slice(0, 2500), parts[1].slice(2500, 500)],
        );
        let c = dir.path().join("c.parquet");
        write_parquet(&c, &parts[2..], 1000);
        let all = arrow_select::concat::concat_batches(&schema, &parts).unwrap();
        for spec in [
            "i,s:desc",
            "d:desc:nulls_last,f",
            "b:nulls_last,s,f:desc",
            "s:desc",
        ] {
            let want = rows_as_text(&[sort_batch(&all, &keys(spec)).unwrap()]).unwrap();
            for limit in [24 << 10, 96 << 10, 1 << 30] {
                let out = dir.path().join("out.parquet");
                let mut cfg = config(&a, &out, spec);
                cfg.inputs = vec![a.clone(), b.clone(), c.clone()];
                cfg.memory_limit = limit;
                cfg.threads = 2;
                cfg.overwrite = true;
                let s = sort_file(&cfg).unwrap();
                assert_eq!(s.rows, 9000);
                let got = read_all(&s.output_files);
                assert_eq!(rows_as_text(&got).unwrap(), want, "{spec} {limit}");
                assert_eq!(read_input(&out).unwrap().schema, schema);
                if limit == 24 << 10 {
                    assert!(s.runs >= 8, "{s:?}");
                    assert!(s.merge_levels >= 1, "{s:?}");
                }
                if limit == 1 << 30 {
                    assert_eq!(s.runs, 0);
                }

                let out_dir = dir.path().join("sorted");
                cfg.output = out_dir.clone();
                cfg.target_file_bytes = Some(20_000);
                let s = sort_file(&cfg).unwrap();
                assert!(s.output_files.len() > 1, "{s:?}");
                let mut listed: Vec<PathBuf> = fs::read_dir(&out_dir)
                    .unwrap()
                    .map(|e| e.unwrap().path())
                    .collect();
                listed.sort();
                assert_eq!(listed, s.output_files);
                let got = read_all(&s.output_files);
                assert_eq!(rows_as_text(&got).unwrap(), want, "{spec} {limit} dir");
                fs::remove_dir_all(&out_dir).unwrap();
            }
        }
        assert_eq!(
            names(dir.path()),
            ["a.parquet", "b.arrow", "c.parquet", "out.parquet"]
        );
    }

    #[test]
    fn pending_batches_split_into_runs_under_the_cap() {
        let sizes = [5, 5, 5, 12, 3, 3, 3, 3, 10];
        let got = split_runs(&sizes, 10);
        assert_eq!(
            got,
            vec![
                (0..2, 10),
                (2..3, 5),
                (3..4, 12),
                (4..7, 9),
                (7..8, 3),
                (8..9, 10)
            ]
        );
        // Every batch once, in order; only a lone batch passes the cap.
        let mut next = 0;
        for (r, bytes) in &got {
            assert_eq!(r.start, next);
            next = r.end;
            assert_eq!(*bytes, sizes[r.clone()].iter().sum::<u64>());
            assert!(*bytes <= 10 || r.len() == 1);
        }
        assert_eq!(next, sizes.len());
        assert!(split_runs(&[], 10).is_empty());
        assert_eq!(split_runs(&[7, 7], 100), vec![(0..2, 14)]);
    }

    /// A failure after runs were spilled (a later input with another
    /// schema, a truncated later input) removes the spill directory and
    /// leaves no output.
    #[test]
    fn a_failed_external_sort_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let spill = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.parquet");
        let batch = random_batch(50, 4000);
        write_parquet(&good, std::slice::from_ref(&batch), 500);
        let other = dir.path().join("other.parquet");
        let narrow = batch.project(&[0, 1]).unwrap();
        write_parquet(&other, &[narrow], 500);
        let truncated = dir.path().join("truncated.parquet");
        let bytes = fs::read(&good).unwrap();
        fs::write(&truncated, &bytes[..bytes.len() - 100]).unwrap();
        let before = names(dir.path());
        for (bad, what) in [(&other, "different schema"), (&truncated, "truncated")] {
            for target in [None, Some(10_000)] {
                let out = dir.path().join(if target.is_some() {
                    "dir"
                } else {
                    "out.parquet"
                });
                let mut cfg = config(&good, &out, "s,i:desc");
                cfg.inputs = vec![good.clone(), bad.clone()];
                cfg.memory_limit = 32 << 10;
                cfg.target_file_bytes = target;
                cfg.spill_dir = Some(spill.path().to_path_buf());
                let e = sort_file(&cfg).unwrap_err();
                let text = e.to_string();
                assert!(
                    text.contains(bad.file_name().unwrap().to_str().unwrap()),
                    "{what}: {text}"
                );
                assert_eq!(names(dir.path()), before, "{what}");
                assert!(names(spill.path()).is_empty(), "{what}");
            }
        }
        // A spill directory that is not there is refused up front.
        let mut cfg = config(&good, &dir.path().join("out.parquet"), "s");
        cfg.spill_dir = Some(dir.path().join("nowhere"));
        let e = sort_file(&cfg).unwrap_err();
        assert!(e.to_string().contains("spill directory"), "{e}");
        assert_eq!(names(dir.path()), before);
    }

    #[test]
    fn nested_dictionaries_from_many_batches() {
        use arrow_array::{StructArray, types::UInt8Type};
        // 300 batches, each with its own 3-value dictionary in a list of
        // structs, as Parquet reads give: the nested dictionaries become
        // plain values for sorting and one dictionary again afterwards.
        let batches: Vec<RecordBatch> = (0..300_i64)
            .map(|g| {
                let tag: DictionaryArray<UInt8Type> = (0..4)
                    .map(|r| (r != 3).then(|| ["x", "y", "z"][((g + r) % 3) as usize]))
                    .collect();
                let tag: ArrayRef = Arc::new(tag);
                let field = Arc::new(Field::new("tag", tag.data_type().clone(), true));
                let num: ArrayRef = Arc::new(StringArray::from(vec!["1", "2", "3", "4"]));
                let num_field = Arc::new(Field::new("number", DataType::Utf8, true));
                let s = StructArray::from(vec![(num_field, num), (field, tag)]);
                let item = Arc::new(Field::new("item", s.data_type().clone(), true));
                let offsets = arrow_buffer::OffsetBuffer::from_lengths([1, 1, 2, 0]);
                let l = arrow_array::ListArray::new(item, offsets, Arc::new(s), None);
                RecordBatch::try_from_iter([
                    ("s", Arc::new(l) as ArrayRef),
                    (
                        "id",
                        Arc::new(Int64Array::from_iter_values(g * 4..g * 4 + 4)) as ArrayRef,
                    ),
                ])
                .unwrap()
            })
            .collect();
        let schema = batches[0].schema();
        let mut want = rows_as_text(&batches).unwrap();
        want.reverse();

        let (working, converted) = to_working(&schema, batches).unwrap();
        assert_ne!(working, schema);
        let all = arrow_select::concat::concat_batches(&working, &converted).unwrap();
        let sorted = sort_batch(&all, &keys("id:desc")).unwrap();
        let back: Vec<ArrayRef> = sorted
            .columns()
            .iter()
            .zip(schema.fields())
            .map(|(c, f)| cast_if_needed(c, f.data_type()).unwrap())
            .collect();
        let back = RecordBatch::try_new(schema.clone(), back).unwrap();
        assert_eq!(rows_as_text(std::slice::from_ref(&back)).unwrap(), want);

        // One dictionary for the whole column: an IPC file takes it.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.arrow");
        write_ipc(&path, &schema, &[back.slice(0, 600), back.slice(600, 600)]);
        let read = read_input(&path).unwrap();
        assert_eq!(rows_as_text(&read.batches).unwrap(), want);
    }

    #[test]
    fn empty_input_gives_empty_output() {
        let dir = tempfile::tempdir().unwrap();
        let batch = random_batch(13, 0);
        let input = dir.path().join("in.arrow");
        write_ipc(&input, batch.schema_ref(), &[]);
        let output = dir.path().join("out.parquet");
        let s = sort_file(&config(&input, &output, "i,s:desc")).unwrap();
        assert_eq!(s.rows, 0);
        let back = read_input(&output).unwrap();
        assert_eq!(back.schema, batch.schema());
        assert_eq!(back.batches.iter().map(|b| b.num_rows()).sum::<usize>(), 0);
        assert!(back.batches.iter().all(|b| b.num_columns() == 6));
        let d = back.schema.field_with_name("d").unwrap();
        assert!(matches!(d.data_type(), DataType::Dictionary(..)));
    }
}
