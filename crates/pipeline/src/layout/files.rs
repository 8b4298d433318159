//! A partition's rows into its files: gathered from the tasks' batches
//! into batches of [`BATCH_ROWS`] x 8 rows for the encoder, cut at the
//! target size where the first sort key changes and at row groups of the
//! layout's bytes; a partition that spilled is merged from its runs.

use std::{
    fs,
    io::BufWriter,
    ops::Range,
    path::{Path, PathBuf},
};

use arrow_array::RecordBatch;
use arrow_schema::SortOptions;
use parquet::file::properties::WriterProperties;
use strata_gen::RowGroupSize;
use strata_parquet::writer::ParquetWriter;
use strata_row::Rows;
use strata_store::FromStore as _;
use strata_store::output::PendingFile;

use super::{
    Layout, Target,
    keys::{Keys, Ordered},
};
use crate::{Error, counts::FileSummary};

/// Rows of a partition encoded on trial, for its bytes per row.
const TRIAL_ROWS: usize = 1 << 16;

/// Rows per batch of the merges of spilled runs, and per gathered write.
pub(super) const BATCH_ROWS: usize = 8192;

/// What writes a partition's files.
pub(super) struct Files<'a> {
    pub(super) keys: &'a Keys,
    pub(super) props: &'a WriterProperties,
    pub(super) layout: &'a Layout,
    pub(super) cfg: &'a Target,
    /// Whether a write's leaf columns are encoded on all threads (not when
    /// partitions are already written one per thread).
    pub(super) parallel_leaves: bool,
}

impl Files<'_> {
    /// The path of file `k` of a partition directory `dir`.
    fn file_path(&self, dir: &Path, k: usize) -> PathBuf {
        dir.join(format!("{}_{k}.parquet", self.cfg.stem))
    }

    /// A writer of the files' schema into `sink`.
    fn writer<W: std::io::Write + Send>(&self, sink: W) -> Result<ParquetWriter<W>, Error> {
        let mut w = ParquetWriter::with_encoder(
            sink,
            self.keys.file_schema.clone(),
            self.props.clone(),
            self.cfg.encoder,
        )?;
        w.set_page_checksums(self.cfg.page_checksums);
        w.set_parallel_leaves(self.parallel_leaves);
        Ok(w)
    }

    /// Writes one partition's rows, in order, into files in `dir`, cut at
    /// the target size.
    pub(super) fn write(&self, dir: &Path, rows: &Ordered<'_>) -> Result<Vec<FileSummary>, Error> {
        let n = rows.order.len();
        let mut files = Vec::new();
        let Some(target) = self.layout.target_file_size else {
            files.push(self.write_file(&self.file_path(dir, 0), rows, 0..n, None)?);
            return Ok(files);
        };
        // A file's bytes as a fixed part (footer, indexes) and bytes per
        // row: from trial encodings of the first rows (not needed when the
        // rows in memory fit one file), then from the files written.
        let (fixed, mut per_row) = if rows.memory() <= target {
            (0.0, 0.0)
        } else {
            self.trial_sizes(rows, target)?
        };
        let (mut done_rows, mut done_bytes) = (0u64, 0u64);
        let mut at = 0;
        while at < n {
            let rest = n - at;
            let take = if per_row <= 0.0 {
                rest
            } else {
                let want = (((target as f64 - fixed) / per_row).round() as usize).max(1);
                // A last file of less than a tenth of the target joins
                // this one; else the cut goes where the first sort key
                // changes, within a twentieth of the rows wanted, so that
                // no two files of a partition share a value of it.
                if rest <= want + want / 10 {
                    rest
                } else {
                    nearest_change(rows, at + want, want / 20).map_or(want, |cut| cut - at)
                }
            };
            let f = self.write_file(
                &self.file_path(dir, files.len()),
                rows,
                at..at + take,
                (per_row > 0.0).then_some(per_row),
            )?;
            done_rows += f.rows;
            done_bytes += f.bytes;
            files.push(f);
            let measured = (done_bytes as f64 - files.len() as f64 * fixed) / done_rows as f64;
            if measured > 0.0 {
                per_row = measured;
            }
            at += take;
        }
        Ok(files)
    }

    /// A file's bytes as (fixed, per row) near `target` bytes: a trial
    /// encoding of up to [`TRIAL_ROWS`] first rows guesses the rows of a
    /// file of `target` bytes, then two trials of that many rows (at most
    /// [`TRIAL_ROWS`]) and half as many fit a line (dictionaries and
    /// footers make bytes per row depend on the rows).
    fn trial_sizes(&self, rows: &Ordered<'_>, target: u64) -> Result<(f64, f64), Error> {
        let r1 = rows.order.len().min(TRIAL_ROWS);
        let trial = rows.gather(0..r1)?;
        let b1 = self.trial_bytes(&trial)? as f64;
        let guess = (target as f64 / (b1 / r1.max(1) as f64)).round() as usize;
        let hi = guess.clamp(1, r1);
        let lo = hi / 2;
        if lo == 0 {
            return Ok((0.0, b1 / r1.max(1) as f64));
        }
        let b_hi = if hi == r1 {
            b1
        } else {
            self.trial_bytes(&trial.slice(0, hi))? as f64
        };
        let b_lo = self.trial_bytes(&trial.slice(0, lo))? as f64;
        let per_row = (b_hi - b_lo) / (hi - lo) as f64;
        if per_row <= 0.0 {
            return Ok((0.0, b_hi / hi as f64));
        }
        Ok(((b_hi - hi as f64 * per_row).max(0.0), per_row))
    }

    /// The bytes of `rows` encoded as a file.
    fn trial_bytes(&self, rows: &RecordBatch) -> Result<usize, Error> {
        let mut w = self.writer(Vec::new())?;
        w.write(rows)?;
        Ok(w.finish()?.len())
    }

    /// Writes the rows at positions `range` of `rows` as the file `path`.
    /// Where the layout gives row groups in bytes, each row group's rows
    /// are that many bytes over the bytes per row: `bpr` (or a trial's)
    /// for the first, then the file's own so far.
    fn write_file(
        &self,
        path: &Path,
        rows: &Ordered<'_>,
        range: Range<usize>,
        bpr: Option<f64>,
    ) -> Result<FileSummary, Error> {
        let (pending, sink) = PendingFile::create_direct(path.to_path_buf(), false)?;
        let mut w = self.writer(BufWriter::with_capacity(1 << 20, sink))?;
        let n = range.len();
        let write = |w: &mut ParquetWriter<_>, r: Range<usize>| -> Result<(), Error> {
            let mut at = r.start;
            while at < r.end {
                let end = (at + BATCH_ROWS * 8).min(r.end);
                w.write(&rows.gather(at..end)?)?;
                at = end;
            }
            Ok(())
        };
        match self.layout.row_group_size {
            Some(RowGroupSize::Bytes(g)) => {
                let mut bpr = match bpr {
                    Some(b) => b,
                    None => {
                        let trial_rows = Ordered {
                            batches: rows.batches.clone(),
                            firsts: Vec::new(),
                            order: rows.order[range.clone()].to_vec(),
                        };
                        self.trial_sizes(&trial_rows, g)?.1
                    }
                };
                let mut done = 0;
                while done < n {
                    let k = ((g as f64 / bpr.max(1e-9)) as usize).clamp(1, n - done);
                    let start = range.start + done;
                    write(&mut w, start..start + k)?;
                    w.flush()?;
                    done += k;
                    bpr = w.bytes_written() as f64 / done as f64;
                }
            }
            _ => write(&mut w, range)?,
        }
        let buffered = w.finish()?;
        let f = buffered
            .into_inner()
            .map_err(|e| Error::io("write", path, e.into_error()))?;
        let bytes = f.position();
        f.finish().map_err(|e| Error::io("write", path, e))?;
        pending.commit()?;
        Ok(FileSummary {
            path: path.to_path_buf(),
            first_row: self.cfg.rows.start,
            rows: n as u64,
            bytes,
            groups: row_groups(path)?,
        })
    }

    /// Writes a partition's rows, in order, as the spill file `path`
    /// (lz4, no statistics); returns its bytes.
    pub(super) fn write_run(&self, path: &Path, rows: &Ordered<'_>) -> Result<u64, Error> {
        let props = WriterProperties::builder()
            .set_compression(parquet::basic::Compression::LZ4_RAW)
            .set_statistics_enabled(parquet::file::properties::EnabledStatistics::None)
            .set_max_row_group_row_count(Some(1 << 16))
            .build();
        let f = fs::File::create(path).map_err(|e| Error::io("create", path, e))?;
        let mut w = ParquetWriter::try_new(
            BufWriter::with_capacity(1 << 20, f),
            self.keys.file_schema.clone(),
            props,
        )?;
        w.set_page_checksums(false);
        w.set_parallel_leaves(self.parallel_leaves);
        let mut at = 0;
        while at < rows.order.len() {
            let end = (at + BATCH_ROWS * 8).min(rows.order.len());
            w.write(&rows.gather(at..end)?)?;
            at = end;
        }
        let b = w.finish()?;
        let f = b
            .into_inner()
            .map_err(|e| Error::io("write", path, e.into_error()))?;
        Ok(f.metadata().map_err(|e| Error::io("write", path, e))?.len())
    }

    /// Merges one partition's sorted runs into its files in `dir`, on
    /// `threads` threads.
    pub(super) fn merge_runs(
        &self,
        dir: &Path,
        runs: &[PathBuf],
        threads: usize,
    ) -> Result<Vec<FileSummary>, Error> {
        if self.keys.file_keys.is_empty() {
            // No order within the partition: the runs, one after another.
            return self.copy_runs(dir, runs);
        }
        let stem = &self.cfg.stem;
        let name = |k: usize| format!("{stem}_{k}.parquet");
        let key: Vec<String> = self
            .keys
            .file_keys
            .iter()
            .map(|k| k.column.clone())
            .collect();
        let order: Vec<SortOptions> = self.keys.file_keys.iter().map(|k| k.options).collect();
        let mut props = self.props.clone();
        if let (Some(RowGroupSize::Bytes(g)), Some(bpr)) =
            (self.layout.row_group_size, spilled_bytes_per_row(runs))
        {
            props = props
                .into_builder()
                .set_max_row_group_row_count(Some(((g as f64 / bpr) as usize).max(1)))
                .build();
        }
        let cfg = strata_sort::merge::MergeConfig {
            key,
            order,
            target_file_bytes: self.layout.target_file_size.unwrap_or(u64::MAX),
            batch_rows: BATCH_ROWS,
            threads,
            properties: Some(props),
            replace: false,
            ..Default::default()
        };
        let merged = strata_sort::merge::merge_files(runs, dir, &name, &cfg)
            .map_err(|e| Error::InvalidConfig(format!("merging the spilled runs: {e}")))?;
        merged
            .into_iter()
            .map(|m| {
                Ok(FileSummary {
                    groups: row_groups(&m.path)?,
                    path: m.path,
                    first_row: self.cfg.rows.start,
                    rows: m.rows,
                    bytes: m.bytes,
                })
            })
            .collect()
    }

    /// The runs of a partition without sort keys, read in order into its
    /// files.
    fn copy_runs(&self, dir: &Path, runs: &[PathBuf]) -> Result<Vec<FileSummary>, Error> {
        let mut batches = Vec::new();
        for r in runs {
            batches.extend(read_run(r)?);
        }
        let none: Vec<Option<Rows>> = Vec::new();
        self.write(dir, &Ordered::in_order(batches, &none))
    }
}

/// The position nearest `at` (within `slack` either side) whose row's
/// first sort key differs from the row's before it.
fn nearest_change(rows: &Ordered<'_>, at: usize, slack: usize) -> Option<usize> {
    let n = rows.order.len();
    let changes = |i: usize| {
        i >= 1
            && i < n
            && matches!(
                (rows.first_key(i), rows.first_key(i - 1)),
                (Some(a), Some(b)) if a != b
            )
    };
    (0..=slack).find_map(|d| {
        if changes(at.saturating_sub(d)) {
            Some(at.saturating_sub(d))
        } else if changes(at + d) {
            Some(at + d)
        } else {
            None
        }
    })
}

/// The batches of spill file `path`.
fn read_run(path: &Path) -> Result<Vec<RecordBatch>, Error> {
    let f = fs::File::open(path).map_err(|e| Error::io("open", path, e))?;
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f)?
        .with_batch_size(BATCH_ROWS)
        .build()?;
    reader.collect::<Result<Vec<_>, _>>().map_err(Error::from)
}

/// Bytes per row of the spill files `runs` (their rows' sizes in the
/// files, a guide to the output's).
fn spilled_bytes_per_row(runs: &[PathBuf]) -> Option<f64> {
    let (mut rows, mut bytes) = (0u64, 0u64);
    for r in runs {
        let f = fs::File::open(r).ok()?;
        let md = parquet::file::metadata::ParquetMetaDataReader::new()
            .parse_and_finish(&f)
            .ok()?;
        rows += md.file_metadata().num_rows() as u64;
        bytes += f.metadata().ok()?.len();
    }
    (rows > 0).then(|| bytes as f64 / rows as f64)
}

/// Row groups of the Parquet file `path`.
fn row_groups(path: &Path) -> Result<usize, Error> {
    let f = fs::File::open(path).map_err(|e| Error::io("open", path, e))?;
    let md = parquet::file::metadata::ParquetMetaDataReader::new().parse_and_finish(&f)?;
    Ok(md.num_row_groups())
}
