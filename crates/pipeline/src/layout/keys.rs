//! A layout's keys over a table's batches: each row's partition (the
//! directory it goes to) and its sort key, and one task's rows grouped by
//! partition ([`Chunk`]), none of them copied.

use std::collections::HashMap;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{Schema, SchemaRef, SortOptions};
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

/// One task's rows: its batch (the files' columns, in generation order),
/// each row's encoded sort key, and the rows of each partition.
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
    /// Its rows, ascending.
    pub(super) rows: Vec<u32>,
}

fn row_error(e: strata_row::Error) -> Error {
    Error::InvalidConfig(format!("layout: {e}"))
}

impl Keys {
    pub(super) fn new(layout: &Layout, schema: &Schema) -> Result<Keys, Error> {
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
            Some(RowEncoder::new(part_fields).map_err(row_error)?)
        };
        let file_columns = layout.file_columns(schema);
        let file_schema = SchemaRef::new(schema.project(&file_columns)?);
        let file_keys = super::keys_in(layout.keys(), &file_schema);
        let named: Vec<(&str, SortOptions)> = file_keys
            .iter()
            .map(|k| (k.column.as_str(), k.options))
            .collect();
        let key_columns = |named: &[(&str, SortOptions)]| {
            KeyColumns::new(&file_schema, named)
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

    /// `batch` (the table's schema) as a [`Chunk`]: its file columns, each
    /// row's sort key (and first sort key, when `first_keys`), and its
    /// rows grouped by partition.
    pub(super) fn chunk(&self, batch: &RecordBatch, first_keys: bool) -> Result<Chunk, Error> {
        let n = batch.num_rows();
        let projected = batch.project(&self.file_columns)?;
        let keys = match &self.sort {
            Some(k) => Some(k.encode(&projected).map_err(row_error)?),
            None => None,
        };
        let first = match (&self.first, first_keys) {
            (Some(k), true) => Some(k.encode(&projected).map_err(row_error)?),
            _ => None,
        };
        let pieces = match &self.partition {
            None => vec![Piece {
                key: Vec::new(),
                dir: String::new(),
                rows: (0..n as u32).collect(),
            }],
            Some(enc) => {
                let values = self.partition_values(batch)?;
                let encoded = enc.encode(&values).map_err(row_error)?;
                let mut at: HashMap<&[u8], usize> = HashMap::new();
                let mut pieces: Vec<Piece> = Vec::new();
                for i in 0..n {
                    let key = encoded.row(i).as_bytes();
                    let p = *at.entry(key).or_insert_with(|| {
                        pieces.push(Piece {
                            key: key.to_vec(),
                            dir: self.directory(&values, i),
                            rows: Vec::new(),
                        });
                        pieces.len() - 1
                    });
                    pieces[p].rows.push(i as u32);
                }
                pieces
            }
        };
        let rows_bytes = |r: &Option<Rows>| {
            r.as_ref()
                .map_or(0, |r| r.data().len() + r.offsets().len() * 8) as u64
        };
        let bytes = projected.get_array_memory_size() as u64
            + rows_bytes(&keys)
            + rows_bytes(&first)
            + 4 * n as u64;
        Ok(Chunk {
            batch: projected,
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
    /// The rows of `parts` (each a chunk and the rows of one partition in
    /// it, in task order) in sort-key order; equal keys keep their order.
    pub(super) fn of(keys: &Keys, parts: &[(&'a Chunk, &[u32])]) -> Result<Ordered<'a>, Error> {
        let rows = parts
            .iter()
            .enumerate()
            .flat_map(|(b, (_, rows))| rows.iter().map(move |&r| (b, r as usize)));
        let order = if keys.sorts() {
            let encoded: Vec<&Rows> = parts
                .iter()
                .map(|(c, _)| c.keys.as_ref())
                .collect::<Option<_>>()
                .ok_or_else(|| Error::InvalidConfig("layout: a chunk without keys".into()))?;
            strata_sort::order_rows(&encoded, rows)
                .map_err(|e| Error::InvalidConfig(format!("layout: {e}")))?
        } else {
            rows.collect()
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

    /// The rows at positions `range` gathered into one batch.
    pub(super) fn gather(&self, range: std::ops::Range<usize>) -> Result<RecordBatch, Error> {
        let refs: Vec<&RecordBatch> = self.batches.iter().collect();
        Ok(arrow_select::interleave::interleave_record_batch(
            &refs,
            &self.order[range],
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
