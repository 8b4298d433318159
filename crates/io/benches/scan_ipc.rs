//! Projected IPC reads side by side: strata's reader, arrow-rs's
//! `FileReader` with a projection, and pyarrow (`pyarrow.dataset`, format
//! ipc, `columns=`), on one 64-column, 16-batch file of Int64 columns
//! (4 MiB per column), reading 1, 8 (every eighth) and 64 columns, from a
//! local file and from a store that charges 20 ms plus 100 MB/s per
//! request.
//!
//! ```text
//! cargo bench -p strata-io --bench scan_ipc -- [--runs N] [--dir DIR] [--python PY] [--no-python] [--local-only]
//! ```
//!
//! Runs are interleaved (every reader once per round), and each figure is
//! the median over rounds. pyarrow runs in a subprocess
//! (`benches/scan_ipc_pyarrow.py`) that times only the read; it is found at
//! `--python`, else `.venv/bin/python` at the workspace root.

use std::{
    io::{Read, Seek, SeekFrom},
    path::{Path, PathBuf},
    process::Command,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use futures::TryStreamExt;

use object_store::{ObjectStore, ObjectStoreExt, local::LocalFileSystem, path::Path as ObjPath};
use strata_io::{
    ipc::IpcFileWriter,
    scan::{ScanRequest, ipc::IpcFile},
    store::{FetchOptions, IoStats, SimulatedStore, Source},
};

/// The file's shape.
#[derive(Clone, Copy)]
struct Shape {
    columns: usize,
    batches: usize,
    rows_per_batch: usize,
}

/// 64 columns, 4 MiB each: 16 batches of 32,768 Int64 values.
const FULL: Shape = Shape {
    columns: 64,
    batches: 16,
    rows_per_batch: 4 * 1024 * 1024 / 8 / 16,
};

/// Without `--bench` (as `cargo test --all-targets` runs it): a quick
/// check that every reader agrees on a small file.
const SMOKE: Shape = Shape {
    columns: 8,
    batches: 2,
    rows_per_batch: 1000,
};
const TTFB: Duration = Duration::from_millis(20);
const BANDWIDTH: f64 = 100e6;

fn projection(shape: Shape, k: usize) -> Vec<usize> {
    (0..shape.columns).step_by(shape.columns / k).collect()
}

fn write_file(path: &Path, shape: Shape) {
    let Shape {
        columns,
        batches,
        rows_per_batch,
    } = shape;
    let schema = Arc::new(Schema::new(
        (0..columns)
            .map(|i| Field::new(format!("c{i}"), DataType::Int64, true))
            .collect::<Vec<_>>(),
    ));
    let tmp = path.with_extension("partial");
    let f = std::io::BufWriter::new(std::fs::File::create(&tmp).unwrap());
    let mut w = IpcFileWriter::try_new(f, &schema, Default::default()).unwrap();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..batches {
        let cols: Vec<ArrayRef> = (0..columns)
            .map(|_| {
                Arc::new(Int64Array::from_iter_values((0..rows_per_batch).map(
                    |_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        x as i64
                    },
                ))) as ArrayRef
            })
            .collect();
        w.write(&RecordBatch::try_new(schema.clone(), cols).unwrap())
            .unwrap();
    }
    w.finish().unwrap();
    std::fs::rename(tmp, path).unwrap();
}

/// A `Read + Seek` over an object store: every `read` is one ranged GET,
/// as a blocking reader over a remote store would issue.
struct StoreReader {
    rt: tokio::runtime::Handle,
    store: Arc<dyn ObjectStore>,
    path: ObjPath,
    pos: u64,
    size: u64,
    requests: Arc<AtomicU64>,
    bytes: Arc<AtomicU64>,
}

impl Read for StoreReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let end = (self.pos + buf.len() as u64).min(self.size);
        if end <= self.pos {
            return Ok(0);
        }
        let got = self
            .rt
            .block_on(self.store.get_range(&self.path, self.pos..end))
            .map_err(std::io::Error::other)?;
        buf[..got.len()].copy_from_slice(&got);
        self.pos += got.len() as u64;
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(got.len() as u64, Ordering::Relaxed);
        Ok(got.len())
    }
}

impl Seek for StoreReader {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.pos = match to {
            SeekFrom::Start(p) => p,
            SeekFrom::End(d) => self.size.saturating_add_signed(d),
            SeekFrom::Current(d) => self.pos.saturating_add_signed(d),
        };
        Ok(self.pos)
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Store {
    Local,
    Latency,
}

/// One measurement: seconds, requests, bytes fetched.
type Sample = (f64, u64, u64);

fn strata(
    rt: &tokio::runtime::Runtime,
    file: &Path,
    shape: Shape,
    store: Store,
    k: usize,
) -> Sample {
    let local: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new());
    let (obj, opts): (Arc<dyn ObjectStore>, _) = match store {
        Store::Local => (local, FetchOptions::local()),
        Store::Latency => (
            Arc::new(SimulatedStore::new(local, TTFB, BANDWIDTH)),
            FetchOptions::remote(TTFB, BANDWIDTH),
        ),
    };
    let path = ObjPath::from_filesystem_path(file).unwrap();
    let stats = IoStats::default();
    let size = std::fs::metadata(file).unwrap().len();
    let cols: Vec<String> = projection(shape, k)
        .iter()
        .map(|c| format!("c{c}"))
        .collect();
    let t = Instant::now();
    let rows = rt.block_on(async {
        let src = match store {
            Store::Local => Source::open_file(file, "bench", opts).unwrap(),
            Store::Latency => Source::open(obj, path, "bench", opts).await.unwrap(),
        };
        let src = src.with_stats(stats.clone());
        let f = IpcFile::open(src, None).await.unwrap();
        let req = ScanRequest {
            columns: Some(cols),
            ..Default::default()
        };
        // Batches are dropped as they come, as arrow-rs's are below.
        f.stream(&req)
            .unwrap()
            .try_fold(0usize, |n, b| async move { Ok(n + b.num_rows()) })
            .await
            .unwrap()
    });
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(rows, shape.rows_per_batch * shape.batches);
    let s = stats.snapshot();
    let _ = size;
    (secs, s.requests, s.bytes_fetched)
}

fn arrow_rs(
    rt: &tokio::runtime::Runtime,
    file: &Path,
    shape: Shape,
    store: Store,
    k: usize,
) -> Sample {
    let proj = projection(shape, k);
    let t = Instant::now();
    let (rows, requests, bytes) = match store {
        Store::Local => {
            let f = std::fs::File::open(file).unwrap();
            let r = arrow_ipc::reader::FileReader::try_new(f, Some(proj)).unwrap();
            let rows: usize = r.map(|b| b.unwrap().num_rows()).sum();
            (rows, 0, 0)
        }
        Store::Latency => {
            let local: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new());
            let requests = Arc::new(AtomicU64::new(0));
            let bytes = Arc::new(AtomicU64::new(0));
            let reader = StoreReader {
                rt: rt.handle().clone(),
                store: Arc::new(SimulatedStore::new(local, TTFB, BANDWIDTH)),
                path: ObjPath::from_filesystem_path(file).unwrap(),
                pos: 0,
                size: std::fs::metadata(file).unwrap().len(),
                requests: requests.clone(),
                bytes: bytes.clone(),
            };
            let r = arrow_ipc::reader::FileReader::try_new(reader, Some(proj)).unwrap();
            let rows: usize = r.map(|b| b.unwrap().num_rows()).sum();
            (
                rows,
                requests.load(Ordering::Relaxed),
                bytes.load(Ordering::Relaxed),
            )
        }
    };
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(rows, shape.rows_per_batch * shape.batches);
    (secs, requests, bytes)
}

fn pyarrow(
    python: &Path,
    script: &Path,
    file: &Path,
    shape: Shape,
    store: Store,
    k: usize,
) -> Option<Sample> {
    let cols: Vec<String> = projection(shape, k)
        .iter()
        .map(|c| format!("c{c}"))
        .collect();
    let mut cmd = Command::new(python);
    cmd.arg(script).arg(file).arg(cols.join(","));
    if store == Store::Latency {
        cmd.arg("--latency-ms")
            .arg(TTFB.as_millis().to_string())
            .arg("--bytes-per-second")
            .arg(BANDWIDTH.to_string());
    }
    let out = cmd.output().ok()?;
    if !out.status.success() {
        eprintln!("pyarrow: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    Some((
        v["seconds"].as_f64()?,
        v["requests"].as_u64()?,
        v["bytes"].as_u64()?,
    ))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let bench = args.iter().any(|a| a == "--bench");
    let shape = if bench { FULL } else { SMOKE };
    let runs: usize = if bench {
        flag("--runs").map_or(5, |s| s.parse().unwrap())
    } else {
        1
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let smoke_dir = tempfile::tempdir().unwrap();
    let dir = match flag("--dir") {
        Some(d) => PathBuf::from(d),
        None if bench => root.join("target/bench-data"),
        None => smoke_dir.path().to_path_buf(),
    };
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("ipc_{}x{}.arrow", shape.columns, shape.batches));
    if !file.exists() {
        eprintln!("writing {}", file.display());
        write_file(&file, shape);
    }
    let python = if !bench || args.iter().any(|a| a == "--no-python") {
        None
    } else {
        flag("--python")
            .map(PathBuf::from)
            .or_else(|| Some(root.join(".venv/bin/python")).filter(|p| p.exists()))
    };
    let script = root.join("benches/scan_ipc_pyarrow.py");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let size = std::fs::metadata(&file).unwrap().len();
    let column_bytes = (shape.rows_per_batch * 8 * shape.batches) as u64;
    println!(
        "file: {} ({} bytes, {} Int64 columns x {} batches of {} rows); {runs} interleaved rounds, medians",
        file.display(),
        size,
        shape.columns,
        shape.batches,
        shape.rows_per_batch
    );
    println!();
    println!(
        "| store | columns | projected MiB | strata ms | arrow-rs ms | pyarrow ms | strata / arrow-rs speed-up | strata / pyarrow speed-up | strata requests | arrow-rs requests | pyarrow requests | strata bytes / projected |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let stores: &[Store] = if !bench || args.iter().any(|a| a == "--local-only") {
        &[Store::Local]
    } else {
        &[Store::Local, Store::Latency]
    };
    for &store in stores {
        let ks: &[usize] = if bench { &[1, 8, 64] } else { &[1, 8] };
        for &k in ks {
            let mut times = [Vec::new(), Vec::new(), Vec::new()];
            let mut last: [Option<Sample>; 3] = [None; 3];
            for _ in 0..runs {
                let s = strata(&rt, &file, shape, store, k);
                times[0].push(s.0);
                last[0] = Some(s);
                let a = arrow_rs(&rt, &file, shape, store, k);
                times[1].push(a.0);
                last[1] = Some(a);
                if let Some(py) = &python
                    && let Some(p) = pyarrow(py, &script, &file, shape, store, k)
                {
                    times[2].push(p.0);
                    last[2] = Some(p);
                }
            }
            let ms = |v: &mut Vec<f64>| (!v.is_empty()).then(|| median(v) * 1e3);
            let [t0, t1, t2] = &mut times;
            let (s, a, p) = (ms(t0), ms(t1), ms(t2));
            let fmt = |x: Option<f64>| x.map_or("-".into(), |x| format!("{x:.1}"));
            let ratio = |x: Option<f64>| match (s, x) {
                (Some(s), Some(x)) => format!("{:.2}x", x / s),
                _ => "-".into(),
            };
            let req = |x: Option<Sample>| match (store, x) {
                (_, None) => "-".to_string(),
                (Store::Local, Some(_)) if x == last[1] => "-".to_string(),
                (_, Some(x)) => x.1.to_string(),
            };
            let projected = column_bytes * k as u64;
            let strata_bytes = last[0].map_or(0, |x| x.2);
            println!(
                "| {} | {k} | {:.0} | {} | {} | {} | {} | {} | {} | {} | {} | {:.3} |",
                if store == Store::Local {
                    "local file"
                } else {
                    "20 ms + 100 MB/s per request"
                },
                projected as f64 / (1 << 20) as f64,
                fmt(s),
                fmt(a),
                fmt(p),
                ratio(a),
                ratio(p),
                req(last[0]),
                req(last[1]),
                req(last[2]),
                strata_bytes as f64 / projected as f64
            );
        }
    }
}
