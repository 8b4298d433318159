//! Projected reads: 2 of the 50 UInt64 columns of the `wide-u64` preset,
//! and all of them, from one Arrow IPC file and one Parquet file on local
//! disk, by strata's scanner against arrow-rs's IPC `FileReader` (with a
//! projection), parquet-rs's Arrow reader (with a `ProjectionMask`) and
//! pyarrow when it is installed. strata and pyarrow use every core (the
//! scanner fetches and decodes column chunks in parallel; pyarrow's
//! readers use its thread pool); the arrow-rs readers decode on one thread.

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
        part: Part::default(),
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

    let mut out = vec![];
    for (format, path) in [("ipc", &ipc), ("parquet", &pq)] {
        for (what, cols) in [
            ("2 of 50 columns", Some(some.clone())),
            ("all 50 columns", None),
        ] {
            let name = format!("{format} {rows} rows, {what}");
            let (p, cols2, d) = (path.clone(), cols.clone(), dir.clone());
            out.push(Case::new(
                &name,
                "strata",
                Unit::Rows,
                rows as f64,
                move || {
                    let _keep = &d;
                    let n = strata_scan(&p, cols2.clone())?;
                    expect_count(n as usize, rows as usize)
                },
            ));
            let (path, cols2, d) = (path.clone(), cols.clone(), dir.clone());
            let subject = if format == "ipc" {
                "arrow-rs ipc"
            } else {
                "parquet-rs"
            };
            out.push(Case::new(
                &name,
                subject,
                Unit::Rows,
                rows as f64,
                move || {
                    let _keep = &d;
                    let n = if format == "ipc" {
                        arrow_ipc_scan(&path, cols2.as_deref())?
                    } else {
                        parquet_scan(&path, cols2.as_deref())?
                    };
                    expect_count(n as usize, rows as usize)
                },
            ));
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
    Ok(out)
}

fn strata_scan(path: &Path, columns: Option<Vec<String>>) -> Result<u64, Error> {
    let mut s = Scanner::open_location(&path.display().to_string(), &StoreConfig::default())
        .map_err(case_err)?;
    let mut n = 0;
    let req = ScanRequest {
        columns,
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
