//! Every strata entry point that decodes a user's bytes, callable on one
//! buffer: the harness of the fuzz targets in `fuzz/` and of the seeded
//! mutation tests in `tests/`. Not part of strata's API.
//!
//! # What it owns
//!
//! * [`Fixture`]: a valid Parquet file (strata's writer) and a valid Arrow
//!   IPC file (zstd) of a preset, sorted by a key column, with the byte
//!   regions their readers trust most (for [`strata_testkit::mutate`]).
//! * [`Harness::file`]: runs one buffer, as a Parquet or IPC file, through
//!   every reading entry point ([`Entry`]): scan (full, projected, limited
//!   and by row number), sort, the merge, compaction (init from footers,
//!   then a merge of the dataset), `--verify-distribution` and `strata
//!   infer` (every row, a sample, and `--compare` with itself).
//! * [`spec_text`], [`rows`], [`manifest`], [`filter`]: the text and byte
//!   inputs (spec files, stored rows, compaction manifests, `--filter`).
//!
//! # Data flow
//!
//! bytes -> a file in the harness's directory (or an in-memory source) ->
//! each entry point -> `Ok`, an error, or a [`Violation`]: a panic that
//! escaped, an output left behind by a failed run, or a result that breaks
//! the entry point's promise (a sort output that is not sorted, a merge
//! that loses rows, an inferred spec that does not parse).
//!
//! # Guarantees
//!
//! The harness never hides a panic: one escaping an entry point is a
//! [`Violation`] (under libFuzzer, whose panic hook aborts, a crash).
//! Decoder panics that strata's own guard turns into errors are counted by
//! [`strata_parquet::guard::caught`], not hidden either.
//!
//! # Example
//!
//! ```
//! use strata_fuzzkit::{Fixture, Harness};
//! use strata_parquet::Format;
//!
//! let fixture = Fixture::new("wide-u64", 300, 7).unwrap();
//! let harness = Harness::new().unwrap();
//! // The intact file passes every entry point.
//! let outcomes = harness.file(&fixture, Format::Parquet, &fixture.parquet).unwrap();
//! assert!(outcomes.iter().all(|o| o.result.is_ok()), "{outcomes:?}");
//! // A truncated one fails each with an error, and leaves nothing behind.
//! let cut = &fixture.parquet[..fixture.parquet.len() / 2];
//! let outcomes = harness.file(&fixture, Format::Parquet, cut).unwrap();
//! assert!(outcomes.iter().all(|o| o.result.is_err()));
//! ```

use std::{
    ops::Range,
    panic::AssertUnwindSafe,
    path::{Path, PathBuf},
    sync::Arc,
};

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field};
use bytes::Bytes;
use futures::TryStreamExt;
use parquet::file::properties::WriterProperties;
use strata_compact::storage::{Dataset, MANIFEST, manifest::Manifest};
use strata_gen::BatchGenerator;
use strata_parquet::{Format, ipc::IpcFileWriter, writer::ParquetWriter};
use strata_scan::{Filter, ScanFile, ScanRequest};
use strata_sort::{
    SortConfig, SortKey,
    merge::{MergeConfig, merge_files},
};
use strata_store::source::Source;

/// Errors of the harness's own set-up (tests and fuzz targets unwrap it).
pub type SetupError = Box<dyn std::error::Error + Send + Sync>;

/// The presets and the key column each fixture is sorted by. `lineitem`
/// is left out, so that the mutation and corpus tests do not grow by a
/// fourth fixture: its flat integer, date and string leaves are shapes
/// the others have, and its decimals (`INT64` pages) are read back by the
/// direct encoder's differential tests, not mutated here.
pub const PRESET_KEYS: &[(&str, &str)] = &[
    ("contacts", "name"),
    ("wide-u64", "c00"),
    ("events", "user_id"),
];

/// A preset's valid files.
#[derive(Debug)]
pub struct Fixture {
    /// The preset.
    pub preset: &'static str,
    /// The column the files are sorted by.
    pub key: &'static str,
    /// The preset's spec (for `--verify-distribution`).
    pub spec: strata_gen::Spec,
    /// Rows in each file.
    pub rows: usize,
    /// A Parquet file by strata's writer: several row groups and pages.
    pub parquet: Vec<u8>,
    /// An Arrow IPC file (zstd) by strata's writer: several batches.
    pub ipc: Vec<u8>,
    /// The rows, sorted.
    pub batch: RecordBatch,
    /// The regions of `parquet` its readers trust most.
    pub parquet_regions: Vec<Range<usize>>,
    /// The regions of `ipc` its readers trust most.
    pub ipc_regions: Vec<Range<usize>>,
}

impl Fixture {
    /// `rows` rows of `preset` (one of [`PRESET_KEYS`]) from `seed`, sorted
    /// by its key.
    ///
    /// # Errors
    /// When the preset is unknown or a writer fails.
    pub fn new(preset: &str, rows: usize, seed: u64) -> Result<Fixture, SetupError> {
        let &(preset, key) = PRESET_KEYS
            .iter()
            .find(|(p, _)| *p == preset)
            .ok_or_else(|| format!("no fixture for preset {preset}"))?;
        let spec = strata_gen::Spec::preset(preset)?;
        let generator = strata_gen::preset(preset, seed);
        let batch = generator.generate(0, rows, &mut Default::default())?;
        let batch = strata_sort::sort_batch(&batch, &[key.parse::<SortKey>()?])?;
        let per = (rows / 4).max(1);
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some((rows / 3).max(1)))
            .set_data_page_row_count_limit(per / 2 + 1)
            .set_compression(parquet::basic::Compression::SNAPPY)
            .build();
        let mut w = ParquetWriter::try_new(Vec::new(), batch.schema(), props)?;
        for at in (0..rows).step_by(per) {
            w.write(&batch.slice(at, per.min(rows - at)))?;
        }
        let parquet = w.finish()?;
        let options = arrow_ipc::writer::IpcWriteOptions::default()
            .try_with_compression(Some(arrow_ipc::CompressionType::ZSTD))?;
        let mut w = IpcFileWriter::try_new(Vec::new(), &batch.schema(), options)?;
        for at in (0..rows).step_by(per) {
            w.write(&batch.slice(at, per.min(rows - at)))?;
        }
        let ipc = w.finish()?;
        Ok(Fixture {
            preset,
            key,
            spec,
            rows,
            parquet_regions: strata_testkit::mutate::parquet_regions(&parquet),
            ipc_regions: strata_testkit::mutate::ipc_regions(&ipc),
            parquet,
            ipc,
            batch,
        })
    }

    /// A filter on the key that keeps part of the rows.
    pub fn key_filter(&self) -> Option<Filter> {
        [">= 'M'", ">= 9223372036854775807"]
            .iter()
            .filter_map(|cmp| Filter::parse(&format!("{} {cmp}", self.key)).ok())
            .find(|f| f.check(&self.batch.schema()).is_ok())
    }

    /// The valid file of `format`, and its trusted regions.
    pub fn file(&self, format: Format) -> (&[u8], &[Range<usize>]) {
        match format {
            Format::Parquet => (&self.parquet, &self.parquet_regions),
            Format::Ipc => (&self.ipc, &self.ipc_regions),
        }
    }
}

/// One fixture per preset, and the one a file belongs to.
#[derive(Debug)]
pub struct Fixtures(pub Vec<Fixture>);

impl Fixtures {
    /// Every preset of [`PRESET_KEYS`], `rows` rows each.
    ///
    /// # Errors
    /// As [`Fixture::new`].
    pub fn all(rows: usize, seed: u64) -> Result<Fixtures, SetupError> {
        PRESET_KEYS
            .iter()
            .map(|(p, _)| Fixture::new(p, rows, seed))
            .collect::<Result<_, _>>()
            .map(Fixtures)
    }

    /// The fixture whose key column's name appears in `bytes` (footers
    /// hold column names in plain bytes), else the first: a mutated file
    /// keeps its own preset's key, spec and intact partner.
    pub fn pick(&self, bytes: &[u8]) -> &Fixture {
        let has = |name: &str| bytes.windows(name.len()).any(|w| w == name.as_bytes());
        self.0
            .iter()
            .rev()
            .find(|f| has(f.key))
            .unwrap_or(&self.0[0])
    }
}

/// An entry point that decodes a user's file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Entry {
    /// `strata scan`: the whole file, the last column, the key column with
    /// a limit and a filter, and rows by number.
    Scan,
    /// `strata sort` (the file as its input).
    Sort,
    /// The k-way merge (the file and the intact file as inputs; Parquet).
    Merge,
    /// `strata compact init` and a compaction of a dataset holding the
    /// file and the intact file (Parquet).
    Compact,
    /// `strata generate --verify-distribution` on the file.
    Verify,
    /// `strata infer` on the file, reading every row and then a sample of
    /// [`INFER_SAMPLE_ROWS`], and `strata infer --compare` of the file
    /// with itself.
    Infer,
}

impl Entry {
    /// Every entry point.
    pub const ALL: [Entry; 6] = [
        Entry::Scan,
        Entry::Sort,
        Entry::Merge,
        Entry::Compact,
        Entry::Verify,
        Entry::Infer,
    ];

    /// Whether it reads files of `format`.
    pub fn reads(self, format: Format) -> bool {
        format == Format::Parquet
            || matches!(
                self,
                Entry::Scan | Entry::Sort | Entry::Verify | Entry::Infer
            )
    }
}

/// What one entry point did with one input.
#[derive(Debug)]
pub struct Outcome {
    /// The entry point.
    pub entry: Entry,
    /// `Ok`, or its error's text.
    pub result: Result<(), String>,
}

/// A broken promise: the harness's failure.
#[derive(Debug)]
pub struct Violation {
    /// The entry point.
    pub entry: Entry,
    /// What went wrong.
    pub what: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}: {}", self.entry, self.what)
    }
}

impl std::error::Error for Violation {}

/// Runs inputs through the entry points, in a directory of its own.
#[derive(Debug)]
pub struct Harness {
    dir: tempfile::TempDir,
    rt: tokio::runtime::Runtime,
}

/// Names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Empties `dir` (creating it if needed).
fn fresh(dir: &Path) -> std::io::Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(dir)
}

fn text(e: impl std::fmt::Display) -> String {
    e.to_string()
}

impl Harness {
    /// A harness with a fresh temporary directory.
    ///
    /// # Errors
    /// When the directory or the runtime cannot be made.
    pub fn new() -> Result<Harness, SetupError> {
        Ok(Harness {
            dir: tempfile::tempdir()?,
            rt: tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()?,
        })
    }

    /// Runs `bytes`, as a file of `format`, through every entry point that
    /// reads that format. Returns each one's outcome.
    ///
    /// # Errors
    /// The first [`Violation`]: a panic escaped, a failed run left an
    /// output, or a result broke its entry point's promise.
    pub fn file(
        &self,
        fixture: &Fixture,
        format: Format,
        bytes: &[u8],
    ) -> Result<Vec<Outcome>, Violation> {
        self.entries(&Entry::ALL, fixture, format, bytes)
    }

    /// Runs `bytes`, as a file of `format`, through those of `entries`
    /// that read that format, in order. Returns each one's outcome.
    ///
    /// # Errors
    /// As [`Harness::file`].
    pub fn entries(
        &self,
        entries: &[Entry],
        fixture: &Fixture,
        format: Format,
        bytes: &[u8],
    ) -> Result<Vec<Outcome>, Violation> {
        entries
            .iter()
            .copied()
            .filter(|e| e.reads(format))
            .map(|entry| {
                let result = self.one(entry, fixture, format, bytes)?;
                Ok(Outcome { entry, result })
            })
            .collect()
    }

    /// Runs `bytes` through one entry point.
    ///
    /// # Errors
    /// As [`Harness::file`].
    pub fn one(
        &self,
        entry: Entry,
        fixture: &Fixture,
        format: Format,
        bytes: &[u8],
    ) -> Result<Result<(), String>, Violation> {
        let work = self.dir.path().join(format!("{entry:?}").to_lowercase());
        let violation = |what: String| Violation { entry, what };
        fresh(&work).map_err(|e| violation(format!("cannot set up {}: {e}", work.display())))?;
        let run = std::panic::catch_unwind(AssertUnwindSafe(|| match entry {
            Entry::Scan => self.scan(fixture, bytes),
            Entry::Sort => sort(&work, fixture, format, bytes),
            Entry::Merge => merge(&work, fixture, bytes),
            Entry::Compact => compact(&work, fixture, bytes),
            Entry::Verify => verify(&work, fixture, format, bytes),
            Entry::Infer => infer(&work, format, bytes),
        }));
        match run {
            Err(p) => {
                let msg = p
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                Err(violation(format!("panicked: {msg}")))
            }
            Ok(Err(Broken(what))) => Err(violation(what)),
            Ok(Ok(r)) => Ok(r),
        }
    }

    /// Every read a scan can make, from memory.
    fn scan(&self, fixture: &Fixture, bytes: &[u8]) -> Checked {
        let source = Source::from_bytes(Bytes::copy_from_slice(bytes));
        self.rt.block_on(async {
            let file = match ScanFile::open(source).await {
                Ok(f) => f,
                Err(e) => return Ok(Err(text(e))),
            };
            let schema = file.schema();
            let last = schema.fields().last().map(|f| f.name().clone());
            let filter = fixture.key_filter();
            let requests = [
                ScanRequest::default(),
                ScanRequest {
                    columns: last.map(|l| vec![l]),
                    ..Default::default()
                },
                ScanRequest {
                    columns: Some(vec![fixture.key.to_string()]),
                    limit: Some(10),
                    filter,
                },
            ];
            let mut first = Ok(());
            for req in &requests {
                let read: Result<Vec<RecordBatch>, _> = match file.stream(req) {
                    Ok(s) => s.try_collect().await,
                    Err(e) => Err(e),
                };
                if let Err(e) = read {
                    first = first.and(Err(text(e)));
                }
            }
            if let Err(e) = file.take(&[0, 3, 17], None).await {
                first = first.and(Err(text(e)));
            }
            Ok(first)
        })
    }
}

/// An entry point's own result, or a broken promise.
struct Broken(String);
type Checked = Result<Result<(), String>, Broken>;

/// Fails with `what` unless `dir` holds exactly `expected`.
fn only(dir: &Path, expected: &[&str], what: &str) -> Result<(), Broken> {
    let names = listing(dir);
    if names != expected {
        return Err(Broken(format!(
            "{what}: left {names:?} in the directory (expected {expected:?})"
        )));
    }
    Ok(())
}

fn write_input(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf, Broken> {
    let p = dir.join(name);
    std::fs::write(&p, bytes).map_err(|e| Broken(format!("cannot write {}: {e}", p.display())))?;
    Ok(p)
}

/// `strata sort`: an error leaves only the input; a result is a readable
/// file sorted by the key, with the rows the summary counts.
fn sort(dir: &Path, fixture: &Fixture, format: Format, bytes: &[u8]) -> Checked {
    let name = format!("in.{}", format.extension());
    let input = write_input(dir, &name, bytes)?;
    let cfg = SortConfig::new(
        input,
        dir.join("out.parquet"),
        vec![fixture.key.parse().map_err(|e| Broken(text(e)))?],
    );
    match strata_sort::sort_file(&cfg) {
        Err(e) => {
            only(dir, &[&name], "a failed sort")?;
            Ok(Err(text(e)))
        }
        Ok(summary) => {
            only(dir, &[&name, "out.parquet"], "a sort")?;
            // One read of the output's keys: its row count and whether
            // every key is at or above the one before.
            let mut last: Option<Vec<u8>> = None;
            let mut sorted = true;
            let rows = strata_sort::merge::for_each_key_batch::<strata_sort::Error>(
                &cfg.output,
                &[fixture.key.to_string()],
                1024,
                |k, _| {
                    for r in k.iter() {
                        let r = r.as_bytes();
                        sorted &= last.as_deref().is_none_or(|l| l <= r);
                        last = Some(r.to_vec());
                    }
                    Ok(true)
                },
            )
            .map_err(|e| Broken(format!("the sorted output does not read back: {e}")))?;
            if rows != summary.rows || !sorted {
                return Err(Broken(format!(
                    "the output has {rows} rows (summary: {}), sorted: {sorted}",
                    summary.rows
                )));
            }
            Ok(Ok(()))
        }
    }
}

fn merge_config(fixture: &Fixture) -> MergeConfig {
    MergeConfig {
        key: vec![fixture.key.to_string()],
        target_file_bytes: 1 << 30,
        batch_rows: 128,
        threads: 2,
        ..MergeConfig::default()
    }
}

/// The merge of the intact file and `bytes`: an error leaves no output; a
/// result holds every row of both.
fn merge(dir: &Path, fixture: &Fixture, bytes: &[u8]) -> Checked {
    let a = write_input(dir, "a.parquet", &fixture.parquet)?;
    let b = write_input(dir, "b.parquet", bytes)?;
    let out = dir.join("out");
    std::fs::create_dir(&out).map_err(|e| Broken(text(e)))?;
    let name = |i: usize| format!("m-{i}.parquet");
    match merge_files(&[a, b], &out, &name, &merge_config(fixture)) {
        Err(e) => {
            only(&out, &[], "a failed merge")?;
            Ok(Err(text(e)))
        }
        Ok(files) => {
            let rows: u64 = files.iter().map(|f| f.rows).sum();
            if rows < fixture.rows as u64 {
                return Err(Broken(format!(
                    "the merge wrote {rows} rows, fewer than the intact input's {}",
                    fixture.rows
                )));
            }
            Ok(Ok(()))
        }
    }
}

/// `compact init` over a dataset of the intact file and `bytes`, then a
/// compaction of both: a failed init writes no manifest; a failed
/// compaction leaves the manifest and the files as they were.
fn compact(dir: &Path, fixture: &Fixture, bytes: &[u8]) -> Checked {
    write_input(dir, "a.parquet", &fixture.parquet)?;
    write_input(dir, "b.parquet", bytes)?;
    let ds = Dataset::local(dir);
    let key = [fixture.key.to_string()];
    let manifest = match strata_compact::dataset::init(&ds, &key, false) {
        Err(e) => {
            only(dir, &["a.parquet", "b.parquet"], "a failed init")?;
            return Ok(Err(text(e)));
        }
        Ok(m) => m,
    };
    let before = std::fs::read(dir.join(MANIFEST)).map_err(|e| Broken(text(e)))?;
    let picked: Vec<usize> = (0..manifest.files.len()).collect();
    match strata_compact::dataset::execute(&ds, &picked, 1 << 30, &|_| Ok(())) {
        Err(e) => {
            let after = std::fs::read(dir.join(MANIFEST)).map_err(|e| Broken(text(e)))?;
            if after != before {
                return Err(Broken("a failed compaction changed the manifest".into()));
            }
            only(
                dir,
                &[MANIFEST, "a.parquet", "b.parquet"],
                "a failed compaction",
            )?;
            Ok(Err(text(e)))
        }
        Ok(_) => {
            let m = Manifest::read(&ds).map_err(|e| Broken(text(e)))?;
            if m.rows() != manifest.rows() {
                return Err(Broken(format!(
                    "the compaction changed the dataset's rows from {} to {}",
                    manifest.rows(),
                    m.rows()
                )));
            }
            Ok(Ok(()))
        }
    }
}

/// `--verify-distribution` on the file: a report or an error.
fn verify(dir: &Path, fixture: &Fixture, format: Format, bytes: &[u8]) -> Checked {
    let p = write_input(dir, &format!("in.{}", format.extension()), bytes)?;
    let path = p.to_string_lossy().into_owned();
    Ok(
        strata_pipeline::verify::verify_distribution(&fixture.spec, &[path])
            .map(drop)
            .map_err(text),
    )
}

/// The rows [`Entry::Infer`] samples on its second read: fewer than a
/// fixture's, so that a Parquet file is read by some of its row groups and
/// an IPC file by its first batches.
pub const INFER_SAMPLE_ROWS: u64 = 50;

/// `strata infer` on the file, reading every row and then a sample, and
/// `--compare` of the file with itself: errors, or specs that
/// [`strata_gen::Dataset::parse`] accepts (infer parses each spec before it
/// returns it); nothing written beside the input.
fn infer(dir: &Path, format: Format, bytes: &[u8]) -> Checked {
    let name = format!("in.{}", format.extension());
    let input = [write_input(dir, &name, bytes)?
        .to_string_lossy()
        .into_owned()];
    let mut first = Ok(());
    for sample in [
        strata_infer::Sample::All,
        strata_infer::Sample::Rows(INFER_SAMPLE_ROWS),
    ] {
        let opts = strata_infer::Options {
            sample,
            ..Default::default()
        };
        match strata_infer::infer(&input, &opts) {
            Err(e) => first = first.and(Err(text(e))),
            Ok(inferred) => {
                if let Err(e) = strata_gen::Dataset::parse(&inferred.spec, "inferred.toml") {
                    return Err(Broken(format!(
                        "infer ({sample:?}) returned a spec that does not parse: {e}\n--- spec ---\n{}",
                        inferred.spec
                    )));
                }
            }
        }
    }
    let opts = strata_infer::Options {
        sample: strata_infer::Sample::All,
        ..Default::default()
    };
    if let Err(e) = strata_infer::compare(&input, &input, &opts) {
        first = first.and(Err(text(e)));
    }
    only(dir, &[&name], "infer")?;
    Ok(first)
}

/// A spec file's text (one table, or a dataset of several): parsed, and
/// when valid, each table's generator built and a few rows generated.
/// Returns the parser's or generator's error.
pub fn spec_text(data: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(data).map_err(|e| format!("not UTF-8: {e}"))?;
    let dataset = strata_gen::Dataset::parse(text, "fuzz.toml").map_err(text_of)?;
    for i in 0..dataset.tables.len() {
        let g = dataset.generator(i, 1, 1.0).map_err(text_of)?;
        g.generate(0, 3, &mut Default::default()).map_err(text_of)?;
    }
    Ok(())
}

fn text_of(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The row layouts [`rows`] decodes into, picked by the first byte.
fn row_schemas() -> Vec<Vec<DataType>> {
    use DataType::*;
    vec![
        vec![Int64],
        vec![Utf8, Int32],
        vec![Dictionary(Box::new(Int32), Box::new(Utf8)), Float64],
        vec![
            List(Arc::new(Field::new("item", Int32, true))),
            Binary,
            Boolean,
        ],
        vec![Struct(
            vec![Field::new("a", Utf8, true), Field::new("b", Int16, true)].into(),
        )],
        vec![LargeUtf8, UInt64, Date32],
    ]
}

/// Arbitrary bytes as stored rows of an encoder (one of six layouts,
/// picked by the first byte; the second splits the rest into rows):
/// decoded, and when they decode, encoded again to the same bytes.
pub fn rows(data: &[u8]) -> Result<(), String> {
    let (Some(&pick), Some(&width)) = (data.first(), data.get(1)) else {
        return Err("too short".into());
    };
    let schemas = row_schemas();
    let types = &schemas[pick as usize % schemas.len()];
    let descending = pick & 0x80 != 0;
    let fields = types
        .iter()
        .map(|t| {
            strata_row::SortField::new(t.clone()).with_options(strata_row::SortOptions {
                descending,
                nulls_first: pick & 0x40 != 0,
            })
        })
        .collect();
    let enc = strata_row::RowEncoder::new(fields).map_err(text_of)?;
    let parser = enc.parser();
    let width = usize::from(width.max(1));
    let rows: Vec<_> = data[2..].chunks(width).map(|c| parser.parse(c)).collect();
    let cols: Vec<ArrayRef> = enc.decode_rows(rows.iter().copied()).map_err(text_of)?;
    let again = enc.encode(&cols).map_err(text_of)?;
    if again.num_rows() != rows.len() {
        panic!("{} rows decoded from {}", again.num_rows(), rows.len());
    }
    Ok(())
}

/// A compaction manifest's text: parsed, its key bounds decoded and a
/// compaction planned over its files.
pub fn manifest(data: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(data).map_err(|e| format!("not UTF-8: {e}"))?;
    let m = Manifest::parse(text, "MANIFEST").map_err(text_of)?;
    let rowsets = strata_compact::dataset::rowsets(&m).map_err(text_of)?;
    let opts = strata_compact::planner::PlannerOptions::default();
    strata_compact::planner::plan(&rowsets, &opts);
    Ok(())
}

/// A `--filter` expression: parsed, checked against the fixture's schema,
/// applied to its rows in memory, and pushed down into a scan of its
/// Parquet file (row groups skipped by their statistics) and of its IPC
/// file. Returns the parser's or checker's error.
///
/// # Panics
/// When a scan keeps other rows than the in-memory filter: that is a
/// finding.
pub fn filter(harness: &Harness, fixture: &Fixture, data: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(data).map_err(|e| format!("not UTF-8: {e}"))?;
    let f = Filter::parse(text).map_err(text_of)?;
    f.check(&fixture.batch.schema()).map_err(text_of)?;
    let expected = f.apply(&fixture.batch).map_err(text_of)?.num_rows();
    for format in [Format::Parquet, Format::Ipc] {
        let (file, _) = fixture.file(format);
        let source = Source::from_bytes(Bytes::copy_from_slice(file));
        let req = ScanRequest {
            filter: Some(f.clone()),
            ..Default::default()
        };
        let got: usize = harness
            .rt
            .block_on(async {
                let file = ScanFile::open(source).await?;
                let batches: Vec<RecordBatch> = file.stream(&req)?.try_collect().await?;
                Ok::<_, strata_scan::Error>(batches.iter().map(RecordBatch::num_rows).sum())
            })
            .map_err(text_of)?;
        assert_eq!(
            got, expected,
            "`{text}` kept {got} rows of the {format:?} file, {expected} in memory"
        );
    }
    Ok(())
}
