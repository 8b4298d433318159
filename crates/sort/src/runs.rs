//! The reading phase of a sort: the input's batches collect into a run
//! until it reaches its budget (two fifths of the memory limit); a full
//! run is sorted and spilled ([`crate::external::Spill`]). When nothing
//! was spilled at the end, the batches are sorted in memory instead.

use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::file::metadata::ParquetMetaData;
use strata_parquet::Format;

use crate::{
    config::{ByteSize, SortConfig, output_parent},
    error::Error,
    external::Spill,
    input::{Batches, largest_row_group},
    order::Sorter,
};

/// The reading phase: batches collect into a run until it reaches its
/// budget, when the run is sorted and spilled.
pub(crate) struct Runs<'a> {
    cfg: &'a SortConfig,
    /// The run's budget of in-memory bytes.
    pub(crate) budget: u64,
    /// The sort's schema: the first input's.
    pub(crate) schema: Option<SchemaRef>,
    first_input: PathBuf,
    /// The batches of the run being collected.
    pub(crate) pending: Vec<RecordBatch>,
    /// Their in-memory bytes.
    pub(crate) pending_memory: u64,
    /// The spilled runs, once one is.
    pub(crate) spill: Option<Spill>,
    /// Rows read.
    pub(crate) rows: u64,
    /// Rows in the largest batch read (at least 1).
    pub(crate) batch_rows: usize,
    /// Rows in the largest row group of the Parquet inputs.
    pub(crate) row_group_rows: Option<usize>,
    /// The output's format when it is one file.
    format: Option<Format>,
}

impl<'a> Runs<'a> {
    /// Nothing read yet for the sort `cfg` of inputs starting with
    /// `first_input`, into one file of `format` (or a directory: `None`).
    pub(crate) fn new(cfg: &'a SortConfig, first_input: PathBuf, format: Option<Format>) -> Self {
        Runs {
            cfg,
            budget: (cfg.memory_limit / 5 * 2).max(1),
            schema: None,
            first_input,
            pending: Vec::new(),
            pending_memory: 0,
            spill: None,
            rows: 0,
            batch_rows: 1,
            row_group_rows: None,
            format,
        }
    }

    /// Sorts and spills the pending run.
    pub(crate) fn spill_pending(&mut self) -> Result<(), Error> {
        if self.spill.is_none() {
            let schema = self.schema.clone().ok_or_else(|| {
                Error::InvalidConfig("nothing to spill before the first batch".into())
            })?;
            if let Some(f @ Format::Ipc) = self.format {
                return Err(Error::InvalidConfig(format!(
                    "the input is larger than --memory-limit ({}), and a sort that spills \
                     writes Parquet; the output {} is {f}",
                    ByteSize(self.cfg.memory_limit),
                    self.cfg.output.display()
                )));
            }
            let parent = match &self.cfg.spill_dir {
                Some(d) => d.as_path(),
                None => output_parent(&self.cfg.output),
            };
            self.spill = Some(Spill::create(
                parent,
                schema,
                &self.cfg.keys,
                self.cfg.progress.clone(),
            )?);
        }
        let batches = std::mem::take(&mut self.pending);
        self.pending_memory = 0;
        let Some(s) = self.spill.as_mut() else {
            return Ok(());
        };
        let sizes: Vec<u64> = batches
            .iter()
            .map(|b| b.get_array_memory_size() as u64)
            .collect();
        let mut rest = batches.into_iter();
        for (run, bytes) in split_runs(&sizes, MAX_RUN_BYTES) {
            s.spill(rest.by_ref().take(run.len()).collect(), bytes)?;
        }
        Ok(())
    }
}

impl Batches for Runs<'_> {
    /// Takes the schema of input `path`: the first input's is the sort's
    /// (and its keys are checked against it), every other must have the
    /// same fields.
    fn schema(&mut self, path: &Path, schema: SchemaRef) -> Result<(), Error> {
        match &self.schema {
            None => {
                // Named errors for bad keys come from the schema as the
                // user sees it.
                Sorter::new(&schema, &self.cfg.keys)?;
                self.schema = Some(schema);
            }
            Some(s) if s.fields() != schema.fields() => {
                return Err(Error::InvalidConfig(format!(
                    "{} has a different schema from {}",
                    path.display(),
                    self.first_input.display()
                )));
            }
            Some(_) => {}
        }
        Ok(())
    }

    /// Adds one batch of input `path`.
    fn push(&mut self, path: &Path, batch: &RecordBatch) -> Result<(), Error> {
        if self
            .schema
            .as_ref()
            .is_some_and(|s| s.fields() != batch.schema_ref().fields())
        {
            return Err(Error::InvalidConfig(format!(
                "a batch of {} does not have the file's schema",
                path.display()
            )));
        }
        if batch.num_rows() == 0 {
            return Ok(());
        }
        self.rows += batch.num_rows() as u64;
        self.batch_rows = self.batch_rows.max(batch.num_rows());
        if let Some(p) = &self.cfg.progress {
            p.rows_read.fetch_add(
                batch.num_rows() as u64,
                std::sync::atomic::Ordering::Relaxed,
            );
        }
        let size = batch.get_array_memory_size() as u64;
        if self.pending_memory + size > self.budget && !self.pending.is_empty() {
            self.spill_pending()?;
        }
        self.pending.push(batch.clone());
        self.pending_memory += size;
        Ok(())
    }

    /// Takes note of a Parquet input's footer: its largest row group (the
    /// output's row groups are at least as large) and its rows (for the
    /// progress bar).
    fn footer(&mut self, md: &ParquetMetaData) {
        self.row_group_rows = self.row_group_rows.max(largest_row_group(md));
        if let Some(p) = &self.cfg.progress {
            p.input_rows.fetch_add(
                md.file_metadata().num_rows().max(0) as u64,
                std::sync::atomic::Ordering::Relaxed,
            );
        }
    }
}

/// Splits batches of `sizes` bytes, in order, into runs of at most `cap`
/// bytes each (a batch larger than `cap` is a run of its own), with each
/// run's bytes.
fn split_runs(sizes: &[u64], cap: u64) -> Vec<(std::ops::Range<usize>, u64)> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0u64);
    for (i, &size) in sizes.iter().enumerate() {
        if bytes + size > cap && i > start {
            out.push((start..i, bytes));
            (start, bytes) = (i, 0);
        }
        bytes += size;
    }
    if start < sizes.len() {
        out.push((start..sizes.len(), bytes));
    }
    out
}

/// The most in-memory bytes of one spilled run, whatever the limit: a run
/// is sorted and its rows gathered in key order, which goes through memory
/// at random, so runs much larger than this spend their time in cache and
/// TLB misses. 140M `events` rows (4 GB of Parquet) at a 1 GiB limit, 2
/// threads: 37 runs of 410 MiB took 194 s to read, sort and spill and 121
/// s to merge; 146 runs of 128 MiB 118 s and 173 s; 73 runs of 256 MiB
/// 119 s and 130 s.
const MAX_RUN_BYTES: u64 = 256 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_batches_split_into_runs_under_the_cap() {
        let sizes = [5, 5, 5, 12, 3, 3, 3, 3, 10];
        let got = split_runs(&sizes, 10);
        assert_eq!(
            got,
            vec![
                (0..2, 10),
                (2..3, 5),
                (3..4, 12),
                (4..7, 9),
                (7..8, 3),
                (8..9, 10)
            ]
        );
        // Every batch once, in order; only a lone batch passes the cap.
        let mut next = 0;
        for (r, bytes) in &got {
            assert_eq!(r.start, next);
            next = r.end;
            assert_eq!(*bytes, sizes[r.clone()].iter().sum::<u64>());
            assert!(*bytes <= 10 || r.len() == 1);
        }
        assert_eq!(next, sizes.len());
        assert!(split_runs(&[], 10).is_empty());
        assert_eq!(split_runs(&[7, 7], 100), vec![(0..2, 14)]);
    }
}
