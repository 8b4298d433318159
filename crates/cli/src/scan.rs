//! `strata scan`: a projected read to text on standard output or a file.

use std::{io::Write, path::PathBuf};

use anyhow::Result;
use arrow_array::RecordBatch;
use clap::Args;
use strata_scan::{
    Filter, MultiScanner, ScanRequest,
    write::{BatchFile, OutputFormat, write_text},
};

use crate::common::{StoreArgs, parse};

#[derive(Args, Debug)]
pub(crate) struct ScanArgs {
    /// Local paths, file:///ABSOLUTE/PATH or s3://BUCKET/KEY, read as one
    /// input in this order: a directory (or s3://BUCKET/PREFIX/) gives its
    /// .parquet, .arrow, .ipc and .feather files, a * or ? in the file name
    /// the data files it matches (hidden and _-prefixed files skipped,
    /// numbers in names in numeric order). All files need the same columns.
    #[arg(required = true, num_args = 1..)]
    locations: Vec<String>,
    /// Top-level columns to read, in output order: `a,b,c` [default: all].
    #[arg(long, value_delimiter = ',')]
    columns: Option<Vec<String>>,
    /// Keep rows where this SQL boolean expression over the columns is true,
    /// in the dialect of spec expressions (docs/src/commands/scan.md), e.g.
    /// "id > 5", "name = 'Ann' AND price < 2.50" (decimals compare exactly),
    /// "day BETWEEN '2024-05-01' AND '2024-05-31'", "city IN ('Oslo',
    /// 'Bergen') OR ts < '2024-05-01 12:00:00+02:00'" or "name LIKE 'A%'".
    /// Parquet row groups whose statistics rule the filter out are not read.
    #[arg(long, value_parser = parse::<Filter, _>)]
    filter: Option<Filter>,
    /// Return at most this many rows.
    #[arg(long)]
    limit: Option<usize>,
    /// Return these rows (0-based, in this order, numbered across the
    /// files), reading only the batches or row groups that hold them.
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["filter", "limit"])]
    take: Option<Vec<u64>>,
    /// Print `requests N, bytes fetched N, bytes decoded N, elapsed S` to
    /// standard error at the end.
    #[arg(long)]
    stats: bool,
    /// Write the rows to this file instead: .parquet, .arrow/.ipc/.feather,
    /// .csv or .jsonl. It appears only when complete.
    #[arg(short, long, value_parser = crate::common::local_output)]
    output: Option<PathBuf>,
    /// Replace the output file if it exists.
    #[arg(long)]
    overwrite: bool,
    #[command(flatten)]
    store: StoreArgs,
}

pub(crate) fn run(args: ScanArgs) -> Result<()> {
    let cfg = args.store.config();
    if let Some(out) = &args.output {
        // Refuse a bad output before reading anything.
        OutputFormat::from_path(out)?;
        if !args.overwrite && out.exists() {
            return Err(strata_store::Error::OutputExists {
                path: out.clone(),
                count: 1,
            }
            .into());
        }
    }
    let mut scanner = MultiScanner::open_locations(&args.locations, &cfg)?;
    let columns = args.columns.as_deref();
    let schema = scanner.projected_schema(columns)?;
    let file = match &args.output {
        Some(p) => Some(BatchFile::create(p, &schema, args.overwrite)?),
        None => None,
    };
    let stdout = std::io::stdout();
    let mut sink = RowSink {
        file,
        out: std::io::BufWriter::new(stdout.lock()),
        header_done: false,
    };
    if let Some(rows) = &args.take {
        let b = scanner.take(rows, columns)?;
        sink.emit(&b)?;
    } else {
        let req = ScanRequest {
            columns: args.columns.clone(),
            filter: args.filter.clone(),
            limit: args.limit,
        };
        scanner.scan(&req, |b| sink.emit(b))?;
    }
    sink.finish(schema)?;
    if args.stats {
        let s = scanner.stats();
        eprintln!(
            "requests {}, bytes fetched {}, bytes decoded {}, elapsed {:.3}",
            s.io.requests, s.io.bytes_fetched, s.bytes_decoded, s.elapsed_s
        );
    }
    Ok(())
}

/// Where scanned rows go: an output file, or text on standard output.
struct RowSink<W: Write> {
    file: Option<BatchFile>,
    out: W,
    header_done: bool,
}

impl<W: Write> RowSink<W> {
    fn emit(&mut self, b: &RecordBatch) -> Result<(), strata_scan::Error> {
        match &mut self.file {
            Some(f) => f.write(b),
            None => {
                write_text(&mut self.out, b, !self.header_done)?;
                self.header_done = true;
                Ok(())
            }
        }
    }

    fn finish(mut self, schema: arrow_schema::SchemaRef) -> Result<()> {
        match self.file.take() {
            Some(f) => {
                f.finish()?;
            }
            None => {
                if !self.header_done {
                    // No rows: the header alone.
                    self.emit(&RecordBatch::new_empty(schema))?;
                }
                self.out.flush()?;
            }
        }
        Ok(())
    }
}
