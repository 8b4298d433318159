//! Times the compact suite's merge case on its own, for profilers:
//! `merge_case DIR ITERS [THREADS]` writes the 8 x 250k-row input files
//! into `DIR` once (kept for later runs) and merges them `ITERS` times,
//! printing each merge's wall time.

use std::path::PathBuf;
use std::time::Instant;

use strata_sort::merge::{MergeConfig, merge_files};
use strata_testkit::synth::{Payload, SyntheticDataset, write_dataset};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: merge_case DIR ITERS [THREADS]";
    let dir = PathBuf::from(args.get(1).expect(usage));
    let iters: usize = args.get(2).and_then(|s| s.parse().ok()).expect(usage);
    let threads: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(2);
    let spec = SyntheticDataset {
        files: 8,
        rows_per_file: 250_000,
        overlap: 1.0,
        seed: 0,
        payload: Payload::Contacts,
    };
    let inputs: Vec<PathBuf> = (0..spec.files)
        .map(|f| dir.join(format!("in-{f:02}.parquet")))
        .collect();
    if !inputs.iter().all(|p| p.exists()) {
        std::fs::create_dir_all(&dir).expect("cannot create DIR");
        write_dataset(&dir, &spec).expect("cannot write the inputs");
    }
    for _ in 0..iters {
        let work = tempfile::tempdir_in(&dir).expect("cannot create a work directory");
        let cfg = MergeConfig {
            key: vec!["id".into()],
            target_file_bytes: u64::MAX,
            batch_rows: 8192,
            threads,
            ..MergeConfig::default()
        };
        let t = Instant::now();
        let out = merge_files(&inputs, work.path(), &|n| format!("out-{n}.parquet"), &cfg)
            .expect("merge failed");
        let rows: u64 = out.iter().map(|m| m.rows).sum();
        let bytes: u64 = out.iter().map(|m| m.bytes).sum();
        println!(
            "{:.1} ms, {rows} rows, {bytes} bytes",
            t.elapsed().as_secs_f64() * 1e3
        );
        if let Ok(keep) = std::env::var("MERGE_CASE_KEEP") {
            for m in &out {
                let to = PathBuf::from(&keep).join(m.path.file_name().expect("a file name"));
                std::fs::copy(&m.path, to).expect("cannot keep an output");
            }
        }
    }
}
