//! The compaction merge against DuckDB: 8 overlapping sorted Parquet files
//! of 1,000,000 contacts-like rows each (an Int64 key `id`, then the
//! `contacts` preset's `name` and `phones`), merged into one sorted file
//! with zstd level 1 by `strata_compact::merge::merge_files` and by DuckDB
//! (`COPY (SELECT * FROM read_parquet([...]) ORDER BY id) TO ...`, 2
//! threads), rounds interleaved, medians.
//!
//! ```text
//! cargo bench -p strata-compact --bench merge -- [--runs N] [--files N] [--rows N] [--python PY]
//! ```
//!
//! Without `--bench` (as `cargo test --all-targets` runs it) it merges a
//! small dataset once and checks the output, as a smoke test.

use std::{path::PathBuf, process::Command, time::Instant};

use strata_compact::{
    merge::{MergeConfig, merge_files},
    synth::{Payload, SyntheticDataset, write_dataset},
};

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

const DUCKDB: &str = r#"
import duckdb, json, sys, time
out, inputs = sys.argv[1], sys.argv[2:]
con = duckdb.connect()
con.execute("SET threads TO 2")
con.execute("SET enable_progress_bar = false")
files = ", ".join("'" + p + "'" for p in inputs)
t = time.perf_counter()
con.execute(f"COPY (SELECT * FROM read_parquet([{files}]) ORDER BY id) TO '{out}' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1)")
print(json.dumps({"seconds": time.perf_counter() - t}))
"#;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let bench = args.iter().any(|a| a == "--bench");
    let files: usize = flag("--files").map_or(8, |s| s.parse().unwrap());
    let rows: usize = flag("--rows").map_or(if bench { 1_000_000 } else { 5_000 }, |s| {
        s.parse().unwrap()
    });
    let runs: usize = if bench {
        flag("--runs").map_or(5, |s| s.parse().unwrap())
    } else {
        1
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let smoke = tempfile::tempdir().unwrap();
    let dir = if bench {
        root.join(format!("target/bench-data/merge-{files}x{rows}"))
    } else {
        smoke.path().to_path_buf()
    };
    std::fs::create_dir_all(&dir).unwrap();
    let inputs: Vec<PathBuf> = (0..files)
        .map(|f| dir.join(format!("in-{f:02}.parquet")))
        .collect();
    if inputs.iter().any(|p| !p.exists()) {
        eprintln!("writing {} inputs into {}", files, dir.display());
        for p in &inputs {
            let _ = std::fs::remove_file(p);
        }
        // Every file spans the whole key range: all overlap all.
        let spec = SyntheticDataset {
            files,
            rows_per_file: rows,
            overlap: 1.0,
            seed: 0,
            payload: Payload::Contacts,
        };
        write_dataset(&dir, &spec).unwrap();
    }
    let python = flag("--python")
        .map(PathBuf::from)
        .or_else(|| Some(root.join(".venv/bin/python")).filter(|p| p.exists()))
        .filter(|_| bench);
    let total = (files * rows) as f64;
    let mut strata_s = Vec::new();
    let mut duck_s = Vec::new();
    for _ in 0..runs {
        let out = tempfile::tempdir_in(&dir).unwrap();
        let cfg = MergeConfig {
            key: vec!["id".into()],
            target_file_bytes: u64::MAX,
            batch_rows: 8192,
            threads: 2,
        };
        let t = Instant::now();
        let merged =
            merge_files(&inputs, out.path(), &|n| format!("out-{n}.parquet"), &cfg).unwrap();
        strata_s.push(t.elapsed().as_secs_f64());
        assert_eq!(merged.iter().map(|m| m.rows).sum::<u64>(), total as u64);
        if std::env::var_os("KEEP").is_some() {
            eprintln!("{:?}", out.keep());
            continue;
        }
        drop(out);
        if let Some(py) = &python {
            let out = tempfile::tempdir_in(&dir).unwrap();
            let target = out.path().join("duck.parquet");
            let o = Command::new(py)
                .arg("-c")
                .arg(DUCKDB)
                .arg(&target)
                .args(&inputs)
                .output()
                .unwrap();
            if o.status.success() {
                let text = String::from_utf8_lossy(&o.stdout);
                let last = text.lines().last().unwrap_or_default();
                let v: serde_json::Value = serde_json::from_str(last).unwrap();
                duck_s.push(v["seconds"].as_f64().unwrap());
            } else {
                eprintln!("duckdb: {}", String::from_utf8_lossy(&o.stderr));
            }
        }
    }
    let s = median(&mut strata_s);
    println!(
        "{files} files x {rows} rows ({} rows), {runs} interleaved rounds, medians",
        total as u64
    );
    println!("| merger | seconds | M rows/s | strata speed-up |");
    println!("|---|---|---|---|");
    println!("| strata | {s:.3} | {:.2} | 1.00x |", total / s / 1e6);
    if !duck_s.is_empty() {
        let d = median(&mut duck_s);
        println!(
            "| DuckDB (2 threads) | {d:.3} | {:.2} | {:.2}x |",
            total / d / 1e6,
            d / s
        );
    }
}
