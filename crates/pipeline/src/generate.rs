//! The generate pipeline: any [`BatchGenerator`] to Parquet or Arrow IPC
//! files, generated and encoded on all threads.
//!
//! # Layout
//!
//! The `target_records` rows are split into `num_files` contiguous global
//! row ranges, one per file (sizes differ by at most one row), and each
//! file into row groups of `row_group_rows` rows. File `i` is
//! `DIR/STEM_i.EXT` and holds its rows in global row order, so the output
//! is the same, byte for byte, whatever the thread count.
//!
//! With [`Part`] `i` of `n`, the run covers only global rows
//! `[T·(i−1)/n, T·i/n)` (row values depend only on the global row, so
//! these are exactly the rows the whole run writes there), split the same
//! way over `DIR/STEM_part{i}of{n}_j.EXT`. Parts can run anywhere; their
//! files, in part order, hold the whole run's rows in order.
//!
//! # Work
//!
//! A *task* is one row group. `threads` workers take tasks in file-major
//! order from a shared counter (one atomic increment per row group). A
//! worker generates the group's rows batch by batch and, for Parquet,
//! encodes each batch at once, while it is still in cache, into its
//! [`RowGroupEncoder`] (strata-parquet's one encoding path: the direct
//! encoder or parquet's `ArrowColumnWriter`, chosen once for the run by
//! [`FileEncoding::new`]), then hands the encoded row group to the file's
//! [`FileAppender`]. For IPC it hands over the batches, and the file's
//! writer encodes them. Batch buffers and chunk buffers are recycled.
//! This module keeps only the scheduling.
//!
//! Files take row groups in order. A group that finishes early waits in a
//! small per-file queue; whichever worker finds the next group ready
//! appends it while the others go on generating, so no worker waits on
//! another's IO. At most `threads` groups are in flight, so memory is
//! bounded by `threads` row groups whatever `target_records` is.
//!
//! # Output safety
//!
//! Every file is written under a hidden temporary name (`.NAME.PID.strata-tmp`,
//! which no `*.parquet` or `*.arrow` glob matches) and all files are made
//! visible only after the last one is complete and the caller's last step
//! ([`RunOptions::before_publish`], such as writing the summary) has
//! succeeded; on any error or interrupt the temporaries are deleted and
//! nothing is renamed. When the output directory is new, the files are
//! written in a hidden directory beside it, renamed onto it in one step
//! ([`strata_store::output::PendingDir`]): a glob of it sees no file or
//! every file, even if the process is killed. Into a directory that
//! exists (it may be a mount point or a link to another disk) they are
//! written in a hidden directory inside it and renamed one by one, right
//! after each other. In an object store each file is a multipart upload
//! ([`strata_store::upload`]), completed only after the last one has all
//! its bytes; on any error every upload is aborted and no object appears.

use std::{
    collections::BTreeMap,
    fs,
    io::BufWriter,
    ops::Range,
    path::PathBuf,
    sync::{
        Mutex,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
    time::Instant,
};
use strata_store::FromStore as _;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::{
    basic::Encoding,
    file::{
        metadata::KeyValue,
        properties::{EnabledStatistics, WriterProperties, WriterVersion},
    },
    schema::types::ColumnPath,
};
use serde::Serialize;
use strata_gen::BatchGenerator;

use strata_parquet::{
    Compression, Format,
    encoder::parquet_codec,
    ipc::IpcFileWriter,
    rowgroup::{EncodedRowGroup, FileAppender, FileEncoding, RowGroupEncoder},
};
use strata_store::{
    direct::DirectWriter,
    location::{Kind, StoreConfig, parse_dir},
    output::{PendingDir, PendingFile, remove_stale_temporaries},
    upload::{ObjectDir, Upload},
};

use crate::Error;
pub use crate::counts::{ColumnCounts, FileSummary};
use crate::counts::{count_batch, empty_counts};
use crate::stop::{Stop, lock};

pub use strata_parquet::{DEFAULT_BATCH_SIZE, DEFAULT_ROW_GROUP_ROWS, ParquetEncoder};
/// Largest batch accepted: keeps every string column far below 2 GiB.
pub const MAX_BATCH_SIZE: usize = 1 << 22;
/// Largest row count accepted (ids of 5 entries per row stay in `u64`).
pub const MAX_TARGET_RECORDS: u64 = 1 << 60;

/// Rows generated when none are asked for.
pub const DEFAULT_TARGET_RECORDS: u64 = 10_000_000;

/// The seed used when none is given.
pub const DEFAULT_SEED: u64 = 42;

/// Output files (writers) when none are asked for.
pub const DEFAULT_NUM_WRITERS: usize = 4;

/// Worker threads when none are asked for: one per CPU.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The output directory when none is given: `output_parquet` or
/// `output_ipc`.
pub fn default_output_dir(format: Format) -> PathBuf {
    PathBuf::from(match format {
        Format::Parquet => "output_parquet",
        Format::Ipc => "output_ipc",
    })
}

/// What to generate and where.
#[derive(Debug, Clone, Serialize)]
pub struct GenerateConfig {
    /// Rows in total.
    pub target_records: u64,
    /// Rows per generated batch.
    pub record_batch_size: usize,
    /// Output files (each written by its own writer).
    pub num_writers: usize,
    /// Worker threads generating and encoding.
    pub threads: usize,
    /// Rows per row group.
    pub row_group_rows: usize,
    /// Output format.
    pub format: Format,
    /// Codec.
    pub compression: Compression,
    /// Directory of the output files (created if missing), or an object
    /// store prefix such as `s3://bucket/prefix` (settings from the
    /// standard `AWS_*` variables).
    pub output_dir: PathBuf,
    /// File name stem: files are `STEM_i.EXT`.
    pub output_filename: String,
    /// Replace existing outputs.
    pub overwrite: bool,
    /// The seed, recorded in the files' metadata.
    pub seed: u64,
    /// Which Parquet encoder to use.
    pub encoder: ParquetEncoder,
    /// Whether the direct encoder's Parquet pages carry a CRC-32 checksum
    /// (parquet's Arrow writer writes none).
    pub page_checksums: bool,
    /// The part of the rows this run writes (all by default).
    pub part: Part,
    /// The global row the run's rows start at: row `i` of the run is
    /// row `row_offset + i` of the spec, so that a run appended to a
    /// table of `row_offset` rows continues its sequences and keys.
    pub row_offset: u64,
    /// How the table's files are laid out (partitions, order, sizes);
    /// `None`: `num_writers` files of contiguous rows.
    pub layout: Option<crate::layout::Layout>,
    /// The generator's schema with Parquet field ids in its fields'
    /// metadata (`PARQUET:field_id`, as a table format numbers them): the
    /// files' schema is written with them. `None`: no ids.
    #[serde(skip)]
    pub field_ids: Option<arrow_schema::SchemaRef>,
}

impl GenerateConfig {
    /// Every setting at its default, files named after `stem` (the spec's
    /// name): [`DEFAULT_TARGET_RECORDS`] rows in batches of
    /// [`DEFAULT_BATCH_SIZE`], [`DEFAULT_NUM_WRITERS`] uncompressed Parquet
    /// files in [`default_output_dir`] with row groups of
    /// [`DEFAULT_ROW_GROUP_ROWS`], [`default_threads`] threads,
    /// [`DEFAULT_SEED`], the automatic encoder with page checksums, all
    /// parts, no overwrite.
    pub fn new(stem: impl Into<String>) -> Self {
        GenerateConfig {
            target_records: DEFAULT_TARGET_RECORDS,
            record_batch_size: DEFAULT_BATCH_SIZE,
            num_writers: DEFAULT_NUM_WRITERS,
            threads: default_threads(),
            row_group_rows: DEFAULT_ROW_GROUP_ROWS,
            format: Format::Parquet,
            compression: Compression::None,
            output_dir: default_output_dir(Format::Parquet),
            output_filename: stem.into(),
            overwrite: false,
            seed: DEFAULT_SEED,
            encoder: ParquetEncoder::Auto,
            page_checksums: true,
            part: Part::default(),
            row_offset: 0,
            layout: None,
            field_ids: None,
        }
    }
}

/// Part `index` (from 1) of `count` equal contiguous slices of the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Part {
    /// Which part, from 1.
    pub index: u64,
    /// How many parts.
    pub count: u64,
}

impl Default for Part {
    fn default() -> Self {
        Part { index: 1, count: 1 }
    }
}

impl GenerateConfig {
    /// Checks every setting, naming the first bad one.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`].
    pub fn validate(&self) -> Result<(), Error> {
        let bad = |m: String| Err(Error::InvalidConfig(m));
        if self.target_records == 0 {
            return bad("--target-records must be at least 1".into());
        }
        if self.target_records > MAX_TARGET_RECORDS {
            return bad(format!(
                "--target-records must be at most {MAX_TARGET_RECORDS}"
            ));
        }
        if self.record_batch_size == 0 || self.record_batch_size > MAX_BATCH_SIZE {
            return bad(format!(
                "--record-batch-size must be between 1 and {MAX_BATCH_SIZE}, got {}",
                self.record_batch_size
            ));
        }
        if self.num_writers == 0 {
            return bad("--num-writers must be at least 1".into());
        }
        let Part { index, count } = self.part;
        if count == 0 || index == 0 || index > count {
            return bad(format!(
                "--part must be between 1 and --parts ({count}), got {index}"
            ));
        }
        if count > self.target_records {
            return bad(format!(
                "--parts ({count}) exceeds --target-records ({}): a part would be empty",
                self.target_records
            ));
        }
        let rows = self.rows();
        if self.num_writers as u64 > rows.end - rows.start {
            return bad(format!(
                "--num-writers ({}) exceeds the rows to write ({}): a file would be empty",
                self.num_writers,
                rows.end - rows.start
            ));
        }
        if self.threads == 0 {
            return bad("--threads must be at least 1".into());
        }
        if self.row_group_rows == 0 {
            return bad("--row-group-rows must be at least 1".into());
        }
        let stem = &self.output_filename;
        if stem.is_empty() || stem.contains(['/', '\\']) || stem.starts_with('.') {
            return bad(format!(
                "--output-filename must be a plain file name stem, got '{stem}'"
            ));
        }
        if self.format == Format::Ipc && self.compression == Compression::Snappy {
            return bad("--compression snappy is not available for ipc (use lz4 or zstd)".into());
        }
        Ok(())
    }

    /// The global rows of file `i`.
    pub fn file_rows(&self, i: usize) -> Range<u64> {
        let rows = self.rows();
        let n = u128::from(rows.end - rows.start);
        let w = self.num_writers as u128;
        let at = |k: u128| rows.start + (n * k / w) as u64;
        at(i as u128)..at(i as u128 + 1)
    }

    /// The global rows this run writes: all, or its part's, from
    /// `row_offset`.
    pub fn rows(&self) -> Range<u64> {
        let t = u128::from(self.target_records);
        let n = u128::from(self.part.count.max(1));
        let at = |k: u64| {
            self.row_offset
                .saturating_add((t * u128::from(k) / n) as u64)
        };
        at(self.part.index.saturating_sub(1))..at(self.part.index)
    }

    /// The file name stem: `STEM`, or `STEM_part{i}of{n}` for a part.
    pub fn stem(&self) -> String {
        if self.part.count <= 1 {
            self.output_filename.clone()
        } else {
            format!(
                "{}_part{}of{}",
                self.output_filename, self.part.index, self.part.count
            )
        }
    }

    /// What a laid-out run of these settings takes of them.
    pub fn layout_target(&self) -> crate::layout::Target {
        crate::layout::Target {
            rows: self.rows(),
            batch_rows: self.record_batch_size,
            threads: self.threads,
            dir: self.output_dir.clone(),
            stem: self.stem(),
            overwrite: self.overwrite,
            encoder: self.encoder,
            page_checksums: self.page_checksums,
            field_ids: self.field_ids.clone(),
        }
    }

    /// The final path of file `i`.
    pub fn file_path(&self, i: usize) -> PathBuf {
        self.output_dir
            .join(format!("{}_{i}.{}", self.stem(), self.format.extension()))
    }
}

/// What a run did.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Rows written.
    pub records: u64,
    /// Bytes written, all files.
    pub bytes: u64,
    /// Wall time from the first task until every file is complete (its
    /// bytes written, before the files are made visible).
    pub elapsed_s: f64,
    /// CPU time of the process over the same span (all threads, also any
    /// other work the process did meanwhile), seconds.
    pub cpu_s: f64,
    /// Worker threads used.
    pub threads: usize,
    /// `records / elapsed_s`.
    pub records_per_s: f64,
    /// `records_per_s / threads`.
    pub records_per_s_per_core: f64,
    /// Output megabytes (10^6 bytes) per second.
    pub mb_per_s: f64,
    /// Per-column counts (nulls, list entries).
    pub columns: Vec<ColumnCounts>,
    /// The files, in order (of a laid-out run: partition by partition,
    /// each partition's in key order).
    pub files: Vec<FileSummary>,
    /// Of a partitioned run, the partitions written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partitions: Option<usize>,
    /// Of a laid-out run, the bytes it spilled to disk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spill_bytes: Option<u64>,
}

/// Existing files a run would replace: its own targets and any
/// `STEM_N.EXT` left by an earlier run with more writers.
pub fn conflicting_outputs(cfg: &GenerateConfig) -> Vec<PathBuf> {
    let names: Vec<String> = fs::read_dir(&cfg.output_dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    conflicting_names(cfg, names.iter().map(String::as_str))
        .into_iter()
        .map(|n| cfg.output_dir.join(n))
        .collect()
}

/// Of the file `names` in the output directory, those [`conflicting_outputs`]
/// reports: this run's own names, then stale `STEM_i.EXT` with `i` past
/// the writers.
fn conflicting_names<'a>(
    cfg: &GenerateConfig,
    names: impl Iterator<Item = &'a str>,
) -> Vec<String> {
    let names: Vec<&str> = names.collect();
    let mut out: Vec<String> = (0..cfg.num_writers)
        .filter_map(|i| {
            let p = cfg.file_path(i);
            let n = p.file_name()?.to_string_lossy().into_owned();
            names.contains(&n.as_str()).then_some(n)
        })
        .collect();
    let prefix = format!("{}_", cfg.stem());
    let suffix = format!(".{}", cfg.format.extension());
    for name in names {
        let Some(mid) = name
            .strip_prefix(&prefix)
            .and_then(|r| r.strip_suffix(&suffix))
        else {
            continue;
        };
        if let Ok(i) = mid.parse::<usize>()
            && i >= cfg.num_writers
            && mid == i.to_string()
        {
            out.push(name.to_string());
        }
    }
    out
}

/// The Parquet writer settings for `generator` under `cfg`.
///
/// Measured choices (docs/src/spec/parquet.md, "What strata picks"): writer version 1,
/// page-level statistics (and so the column and offset indexes) on,
/// dictionary encoding on except for leaves the generator marks as nearly
/// all distinct, where a dictionary would be built and abandoned in every
/// row group; `DELTA_BINARY_PACKED` for the integer sequences it marks;
/// `BYTE_STREAM_SPLIT` for its floats of many values when a codec is on
/// ([`split_leaves`]).
pub fn parquet_properties<G: BatchGenerator>(
    generator: &G,
    cfg: &GenerateConfig,
) -> Result<WriterProperties, Error> {
    let compression = parquet_codec(cfg.compression)?;
    let mut b = WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_1_0)
        .set_compression(compression)
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_max_row_group_row_count(Some(cfg.row_group_rows))
        .set_key_value_metadata(Some(vec![
            KeyValue::new("strata.preset".into(), generator.name().to_string()),
            KeyValue::new("strata.seed".into(), cfg.seed.to_string()),
        ]));
    for leaf in generator.dictionary_unfriendly_leaves() {
        b = b.set_column_dictionary_enabled(ColumnPath::new(leaf), false);
    }
    for leaf in generator.delta_leaves() {
        let path = ColumnPath::new(leaf);
        b = b
            .set_column_dictionary_enabled(path.clone(), false)
            .set_column_encoding(path, Encoding::DELTA_BINARY_PACKED);
    }
    if cfg.compression != Compression::None {
        for leaf in split_leaves(generator)? {
            b = b.set_column_encoding(ColumnPath::new(leaf), Encoding::BYTE_STREAM_SPLIT);
        }
    }
    for leaf in lengths_leaves(generator)? {
        b = b.set_column_encoding(ColumnPath::new(leaf), Encoding::DELTA_LENGTH_BYTE_ARRAY);
    }
    if let Some(p) = cfg.layout.as_ref().and_then(|l| l.page_size) {
        b = b.set_data_page_size_limit(usize::try_from(p).unwrap_or(usize::MAX));
    }
    // Data pages v2 are a whole file's (the spec sets them on a table).
    if generator
        .parquet_columns()
        .iter()
        .any(|(_, c)| c.data_page_v2 == Some(true))
    {
        b = b.set_writer_version(WriterVersion::PARQUET_2_0);
    }
    // The spec's own settings (`parquet = { ... }`) win.
    for (leaf, c) in generator.parquet_columns() {
        b = apply_column(b, ColumnPath::new(leaf), &c)?;
    }
    Ok(b.build())
}

/// `b` with column `path` set as the spec's `parquet = { ... }` says.
fn apply_column(
    mut b: parquet::file::properties::WriterPropertiesBuilder,
    path: ColumnPath,
    c: &strata_gen::ParquetColumn,
) -> Result<parquet::file::properties::WriterPropertiesBuilder, Error> {
    use strata_gen::{ParquetCodec, ParquetEncoding, ParquetStatistics};
    if let Some(codec) = c.compression {
        let codec = match codec {
            ParquetCodec::None => Compression::None,
            ParquetCodec::Snappy => Compression::Snappy,
            ParquetCodec::Lz4 => Compression::Lz4,
            ParquetCodec::Zstd(level) => Compression::Zstd(level),
        };
        b = b.set_column_compression(path.clone(), parquet_codec(codec)?);
    }
    if let Some(e) = c.encoding {
        b = b.set_column_encoding(
            path.clone(),
            match e {
                ParquetEncoding::Plain => Encoding::PLAIN,
                ParquetEncoding::DeltaBinaryPacked => Encoding::DELTA_BINARY_PACKED,
                ParquetEncoding::ByteStreamSplit => Encoding::BYTE_STREAM_SPLIT,
                ParquetEncoding::DeltaLengthByteArray => Encoding::DELTA_LENGTH_BYTE_ARRAY,
                ParquetEncoding::DeltaByteArray => Encoding::DELTA_BYTE_ARRAY,
            },
        );
    }
    if let Some(d) = c.dictionary {
        b = b.set_column_dictionary_enabled(path.clone(), d);
    }
    if let Some(s) = c.statistics {
        b = b.set_column_statistics_enabled(
            path.clone(),
            match s {
                ParquetStatistics::None => EnabledStatistics::None,
                ParquetStatistics::Chunk => EnabledStatistics::Chunk,
                ParquetStatistics::Page => EnabledStatistics::Page,
            },
        );
    }
    if let Some((ndv, fpp)) = c.bloom_filter {
        b = b
            .set_column_bloom_filter_enabled(path.clone(), true)
            .set_column_bloom_filter_max_ndv(path.clone(), ndv)
            .set_column_bloom_filter_fpp(path, fpp);
    }
    Ok(b)
}

/// The byte-string leaves written `DELTA_LENGTH_BYTE_ARRAY`: those the
/// generator marks as nearly all distinct (a dictionary is off for them).
/// Their lengths go together, delta-encoded in a few bits each, and their
/// bytes in one piece, where `PLAIN` puts a 4-byte length before each
/// value: the pages are smaller and are written by one copy per run of
/// values (docs/src/spec/parquet.md, "What strata picks").
pub fn lengths_leaves<G: BatchGenerator>(generator: &G) -> Result<Vec<Vec<String>>, Error> {
    unfriendly_leaves_of(generator, &[parquet::basic::Type::BYTE_ARRAY])
}

/// The float leaves that take `BYTE_STREAM_SPLIT` when a codec is on:
/// those the generator marks as nearly all distinct (a dictionary is off
/// for them). Each value's bytes of one significance go together, which a
/// codec compresses smaller: `benches/specs/floats.toml`, 2M rows, 0.92x
/// the bytes for 1.05x the time with zstd, 0.88x for 1.10-1.13x with
/// snappy and lz4 (`benches/results/generate.md`); uncompressed it saves
/// nothing.
pub fn split_leaves<G: BatchGenerator>(generator: &G) -> Result<Vec<Vec<String>>, Error> {
    use parquet::basic::Type;
    unfriendly_leaves_of(generator, &[Type::FLOAT, Type::DOUBLE])
}

/// The leaves the generator marks as nearly all distinct whose Parquet
/// physical type is one of `types`.
fn unfriendly_leaves_of<G: BatchGenerator>(
    generator: &G,
    types: &[parquet::basic::Type],
) -> Result<Vec<Vec<String>>, Error> {
    let descr = parquet::arrow::ArrowSchemaConverter::new().convert(&generator.schema())?;
    let of_type: Vec<Vec<String>> = descr
        .columns()
        .iter()
        .filter(|c| types.contains(&c.physical_type()))
        .map(|c| c.path().parts().to_vec())
        .collect();
    Ok(generator
        .dictionary_unfriendly_leaves()
        .into_iter()
        .filter(|l| of_type.contains(l))
        .collect())
}

enum Encoded {
    Parquet(EncodedRowGroup),
    /// Batches, each with the rows it was asked for (a child table's
    /// batch holds their children).
    Ipc(Vec<(RecordBatch, u64)>),
}

/// Bytes gathered before each write to an output file.
const WRITE_BUFFER: usize = 1 << 20;

enum Sink {
    Parquet(Box<FileAppender<BufWriter<OutputFile>>>),
    Ipc(Box<IpcFileWriter<BufWriter<OutputFile>>>),
}

/// Where the run's files go: a directory, or an object-store prefix
/// (`--output-dir s3://bucket/prefix`).
enum Destination {
    Local,
    Object(ObjectDir),
}

impl Destination {
    /// The destination of `cfg.output_dir`, parsed by
    /// [`strata_store::location::parse_dir`] (a malformed URL is an
    /// error), and the local directory it names (a `file://` URL's path).
    fn of(cfg: &GenerateConfig, store: &StoreConfig) -> Result<(Destination, PathBuf), Error> {
        let Some(dir) = cfg.output_dir.to_str() else {
            // Not UTF-8, so not a URL.
            return Ok((Destination::Local, cfg.output_dir.clone()));
        };
        let loc = parse_dir(dir, store)?;
        Ok(match (loc.kind, loc.file) {
            (Kind::Local, Some(file)) if dir.contains("://") => (Destination::Local, file),
            (Kind::Local, _) => (Destination::Local, cfg.output_dir.clone()),
            (Kind::S3, _) => (
                Destination::Object(ObjectDir::new(loc.store, loc.path, dir)?),
                cfg.output_dir.clone(),
            ),
        })
    }
}

/// The step [`RunOptions::before_publish`] runs.
pub type BeforePublish<'a> = Box<dyn FnMut(&[Summary]) -> Result<(), Error> + 'a>;

/// How a run goes beyond its [`GenerateConfig`].
#[derive(Default)]
pub struct RunOptions<'a> {
    /// S3 settings of an object-store output (over the `AWS_*`
    /// variables).
    pub store: StoreConfig,
    /// When set (by a signal handler, say), the run stops at the next
    /// batch and fails with [`Error::Interrupted`], its temporaries
    /// removed. Once its files are being made visible it is no longer
    /// interrupted: they all appear.
    pub interrupt: Option<&'a AtomicBool>,
    /// Called with the summaries (one per run, or per table) when every
    /// file is complete and before any is made visible; an error here
    /// fails the run with nothing visible. For outputs that must exist
    /// whenever the data files do: written here but not yet committed
    /// ([`strata_store::output::write_pending`]), committed after.
    pub before_publish: Option<BeforePublish<'a>>,
}

/// A file being written: a local temporary (past the page cache), or an
/// object upload.
enum OutputFile {
    Local(DirectWriter),
    Upload(Upload),
}

impl std::io::Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            OutputFile::Local(f) => f.write(buf),
            OutputFile::Upload(u) => u.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            OutputFile::Local(f) => f.flush(),
            OutputFile::Upload(u) => u.flush(),
        }
    }
}

/// A complete file waiting to be made visible: renamed into place, or its
/// upload completed.
enum Finished {
    Local(PendingFile),
    Upload(Upload),
    /// A file of a laid-out run, in its hidden directory (which the run
    /// commits whole).
    Tree,
}

impl Finished {
    /// Everything but making it visible: an upload's last part sent and
    /// every part done.
    fn seal(&mut self) -> Result<(), Error> {
        match self {
            Finished::Local(_) | Finished::Tree => Ok(()),
            Finished::Upload(u) => Ok(u.seal()?),
        }
    }

    fn commit(self) -> Result<(), Error> {
        match self {
            Finished::Local(p) => {
                p.commit()?;
            }
            Finished::Upload(u) => {
                u.commit()?;
            }
            Finished::Tree => {}
        }
        Ok(())
    }
}

struct Queue {
    ready: BTreeMap<usize, Encoded>,
    next: usize,
    busy: bool,
}

struct WriterState {
    sink: Option<Sink>,
    /// The local temporary (an upload is inside the sink).
    pending: Option<PendingFile>,
    done: Option<(Finished, FileSummary)>,
}

struct FileSlot {
    rows: Range<u64>,
    /// Rows written so far: `rows`' length, or for a child table of a
    /// dataset (whose batches hold the children of `rows`), their count.
    written: AtomicU64,
    groups: usize,
    queue: Mutex<Queue>,
    writer: Mutex<WriterState>,
}

struct Run<'a, G: BatchGenerator> {
    generator: &'a G,
    cfg: &'a GenerateConfig,
    dest: &'a Destination,
    schema: SchemaRef,
    /// How Parquet files are encoded (none for IPC).
    encoding: Option<FileEncoding>,
    files: Vec<FileSlot>,
    group_starts: Vec<usize>,
    total_groups: usize,
    next_task: AtomicUsize,
    stop: Stop<'a>,
    counts: Mutex<Vec<ColumnCounts>>,
    progress: &'a (dyn Fn(u64) + Sync),
}

/// Runs the pipeline. `progress` is called with the row count of each
/// finished batch, from worker threads.
///
/// # Errors
/// Invalid settings, existing outputs (without `overwrite`), IO failures
/// and encoder errors; on error no output file is left behind.
pub fn generate<G: BatchGenerator>(
    generator: &G,
    cfg: &GenerateConfig,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Summary, Error> {
    generate_with(generator, cfg, RunOptions::default(), progress)
}

/// [`generate`] with [`RunOptions`]: S3 settings, an interrupt flag and a
/// last step before the files appear.
///
/// # Errors
/// As [`generate`]; [`Error::Interrupted`] when interrupted; the
/// `before_publish` step's error.
pub fn generate_with<G: BatchGenerator>(
    generator: &G,
    cfg: &GenerateConfig,
    opts: RunOptions<'_>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Summary, Error> {
    let mut summaries = run_jobs(&[(generator, cfg)], opts, progress)?;
    summaries.pop().ok_or(Error::Cancelled)
}

/// Runs the pipeline of each `(generator, settings)` pair in turn (the
/// tables of a dataset, each into its own directory) and makes their
/// files visible only when every table's are complete: a run that fails
/// in any table leaves no file of any table, and removes the directories
/// it created. Summaries come back in the order of `jobs`.
///
/// # Errors
/// As [`generate`], for any of the tables; existing outputs of every
/// table are checked before anything is written.
pub fn generate_tables<G: BatchGenerator>(
    jobs: &[(G, GenerateConfig)],
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<Summary>, Error> {
    generate_tables_with(jobs, RunOptions::default(), progress)
}

/// [`generate_tables`] with [`RunOptions`].
///
/// # Errors
/// As [`generate_tables`] and [`generate_with`].
pub fn generate_tables_with<G: BatchGenerator>(
    jobs: &[(G, GenerateConfig)],
    opts: RunOptions<'_>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<Summary>, Error> {
    let jobs: Vec<(&G, &GenerateConfig)> = jobs.iter().map(|(g, c)| (g, c)).collect();
    run_jobs(&jobs, opts, progress)
}

/// One run's directory: where its files are written and where they
/// appear.
struct JobDir {
    /// The run's settings, `output_dir` where the files are written (a
    /// pending directory when staged).
    cfg: GenerateConfig,
    dest: Destination,
    /// The directory the files appear in.
    target: PathBuf,
}

/// The missing ancestors of `dir`, outermost first.
fn missing_ancestors(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut missing: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .map(std::path::Path::to_path_buf)
        .collect();
    missing.reverse();
    missing
}

/// Creates `dir` and its ancestors, adding those it created to `created`;
/// an error names `target`, the directory they are made for.
fn create_dirs(
    dir: &std::path::Path,
    target: &std::path::Path,
    created: &mut Vec<PathBuf>,
) -> Result<(), Error> {
    let missing = missing_ancestors(dir);
    fs::create_dir_all(dir).map_err(|e| Error::io("create directory", target, e))?;
    created.extend(missing);
    Ok(())
}

/// Starts `dir` as a pending directory when it is new or empty (see
/// [`PendingDir::start`]), creating its parent first.
fn pending_dir(
    dir: &std::path::Path,
    created: &mut Vec<PathBuf>,
) -> Result<Option<PendingDir>, Error> {
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_dirs(parent, dir, created)?;
    }
    Ok(PendingDir::start(dir))
}

/// The engine of [`generate_with`] and [`generate_tables_with`].
fn run_jobs<G: BatchGenerator>(
    jobs: &[(&G, &GenerateConfig)],
    mut opts: RunOptions<'_>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<Summary>, Error> {
    let mut dirs = Vec::with_capacity(jobs.len());
    for (_, cfg) in jobs {
        cfg.validate()?;
        let (dest, local) = Destination::of(cfg, &opts.store)?;
        let cfg = GenerateConfig {
            output_dir: local.clone(),
            ..(*cfg).clone()
        };
        if let Destination::Local = dest {
            let conflicts = conflicting_outputs(&cfg);
            if !cfg.overwrite && !conflicts.is_empty() {
                return Err(Error::Store(strata_store::Error::OutputExists {
                    path: conflicts[0].clone(),
                    count: conflicts.len(),
                }));
            }
        }
        dirs.push(JobDir {
            cfg,
            dest,
            target: local,
        });
    }
    // Local directories are staged when new or empty: one pending
    // directory for all the tables when they share a parent that is, else
    // one per such table directory; the others are created (the missing
    // ancestors remembered, to be removed again on failure).
    let mut created: Vec<PathBuf> = Vec::new();
    let mut pending: Vec<PendingDir> = Vec::new();
    let all_local = dirs.iter().all(|d| matches!(d.dest, Destination::Local));
    let shared = match dirs.as_slice() {
        [_, _, ..] if all_local => {
            let parent = dirs[0].target.parent().map(std::path::Path::to_path_buf);
            parent.filter(|p| {
                !p.as_os_str().is_empty() && dirs.iter().all(|d| d.target.parent() == Some(p))
            })
        }
        _ => None,
    };
    let whole = match &shared {
        Some(root) => pending_dir(root, &mut created)?,
        None => None,
    };
    if let Some(p) = whole {
        for d in &mut dirs {
            let rel = d.target.strip_prefix(p.target()).unwrap_or(&d.target);
            d.cfg.output_dir = p.path().join(rel);
            fs::create_dir_all(&d.cfg.output_dir)
                .map_err(|e| Error::io("create directory", &d.cfg.output_dir, e))?;
        }
        pending.push(p);
    } else {
        for d in &mut dirs {
            if let Destination::Local = d.dest {
                match pending_dir(&d.target, &mut created)? {
                    Some(p) => {
                        d.cfg.output_dir = p.path().to_path_buf();
                        pending.push(p);
                    }
                    None => create_dirs(&d.target, &d.target, &mut created)?,
                }
            }
        }
    }
    let interrupt = opts.interrupt;
    let result: Result<Vec<Summary>, Error> = (|| {
        let mut staged = Vec::with_capacity(jobs.len());
        for ((generator, _), d) in jobs.iter().zip(&dirs) {
            staged.push(stage(*generator, &d.cfg, &d.dest, interrupt, progress)?);
        }
        for s in &mut staged {
            s.seal()?;
        }
        let summaries: Vec<Summary> = staged
            .iter()
            .zip(&dirs)
            .map(|(s, d)| s.summary(&d.target))
            .collect();
        if interrupt.is_some_and(|i| i.load(Ordering::SeqCst)) {
            return Err(Error::Interrupted);
        }
        if let Some(step) = opts.before_publish.as_mut() {
            step(&summaries)?;
        }
        // From here on every file appears.
        for s in staged {
            s.publish()?;
        }
        for p in pending.drain(..) {
            p.commit()?;
        }
        Ok(summaries)
    })();
    if result.is_err() {
        drop(pending);
        // Only removes directories the failed run left empty.
        for d in created.iter().rev() {
            let _ = fs::remove_dir(d);
        }
    }
    result
}

/// Writes every file of a run, leaving them [`Staged`]: complete, not
/// yet visible.
fn stage<'a, G: BatchGenerator>(
    generator: &G,
    cfg: &'a GenerateConfig,
    dest: &'a Destination,
    interrupt: Option<&AtomicBool>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Staged<'a>, Error> {
    if let Some(layout) = cfg.layout.as_ref().filter(|l| l.own_path()) {
        return stage_laid_out(generator, cfg, dest, layout, interrupt, progress);
    }
    let conflicts = match dest {
        Destination::Local => conflicting_outputs(cfg),
        Destination::Object(o) => {
            let names = o.list()?;
            conflicting_names(cfg, names.iter().map(|(n, _)| n.as_str()))
                .into_iter()
                .map(|n| cfg.output_dir.join(n))
                .collect()
        }
    };
    if !cfg.overwrite && !conflicts.is_empty() {
        return Err(Error::Store(strata_store::Error::OutputExists {
            path: conflicts[0].clone(),
            count: conflicts.len(),
        }));
    }
    if let Destination::Local = dest {
        for i in 0..cfg.num_writers {
            remove_stale_temporaries(&cfg.file_path(i));
        }
    }

    let start = Instant::now();
    let cpu0 = crate::clock::process_cpu_seconds();
    // The files' schema: the generator's, with field ids when a table
    // format numbers them.
    let schema = cfg.field_ids.clone().unwrap_or_else(|| generator.schema());
    let encoding = match cfg.format {
        Format::Parquet => Some(
            FileEncoding::new(
                schema.clone(),
                parquet_properties(generator, cfg)?,
                cfg.encoder,
            )?
            .with_page_checksums(cfg.page_checksums),
        ),
        Format::Ipc => None,
    };
    let mut files = Vec::with_capacity(cfg.num_writers);
    let mut group_starts = Vec::with_capacity(cfg.num_writers + 1);
    let mut total_groups = 0usize;
    for i in 0..cfg.num_writers {
        let rows = cfg.file_rows(i);
        let groups = (rows.end - rows.start).div_ceil(cfg.row_group_rows as u64) as usize;
        group_starts.push(total_groups);
        total_groups += groups;
        files.push(FileSlot {
            rows,
            written: AtomicU64::new(0),
            groups,
            queue: Mutex::new(Queue {
                ready: BTreeMap::new(),
                next: 0,
                busy: false,
            }),
            writer: Mutex::new(WriterState {
                sink: None,
                pending: None,
                done: None,
            }),
        });
    }
    group_starts.push(total_groups);
    let counts = empty_counts(&schema);
    let run = Run {
        generator,
        cfg,
        dest,
        schema,
        encoding,
        files,
        group_starts,
        total_groups,
        next_task: AtomicUsize::new(0),
        stop: Stop::new(interrupt),
        counts: Mutex::new(counts),
        progress,
    };
    let threads = cfg.threads.min(total_groups).max(1);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| run.worker());
        }
    });
    if let Some(e) = run.stop.take() {
        return Err(e);
    }

    let mut finished = Vec::with_capacity(cfg.num_writers);
    for slot in run.files {
        let state = slot.writer.into_inner().unwrap_or_else(|p| p.into_inner());
        match state.done {
            Some(d) => finished.push(d),
            None => return Err(Error::Cancelled),
        }
    }
    Ok(Staged {
        cfg,
        dest,
        finished,
        conflicts,
        start,
        cpu0,
        threads,
        columns: run.counts.into_inner().unwrap_or_else(|p| p.into_inner()),
        tree: None,
        partitions: None,
        spill_bytes: None,
    })
}

/// [`stage`] for a table with a layout of its own ([`crate::layout`]).
fn stage_laid_out<'a, G: BatchGenerator>(
    generator: &G,
    cfg: &'a GenerateConfig,
    dest: &'a Destination,
    layout: &crate::layout::Layout,
    interrupt: Option<&AtomicBool>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Staged<'a>, Error> {
    if let Destination::Object(_) = dest {
        return Err(Error::InvalidConfig(
            "a layout (partitions, a sort order, a target file size or row groups in bytes) is \
             written to a local directory; write it there and copy it to the object store"
                .into(),
        ));
    }
    if cfg.format != Format::Parquet {
        return Err(Error::InvalidConfig(
            "a layout (partitions, a sort order, sizes) is written as Parquet; drop --format ipc"
                .into(),
        ));
    }
    let target = cfg.layout_target();
    let conflicts = crate::layout::conflicting_files(&target);
    if !cfg.overwrite && !conflicts.is_empty() {
        return Err(Error::Store(strata_store::Error::OutputExists {
            path: conflicts[0].clone(),
            count: conflicts.len(),
        }));
    }
    let start = Instant::now();
    let cpu0 = crate::clock::process_cpu_seconds();
    let props = parquet_properties(generator, cfg)?;
    if !layout.fields().is_empty() {
        // Refuses a run expected to pass --max-partitions before writing.
        crate::layout::plan_layout(generator, &target, layout, props.clone(), false)?;
    }
    let staged =
        crate::layout::stage_layout(generator, &target, layout, props, interrupt, progress)?;
    Ok(Staged {
        cfg,
        dest,
        finished: staged
            .files
            .into_iter()
            .map(|f| (Finished::Tree, f))
            .collect(),
        conflicts,
        start,
        cpu0,
        threads: staged.threads,
        columns: staged.columns,
        tree: Some(staged.tree),
        partitions: (!layout.fields().is_empty()).then_some(staged.partitions),
        spill_bytes: Some(staged.spill_bytes),
    })
}

/// A run whose files are all complete but not yet visible: temporaries
/// beside their final names, or uploads with every part sent. Dropping it
/// removes them.
struct Staged<'a> {
    cfg: &'a GenerateConfig,
    dest: &'a Destination,
    finished: Vec<(Finished, FileSummary)>,
    conflicts: Vec<PathBuf>,
    start: Instant,
    cpu0: f64,
    threads: usize,
    columns: Vec<ColumnCounts>,
    /// A laid-out run's hidden directory, holding its files by their
    /// paths relative to the output directory.
    tree: Option<PendingDir>,
    partitions: Option<usize>,
    spill_bytes: Option<u64>,
}

impl Staged<'_> {
    /// Everything that can fail before a file appears: uploads send their
    /// last parts, all of them, so that only completions remain.
    fn seal(&mut self) -> Result<(), Error> {
        for (f, _) in &mut self.finished {
            f.seal()?;
        }
        Ok(())
    }

    /// The run summed up, its files named as they appear in `target` (the
    /// directory a pending directory becomes). The times run to this
    /// moment: every file complete, none yet visible.
    fn summary(&self, target: &std::path::Path) -> Summary {
        let elapsed_s = self.start.elapsed().as_secs_f64();
        let cpu_s = crate::clock::process_cpu_seconds() - self.cpu0;
        let files: Vec<FileSummary> = self
            .finished
            .iter()
            .map(|(fin, f)| {
                let mut f = f.clone();
                if let Finished::Tree = fin {
                    f.path = target.join(&f.path);
                } else if let (Destination::Local, Some(name)) = (self.dest, f.path.file_name()) {
                    f.path = target.join(name);
                }
                f
            })
            .collect();
        let bytes = files.iter().map(|f| f.bytes).sum();
        let records: u64 = files.iter().map(|f| f.rows).sum();
        let records_per_s = records as f64 / elapsed_s;
        Summary {
            records,
            bytes,
            elapsed_s,
            cpu_s,
            threads: self.threads,
            records_per_s,
            records_per_s_per_core: records_per_s / self.threads as f64,
            mb_per_s: bytes as f64 / 1e6 / elapsed_s,
            columns: self.columns.clone(),
            files,
            partitions: self.partitions,
            spill_bytes: self.spill_bytes,
        }
    }

    /// Moves every file into place and removes the stale outputs an
    /// overwrite replaces.
    fn publish(self) -> Result<(), Error> {
        let Staged {
            cfg,
            dest,
            finished,
            conflicts,
            tree,
            ..
        } = self;
        let laid_out = tree.is_some();
        if let Some(tree) = tree {
            tree.commit()?;
        }
        let mut paths = Vec::with_capacity(finished.len());
        for (pending, summary) in finished {
            pending.commit()?;
            paths.push(if laid_out {
                cfg.output_dir.join(&summary.path)
            } else {
                summary.path
            });
        }
        // Every file is in place: stale outputs an overwrite replaces go.
        if cfg.overwrite {
            for stale in conflicts {
                if !paths.contains(&stale) {
                    match dest {
                        Destination::Local => {
                            fs::remove_file(&stale)
                                .map_err(|e| Error::io("remove stale output", &stale, e))?;
                            // A partition directory the run left empty
                            // goes too.
                            for d in stale.ancestors().skip(1) {
                                if d == cfg.output_dir || fs::remove_dir(d).is_err() {
                                    break;
                                }
                            }
                        }
                        Destination::Object(o) => o.remove(
                            &stale
                                .file_name()
                                .map(|n| n.to_string_lossy().into_owned())
                                .unwrap_or_default(),
                        )?,
                    }
                }
            }
        }
        Ok(())
    }
}

impl<G: BatchGenerator> Run<'_, G> {
    fn worker(&self) {
        let mut scratch = G::Scratch::default();
        let mut encoder = None;
        let mut counts = empty_counts(&self.schema);
        loop {
            if !self.stop.go_on() {
                return;
            }
            let task = self.next_task.fetch_add(1, Ordering::Relaxed);
            if task >= self.total_groups {
                break;
            }
            let file = self.group_starts.partition_point(|&s| s <= task) - 1;
            let group = task - self.group_starts[file];
            let result = self
                .encode(file, group, &mut scratch, &mut encoder, &mut counts)
                .and_then(|enc| self.deliver(file, group, enc, &mut scratch));
            if let Err(e) = result {
                self.stop.fail(e);
                return;
            }
        }
        let mut total = lock(&self.counts);
        for (t, c) in total.iter_mut().zip(&counts) {
            t.add(c);
        }
    }

    /// The file whose rows hold global row `row`.
    fn file_of(&self, row: u64) -> usize {
        self.files.partition_point(|f| f.rows.end <= row)
    }

    fn group_rows(&self, file: usize, group: usize) -> Range<u64> {
        let rows = &self.files[file].rows;
        let start = rows.start + (group * self.cfg.row_group_rows) as u64;
        start..(start + self.cfg.row_group_rows as u64).min(rows.end)
    }

    fn encode(
        &self,
        file: usize,
        group: usize,
        scratch: &mut G::Scratch,
        encoder: &mut Option<RowGroupEncoder>,
        counts: &mut [ColumnCounts],
    ) -> Result<Encoded, Error> {
        let rows = self.group_rows(file, group);
        let Some(encoding) = &self.encoding else {
            // IPC: the file's writer encodes the batches, in order.
            let mut batches = Vec::new();
            self.batches(rows, scratch, counts, |b, n| {
                batches.push((b, n));
                Ok(None)
            })?;
            return Ok(Encoded::Ipc(batches));
        };
        let encoder = encoder.get_or_insert_with(|| encoding.row_group_encoder());
        self.batches(rows, scratch, counts, |b, _| {
            encoder.write(&b)?;
            Ok(Some(b))
        })?;
        Ok(Encoded::Parquet(encoder.finish(false)?))
    }

    /// Generates `rows` batch by batch and hands each batch to `consume`;
    /// a batch that `consume` hands back is finished: it is counted as
    /// progress and its buffers are recycled.
    fn batches(
        &self,
        rows: Range<u64>,
        scratch: &mut G::Scratch,
        counts: &mut [ColumnCounts],
        mut consume: impl FnMut(RecordBatch, u64) -> Result<Option<RecordBatch>, Error>,
    ) -> Result<(), Error> {
        let step = self.cfg.record_batch_size as u64;
        let mut at = rows.start;
        while at < rows.end {
            if self.stop.failed() {
                return Err(Error::Cancelled);
            }
            if self.stop.interrupted() {
                return Err(Error::Interrupted);
            }
            let n = step.min(rows.end - at) as usize;
            let b = self.generator.generate(at, n, scratch)?;
            self.files[self.file_of(at)]
                .written
                .fetch_add(b.num_rows() as u64, Ordering::Relaxed);
            count_batch(&b, counts);
            if let Some(done) = consume(b, n as u64)? {
                self.generator.recycle(done, scratch);
                (self.progress)(n as u64);
            }
            at += n as u64;
        }
        Ok(())
    }

    /// Queues group `group` of `file` and, unless another worker is
    /// already appending to that file, appends every group that is next in
    /// line.
    fn deliver(
        &self,
        file: usize,
        group: usize,
        enc: Encoded,
        scratch: &mut G::Scratch,
    ) -> Result<(), Error> {
        let slot = &self.files[file];
        let mut q = lock(&slot.queue);
        q.ready.insert(group, enc);
        if q.busy {
            return Ok(());
        }
        q.busy = true;
        loop {
            let next = q.next;
            let Some(enc) = q.ready.remove(&next) else {
                q.busy = false;
                return Ok(());
            };
            q.next += 1;
            drop(q);
            let mut w = lock(&slot.writer);
            self.append(file, &mut w, next, enc, scratch)?;
            if next + 1 == slot.groups {
                self.finish(file, &mut w)?;
            }
            drop(w);
            q = lock(&slot.queue);
        }
    }

    fn open(&self, file: usize, w: &mut WriterState) -> Result<(), Error> {
        let target = self.cfg.file_path(file);
        let (pending, f) = match self.dest {
            Destination::Local => {
                let (pending, direct) = PendingFile::create_direct(target, self.cfg.overwrite)?;
                (Some(pending), OutputFile::Local(direct))
            }
            Destination::Object(o) => {
                let name = target
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                (None, OutputFile::Upload(o.create(&name)?))
            }
        };
        // parquet splices a column chunk into the file 8 KiB at a time;
        // gathered into 1 MiB writes, as the IPC writer's. On `wide-u64`
        // the kernel's per-write cost was 7% of a run's samples with 8 KiB
        // writes (`perf record`).
        let buffered = BufWriter::with_capacity(WRITE_BUFFER, f);
        let sink = match &self.encoding {
            Some(encoding) => Sink::Parquet(Box::new(encoding.appender(buffered)?)),
            None => {
                let options = strata_parquet::sink::ipc_options(self.cfg.compression)?;
                Sink::Ipc(Box::new(IpcFileWriter::try_new(
                    buffered,
                    &self.schema,
                    options,
                )?))
            }
        };
        w.sink = Some(sink);
        w.pending = pending;
        Ok(())
    }

    fn append(
        &self,
        file: usize,
        w: &mut WriterState,
        group: usize,
        enc: Encoded,
        scratch: &mut G::Scratch,
    ) -> Result<(), Error> {
        if group == 0 {
            self.open(file, w)?;
        }
        match (w.sink.as_mut(), enc) {
            (Some(Sink::Parquet(appender)), Encoded::Parquet(group)) => appender.append(group)?,
            (Some(Sink::Ipc(writer)), Encoded::Ipc(batches)) => {
                for (b, n) in batches {
                    writer.write(&b)?;
                    (self.progress)(n);
                    self.generator.recycle(b, scratch);
                }
            }
            _ => return Err(Error::Cancelled),
        }
        Ok(())
    }

    fn finish(&self, file: usize, w: &mut WriterState) -> Result<(), Error> {
        let target = self.cfg.file_path(file);
        let (buffered, groups) = match w.sink.take() {
            Some(Sink::Parquet(appender)) => {
                let groups = appender.row_groups();
                (appender.finish()?, groups)
            }
            Some(Sink::Ipc(writer)) => (writer.finish()?, self.files[file].groups),
            None => return Err(Error::Cancelled),
        };
        let f = buffered
            .into_inner()
            .map_err(|e| Error::io("write", &target, e.into_error()))?;
        let (finished, bytes) = match (f, w.pending.take()) {
            (OutputFile::Local(f), Some(pending)) => {
                let bytes = f.position();
                f.finish().map_err(|e| Error::io("write", &target, e))?;
                (Finished::Local(pending), bytes)
            }
            (OutputFile::Upload(u), None) => {
                let bytes = u.bytes();
                (Finished::Upload(u), bytes)
            }
            _ => return Err(Error::Cancelled),
        };
        let rows = &self.files[file].rows;
        let summary = FileSummary {
            path: target,
            first_row: rows.start,
            rows: self.files[file].written.load(Ordering::Relaxed),
            bytes,
            groups,
        };
        w.done = Some((finished, summary));
        Ok(())
    }
}
