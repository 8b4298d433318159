//! A layout's keys over a table's batches: each row's partition (the
//! directory it goes to) and its sort key; one task's rows grouped by
//! partition and sorted within each while they are fresh in cache, each
//! partition's rows a contiguous sorted piece ([`Chunk`]); and a
//! partition's pieces of all tasks merged into sort-key order and
//! gathered ([`Ordered`]).

use arrow_array::UInt32Array;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{Schema, SchemaRef, SortOptions};
use rayon::prelude::*;
use strata_layout::{PartitionField, hive};
use strata_row::{KeyColumns, RowEncoder, Rows, SortField};
use strata_sort::SortKey;

use super::{Layout, partition_type};
use crate::Error;

/// The keys of a layout over a table's batches.
pub(super) struct Keys {
    /// Each partition field and its column in the table.
    fields: Vec<(PartitionField, usize)>,
    /// The encoder of the partition values (none without partitions).
    partition: Option<RowEncoder>,
    /// The table's columns written in the files.
    file_columns: Vec<usize>,
    /// The files' schema.
    pub(super) file_schema: SchemaRef,
    /// The sort keys within a partition, on the files' columns (a key on
    /// a dropped identity partition column is constant there).
    pub(super) file_keys: Vec<SortKey>,
    /// Those keys' encoder (none when rows keep their generation order).
    sort: Option<KeyColumns>,
    /// The first of them alone, when there are more (files are cut where
    /// it changes).
    first: Option<KeyColumns>,
}

/// One task's rows: its batch (the files' columns) grouped by partition
/// (in generation order within each), each row's encoded sort key, and
/// where each partition's rows are.
pub(super) struct Chunk {
    pub(super) batch: RecordBatch,
    /// Each row's sort key.
    pub(super) keys: Option<Rows>,
    /// Each row's first sort key (when the sort has several keys).
    pub(super) first: Option<Rows>,
    /// The rows of each partition, in the order the partitions appear.
    pub(super) pieces: Vec<Piece>,
    /// Memory held: the batch, the keys and the row numbers.
    pub(super) bytes: u64,
}

/// The rows of one partition in a [`Chunk`].
pub(super) struct Piece {
    /// The partition's encoded values.
    pub(super) key: Vec<u8>,
    /// Its directory.
    pub(super) dir: String,
    /// Its rows.
    pub(super) rows: std::ops::Range<usize>,
}

fn row_error(e: strata_row::Error) -> Error {
    Error::InvalidConfig(format!("layout: {e}"))
}

impl Keys {
    /// The keys of `layout` over rows of `schema`; the files' schema
    /// takes the field ids of `ids` (the same schema with ids), if given.
    pub(super) fn new(
        layout: &Layout,
        schema: &Schema,
        ids: Option<&Schema>,
    ) -> Result<Keys, Error> {
        let fields: Vec<(PartitionField, usize)> = layout
            .fields()
            .iter()
            .map(|f| {
                let i = schema.index_of(&f.source).map_err(|e| {
                    Error::InvalidConfig(format!("layout.partition_by `{}`: {e}", f.text))
                })?;
                Ok((f.clone(), i))
            })
            .collect::<Result<_, Error>>()?;
        let part_fields: Vec<SortField> = fields
            .iter()
            .map(|(f, _)| SortField::new(partition_type(f, schema)))
            .collect();
        let partition = if part_fields.is_empty() {
            None
        } else {
            Some(RowEncoder::new(part_fields.clone()).map_err(row_error)?)
        };
        let file_columns = layout.file_columns(schema);
        // Keys over the rows' own schema; the files' schema with the ids.
        let row_schema = schema.project(&file_columns)?;
        let file_schema = SchemaRef::new(match ids {
            Some(ids) => ids.project(&file_columns)?,
            None => row_schema.clone(),
        });
        let file_keys = super::keys_in(layout.keys(), &row_schema);
        let named: Vec<(&str, SortOptions)> = file_keys
            .iter()
            .map(|k| (k.column.as_str(), k.options))
            .collect();
        let key_columns = |named: &[(&str, SortOptions)]| {
            KeyColumns::new(&row_schema, named)
                .map_err(|e| Error::InvalidConfig(format!("layout.sort_by: {e}")))
        };
        let sort = if named.is_empty() {
            None
        } else {
            Some(key_columns(&named)?)
        };
        let first = if named.len() > 1 {
            Some(key_columns(&named[..1])?)
        } else {
            None
        };
        Ok(Keys {
            fields,
            partition,
            file_columns,
            file_schema,
            file_keys,
            sort,
            first,
        })
    }

    /// Each partition field's values for the rows of `batch`.
    fn partition_values(&self, batch: &RecordBatch) -> Result<Vec<ArrayRef>, Error> {
        self.fields
            .iter()
            .map(|(f, i)| {
                f.apply(batch.column(*i))
                    .map_err(|e| Error::InvalidConfig(e.to_string()))
            })
            .collect()
    }

    /// The directory of the partition of row `i` (values `values`).
    fn directory(&self, values: &[ArrayRef], i: usize) -> String {
        let segments: Vec<(&str, Option<String>)> = self
            .fields
            .iter()
            .zip(values)
            .map(|((f, _), v)| (f.name.as_str(), hive::human(f, v.as_ref(), i)))
            .collect();
        hive::directory(&segments)
    }

    /// `batch` (the table's schema) as a [`Chunk`]: its file columns
    /// grouped by partition (in generation order within each), each row's
    /// sort key (and first sort key, when `first_keys`), and each
    /// partition's piece of rows.
    pub(super) fn chunk(&self, batch: &RecordBatch, first_keys: bool) -> Result<Chunk, Error> {
        let n = batch.num_rows();
        let values = self.partition_values(batch)?;
        let projected = batch.project(&self.file_columns)?;
        // Each row's partition as its rank among the task's partitions (in
        // key order).
        let (partitions, part_of): (Vec<(Vec<u8>, usize)>, Vec<u32>) = match &self.partition {
            None => (vec![(Vec::new(), 0)], vec![0; n]),
            Some(enc) => {
                let encoded = enc.encode(&values).map_err(row_error)?;
                let mut first: std::collections::HashMap<&[u8], usize> = Default::default();
                let mut ids = Vec::with_capacity(n);
                for i in 0..n {
                    let next = first.len();
                    let id = *first.entry(encoded.row(i).as_bytes()).or_insert(next);
                    ids.push(id as u32);
                }
                let mut seen: Vec<(&[u8], usize)> = first.into_iter().collect();
                seen.sort_unstable();
                let mut rank = vec![0u32; seen.len()];
                for (r, (_, id)) in seen.iter().enumerate() {
                    rank[*id] = r as u32;
                }
                // A partition's key, and a row of it (for its directory).
                let mut row_of = vec![0usize; seen.len()];
                for (i, id) in ids.iter_mut().enumerate() {
                    *id = rank[*id as usize];
                    row_of[*id as usize] = i;
                }
                (
                    seen.iter()
                        .enumerate()
                        .map(|(r, (k, _))| (k.to_vec(), row_of[r]))
                        .collect(),
                    ids,
                )
            }
        };
        // The rows grouped by partition, in generation order within each
        // (a counting sort), then each partition's rows in sort-key order
        // (stable): a partition's pieces of all tasks are then merged,
        // not sorted again, and its gather reads each piece in order.
        let mut counts = vec![0usize; partitions.len()];
        for &p in &part_of {
            counts[p as usize] += 1;
        }
        let mut idx: Option<Vec<u32>> = if partitions.len() <= 1 {
            None
        } else {
            let mut next: Vec<usize> = counts
                .iter()
                .scan(0, |at, &c| {
                    let start = *at;
                    *at += c;
                    Some(start)
                })
                .collect();
            let mut idx = vec![0u32; n];
            for (i, &p) in part_of.iter().enumerate() {
                idx[next[p as usize]] = i as u32;
                next[p as usize] += 1;
            }
            Some(idx)
        };
        let mut keys = None;
        if let Some(k) = &self.sort {
            let encoded = k.encode(&projected).map_err(row_error)?;
            let mut order = idx.take().unwrap_or_else(|| (0..n as u32).collect());
            let mut start = 0;
            for &c in &counts {
                sort_by_key(&mut order[start..start + c], &encoded);
                start += c;
            }
            if order.iter().enumerate().all(|(i, &r)| i == r as usize) {
                // Already in order: the rows stay shared, keys and all.
                keys = Some(encoded);
            } else {
                idx = Some(order);
            }
        }
        let sorted = match &idx {
            Some(idx) => take(&projected, idx)?,
            None => projected,
        };
        let keys = match (&self.sort, keys) {
            (_, Some(k)) => Some(k),
            (Some(k), None) => Some(k.encode(&sorted).map_err(row_error)?),
            (None, None) => None,
        };
        let first = match (&self.first, first_keys) {
            (Some(k), true) => Some(k.encode(&sorted).map_err(row_error)?),
            _ => None,
        };
        // The pieces, in partition order: each partition's rows are
        // contiguous now.
        let mut pieces = Vec::with_capacity(partitions.len());
        let mut start = 0;
        for ((key, row), count) in partitions.into_iter().zip(counts) {
            let dir = if self.partition.is_some() {
                self.directory(&values, row)
            } else {
                String::new()
            };
            pieces.push(Piece {
                key,
                dir,
                rows: start..start + count,
            });
            start += count;
        }
        let rows_bytes = |r: &Option<Rows>| {
            r.as_ref()
                .map_or(0, |r| r.data().len() + r.offsets().len() * 8) as u64
        };
        let bytes = sorted.get_array_memory_size() as u64 + rows_bytes(&keys) + rows_bytes(&first);
        Ok(Chunk {
            batch: sorted,
            keys,
            first,
            pieces,
            bytes,
        })
    }

    /// Whether rows are ordered within a partition.
    pub(super) fn sorts(&self) -> bool {
        self.sort.is_some()
    }
}

/// Rows of one partition gathered from several batches, in output order.
pub(super) struct Ordered<'a> {
    /// The batches (the files' columns).
    pub(super) batches: Vec<RecordBatch>,
    /// Each batch's rows' first sort keys, where files are cut by them.
    pub(super) firsts: Vec<Option<&'a Rows>>,
    /// The rows as (batch, row), in output order.
    pub(super) order: Vec<(usize, usize)>,
}

impl<'a> Ordered<'a> {
    /// The rows of `parts` (each a chunk and its piece of one partition,
    /// in task order, each piece in sort-key order) in sort-key order;
    /// equal keys keep their order.
    pub(super) fn of(
        keys: &Keys,
        parts: &[(&'a Chunk, std::ops::Range<usize>)],
    ) -> Result<Ordered<'a>, Error> {
        let order = if keys.sorts() {
            let runs: Vec<(&Rows, std::ops::Range<usize>)> = parts
                .iter()
                .map(|(c, rows)| c.keys.as_ref().map(|k| (k, rows.clone())))
                .collect::<Option<_>>()
                .ok_or_else(|| Error::InvalidConfig("layout: a chunk without keys".into()))?;
            strata_sort::merge::merge_rows(&runs)
        } else {
            parts
                .iter()
                .enumerate()
                .flat_map(|(b, (_, rows))| rows.clone().map(move |r| (b, r)))
                .collect()
        };
        Ok(Ordered {
            batches: parts.iter().map(|(c, _)| c.batch.clone()).collect(),
            firsts: parts
                .iter()
                .map(|(c, _)| c.first.as_ref().or(c.keys.as_ref()))
                .collect(),
            order,
        })
    }

    /// `batches` read from a sorted run, their rows in order, with
    /// `firsts` (each batch's first sort keys, or none).
    pub(super) fn in_order(batches: Vec<RecordBatch>, firsts: &'a [Option<Rows>]) -> Ordered<'a> {
        let firsts = (0..batches.len())
            .map(|b| firsts.get(b).and_then(Option::as_ref))
            .collect();
        let order = batches
            .iter()
            .enumerate()
            .flat_map(|(b, batch)| (0..batch.num_rows()).map(move |r| (b, r)))
            .collect();
        Ordered {
            batches,
            firsts,
            order,
        }
    }

    /// The first sort key of the row at position `i`, if known.
    pub(super) fn first_key(&self, i: usize) -> Option<&[u8]> {
        let (b, r) = *self.order.get(i)?;
        Some(self.firsts.get(b).copied()??.row(r).as_bytes())
    }

    /// The rows at positions `range` gathered into one batch, its columns
    /// on all threads.
    pub(super) fn gather(&self, range: std::ops::Range<usize>) -> Result<RecordBatch, Error> {
        let Some(first) = self.batches.first() else {
            return Err(Error::InvalidConfig("layout: no rows to gather".into()));
        };
        let rows = &self.order[range];
        let columns = (0..first.num_columns())
            .into_par_iter()
            .map(|c| {
                let arrays: Vec<&dyn arrow_array::Array> =
                    self.batches.iter().map(|b| b.column(c).as_ref()).collect();
                arrow_select::interleave::interleave(&arrays, rows)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(rows.len()));
        Ok(RecordBatch::try_new_with_options(
            first.schema(),
            columns,
            &options,
        )?)
    }

    /// Memory of the batches' rows in order (the batches' sizes, shared
    /// out by their rows gathered here).
    pub(super) fn memory(&self) -> u64 {
        let mut rows = vec![0usize; self.batches.len()];
        for &(b, _) in &self.order {
            rows[b] += 1;
        }
        self.batches
            .iter()
            .zip(rows)
            .map(|(b, n)| {
                (b.get_array_memory_size() as f64 * n as f64 / b.num_rows().max(1) as f64) as u64
            })
            .sum()
    }
}

/// Sorts the row numbers `rows` by their keys in `keys`, stably (equal
/// keys keep their order in `rows`, which ascends): by the keys' 16-byte
/// prefixes first, the whole keys only where those are equal.
fn sort_by_key(rows: &mut [u32], keys: &Rows) {
    let mut entries: Vec<([u64; 2], u32)> = rows
        .iter()
        .map(|&r| (strata_sort::key_prefix(keys.row(r as usize).as_bytes()), r))
        .collect();
    entries.sort_unstable_by(|x, y| {
        x.0.cmp(&y.0)
            .then_with(|| {
                keys.row(x.1 as usize)
                    .as_bytes()
                    .cmp(keys.row(y.1 as usize).as_bytes())
            })
            .then(x.1.cmp(&y.1))
    });
    for (r, (_, e)) in rows.iter_mut().zip(entries) {
        *r = e;
    }
}

/// `batch`'s rows at `idx`, the columns gathered on all threads.
fn take(batch: &RecordBatch, idx: &[u32]) -> Result<RecordBatch, Error> {
    let indices = UInt32Array::from(idx.to_vec());
    let columns = batch
        .columns()
        .par_iter()
        .map(|c| arrow_select::take::take(c.as_ref(), &indices, None))
        .collect::<Result<Vec<_>, _>>()?;
    let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(idx.len()));
    Ok(RecordBatch::try_new_with_options(
        batch.schema(),
        columns,
        &options,
    )?)
}
