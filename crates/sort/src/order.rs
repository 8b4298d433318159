//! Putting rows in key order: the key columns of a schema and their
//! byte-comparable encoding ([`Sorter`]), the stable parallel sort of a
//! run's rows by 24-byte entries (a 16-byte key prefix and the batch and
//! row; the full keys compared only on equal prefixes), and the sort of
//! one batch ([`sort_batch`]).

use arrow_array::{RecordBatch, UInt32Array};
use arrow_schema::{Schema, SortOptions};
use rayon::prelude::*;
use strata_row::{KeyColumns, Rows};

use crate::{config::SortKey, error::Error};

/// The key columns of a schema and the row encoder for them.
#[derive(Debug)]
pub struct Sorter {
    keys: KeyColumns,
}

impl Sorter {
    /// Resolves `keys` against `schema` and builds the row encoder.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] for no keys, [`Error::UnknownColumn`] for a
    /// name the schema lacks, [`Error::UnsupportedSortKey`] for a column
    /// whose type the row encoder cannot order, [`Error::Row`] otherwise.
    pub fn new(schema: &Schema, keys: &[SortKey]) -> Result<Self, Error> {
        if keys.is_empty() {
            return Err(Error::InvalidConfig(
                "sorting needs at least one key column".into(),
            ));
        }
        let named: Vec<(&str, SortOptions)> = keys
            .iter()
            .map(|k| (k.column.as_str(), k.options))
            .collect();
        match KeyColumns::new(schema, &named) {
            Ok(keys) => Ok(Sorter { keys }),
            Err(strata_row::Error::UnknownColumn { name, available }) => {
                Err(Error::UnknownColumn { name, available })
            }
            Err(strata_row::Error::UnsupportedKey {
                column,
                data_type,
                source,
            }) => Err(Error::UnsupportedSortKey {
                column,
                data_type,
                source: *source,
            }),
            Err(e) => Err(Error::Row(e)),
        }
    }

    /// Encodes the key columns of `batch` (which has the schema given to
    /// [`Sorter::new`]).
    ///
    /// # Errors
    /// [`Error::Row`] when the encoder fails.
    pub fn encode(&self, batch: &RecordBatch) -> Result<Rows, Error> {
        Ok(self.keys.encode(batch)?)
    }

    /// The indices of `rows` in sorted order; equal rows keep their order.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] for more than `u32::MAX` rows.
    pub fn sorted_indices(rows: &Rows) -> Result<Vec<u32>, Error> {
        let n = u32::try_from(rows.num_rows()).map_err(|_| {
            Error::InvalidConfig(format!(
                "cannot sort {} rows in memory (at most {})",
                rows.num_rows(),
                u32::MAX
            ))
        })?;
        // Sorted as (16-byte key prefix, row) pairs on all threads: most
        // comparisons are decided by the prefixes, held in the array being
        // sorted; equal prefixes compare the keys, then the rows (so equal
        // keys keep their input order).
        let mut entries: Vec<([u64; 2], u32)> = (0..n)
            .map(|i| (prefix(rows.row(i as usize).as_bytes()), i))
            .collect();
        entries.par_sort_unstable_by(|x, y| {
            x.0.cmp(&y.0)
                .then_with(|| {
                    rows.row(x.1 as usize)
                        .as_bytes()
                        .cmp(rows.row(y.1 as usize).as_bytes())
                })
                .then_with(|| x.1.cmp(&y.1))
        });
        Ok(entries.into_iter().map(|(_, i)| i).collect())
    }
}

/// Sorts one batch by `keys` (stable), with no memory limit.
///
/// # Errors
/// As [`Sorter::new`], [`Sorter::encode`] and [`Sorter::sorted_indices`];
/// [`Error::Arrow`] when gathering fails.
pub fn sort_batch(batch: &RecordBatch, keys: &[SortKey]) -> Result<RecordBatch, Error> {
    let sorter = Sorter::new(batch.schema_ref(), keys)?;
    let rows = sorter.encode(batch)?;
    let indices = UInt32Array::from(Sorter::sorted_indices(&rows)?);
    take_parallel(batch, &indices)
}

/// `batch`'s rows at `indices`, the columns gathered on all threads.
pub(crate) fn take_parallel(
    batch: &RecordBatch,
    indices: &UInt32Array,
) -> Result<RecordBatch, Error> {
    let columns = batch
        .columns()
        .par_iter()
        .map(|c| arrow_select::take::take(c.as_ref(), indices, None))
        .collect::<Result<Vec<_>, _>>()?;
    let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(indices.len()));
    Ok(RecordBatch::try_new_with_options(
        batch.schema(),
        columns,
        &options,
    )?)
}

/// One row of a run being sorted: its key's first sixteen bytes as two
/// big-endian numbers (zero padded), and where it is; 24 bytes.
#[derive(Clone, Copy)]
pub(crate) struct Entry {
    prefix: [u64; 2],
    pub(crate) batch: u32,
    pub(crate) row: u32,
}

/// A key's first sixteen bytes as two big-endian numbers, zero padded: a
/// smaller pair means a smaller key; equal pairs need the keys. Sixteen
/// bytes hold two encoded 64-bit keys but for the last byte, so most
/// comparisons never leave the array being sorted.
pub fn prefix(k: &[u8]) -> [u64; 2] {
    let mut b = [0u8; 16];
    let n = k.len().min(16);
    b[..n].copy_from_slice(&k[..n]);
    let (hi, lo) = b.split_at(8);
    [
        u64::from_be_bytes(hi.try_into().unwrap_or_default()),
        u64::from_be_bytes(lo.try_into().unwrap_or_default()),
    ]
}

/// The encoded keys of every batch, encoded on all threads.
pub(crate) fn encode_run(sorter: &Sorter, batches: &[RecordBatch]) -> Result<Vec<Rows>, Error> {
    if batches.len() > u32::MAX as usize || batches.iter().any(|b| b.num_rows() > u32::MAX as usize)
    {
        return Err(Error::InvalidConfig(
            "a run has too many batches or rows".into(),
        ));
    }
    batches.par_iter().map(|b| sorter.encode(b)).collect()
}

/// Bytes an entry of [`order_run`] takes.
pub(crate) const ENTRY_BYTES: u64 = std::mem::size_of::<Entry>() as u64;

/// The rows of a run (given by their encoded `keys`, batch by batch) in
/// sorted order; equal keys keep input order.
pub(crate) fn order_run(keys: &[Rows]) -> Vec<Entry> {
    let mut entries: Vec<Entry> = Vec::with_capacity(keys.iter().map(Rows::num_rows).sum());
    for (b, k) in keys.iter().enumerate() {
        entries.extend(k.iter().enumerate().map(|(r, row)| Entry {
            prefix: prefix(row.as_bytes()),
            batch: b as u32,
            row: r as u32,
        }));
    }
    let refs: Vec<&Rows> = keys.iter().collect();
    sort_entries(&mut entries, &refs);
    entries
}

/// Sorts `entries` by their keys in `keys`, ties by (batch, row).
fn sort_entries(entries: &mut [Entry], keys: &[&Rows]) {
    // Ties on the whole key go to the earlier row, which makes the
    // unstable sort stable.
    entries.par_sort_unstable_by(|x, y| {
        x.prefix
            .cmp(&y.prefix)
            .then_with(|| {
                keys[x.batch as usize]
                    .row(x.row as usize)
                    .as_bytes()
                    .cmp(keys[y.batch as usize].row(y.row as usize).as_bytes())
            })
            .then_with(|| (x.batch, x.row).cmp(&(y.batch, y.row)))
    });
}
