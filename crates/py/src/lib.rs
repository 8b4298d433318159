//! The `strata` Python package's native module, `strata._native`, which
//! `python/strata` re-exports: one part of a strata dataset, generated in
//! Rust, as a `pyarrow.Table` or as Parquet / Arrow IPC files, and the
//! command line (`main(argv)`, behind the package's `strata` command and
//! `python -m strata`: the [`strata_cli`] code the binary runs).
//!
//! `strata.generate(spec, part=I, parts=N, rows=T, seed=S, ...)` produces
//! global rows `[T·(I−1)/N, T·I/N)` of the dataset that `spec` (a preset
//! name, a `.toml` file or TOML text) describes. Without `output_dir` it
//! returns them as a table; with one it writes them as files through
//! `strata_pipeline::flow::Flow`, the flow `strata generate` runs, locally
//! or to `s3://bucket/prefix`, and returns a summary dict. `strata.presets()` and
//! `strata.spec_text(name)` list and show the built-in specs; for a spec
//! of several tables, `strata.tables(spec)` lists them and
//! `strata.generate(spec, table=NAME, scale=S, part=I, parts=N)` makes one
//! table's part.
//!
//! # Data flow
//!
//! spec argument -> a spec source (text, file or preset) ->
//! `strata_gen::Dataset` -> the table's [`GenerateConfig`] ->
//! [`Flow`] (the table's `SpecGenerator` for the seed and its settings,
//! checked, which give the part's row range) -> with the GIL released,
//! either [`Flow::run`] (files; the summary dict is the table's
//! [`Report`]) or batches of `batch_size` rows generated on a rayon pool
//! of `threads` threads and collected in row order -> an Arrow C stream
//! (`arrow_pyarrow`) -> `pyarrow.Table`, without copying the column
//! buffers.
//!
//! # The guarantee
//!
//! A row's content depends only on `(spec, seed, row index)`, so part `I`
//! of `N` is the same table on any machine and for any `threads`,
//! `batch_size` or `num_writers`, and parts `1..=N` concatenated in order
//! are exactly the single-process (`parts=1`) table. This is what lets a
//! scheduler such as Dask run the parts anywhere, in any order.
//!
//! # Example
//!
//! ```python
//! import pyarrow as pa
//! import strata
//!
//! whole = strata.generate("events", rows=40_000)
//! parts = [strata.generate("events", part=i, parts=4, rows=40_000) for i in range(1, 5)]
//! assert pa.concat_tables(parts).equals(whole)
//!
//! summary = strata.generate("contacts", part=2, parts=4, rows=1_000_000,
//!                           output_dir="out", compression="zstd")
//! print([(f["path"], f["first_row"], f["rows"]) for f in summary["files"]])
//! ```

use std::{num::NonZeroUsize, ops::Range, path::PathBuf};

use arrow_array::{RecordBatch, RecordBatchIterator, RecordBatchReader};
use arrow_pyarrow::IntoPyArrow;
use pyo3::{
    exceptions::{PyFileExistsError, PyFileNotFoundError, PyOSError, PyRuntimeError, PyValueError},
    prelude::*,
};
use rayon::prelude::*;
use strata_gen::{BatchGenerator, DATASET_PRESETS, Dataset, PRESETS, SpecGenerator};
use strata_parquet::Compression;
use strata_parquet::Format;
use strata_pipeline::{
    flow::{Flow, Report, SpecFileError, read_spec_file},
    generate::{DEFAULT_ROW_GROUP_ROWS, GenerateConfig, ParquetEncoder, Part, RunOptions},
    layout::LayoutFlags,
};

/// Where a spec comes from, decided from the `spec` argument alone.
#[derive(Debug, Clone, PartialEq, Eq)]
enum SpecSource {
    /// TOML text (the argument has a line break).
    Text(String),
    /// A spec file (the argument ends with `.toml`, or is a path object).
    File(PathBuf),
    /// A built-in preset (anything else).
    Preset(String),
}

impl SpecSource {
    /// The rule: a line break means TOML text, a `.toml` ending means a
    /// file, anything else is a preset name.
    fn of_str(spec: &str) -> SpecSource {
        if spec.contains('\n') {
            SpecSource::Text(spec.to_string())
        } else if spec.ends_with(".toml") {
            SpecSource::File(PathBuf::from(spec))
        } else {
            SpecSource::Preset(spec.to_string())
        }
    }

    /// Reads and parses the spec. Spec errors (which name the file or
    /// preset, the line and the field) are `ValueError`s; a spec file that
    /// cannot be read is an `OSError`.
    fn load(&self) -> PyResult<Dataset> {
        let parsed = match self {
            SpecSource::Text(text) => Dataset::parse(text, "<string>"),
            SpecSource::Preset(name) => Dataset::preset(name),
            SpecSource::File(path) => match read_spec_file(path) {
                Ok(d) => Ok(d),
                Err(SpecFileError::Spec(e)) => Err(e),
                Err(e) => {
                    return Err(match &e {
                        SpecFileError::Read { error, .. }
                            if error.kind() == std::io::ErrorKind::NotFound =>
                        {
                            PyFileNotFoundError::new_err(e.to_string())
                        }
                        _ => PyOSError::new_err(e.to_string()),
                    });
                }
            },
        };
        parsed.map_err(|e| PyValueError::new_err(e.to_string()))
    }
}

/// The `spec` argument: a `str` (see [`SpecSource::of_str`]) or an
/// `os.PathLike` naming a spec file.
#[derive(FromPyObject)]
enum SpecArg {
    Str(String),
    Path(PathBuf),
}

impl SpecArg {
    fn source(self) -> SpecSource {
        match self {
            SpecArg::Str(s) => SpecSource::of_str(&s),
            SpecArg::Path(p) => SpecSource::File(p),
        }
    }
}

/// the pipeline's messages name the command-line flags; these are the
/// keyword arguments that set the same things here.
const KEYWORDS: &[(&str, &str)] = &[
    ("--target-records", "rows"),
    ("--scale", "scale"),
    ("--record-batch-size", "batch_size"),
    ("--num-writers", "num_writers"),
    // Before `--part`, which they start with.
    ("--partition-by", "partition_by"),
    ("--partition-columns", "partition_columns"),
    ("--parts", "parts"),
    ("--part", "part"),
    ("--threads", "threads"),
    ("--row-group-rows", "row_group_rows"),
    ("--output-filename", "the output file name stem"),
    ("--compression", "compression"),
    ("--format", "format"),
    ("--sort-by", "sort_by"),
    ("--target-file-size", "target_file_size"),
    ("--row-group-size", "row_group_size"),
    ("--memory-limit", "memory_limit"),
];

/// A pipeline message in this module's terms (`--target-records` ->
/// `rows`, ...). Longer flags come first in [`KEYWORDS`], so `--parts` is
/// never read as `--part` followed by `s`.
fn keywords(message: &str) -> String {
    KEYWORDS
        .iter()
        .fold(message.to_string(), |m, (flag, kw)| m.replace(flag, kw))
}

/// The Python exception for an error of the generate pipeline.
fn io_error(e: impl Into<strata_pipeline::Error>) -> PyErr {
    use strata_pipeline::Error;
    let e = e.into();
    let msg = keywords(&e.to_string());
    match e {
        Error::InvalidConfig(_) | Error::Write(strata_parquet::Error::InvalidConfig(_)) => {
            PyValueError::new_err(msg)
        }
        Error::Store(strata_store::Error::OutputExists { .. }) => PyFileExistsError::new_err(msg),
        Error::Store(strata_store::Error::Io { .. }) => PyOSError::new_err(msg),
        _ => PyRuntimeError::new_err(msg),
    }
}

/// A count argument that must be at least 1, checked here so that the
/// message names the keyword (and a negative value is a `ValueError`, not
/// an `OverflowError`).
fn count(name: &str, value: i64) -> PyResult<u64> {
    match u64::try_from(value) {
        Ok(v) if v > 0 => Ok(v),
        _ => Err(PyValueError::new_err(format!(
            "{name} must be at least 1, got {value}"
        ))),
    }
}

/// Like [`count`], for arguments that are `usize` in the library.
fn count_usize(name: &str, value: i64) -> PyResult<usize> {
    usize::try_from(count(name, value)?)
        .map_err(|_| PyValueError::new_err(format!("{name} is too large: {value}")))
}

/// Part `part` of `parts`; the range check itself is
/// `GenerateConfig::validate`'s.
fn part_of(part: i64, parts: i64) -> PyResult<Part> {
    let n = count("parts", parts)?;
    let index = u64::try_from(part).map_err(|_| {
        PyValueError::new_err(format!(
            "part must be between 1 and parts ({n}), got {part}"
        ))
    })?;
    Ok(Part { index, count: n })
}

/// The part's rows as batches of `batch_size` rows (the last may be
/// shorter), generated on `threads` threads and returned in row order.
fn table_batches(
    generator: &SpecGenerator,
    rows: Range<u64>,
    batch_size: usize,
    threads: usize,
) -> Result<Vec<RecordBatch>, String> {
    let total = rows.end - rows.start;
    let step = batch_size as u64;
    let batches = usize::try_from(total.div_ceil(step))
        .map_err(|_| format!("{total} rows are too many for one table"))?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("strata-{i}"))
        .build()
        .map_err(|e| format!("cannot start {threads} threads: {e}"))?;
    pool.install(|| {
        // An indexed parallel iterator collects in index order whichever
        // thread produced each batch.
        (0..batches)
            .into_par_iter()
            .map_init(Default::default, |scratch, i| {
                let first = rows.start + i as u64 * step;
                let len = step.min(rows.end - first) as usize;
                generator.generate(first, len, scratch)
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())
    })
}

/// The report of a file run as a dict: `strata_pipeline`'s [`Report`]
/// through JSON, so its keys are the ones `strata generate
/// --summary-json` writes.
fn report_dict<'py>(py: Python<'py>, report: &Report) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(report).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    py.import("json")?.call_method1("loads", (text,))
}

/// Generates part `part` of `parts` of `rows` rows of a dataset.
///
/// `spec` is a preset name (see `presets()`), a path to a `.toml` spec
/// file (a `str` ending in `.toml`, or an `os.PathLike`), or TOML text (a
/// `str` with a line break). Part `part` (from 1) covers global rows
/// `[rows*(part-1)//parts, rows*part//parts)`; a row's content depends only
/// on the spec, `seed` and its index, so the parts concatenated in order are
/// exactly the `parts=1` result, whatever `threads` or `batch_size`.
///
/// A spec of several `[[tables]]` (a dataset such as the `star` and
/// `orders` presets; `tables(spec)` lists them) generates one table per
/// call: `table=NAME` picks it, `scale` (default 1) sets the row counts,
/// and `rows` is refused. Its part `part` is the rows of part `part` of
/// its root table (for a child table, their children), and its files go
/// to `output_dir/NAME/`. References resolve in any part on any worker.
///
/// Without `output_dir`, returns the part's rows as a `pyarrow.Table`, in
/// row order, generated in batches of `batch_size` rows on `threads`
/// threads (default: all cores). `format`, `compression`, `num_writers`
/// and `overwrite` only apply to files.
///
/// With `output_dir` (a directory, created if missing, or
/// `s3://bucket/prefix` with settings from the `AWS_*` variables), writes
/// `num_writers` files `NAME_partIofN_J.parquet` (`NAME_J` when
/// `parts=1`; `.arrow` for `format="ipc"`) and returns a dict with the
/// keys of `strata generate --summary-json`: `spec`, `seed`, `part`,
/// `parts`, `format`, `first_row`, `config`, `records`, `bytes`,
/// `elapsed_s`, `cpu_s`, `threads`, `records_per_s`,
/// `records_per_s_per_core`, `mb_per_s`, `columns` and `files`, a list of
/// dicts with `path`, `first_row`, `rows`, `bytes` and `groups` in row
/// order. Existing files are
/// an error (`FileExistsError`) unless `overwrite=True`.
///
/// `partition_by`, `sort_by`, `target_file_size` and `row_group_size`
/// lay the files out as `strata generate`'s flags of the same names do
/// (over the spec's `layout`): Hive-style partition directories (a column,
/// or `year(c)`, `month(c)`, `day(c)`, `hour(c)`, `bucket(N, c)`,
/// `truncate(W, c)`, comma-separated), rows in sort-key order
/// (`"l_shipdate,l_orderkey:desc"`), files of about a size (`"512MiB"` or
/// bytes), row groups of rows or bytes; `memory_limit` bounds the rows
/// held for it (past it they are spilled and merged). They apply to
/// files: a layout without `output_dir` is refused.
///
/// `format="iceberg"` (with `output_dir`, one part) writes the table as
/// an Iceberg v2 table at `output_dir/NAME` (data files under `data/`,
/// laid out as above), or appends a snapshot to the one there, as
/// `strata generate --format iceberg` does; `catalog` (a SQLite file)
/// also registers it in Iceberg's SQL catalog (catalog name `default`)
/// under `namespace`, which must exist unless `create_namespace=True`.
/// The dict returned has an `iceberg` key: `location`, `metadata`,
/// `version`, `snapshot_id`, `rows` (added) and `total_rows`.
///
/// The GIL is released while rows are generated and written.
///
/// Raises `ValueError` for a bad spec (the message names the file, line and
/// field) or a bad setting (such as `part` outside `1..=parts`),
/// `OSError` when the spec file or the output cannot be read or written.
#[pyfunction]
#[pyo3(
    signature = (
        spec = SpecArg::Str("contacts".into()),
        *,
        table = None,
        scale = None,
        part = 1,
        parts = 1,
        rows = None,
        seed = 42,
        output_dir = None,
        format = "parquet",
        compression = "none",
        num_writers = 1,
        batch_size = strata_pipeline::generate::DEFAULT_BATCH_SIZE as i64,
        threads = None,
        overwrite = false,
        partition_by = None,
        sort_by = None,
        target_file_size = None,
        row_group_size = None,
        memory_limit = None,
        catalog = None,
        namespace = "default",
        create_namespace = false,
    ),
    text_signature = "(spec='contacts', *, table=None, scale=None, part=1, parts=1, rows=None, seed=42, output_dir=None, format='parquet', compression='none', num_writers=1, batch_size=8192, threads=None, overwrite=False, partition_by=None, sort_by=None, target_file_size=None, row_group_size=None, memory_limit=None, catalog=None, namespace='default', create_namespace=False)"
)]
#[allow(clippy::too_many_arguments)]
fn generate<'py>(
    py: Python<'py>,
    spec: SpecArg,
    table: Option<String>,
    scale: Option<f64>,
    part: i64,
    parts: i64,
    rows: Option<i64>,
    seed: u64,
    output_dir: Option<PathBuf>,
    format: &str,
    compression: &str,
    num_writers: i64,
    batch_size: i64,
    threads: Option<i64>,
    overwrite: bool,
    partition_by: Option<String>,
    sort_by: Option<String>,
    target_file_size: Option<Bound<'py, PyAny>>,
    row_group_size: Option<Bound<'py, PyAny>>,
    memory_limit: Option<Bound<'py, PyAny>>,
    catalog: Option<PathBuf>,
    namespace: &str,
    create_namespace: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let dataset = spec.source().load()?;
    let iceberg = format.eq_ignore_ascii_case("iceberg");
    if iceberg && output_dir.is_none() {
        return Err(PyValueError::new_err(
            "format=\"iceberg\" writes a table: pass output_dir",
        ));
    }
    if catalog.is_some() && !iceberg {
        return Err(PyValueError::new_err(
            "catalog registers Iceberg tables: pass format=\"iceberg\"",
        ));
    }
    let table_index = match (&table, dataset.multi_table) {
        (None, false) => 0,
        (Some(t), _) => dataset.table(t).ok_or_else(|| {
            PyValueError::new_err(format!(
                "dataset `{}` has no table `{t}`; its tables are {}",
                dataset.name,
                table_names(&dataset).join(", ")
            ))
        })?,
        (None, true) => {
            return Err(PyValueError::new_err(format!(
                "dataset `{}` has several tables ({}): pass table=NAME",
                dataset.name,
                table_names(&dataset).join(", ")
            )));
        }
    };
    if dataset.multi_table && rows.is_some() {
        return Err(PyValueError::new_err(format!(
            "rows: the tables of dataset `{}` set their own rows; scale them with scale=",
            dataset.name
        )));
    }
    if !dataset.multi_table && scale.is_some() {
        return Err(PyValueError::new_err(
            "scale applies to a spec of several [[tables]]; this one has one table (use rows=)",
        ));
    }
    let threads = match threads {
        Some(t) => count_usize("threads", t)?,
        None => std::thread::available_parallelism().map_or(1, NonZeroUsize::get),
    };
    let to_file = output_dir.is_some();
    let cfg = GenerateConfig {
        target_records: count("rows", rows.unwrap_or(10_000_000))?,
        record_batch_size: count_usize("batch_size", batch_size)?,
        // A table has no files: only check the writer count that is used.
        num_writers: if to_file {
            count_usize("num_writers", num_writers)?
        } else {
            1
        },
        threads,
        row_group_rows: DEFAULT_ROW_GROUP_ROWS,
        format: if iceberg {
            Format::Parquet
        } else {
            format.parse::<Format>().map_err(io_error)?
        },
        compression: compression.parse::<Compression>().map_err(io_error)?,
        output_dir: output_dir.unwrap_or_default(),
        output_filename: dataset.tables[table_index].spec.name.clone(),
        overwrite,
        seed,
        encoder: ParquetEncoder::Auto,
        page_checksums: true,
        part: part_of(part, parts)?,
        layout: None,
        field_ids: None,
        row_offset: 0,
    };
    // The flow the CLI runs, for this one table: a table of a dataset
    // gets its rows, files and batches from the dataset at `scale` (into
    // `output_dir/TABLE/`); a plain spec keeps its single-table layout.
    let mut flow =
        Flow::new(dataset, &[table_index], &cfg, scale.unwrap_or(1.0)).map_err(io_error)?;
    let text = |v: Option<Bound<'py, PyAny>>| -> PyResult<Option<String>> {
        v.map(|v| v.str().map(|s| s.to_string())).transpose()
    };
    let mut flags = LayoutFlags {
        partition_by: partition_by.into_iter().collect(),
        sort_by: sort_by.into_iter().collect(),
        target_file_size: text(target_file_size)?.into_iter().collect(),
        row_group_size: text(row_group_size)?.into_iter().collect(),
        ..LayoutFlags::default()
    };
    if let Some(m) = text(memory_limit)? {
        flags.memory_limit = strata_gen::parse_byte_size(&m)
            .map_err(|e| PyValueError::new_err(format!("memory_limit: {e}")))?;
    }
    let asked = !(flags.partition_by.is_empty()
        && flags.sort_by.is_empty()
        && flags.target_file_size.is_empty()
        && flags.row_group_size.is_empty());
    if asked && !to_file {
        return Err(PyValueError::new_err(
            "partition_by, sort_by, target_file_size and row_group_size lay out files: pass output_dir",
        ));
    }
    flow.set_layouts(&flags).map_err(io_error)?;
    let (generator, cfg) = flow
        .jobs()
        .first()
        .ok_or_else(|| PyRuntimeError::new_err("no table"))?;

    if iceberg {
        let catalog = catalog.map(|path| strata_pipeline::table::Catalog {
            path,
            name: "default".into(),
            namespace: namespace.to_string(),
            create_namespace,
        });
        let tables = flow
            .as_iceberg(catalog, &Default::default())
            .map_err(io_error)?;
        let the_part = part_of(part, parts)?;
        let (summaries, committed, staged) = py
            .detach(|| {
                let summaries = flow.run(RunOptions::default(), &|_| {})?;
                if the_part.count > 1 {
                    // A part stages its files; commit_table commits them all.
                    let staged = flow.stage_iceberg(&tables, &summaries, the_part)?;
                    return Ok::<_, strata_pipeline::Error>((summaries, Vec::new(), staged));
                }
                let committed = flow.commit_iceberg(&tables, &summaries)?;
                Ok((summaries, committed, Vec::new()))
            })
            .map_err(io_error)?;
        let report = flow
            .reports(&summaries)
            .pop()
            .ok_or_else(|| PyRuntimeError::new_err("no report"))?;
        let dict = report_dict(py, &report)?;
        if let (Some(f), Some(dir)) = (staged.first(), tables.dirs.first()) {
            let table = pyo3::types::PyDict::new(py);
            table.set_item("location", dir.root())?;
            table.set_item("staged", f)?;
            dict.set_item("iceberg", table)?;
        }
        if let (Some(c), Some(dir)) = (committed.first(), tables.dirs.first()) {
            let table = pyo3::types::PyDict::new(py);
            table.set_item("location", dir.root())?;
            table.set_item("metadata", &c.metadata)?;
            table.set_item("version", c.version)?;
            table.set_item("snapshot_id", c.snapshot_id)?;
            table.set_item("rows", c.rows)?;
            table.set_item("total_rows", c.total_rows)?;
            dict.set_item("iceberg", table)?;
        }
        return Ok(dict);
    }
    if to_file {
        let summaries = py
            .detach(|| flow.run(RunOptions::default(), &|_| {}))
            .map_err(io_error)?;
        let report = flow.reports(&summaries).pop();
        return report_dict(
            py,
            &report.ok_or_else(|| PyRuntimeError::new_err("no report"))?,
        );
    }

    let batches = py
        .detach(|| table_batches(generator, cfg.rows(), cfg.record_batch_size, threads))
        .map_err(PyRuntimeError::new_err)?;
    let reader: Box<dyn RecordBatchReader + Send> = Box::new(RecordBatchIterator::new(
        batches.into_iter().map(Ok),
        generator.schema(),
    ));
    // One C stream for all batches; `read_all` gathers them into a table
    // that shares their buffers.
    reader.into_pyarrow(py)?.call_method0("read_all")
}

/// Commits every part of the Iceberg table at `location` staged by
/// `generate(..., format="iceberg", part=i, parts=N)` calls as one
/// snapshot, as `strata table commit` does; `catalog` (a SQLite file)
/// also registers it (catalog name `default`) under `namespace`, which
/// must exist unless `create_namespace=True`. Returns a dict with
/// `location`, `format` (`iceberg`), `metadata`, `version`,
/// `snapshot_id`, `rows` (added) and `total_rows`. The parts of a Delta
/// table (staged by `strata generate --format delta --parts`) commit as
/// one version: `format` is then `delta`, with `log_file`, `version` and
/// `rows`.
///
/// Raises `ValueError` for a missing part or parts of different runs,
/// `OSError` when the table cannot be read or written.
#[pyfunction]
#[pyo3(signature = (location, *, catalog = None, namespace = "default", create_namespace = false))]
fn commit_table<'py>(
    py: Python<'py>,
    location: PathBuf,
    catalog: Option<PathBuf>,
    namespace: &str,
    create_namespace: bool,
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    let catalog = catalog.map(|path| strata_pipeline::table::Catalog {
        path,
        name: "default".into(),
        namespace: namespace.to_string(),
        create_namespace,
    });
    let dir =
        strata_pipeline::table::TableDir::open(&location.to_string_lossy(), &Default::default())
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let committed = py
        .detach(|| strata_pipeline::table::commit_staged(&dir, catalog.as_ref()))
        .map_err(io_error)?;
    let out = pyo3::types::PyDict::new(py);
    out.set_item("location", dir.root())?;
    match committed {
        strata_pipeline::table::StagedCommit::Iceberg(c) => {
            out.set_item("format", "iceberg")?;
            out.set_item("metadata", &c.metadata)?;
            out.set_item("version", c.version)?;
            out.set_item("snapshot_id", c.snapshot_id)?;
            out.set_item("rows", c.rows)?;
            out.set_item("total_rows", c.total_rows)?;
        }
        strata_pipeline::table::StagedCommit::Delta(c) => {
            out.set_item("format", "delta")?;
            out.set_item("log_file", &c.log_file)?;
            out.set_item("version", c.version)?;
            out.set_item("rows", c.rows)?;
        }
    }
    Ok(out)
}

/// The names of the built-in specs, for `generate(spec=NAME)`.
#[pyfunction]
fn presets() -> Vec<&'static str> {
    PRESETS
        .iter()
        .chain(DATASET_PRESETS)
        .map(|(name, _)| *name)
        .collect()
}

/// The table names of a dataset, in file order.
fn table_names(d: &Dataset) -> Vec<&str> {
    d.tables.iter().map(|t| t.spec.name.as_str()).collect()
}

/// The tables of `spec` (a preset name, `.toml` file or TOML text), in
/// file order: one, named after the spec, for a single-table spec;
/// `generate(spec, table=NAME)` generates one of them.
#[pyfunction]
fn tables(spec: SpecArg) -> PyResult<Vec<String>> {
    let d = spec.source().load()?;
    Ok(table_names(&d).into_iter().map(str::to_string).collect())
}

/// The TOML text of built-in spec `name`: a starting point for a spec of
/// your own. Raises `ValueError` for an unknown name.
#[pyfunction]
fn spec_text(name: &str) -> PyResult<&'static str> {
    Dataset::preset_text(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "no such preset '{name}'; the presets are {}",
            presets().join(", ")
        ))
    })
}

/// A self-contained HTML page about the dataset in `inputs` (a directory
/// of tables, a table's directory, files, or `s3://` locations; a `str`
/// or a list of them), as `strata report` writes it: each column's
/// distribution, null rates, lengths and key skew, references, files and
/// key ranges; with `spec` (a preset name, `.toml` file or TOML text) the
/// spec's distributions are drawn over the data and the summary flags
/// what is off. Returns the page's HTML (for `IPython.display.HTML`);
/// with `output`, also writes it there, whole or not at all (an existing
/// file is an error unless `overwrite`). Bad inputs raise `ValueError`,
/// files that cannot be read or written `OSError`.
#[pyfunction]
#[pyo3(signature = (inputs, spec=None, output=None, overwrite=false, title=None))]
fn report(
    py: Python<'_>,
    inputs: ReportInputs,
    spec: Option<SpecArg>,
    output: Option<PathBuf>,
    overwrite: bool,
    title: Option<String>,
) -> PyResult<String> {
    let inputs = match inputs {
        ReportInputs::One(i) => vec![i],
        ReportInputs::Many(v) => v,
    };
    let spec = spec.map(|s| s.source().load()).transpose()?;
    py.detach(|| {
        let opts = strata_report::Options {
            spec,
            title,
            ..Default::default()
        };
        let report = strata_report::collect(&inputs, &opts).map_err(report_error)?;
        let page = strata_report::html::render(&report);
        if let Some(path) = &output {
            strata_store::output::write_atomically(path, page.as_bytes(), overwrite, false)
                .map_err(|e| PyOSError::new_err(format!("cannot write {}: {e}", path.display())))?;
        }
        Ok(page)
    })
}

/// `report`'s `inputs`: one location or several.
#[derive(FromPyObject)]
enum ReportInputs {
    One(String),
    Many(Vec<String>),
}

/// A report's error as Python's: unreadable files are `OSError`s, the
/// rest (bad inputs, a spec that does not fit) `ValueError`s.
fn report_error(e: strata_report::Error) -> PyErr {
    match e {
        strata_report::Error::Input(_) => PyValueError::new_err(e.to_string()),
        _ => PyOSError::new_err(e.to_string()),
    }
}

/// Runs the `strata` command line with `argv` (the program name first)
/// and returns its exit status: the package's `strata` command and
/// `python -m strata` (python/strata/__main__.py) call this, so they run
/// the binary's code with its flags, output and statuses.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<std::ffi::OsString>) -> u8 {
    py.detach(|| strata_cli::run(argv))
}

/// The native half of the `strata` package (python/strata re-exports it):
/// deterministic synthetic datasets from strata specs, generated in Rust,
/// part by part, as pyarrow Tables or Parquet / Arrow IPC files, and the
/// command line.
#[pymodule(name = "_native")]
mod module {
    #[pymodule_export]
    use super::{commit_table, generate, main, presets, report, spec_text, tables};

    use pyo3::prelude::*;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))
    }
}

// Tests of the pure-Rust helpers; what goes through the interpreter is
// tested from Python (tests/interop/test_python.py). They never touch a
// Python object, so the test binary needs no libpython at run time.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_argument_rule() {
        assert_eq!(
            SpecSource::of_str("events"),
            SpecSource::Preset("events".into())
        );
        assert_eq!(
            SpecSource::of_str("specs/orders.toml"),
            SpecSource::File("specs/orders.toml".into())
        );
        let text = "name = \"a.toml\"\n";
        assert_eq!(SpecSource::of_str(text), SpecSource::Text(text.into()));
    }

    #[test]
    fn messages_name_keywords() {
        assert_eq!(
            keywords("--parts (4) exceeds --target-records (3): a part would be empty"),
            "parts (4) exceeds rows (3): a part would be empty"
        );
        assert_eq!(
            keywords("--part must be between 1 and --parts (4), got 5"),
            "part must be between 1 and parts (4), got 5"
        );
    }

    #[test]
    fn table_batches_cover_the_rows_in_order() {
        let generator = strata_gen::Spec::preset("events")
            .unwrap()
            .generator(7)
            .unwrap();
        let rows = 1_003..3_010;
        let whole = generator
            .generate(
                rows.start,
                (rows.end - rows.start) as usize,
                &mut Default::default(),
            )
            .unwrap();
        for (batch_size, threads) in [(100, 1), (100, 3), (4_096, 2)] {
            let batches = table_batches(&generator, rows.clone(), batch_size, threads).unwrap();
            assert_eq!(batches.len(), 2_007usize.div_ceil(batch_size));
            let joined = arrow_select::concat::concat_batches(&generator.schema(), &batches);
            assert_eq!(
                joined.unwrap(),
                whole,
                "batch_size {batch_size}, threads {threads}"
            );
        }
    }
}
