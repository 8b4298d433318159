//! Compaction: the budgeted planner (struct-of-arrays, pruned and on all
//! cores; throughput in rowsets planned per second) against Kudu's full
//! sequential scan (`kudu-scan`, the same plan) and the same planner over
//! the 112-byte array-of-structs layout, on Kudu-style inputs
//! (TinyOverlap at 10,000 and 100,000 rowsets, a YCSB-like 100,000, and
//! the YCSB rowsets of `../shared/data` when present), and the k-way merge
//! of overlapping sorted Parquet files against DuckDB's
//! `COPY (... ORDER BY id)` when DuckDB is installed.

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;

use strata_compact::planner::{self, PlannerOptions};
use strata_compact::rowsets::{RowsetInput, parse_tsv, tiny_overlap, ycsb_like};
use strata_sort::merge::{MergeConfig, merge_files};
use strata_testkit::synth::{Payload, SyntheticDataset, write_dataset};

use super::common::{peer_body, peer_timing, python_peer};
use crate::{Case, Config, Error, Size, Unit, case_err};

const PEER: &str = include_str!("../../python/merge_peer.py");

/// Kudu's YCSB rowsets, read from the shared data directory when present
/// (users' clones lack it; the cases are then left out).
const YCSB: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/kudu-ycsb-rowsets.tsv"
);

/// The cases.
pub fn cases(cfg: &Config) -> Result<Vec<Case>, Error> {
    let mut out = vec![];
    let n = match cfg.size {
        Size::Tiny => 500,
        Size::Full => 10_000,
    };
    let big = match cfg.size {
        Size::Tiny => 2_000,
        Size::Full => 100_000,
    };
    // (name, rowsets, whether Kudu's full scan runs too: it is quadratic,
    // minutes at 100,000 rowsets).
    let mut inputs: Vec<(String, Vec<RowsetInput>, bool)> = vec![
        (
            format!("plan TinyOverlap {n}, 128 MB"),
            tiny_overlap(n),
            true,
        ),
        (
            format!("plan TinyOverlap {big}, 128 MB"),
            tiny_overlap(big),
            false,
        ),
        (
            format!("plan YCSB-like {big}, 128 MB"),
            ycsb_like(big, 1),
            false,
        ),
    ];
    if let Ok(text) = std::fs::read_to_string(YCSB) {
        let rows = parse_tsv(&text).map_err(case_err)?;
        inputs.push((
            format!("plan YCSB {} rowsets, 128 MB", rows.len()),
            rows,
            true,
        ));
    }
    for (name, rowsets, with_kudu) in inputs {
        let rowsets = Arc::new(rowsets);
        let opts = PlannerOptions::with_budget(128);
        let count = rowsets.len() as f64;
        let (r, o) = (rowsets.clone(), opts);
        out.push(Case::new(&name, "strata", Unit::Items, count, move || {
            black_box(planner::plan(&r, &o));
            Ok(())
        }));
        if with_kudu {
            let r = rowsets.clone();
            out.push(Case::new(
                &name,
                "kudu-scan",
                Unit::Items,
                count,
                move || {
                    black_box(planner::plan_reference(&r, &opts));
                    Ok(())
                },
            ));
        }
        out.push(Case::new(
            &name,
            "aos-layout",
            Unit::Items,
            count,
            move || {
                black_box(planner::fat::plan(&rowsets, &opts));
                Ok(())
            },
        ));
    }

    let (files, rows) = match cfg.size {
        Size::Tiny => (4, 5_000),
        Size::Full => (8, 250_000),
    };
    let dir = Arc::new(tempfile::tempdir().map_err(case_err)?);
    let spec = SyntheticDataset {
        files,
        rows_per_file: rows,
        overlap: 1.0,
        seed: 0,
        payload: Payload::Contacts,
    };
    let paths: Vec<PathBuf> = write_dataset(dir.path(), &spec).map_err(case_err)?;
    let total = (files * rows) as u64;
    let name = format!("merge {files} files x {rows} rows, zstd(1)");
    let (d, inputs) = (dir.clone(), paths.clone());
    out.push(Case::new(
        &name,
        "strata",
        Unit::Rows,
        total as f64,
        move || {
            let work = tempfile::tempdir_in(d.path()).map_err(case_err)?;
            let m = MergeConfig {
                key: vec!["id".into()],
                target_file_bytes: u64::MAX,
                batch_rows: 8192,
                threads: 2,
                ..MergeConfig::default()
            };
            let merged = merge_files(&inputs, work.path(), &|n| format!("out-{n}.parquet"), &m)
                .map_err(case_err)?;
            let got: u64 = merged.iter().map(|m| m.rows).sum();
            if got != total {
                return Err(Error::Case(format!("merged {got} rows of {total}")));
            }
            Ok(())
        },
    ));
    let mut request = peer_timing(cfg);
    request["name"] = name.clone().into();
    request["dir"] = dir.path().display().to_string().into();
    request["inputs"] = serde_json::json!(
        paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
    );
    let reply = python_peer(cfg, PEER, &request, "duckdb", std::slice::from_ref(&name));
    out.push(Case {
        name: name.clone(),
        subject: "duckdb".into(),
        unit: Unit::Rows,
        work: total as f64,
        repeats: 1,
        body: peer_body(&reply, &name),
    });
    Ok(out)
}
