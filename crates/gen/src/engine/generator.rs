//! [`SpecGenerator`](crate::SpecGenerator): a compiled spec as a
//! [`BatchGenerator`](crate::BatchGenerator): batches of rows, row
//! counts of child tables, and the rows a spec can hold.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use super::MAX_BATCH_ROWS;
use super::node::{Expand, Node, generate_siblings};
use super::scratch::SpecScratch;
use super::sequences::{SeqLimit, too_few_values};
use crate::{BatchGenerator, Error};

/// What the spec tells the Parquet writer about its leaves (paths as
/// Parquet spells them).
#[derive(Debug, Default)]
pub(super) struct Hints {
    /// Leaves of (nearly) all distinct values: no dictionary.
    pub(super) unfriendly: Vec<Vec<String>>,
    /// Integer-like leaves drawn as sequences: `DELTA_BINARY_PACKED`.
    pub(super) delta: Vec<Vec<String>>,
    /// The spec's own Parquet settings of leaves, by leaf path.
    pub(super) columns: Vec<(Vec<String>, crate::model::ParquetColumn)>,
}

/// A compiled spec: a [`BatchGenerator`] for one seed.
#[derive(Debug)]
pub struct SpecGenerator {
    pub(super) name: String,
    pub(super) schema: SchemaRef,
    pub(super) roots: Vec<Node>,
    /// Generation order of the top-level fields.
    pub(super) order: Vec<usize>,
    /// Top-level fields whose codes a sibling reads.
    pub(super) needs_codes: Vec<bool>,
    /// The top-level fields written (all but the hidden ones), in order:
    /// the schema's columns.
    pub(super) written: Vec<usize>,
    pub(super) hints: Hints,
    /// For a child table, the expansions from its root ancestor's rows to
    /// its own, outermost first: a batch's rows are the children of the
    /// root's rows it is asked for.
    pub(super) expand: Vec<Expand>,
    /// The most rows it can give, and the field that sets that limit (a
    /// `values_by_row` field without `cycle`).
    pub(super) row_limit: Option<(u64, String)>,
    /// The sequences that would leave their type's range (or whose index
    /// would pass 2^64) past some row.
    pub(super) seq_limits: Vec<SeqLimit>,
    /// The spec's file or preset name, for errors.
    pub(super) origin: String,
}

impl BatchGenerator for SpecGenerator {
    type Scratch = SpecScratch;

    fn name(&self) -> &str {
        &self.name
    }

    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn dictionary_unfriendly_leaves(&self) -> Vec<Vec<String>> {
        self.hints.unfriendly.clone()
    }

    fn delta_leaves(&self) -> Vec<Vec<String>> {
        self.hints.delta.clone()
    }

    fn parquet_columns(&self) -> Vec<(Vec<String>, crate::model::ParquetColumn)> {
        self.hints.columns.clone()
    }

    fn generate(
        &self,
        first_row: u64,
        len: usize,
        s: &mut SpecScratch,
    ) -> Result<RecordBatch, Error> {
        if len > MAX_BATCH_ROWS {
            return Err(Error::BatchTooLarge);
        }
        self.check_rows(first_row.saturating_add(len as u64))?;
        self.batch(first_row, len, s)
            .map_err(|e| e.in_table(&self.name, &self.origin))
    }

    fn recycle(&self, batch: RecordBatch, s: &mut SpecScratch) {
        let (_, columns, _) = batch.into_parts();
        for c in columns {
            let data = c.to_data();
            drop(c);
            s.reclaim_data(data);
        }
    }
}

impl SpecGenerator {
    /// The rows [`BatchGenerator::generate`] gives for `first_row ..
    /// first_row + len`: `len`, or for a child table the number of their
    /// descendants, counted without generating a field (`len` is walked
    /// 65,536 rows at a time).
    ///
    /// # Errors
    /// [`Error::BatchTooLarge`] as `generate` would give it.
    pub fn rows_of(&self, first_row: u64, len: u64) -> Result<u64, Error> {
        if self.expand.is_empty() {
            return Ok(len);
        }
        let mut s = SpecScratch::default();
        let mut total = 0;
        let mut at = first_row;
        while at < first_row + len {
            let n = (first_row + len - at).min(1 << 16);
            let mut ids = s.v64(n as usize);
            ids.extend(at..at + n);
            let ids = self.expanded(ids, &mut s)?;
            total += ids.len() as u64;
            s.put64(ids);
            at += n;
        }
        Ok(total)
    }

    /// Checks that rows `0..rows` can be generated: a `values_by_row`
    /// field without `cycle` has values for so many rows only, and a
    /// sequence keeps within its type's range (and its element index
    /// within 2^64) for so many. [`BatchGenerator::generate`] checks each
    /// batch's rows so; a caller that knows the rows checks them before
    /// writing anything.
    ///
    /// # Errors
    /// [`Error::InvalidDistribution`] naming the `values_by_row` field and
    /// its count; [`Error::Field`] naming the sequence's spec line, table
    /// and field, and the row where it would wrap.
    pub fn check_rows(&self, rows: u64) -> Result<(), Error> {
        if let Some((n, field)) = &self.row_limit
            && rows > *n
        {
            return Err(too_few_values(&self.name, field, *n, rows));
        }
        // A child table's rows are `p * max + k` of its root's rows `p`.
        let per_root = self
            .expand
            .iter()
            .fold(1u128, |p, e| p.saturating_mul(u128::from(e.counts.max)));
        for l in &self.seq_limits {
            l.check(rows, per_root)
                .map_err(|e| e.in_table(&self.name, &self.origin))?;
        }
        Ok(())
    }

    /// The ids of the rows whose root rows are `ids`: `ids` itself, or
    /// for a child table its descendants, generation by generation.
    pub(super) fn expanded(
        &self,
        mut ids: Vec<u64>,
        s: &mut SpecScratch,
    ) -> Result<Vec<u64>, Error> {
        for e in &self.expand {
            let mut all = s.v8(ids.len());
            all.resize(ids.len(), 1);
            let expanded = e.counts.children(&ids, &all, s);
            s.put8(all);
            let (offsets, children, valid) = match expanded {
                Ok(x) => x,
                Err(e) => {
                    s.put64(ids);
                    return Err(e);
                }
            };
            s.put8(valid);
            s.put32(offsets);
            s.put64(std::mem::replace(&mut ids, children));
        }
        Ok(ids)
    }
}

impl SpecGenerator {
    /// The rows of ids `ids` (any order, any gaps; a table with rows of
    /// its own), as [`BatchGenerator::generate`] gives each of them: row
    /// `i` of the batch is row `ids[i]`.
    ///
    /// # Errors
    /// [`Error::InvalidDistribution`] for a child table (its rows are
    /// its parents' descendants); as `generate` for rows past what the
    /// spec can give, or too many rows.
    pub fn generate_ids(&self, ids: &[u64], s: &mut SpecScratch) -> Result<RecordBatch, Error> {
        if !self.expand.is_empty() {
            return Err(Error::InvalidDistribution(format!(
                "table `{}`: rows by id are rows of a table with rows of its own, not of a child \
                 table",
                self.name
            )));
        }
        if ids.len() > MAX_BATCH_ROWS {
            return Err(Error::BatchTooLarge);
        }
        if let Some(&max) = ids.iter().max() {
            self.check_rows(max.saturating_add(1))?;
        }
        let mut v = s.v64(ids.len());
        v.extend_from_slice(ids);
        let arrays = generate_siblings(&self.roots, &self.order, &self.needs_codes, &v, s);
        s.put64(v);
        let arrays = arrays
            .map(|all| {
                if self.written.len() == all.len() {
                    return all;
                }
                self.written.iter().map(|&i| all[i].clone()).collect()
            })
            .map_err(|e| e.in_table(&self.name, &self.origin))?;
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(ids.len()));
        Ok(RecordBatch::try_new_with_options(
            self.schema.clone(),
            arrays,
            &options,
        )?)
    }

    /// Rows `first_row..first_row + len` (checked by `generate`).
    pub(super) fn batch(
        &self,
        first_row: u64,
        len: usize,
        s: &mut SpecScratch,
    ) -> Result<RecordBatch, Error> {
        let mut ids = s.v64(len);
        ids.extend(first_row..first_row + len as u64);
        let ids = self.expanded(ids, s)?;
        let rows = ids.len();
        if rows > MAX_BATCH_ROWS {
            s.put64(ids);
            return Err(Error::BatchTooLarge);
        }
        let arrays = generate_siblings(&self.roots, &self.order, &self.needs_codes, &ids, s);
        s.put64(ids);
        let arrays = arrays.map(|all| {
            if self.written.len() == all.len() {
                return all;
            }
            self.written.iter().map(|&i| all[i].clone()).collect()
        });
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(rows));
        Ok(RecordBatch::try_new_with_options(
            self.schema.clone(),
            arrays?,
            &options,
        )?)
    }
}
