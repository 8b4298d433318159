//! Times one projected read of a local Parquet file, for profiles and
//! instruction counts of the scan benchmark's cases without the rest of
//! the suite:
//!
//! ```sh
//! scan_probe MODE FILE ITERATIONS [COLUMN...]
//! ```
//!
//! MODE: `strata` (the blocking `Scanner`, as `strata bench scan` runs
//! it: small projected row groups decoded in parallel), `sequential` (the
//! same with a limit past the rows, so one stream decodes the row groups
//! one after another), `pread` and `pread-seq` (those two with the file
//! read by positioned reads into fresh buffers instead of through its
//! map), or `parquet-rs` (parquet's synchronous Arrow reader over the
//! file, as the benchmark's peer). Prints the rows read and the median
//! time of one read.

use std::{fs::File, time::Instant};

use parquet::arrow::{ProjectionMask, arrow_reader::ParquetRecordBatchReaderBuilder};
use strata_scan::{ScanRequest, Scanner};
use strata_store::location::StoreConfig;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, mode, path, iterations, columns @ ..] = &args[..] else {
        eprintln!(
            "usage: scan_probe strata|sequential|pread|pread-seq|parquet-rs FILE ITERATIONS [COLUMN...]"
        );
        std::process::exit(2);
    };
    let iterations: usize = iterations.parse().expect("ITERATIONS is a number");
    let columns: Option<Vec<String>> = (!columns.is_empty()).then(|| columns.to_vec());
    let mut times = Vec::new();
    let mut rows = 0;
    for _ in 0..iterations {
        let start = Instant::now();
        rows = match mode.as_str() {
            "strata" => strata(path, columns.clone(), None),
            "sequential" => strata(path, columns.clone(), Some(usize::MAX)),
            "pread" => strata_pread(path, columns.clone(), None),
            "pread-seq" => strata_pread(path, columns.clone(), Some(usize::MAX)),
            "parquet-rs" => parquet_rs(path, columns.as_deref()),
            m => panic!("unknown mode {m}"),
        };
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{mode}: {rows} rows, median {:.3} ms",
        times[times.len() / 2]
    );
}

fn strata(path: &str, columns: Option<Vec<String>>, limit: Option<usize>) -> u64 {
    count(
        Scanner::open_location(path, &StoreConfig::default()).unwrap(),
        columns,
        limit,
    )
}

fn strata_pread(path: &str, columns: Option<Vec<String>>, limit: Option<usize>) -> u64 {
    let src = strata_store::source::Source::open_file(
        std::path::Path::new(path),
        path,
        strata_store::source::FetchOptions::local(),
    )
    .unwrap()
    .without_map();
    count(Scanner::open(src).unwrap(), columns, limit)
}

/// Scans `s` for `columns` (up to `limit` rows); returns the rows read.
fn count(mut s: Scanner, columns: Option<Vec<String>>, limit: Option<usize>) -> u64 {
    let mut n = 0;
    let req = ScanRequest {
        columns,
        limit,
        ..Default::default()
    };
    s.scan(&req, |b| {
        n += b.num_rows() as u64;
        Ok(())
    })
    .unwrap();
    n
}

fn parquet_rs(path: &str, columns: Option<&[String]>) -> u64 {
    let f = File::open(path).unwrap();
    let mut b = ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
    if let Some(cols) = columns {
        let idx: Vec<usize> = cols
            .iter()
            .map(|c| b.schema().index_of(c).unwrap())
            .collect();
        let mask = ProjectionMask::roots(b.parquet_schema(), idx);
        b = b.with_projection(mask);
    }
    b.build()
        .unwrap()
        .map(|b| b.unwrap().num_rows() as u64)
        .sum()
}
