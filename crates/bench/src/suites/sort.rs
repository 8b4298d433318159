//! `strata sort` on generated files, beside DuckDB and pyarrow in the same
//! run, all on every core:
//!
//! * in memory: `wide-u64` (50 UInt64 columns; 10,000,000 rows, 20,000 at
//!   the tiny size) by `c00, c01 DESC, c02`, with a memory limit the sort
//!   fits in; peers DuckDB (`COPY ... ORDER BY ... TO`, the same limit)
//!   and pyarrow (`read_table`, `sort_by`, `write_table`);
//! * external: `events` (8,000,000 rows in four files with row groups of
//!   131,072 rows; 300,000 at the tiny size) by `user_id, ts DESC`, with a
//!   memory limit of a quarter of the Parquet input's size (at least
//!   48 MiB, below which DuckDB runs out of memory on two threads), so
//!   strata spills sorted runs and merges them; peer DuckDB at the same
//!   limit, spilling to its temporary directory (a failure makes its case
//!   unavailable, with the reason).
//!
//! Outputs are zstd level 1 Parquet files in a temporary directory,
//! removed inside the timed work; every strata run checks the rows it
//! wrote and whether it spilled.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use strata_parquet::{Compression, Format};
use strata_pipeline::generate::{GenerateConfig, ParquetEncoder, Part, generate};
use strata_sort::{SortConfig, SortKeys, sort_file};

use super::common::{peer_body, peer_timing, python_peer};
use crate::{Case, Config, Error, Size, Unit, case_err};

const PEER: &str = include_str!("../../python/sort_peer.py");

/// One sort: its input, keys and limit, and how each peer spells them.
struct SortCase {
    name: String,
    input: PathBuf,
    keys: &'static str,
    order: &'static str,
    pyarrow_keys: Vec<(&'static str, &'static str)>,
    rows: u64,
    memory_limit: u64,
    external: bool,
}

fn write(dir: &Path, preset: &str, rows: u64, files: usize, group: usize) -> Result<u64, Error> {
    let cfg = GenerateConfig {
        target_records: rows,
        num_writers: files,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        row_group_rows: group,
        format: Format::Parquet,
        compression: Compression::Zstd(1),
        output_dir: dir.to_path_buf(),
        overwrite: true,
        seed: 11,
        encoder: ParquetEncoder::Auto,
        part: Part::default(),
        ..GenerateConfig::new(preset)
    };
    let g = strata_gen::preset(preset, 11);
    let summary = generate(&g, &cfg, &|_| {}).map_err(case_err)?;
    Ok(summary.files.iter().map(|f| f.bytes).sum())
}

/// The cases.
pub fn cases(cfg: &Config) -> Result<Vec<Case>, Error> {
    let (wide_rows, events_rows) = match cfg.size {
        Size::Tiny => (20_000, 300_000),
        Size::Full => (10_000_000, 8_000_000),
    };
    let dir = Arc::new(tempfile::tempdir().map_err(case_err)?);
    let wide = dir.path().join("wide");
    let wide_bytes = write(&wide, "wide-u64", wide_rows, 1, 1 << 20)?;
    let events = dir.path().join("events");
    let events_bytes = write(&events, "events", events_rows, 4, 1 << 17)?;
    let mib = |b: u64| (b >> 20).max(1) << 20;
    // A quarter of the input, and never below the 48 MiB DuckDB needs to
    // run at all on two threads (it runs out of memory at 32 MiB).
    let external_limit = mib(events_bytes / 4).max(48 << 20);
    let sorts = [
        SortCase {
            name: format!("sort in memory: wide-u64 {wide_rows} rows by 3 keys"),
            input: wide.clone(),
            keys: "c00,c01:desc,c02",
            order: "c00, c01 DESC, c02",
            pyarrow_keys: vec![
                ("c00", "ascending"),
                ("c01", "descending"),
                ("c02", "ascending"),
            ],
            rows: wide_rows,
            // Room for the input twice over and more.
            memory_limit: mib(wide_bytes.saturating_mul(4)).max(64 << 20),
            external: false,
        },
        SortCase {
            name: format!(
                "sort external: events {events_rows} rows ({} MiB Parquet), memory limit {} MiB",
                events_bytes >> 20,
                external_limit >> 20
            ),
            input: events.clone(),
            keys: "user_id,ts:desc",
            order: "user_id, ts DESC",
            pyarrow_keys: vec![],
            rows: events_rows,
            memory_limit: external_limit,
            external: true,
        },
    ];
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut out = vec![];
    for s in &sorts {
        let keys = s.keys.parse::<SortKeys>().map_err(case_err)?.0;
        let (d, input, rows, limit, external) = (
            dir.clone(),
            s.input.clone(),
            s.rows,
            s.memory_limit,
            s.external,
        );
        out.push(Case::new(
            &s.name,
            "strata",
            Unit::Rows,
            rows as f64,
            move || {
                let work = tempfile::tempdir_in(d.path()).map_err(case_err)?;
                let mut sc = SortConfig::new(
                    input.clone(),
                    work.path().join("sorted.parquet"),
                    keys.clone(),
                );
                sc.memory_limit = limit;
                let summary = sort_file(&sc).map_err(case_err)?;
                if summary.rows != rows {
                    return Err(Error::Case(format!(
                        "sorted {} rows of {rows}",
                        summary.rows
                    )));
                }
                if (summary.runs > 0) != external {
                    return Err(Error::Case(format!("spilled {} runs", summary.runs)));
                }
                Ok(())
            },
        ));
    }
    for subject in ["duckdb", "pyarrow"] {
        let wanted: Vec<&SortCase> = sorts
            .iter()
            .filter(|s| subject == "duckdb" || !s.external)
            .collect();
        let names: Vec<String> = wanted.iter().map(|s| s.name.clone()).collect();
        let mut request = peer_timing(cfg);
        request["subject"] = subject.into();
        request["threads"] = threads.into();
        request["dir"] = dir.path().display().to_string().into();
        request["cases"] = wanted
            .iter()
            .map(|s| {
                serde_json::json!({
                    "name": s.name,
                    "dir": s.input.display().to_string(),
                    "glob": format!("{}/*.parquet", s.input.display()),
                    "order": s.order,
                    "pyarrow_keys": s.pyarrow_keys,
                    "memory_limit_bytes": s.memory_limit,
                })
            })
            .collect();
        let reply = python_peer(cfg, PEER, &request, subject, &names);
        for s in wanted {
            out.push(Case {
                name: s.name.clone(),
                subject: subject.into(),
                unit: Unit::Rows,
                work: s.rows as f64,
                repeats: 1,
                body: peer_body(&reply, &s.name),
            });
        }
    }
    Ok(out)
}
