//! A child table's history (`children_of` a table with `changes`): its
//! rows follow their root row's. A root row's insert brings its
//! children; its delete takes them with it under `cascade`, or leaves
//! them (orphans) under `orphan`; under `keep_parent` a root row with
//! children is never deleted ([`crate::history::History::protect`]). A
//! child row never changes otherwise.

use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Int64Array, RecordBatch, StringArray, StructArray,
    TimestampMillisecondArray, UInt32Array, UInt64Array,
};
use arrow_schema::{Fields, SchemaRef};
use strata_gen::{BatchGenerator as _, OnDelete, SpecGenerator, SpecScratch};

use super::{
    error::Error,
    history::{History, State},
    stream::{EPOCH_MS, VERSION_MS, envelope_schema, scd2_schema},
};

/// A child table's rows by root row.
#[derive(Debug)]
pub struct ChildImages {
    generator: SpecGenerator,
    key: Option<usize>,
    on_delete: OnDelete,
}

impl ChildImages {
    /// The rows `generator` (the child table's) makes; `key` is its
    /// primary key, if it has one; `on_delete` the root table's policy.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] when the schema has no column `key`.
    pub fn new(
        generator: SpecGenerator,
        key: Option<&str>,
        on_delete: OnDelete,
    ) -> Result<ChildImages, Error> {
        let key = key
            .map(|k| {
                generator.schema().index_of(k).map_err(|_| {
                    Error::InvalidConfig(format!(
                        "table `{}` writes no column `{k}` (its primary key)",
                        generator.name()
                    ))
                })
            })
            .transpose()?;
        Ok(ChildImages {
            generator,
            key,
            on_delete,
        })
    }

    /// The table's schema.
    pub fn schema(&self) -> SchemaRef {
        self.generator.schema()
    }

    /// The children of each root row of `roots`: their count per root.
    ///
    /// # Errors
    /// The generator's errors.
    pub fn counts(&self, roots: std::ops::Range<u64>) -> Result<Vec<u64>, Error> {
        roots.map(|r| Ok(self.generator.rows_of(r, 1)?)).collect()
    }

    /// The children of root rows `roots`, in root order, with each row's
    /// root.
    ///
    /// # Errors
    /// The generator's errors.
    pub fn rows(&self, roots: std::ops::Range<u64>) -> Result<(RecordBatch, Vec<u64>), Error> {
        let mut s = SpecScratch::default();
        let batch =
            self.generator
                .generate(roots.start, (roots.end - roots.start) as usize, &mut s)?;
        let mut root_of = Vec::with_capacity(batch.num_rows());
        for (r, n) in roots.clone().zip(self.counts(roots)?) {
            root_of.extend(std::iter::repeat_n(r, n as usize));
        }
        if root_of.len() != batch.num_rows() {
            return Err(Error::InvalidConfig(format!(
                "table `{}`: {} rows for roots that count {}",
                self.generator.name(),
                batch.num_rows(),
                root_of.len()
            )));
        }
        Ok((batch, root_of))
    }

    /// Whether a child of root `r` is there at version `v`.
    fn present(&self, h: &History, r: u64, v: u64) -> bool {
        match h.state(r, v) {
            State::Alive { .. } => true,
            State::Deleted(_) => self.on_delete == OnDelete::Orphan,
            State::Unborn => false,
        }
    }

    /// The children there at version `v` of root rows `roots`.
    ///
    /// # Errors
    /// The generator's errors.
    pub fn at_version(
        &self,
        h: &History,
        v: u64,
        roots: std::ops::Range<u64>,
    ) -> Result<RecordBatch, Error> {
        let roots = roots.start..roots.end.min(h.ids_at(v));
        let (batch, root_of) = self.rows(roots)?;
        let keep: Vec<u32> = (0..root_of.len() as u32)
            .filter(|&i| self.present(h, root_of[i as usize], v))
            .collect();
        Ok(arrow_select::take::take_record_batch(
            &batch,
            &UInt32Array::from(keep),
        )?)
    }

    /// The schema of the child's change stream: as
    /// [`crate::stream::Images::stream_schema`], the key column only when
    /// the table has a primary key.
    pub fn stream_schema(&self) -> SchemaRef {
        envelope_schema(&self.schema(), self.key)
    }

    /// The change stream of version `v` (from 1) over root rows `roots`:
    /// the children of roots inserted at `v` (`c`), and under `cascade`
    /// those of roots deleted at `v` (`d`).
    ///
    /// # Errors
    /// The generator's errors.
    pub fn changes(
        &self,
        h: &History,
        v: u64,
        roots: std::ops::Range<u64>,
    ) -> Result<RecordBatch, Error> {
        let roots = roots.start..roots.end.min(h.ids_at(v));
        let mut ops: Vec<(u32, &'static str)> = Vec::new();
        let (batch, root_of) = if v == 0 {
            (RecordBatch::new_empty(self.schema()), Vec::new())
        } else {
            self.rows(roots)?
        };
        for (i, &r) in root_of.iter().enumerate() {
            let born = h.born(r);
            if born == v {
                ops.push((i as u32, "c"));
            } else if self.on_delete == OnDelete::Cascade
                && born < v
                && h.state(r, v) == State::Deleted(v)
            {
                ops.push((i as u32, "d"));
            }
        }
        let rows = arrow_select::take::take_record_batch(
            &batch,
            &UInt32Array::from(ops.iter().map(|o| o.0).collect::<Vec<_>>()),
        )?;
        let fields = Fields::from(self.schema().fields().to_vec());
        let side = |valid: Vec<bool>| -> Result<ArrayRef, Error> {
            Ok(Arc::new(StructArray::try_new(
                fields.clone(),
                rows.columns().to_vec(),
                Some(valid.into()),
            )?))
        };
        let ts: Vec<i64> = ops
            .iter()
            .map(|&(i, _)| {
                let r = root_of[i as usize];
                let within = strata_gen::rng::StreamKey::new(v, r).first(0) % VERSION_MS as u64;
                EPOCH_MS + v as i64 * VERSION_MS + within as i64
            })
            .collect();
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from_iter_values(ops.iter().map(|o| o.1))),
            Arc::new(UInt64Array::from(vec![v; ops.len()])),
            Arc::new(Int64Array::from(ts)),
        ];
        if let Some(k) = self.key {
            columns.push(rows.column(k).clone());
        }
        columns.push(side(ops.iter().map(|o| o.1 == "d").collect())?);
        columns.push(side(ops.iter().map(|o| o.1 == "c").collect())?);
        Ok(RecordBatch::try_new(self.stream_schema(), columns)?)
    }

    /// The schema of the child's slowly changing dimension (as
    /// [`crate::stream::Images::scd2_schema`]).
    pub fn scd2_schema(&self) -> SchemaRef {
        scd2_schema(&self.schema())
    }

    /// The slowly changing dimension rows of the children of root rows
    /// `roots`: one per child, from its root's insert until its root's
    /// delete under `cascade`.
    ///
    /// # Errors
    /// The generator's errors.
    pub fn scd2(&self, h: &History, roots: std::ops::Range<u64>) -> Result<RecordBatch, Error> {
        let roots = roots.start..roots.end.min(h.ids_at(h.versions()));
        let (batch, root_of) = self.rows(roots)?;
        let mut from = Vec::with_capacity(root_of.len());
        let mut to = Vec::with_capacity(root_of.len());
        for &r in &root_of {
            from.push(EPOCH_MS + h.born(r) as i64 * VERSION_MS);
            to.push(match h.state(r, h.versions()) {
                State::Deleted(d) if self.on_delete == OnDelete::Cascade => {
                    Some(EPOCH_MS + d as i64 * VERSION_MS)
                }
                _ => None,
            });
        }
        let current: Vec<bool> = to.iter().map(Option::is_none).collect();
        let mut columns = batch.columns().to_vec();
        columns.push(Arc::new(
            TimestampMillisecondArray::from(from).with_timezone("UTC"),
        ));
        columns.push(Arc::new(
            TimestampMillisecondArray::from(to).with_timezone("UTC"),
        ));
        columns.push(Arc::new(BooleanArray::from(current)));
        Ok(RecordBatch::try_new(self.scd2_schema(), columns)?)
    }
}
