//! Compaction: the budgeted planner (struct-of-arrays, pruned and on all
//! cores; throughput in rowsets planned per second) against Kudu's full
//! sequential scan (`kudu-scan`, the same plan) and the same planner over
//! the 112-byte array-of-structs layout, on Kudu-style inputs
//! (TinyOverlap at 10,000 and 100,000 rowsets, a YCSB-like 100,000, and
//! the YCSB rowsets of `../shared/data` when present), and the k-way merge
//! of overlapping sorted Parquet files against DuckDB's
//! `COPY (... ORDER BY id)` when DuckDB is installed, and `strata compact
//! table` over a changing Delta table beside deltalake's
//! `optimize.compact()` and `optimize.z_order()` when deltalake is.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use strata_compact::planner::{self, PlannerOptions};
use strata_compact::rowsets::{RowsetInput, parse_tsv, tiny_overlap, ycsb_like};
use strata_sort::merge::{MergeConfig, merge_files};
use strata_testkit::synth::{Payload, SyntheticDataset, write_dataset};

use super::common::{peer_body, peer_timing, python_peer};
use crate::{Body, Case, Config, Error, Size, Unit, case_err};

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
    table_cases(cfg, &mut out)?;
    Ok(out)
}

const DELTA_PEER: &str = include_str!("../../python/delta_compact_peer.py");

/// The table `strata compact table` and deltalake compact: an `orders`
/// spec with a 20-version history of inserts, updates (on Zipf-hot keys)
/// and deletes.
const HISTORY_SPEC: &str = r#"
name = "orders"
primary_key = "id"
changes = { versions = 20, insert = 0.02, update = 0.05, delete = 0.01, keys = { zipf = 1.1 } }

[[fields]]
name = "id"
type = "int64"
sequence = { start = 1 }

[[fields]]
name = "status"
type = "utf8"
weighted = { values = ["open", "paid", "shipped"], weights = [5, 3, 2] }

[[fields]]
name = "amount"
type = "float64"
uniform = { min = 1.0, max = 500.0 }

[[fields]]
name = "note"
type = "utf8"
text = { min = 20, max = 80 }
"#;

/// Compaction of a changing Delta table: the history of [`HISTORY_SPEC`]
/// written with deletion vectors (so updated rows land in new files
/// across the whole key range), then every file merged by `id` with its
/// deletes applied (`strata compact table`, with a budget of all the
/// table's bytes), beside deltalake's `optimize.compact()` and
/// `optimize.z_order(["id"])` on copies of the same table. Each subject
/// names the overlap depth by `id` (max) its rewrite leaves, measured
/// from the table's metadata the same way for all.
fn table_cases(cfg: &Config, out: &mut Vec<Case>) -> Result<(), Error> {
    use strata_compact::table::{depth, execute, inventory, plan};
    let rows = match cfg.size {
        Size::Tiny => 20_000,
        Size::Full => 1_000_000,
    };
    let name =
        format!("compact table: {rows}-row orders, 20 versions, Delta deletion vectors, by id");
    let dir = Arc::new(tempfile::tempdir().map_err(case_err)?);
    let template = write_history(dir.path(), rows)?;
    let open = |p: &Path| strata_table::dir::TableDir::local(p).map_err(case_err);
    let inv = inventory(&open(&template)?, "id").map_err(case_err)?;
    let bytes: u64 = inv.files.iter().map(|f| f.bytes).sum();
    let opts = PlannerOptions::with_budget(bytes.div_ceil(1 << 20));
    let depth_of = move |p: &Path| -> Result<usize, Error> {
        let d = depth(&open(p)?, "id").map_err(case_err)?;
        Ok(d.iter().map(|d| d.max).max().unwrap_or(0))
    };
    let predicted = plan(&open(&template)?, "id", &opts, 0)
        .map_err(case_err)?
        .after
        .iter()
        .map(|d| d.max)
        .max()
        .unwrap_or(0);
    let run_dir = dir.path().join("strata-run");
    let (t, r, d) = (template.clone(), run_dir.clone(), dir.clone());
    out.push(Case {
        name: name.clone(),
        subject: format!("strata (depth {predicted} after)"),
        unit: Unit::Rows,
        work: rows as f64,
        repeats: 1,
        body: Body::Staged {
            // The last run's table checked, then a fresh copy.
            setup: Box::new(move || {
                if r.exists() {
                    let got = depth_of(&r)?;
                    if got != predicted {
                        return Err(Error::Case(format!(
                            "overlap depth {got} after the rewrite, not the {predicted} planned"
                        )));
                    }
                    std::fs::remove_dir_all(&r).map_err(case_err)?;
                }
                copy_tree(&t, &r)
            }),
            run: Box::new(move || {
                let _keep = &d;
                let dir = strata_table::dir::TableDir::local(&run_dir).map_err(case_err)?;
                let p = plan(&dir, "id", &opts, 0).map_err(case_err)?;
                execute(&dir, "id", &p, 128 << 20).map_err(case_err)?;
                Ok(())
            }),
        },
    });
    for (op, subject) in [
        ("compact", "deltalake compact()"),
        ("z_order", "deltalake z_order([id])"),
    ] {
        let keep = dir.path().join(format!("kept-{op}"));
        let mut request = peer_timing(cfg);
        request["name"] = name.clone().into();
        request["dir"] = dir.path().display().to_string().into();
        request["template"] = template.display().to_string().into();
        request["keep"] = keep.display().to_string().into();
        request["op"] = op.into();
        request["key"] = "id".into();
        let reply = python_peer(
            cfg,
            DELTA_PEER,
            &request,
            subject,
            std::slice::from_ref(&name),
        );
        let subject = match (&reply, depth_of(&keep)) {
            (Ok(_), Ok(d)) => format!("{subject} (depth {d} after)"),
            _ => subject.to_string(),
        };
        out.push(Case {
            name: name.clone(),
            subject,
            unit: Unit::Rows,
            work: rows as f64,
            repeats: 1,
            body: peer_body(&reply, &name),
        });
    }
    Ok(())
}

/// Writes [`HISTORY_SPEC`]'s table of `rows` rows and its history as a
/// Delta table with deletion vectors under `dir`; returns its path.
fn write_history(dir: &Path, rows: u64) -> Result<PathBuf, Error> {
    use strata_pipeline::{
        flow::Flow,
        generate::{GenerateConfig, RunOptions},
        history::WriteMode,
    };
    let dataset = strata_gen::Dataset::parse(HISTORY_SPEC, "the history spec").map_err(case_err)?;
    let cfg = GenerateConfig {
        target_records: rows,
        seed: 42,
        num_writers: 8,
        output_dir: dir.join("template"),
        ..GenerateConfig::new("orders")
    };
    let mut flow = Flow::new(dataset, &[0], &cfg, 1.0).map_err(case_err)?;
    let mut tables = flow.as_delta(&Default::default()).map_err(case_err)?;
    tables
        .configuration
        .insert("delta.enableDeletionVectors".into(), "true".into());
    let summaries = flow.run(RunOptions::default(), &|_| {}).map_err(case_err)?;
    let committed = flow.commit_delta(&tables, &summaries).map_err(case_err)?;
    flow.commit_history_delta(&tables, &summaries, &committed, WriteMode::DeletionVectors)
        .map_err(case_err)?;
    tables
        .dirs
        .first()
        .map(|d| d.root())
        .ok_or_else(|| case_err("no table was written"))
}

/// Copies the directory tree `from` to `to` (which must not exist).
fn copy_tree(from: &Path, to: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(to).map_err(case_err)?;
    for entry in std::fs::read_dir(from).map_err(case_err)? {
        let entry = entry.map_err(case_err)?;
        let target = to.join(entry.file_name());
        if entry.file_type().map_err(case_err)?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target).map_err(case_err)?;
        }
    }
    Ok(())
}
