//! `strata report` over the default `contacts` output (nested lists of
//! structs, strings, categories; 4 uncompressed Parquet files) with its
//! spec, beside DuckDB's `SUMMARIZE` of the same files on the same number
//! of threads. Both read every row. strata profiles every column and
//! nested field (histograms, top values, lengths, null rates at each
//! level, key skew), reads the footers for the layout, checks the data
//! against the spec and draws the page.

use std::path::PathBuf;
use std::sync::Arc;

use strata_gen::BatchGenerator;
use strata_parquet::{Compression, Format};
use strata_pipeline::generate::{GenerateConfig, ParquetEncoder, Part, generate};

use super::common::{peer_body, peer_timing, python_peer};
use crate::{Case, Config, Error, Size, Unit, case_err};

/// The DuckDB peer: the same script as the infer suite's (`SUMMARIZE`
/// over the files).
const PEER: &str = include_str!("../../python/infer_peer.py");

/// The cases.
pub fn cases(cfg: &Config) -> Result<Vec<Case>, Error> {
    let rows: u64 = match cfg.size {
        Size::Tiny => 50_000,
        Size::Full => 10_000_000,
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let dir = Arc::new(tempfile::tempdir().map_err(case_err)?);
    let gen_cfg = GenerateConfig {
        target_records: rows,
        record_batch_size: 8192,
        num_writers: 4,
        threads,
        row_group_rows: 1 << 20,
        format: Format::Parquet,
        compression: Compression::None,
        output_dir: dir.path().to_path_buf(),
        output_filename: "contacts".into(),
        overwrite: true,
        seed: 42,
        encoder: ParquetEncoder::Auto,
        page_checksums: true,
        part: Part::default(),
        layout: None,
        field_ids: None,
        row_offset: 0,
    };
    let g = strata_gen::preset("contacts", 42);
    let summary = generate(&g, &gen_cfg, &|_| {}).map_err(case_err)?;
    let files: Vec<PathBuf> = summary.files.iter().map(|f| f.path.clone()).collect();
    let columns = g.schema().fields().len();
    let spec = strata_gen::Dataset::preset("contacts").map_err(case_err)?;
    let name = format!("report contacts {rows} rows");
    let input = vec![dir.path().display().to_string()];
    let d = dir.clone();
    let mut out = vec![Case::new(
        &name,
        "strata",
        Unit::Rows,
        rows as f64,
        move || {
            let _keep = &d;
            let opts = strata_report::Options {
                spec: Some(spec.clone()),
                ..Default::default()
            };
            let report = strata_report::collect(&input, &opts).map_err(case_err)?;
            let page = strata_report::html::render(&report);
            let t = report
                .tables
                .first()
                .ok_or_else(|| Error::Case("the report has no table".into()))?;
            if t.rows != rows || page.is_empty() {
                return Err(Error::Case(format!(
                    "the report read {} rows, not {rows}",
                    t.rows
                )));
            }
            Ok(())
        },
    )];
    let mut request = peer_timing(cfg);
    request["name"] = name.clone().into();
    request["threads"] = threads.into();
    request["columns"] = columns.into();
    request["inputs"] = serde_json::json!(
        files
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
    );
    let reply = python_peer(cfg, PEER, &request, "duckdb", std::slice::from_ref(&name));
    out.push(Case {
        name: name.clone(),
        subject: "duckdb".into(),
        unit: Unit::Rows,
        work: rows as f64,
        repeats: 1,
        body: peer_body(&reply, &name),
    });
    Ok(out)
}
