//! Projected reads: 2 of the 50 UInt64 columns of the `wide-u64` preset,
//! and all of them, from one Arrow IPC file and one Parquet file on local
//! disk, by strata's scanner against arrow-rs's IPC `FileReader` (with a
//! projection), arrow-rs's zero-copy `FileDecoder` over a memory map of
//! the file (what arrow-rs offers a reader who wants no copy), parquet-rs's
//! Arrow reader (with a `ProjectionMask`) and pyarrow (memory-mapped) when
//! it is installed. strata and pyarrow use every core (strata decodes small
//! projected Parquet row groups in parallel; pyarrow's readers use its
//! thread pool); the arrow-rs readers decode on one thread.
//!
//! strata maps local files, so like the memory-mapped peers its batches
//! are views of the page cache: the consumer here only counts rows, and
//! pages are faulted in when a consumer first touches them.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_ipc::reader::FileReader;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use strata_parquet::Compression;
use strata_parquet::Format;
use strata_pipeline::generate::{GenerateConfig, ParquetEncoder, Part, generate};
use strata_scan::{ScanRequest, Scanner};
use strata_store::location::StoreConfig;

use super::common::{expect_count, peer_body, peer_timing, python_peer};
use crate::{Case, Config, Error, Size, Unit, case_err};

const PEER: &str = include_str!("../../python/scan_peer.py");

fn write(dir: &Path, format: Format, rows: u64) -> Result<PathBuf, Error> {
    let cfg = GenerateConfig {
        target_records: rows,
        record_batch_size: 8192,
        num_writers: 1,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        row_group_rows: 1 << 17,
        format,
        compression: Compression::None,
        output_dir: dir.to_path_buf(),
        output_filename: "wide".into(),
        overwrite: true,
        seed: 7,
        encoder: ParquetEncoder::Auto,
        page_checksums: true,
        part: Part::default(),
        layout: None,
        field_ids: None,
        row_offset: 0,
    };
    let g = strata_gen::preset("wide-u64", 7);
    let summary = generate(&g, &cfg, &|_| {}).map_err(case_err)?;
    Ok(summary.files[0].path.clone())
}

/// The cases.
pub fn cases(cfg: &Config) -> Result<Vec<Case>, Error> {
    let rows: u64 = match cfg.size {
        Size::Tiny => 50_000,
        Size::Full => 500_000,
    };
    let dir = Arc::new(tempfile::tempdir().map_err(case_err)?);
    let ipc = write(dir.path(), Format::Ipc, rows)?;
    let pq = write(dir.path(), Format::Parquet, rows)?;
    let some: Vec<String> = vec!["c07".into(), "c33".into()];
    let mut request = peer_timing(cfg);
    request["ipc"] = ipc.display().to_string().into();
    request["parquet"] = pq.display().to_string().into();
    request["columns"] = serde_json::json!(some);
    request["rows"] = rows.into();
    let names: Vec<String> = ["ipc", "parquet"]
        .iter()
        .flat_map(|f| {
            ["2 of 50 columns", "all 50 columns"].map(|w| format!("{f} {rows} rows, {w}"))
        })
        .collect();
    let peer = python_peer(cfg, PEER, &request, "pyarrow", &names);

    // One timed case: `read` of `cols` from `path`, checked for all rows.
    let case = |name: &str, subject: &str, read: Reader, path: &PathBuf, cols: &Columns| {
        let (path, cols, d) = (path.clone(), cols.clone(), dir.clone());
        Case::new(name, subject, Unit::Rows, rows as f64, move || {
            let _keep = &d;
            let n = read(&path, cols.as_deref())?;
            expect_count(n as usize, rows as usize)
        })
    };
    let projections: [(&str, Columns); 2] = [
        ("2 of 50 columns", Some(some.clone())),
        ("all 50 columns", None),
    ];
    let mut out = vec![];
    for (format, path) in [("ipc", &ipc), ("parquet", &pq)] {
        for (what, cols) in &projections {
            let name = format!("{format} {rows} rows, {what}");
            out.push(case(&name, "strata", strata_scan, path, cols));
            if format == "ipc" {
                out.push(case(
                    &name,
                    "arrow-rs ipc mmap",
                    arrow_ipc_mapped,
                    path,
                    cols,
                ));
                out.push(case(&name, "arrow-rs ipc", arrow_ipc_scan, path, cols));
            } else {
                out.push(case(&name, "parquet-rs", parquet_scan, path, cols));
            }
            out.push(Case {
                name: name.clone(),
                subject: "pyarrow".into(),
                unit: Unit::Rows,
                work: rows as f64,
                repeats: 1,
                body: peer_body(&peer, &name),
            });
        }
    }
    // The same reads through a store that charges each request 20 ms plus
    // its bytes at 100 MB/s, like one connection to a remote store: only
    // strata (the arrow-rs readers have no object-store path; over a
    // ranged-GET adapter they take seconds a case). These track the
    // object-store path's coalescing and parallel fetches over time.
    for (format, path) in [("ipc", &ipc), ("parquet", &pq)] {
        for (what, cols) in &projections {
            let name = format!("{format} {rows} rows, {what}, latency store");
            out.push(case(&name, "strata", strata_scan_remote, path, cols));
        }
    }
    Ok(out)
}

/// The columns a case reads (`None`: all).
type Columns = Option<Vec<String>>;

/// A reader under test: rows read from a file, for some columns.
type Reader = fn(&Path, Option<&[String]>) -> Result<u64, Error>;

/// The time to first byte and bandwidth of the latency store.
const LATENCY: (std::time::Duration, f64) = (std::time::Duration::from_millis(20), 100e6);

/// A scan of `path` through the latency store, with the fetch settings a
/// remote store of that latency gets.
fn strata_scan_remote(path: &Path, columns: Option<&[String]>) -> Result<u64, Error> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(case_err)?;
    let inner: Arc<dyn object_store::ObjectStore> =
        Arc::new(object_store::local::LocalFileSystem::new());
    let store = Arc::new(strata_testkit::stores::SimulatedStore::new(
        inner, LATENCY.0, LATENCY.1,
    ));
    let object = object_store::path::Path::from_absolute_path(path).map_err(case_err)?;
    let opts = strata_store::source::FetchOptions::remote(LATENCY.0, LATENCY.1);
    let source = rt
        .block_on(strata_store::source::Source::open(
            store,
            object,
            path.display().to_string(),
            opts,
        ))
        .map_err(case_err)?;
    drop(rt);
    count_rows(Scanner::open(source).map_err(case_err)?, columns)
}

fn strata_scan(path: &Path, columns: Option<&[String]>) -> Result<u64, Error> {
    let s = Scanner::open_location(&path.display().to_string(), &StoreConfig::default())
        .map_err(case_err)?;
    count_rows(s, columns)
}

/// Scans `columns` with `s`, counting the rows.
fn count_rows(mut s: Scanner, columns: Option<&[String]>) -> Result<u64, Error> {
    let mut n = 0;
    let req = ScanRequest {
        columns: columns.map(<[String]>::to_vec),
        ..Default::default()
    };
    s.scan(&req, |b| {
        n += b.num_rows() as u64;
        Ok(())
    })
    .map_err(case_err)?;
    Ok(n)
}

fn indices(schema: &arrow_schema::Schema, cols: &[String]) -> Result<Vec<usize>, Error> {
    cols.iter()
        .map(|c| schema.index_of(c).map_err(case_err))
        .collect()
}

fn arrow_ipc_scan(path: &Path, cols: Option<&[String]>) -> Result<u64, Error> {
    let f = File::open(path).map_err(case_err)?;
    let probe = FileReader::try_new(f, None).map_err(case_err)?;
    let projection = cols.map(|c| indices(&probe.schema(), c)).transpose()?;
    let f = File::open(path).map_err(case_err)?;
    let reader = FileReader::try_new(f, projection).map_err(case_err)?;
    let mut n = 0;
    for b in reader {
        n += b.map_err(case_err)?.num_rows() as u64;
    }
    Ok(n)
}

/// arrow-rs's zero-copy IPC path: the file mapped into memory, the footer
/// read with `root_as_footer`, and every block decoded by `FileDecoder`
/// (with the projection) straight from the map.
fn arrow_ipc_mapped(path: &Path, cols: Option<&[String]>) -> Result<u64, Error> {
    let f = File::open(path).map_err(case_err)?;
    // SAFETY: the benchmark's own temporary file, which nothing changes
    // while it is mapped.
    let map = unsafe { memmap2::Mmap::map(&f) }.map_err(case_err)?;
    let data = arrow_buffer::Buffer::from(bytes::Bytes::from_owner(map));
    let len = data.len();
    let tail: [u8; 10] = data
        .get(len.saturating_sub(10)..)
        .and_then(|t| t.try_into().ok())
        .ok_or_else(|| case_err("the IPC file is too short"))?;
    let footer_len = arrow_ipc::reader::read_footer_length(tail).map_err(case_err)?;
    let footer_start = len
        .checked_sub(10 + footer_len)
        .ok_or_else(|| case_err("the IPC footer is longer than the file"))?;
    let footer = arrow_ipc::root_as_footer(&data[footer_start..len - 10]).map_err(case_err)?;
    let schema = arrow_ipc::convert::try_fb_to_schema(
        footer
            .schema()
            .ok_or_else(|| case_err("the IPC footer has no schema"))?,
    )
    .map_err(case_err)?;
    let projection = cols.map(|c| indices(&schema, c)).transpose()?;
    let mut decoder = arrow_ipc::reader::FileDecoder::new(Arc::new(schema), footer.version());
    if let Some(p) = projection {
        decoder = decoder.with_projection(p);
    }
    let slice = |b: &arrow_ipc::Block| {
        let start = usize::try_from(b.offset()).unwrap_or(usize::MAX);
        let n = usize::try_from(i64::from(b.metaDataLength()) + b.bodyLength()).unwrap_or(0);
        data.slice_with_length(start, n)
    };
    for b in footer.dictionaries().iter().flatten() {
        decoder.read_dictionary(b, &slice(b)).map_err(case_err)?;
    }
    let mut n = 0;
    for b in footer.recordBatches().iter().flatten() {
        if let Some(batch) = decoder.read_record_batch(b, &slice(b)).map_err(case_err)? {
            n += batch.num_rows() as u64;
        }
    }
    Ok(n)
}

fn parquet_scan(path: &Path, cols: Option<&[String]>) -> Result<u64, Error> {
    let f = File::open(path).map_err(case_err)?;
    let mut b = ParquetRecordBatchReaderBuilder::try_new(f).map_err(case_err)?;
    if let Some(cols) = cols {
        let idx = indices(b.schema(), cols)?;
        let mask = ProjectionMask::roots(b.parquet_schema(), idx);
        b = b.with_projection(mask);
    }
    let mut n = 0;
    for batch in b.with_batch_size(8192).build().map_err(case_err)? {
        n += batch.map_err(case_err)?.num_rows() as u64;
    }
    Ok(n)
}
