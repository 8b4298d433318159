//! Row-major storage of the fixed-width columns of a sort's input, so the
//! in-memory sort gathers a whole row with one random access instead of
//! one per column.
//!
//! Gathering a sorted order column by column reads every column at random:
//! with 50 `UInt64` columns of 10M rows that is 500M reads, each a cache
//! and TLB miss once a column passes the caches (80 MB a column): 16.7 s
//! of a 28 s sort on 2 cores, against 8.7-9.7 s with rows (measured in
//! `benches/results/sort.md`). A [`RowStore`] lays the
//! fixed-width columns (integers, floats, dates, times, timestamps,
//! durations, decimals) of each batch out row by row (each value at its
//! offset, a validity byte after each nullable one), built batch by batch
//! as the columnar batches are dropped, so the input is held about once
//! (at 4M rows the peak RSS rose from 2.40 to 2.5-2.6 GB). A chunk
//! of the order is then gathered row by row (one contiguous read per
//! row) and turned back into columns while it is in cache. Other columns
//! (strings, booleans, dictionaries, nested types) stay columnar and are
//! gathered with `interleave` (a shared dictionary's keys only, see
//! [`crate::dictionaries`]).

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions, make_array};
use arrow_buffer::{MutableBuffer, NullBuffer};
use arrow_data::ArrayDataBuilder;
use arrow_schema::{DataType, SchemaRef};
use rayon::prelude::*;

use crate::error::Error;

/// Where one fixed-width column lives in a row.
#[derive(Debug, Clone)]
struct Fixed {
    /// Its index in the schema.
    column: usize,
    /// Byte offset of its value in a row; the validity byte follows the
    /// value when `nullable`.
    offset: usize,
    width: usize,
    nullable: bool,
}

/// The fixed-width columns worth a row store: at least this many.
const MIN_FIXED_COLUMNS: usize = 4;

/// Rows per tile when a batch is laid out row by row (a tile of every
/// column stays in L2).
const TILE_ROWS: usize = 256;

/// The input of an in-memory sort with its fixed-width columns row-major.
pub(crate) struct RowStore {
    schema: SchemaRef,
    fixed: Vec<Fixed>,
    /// Bytes per row.
    width: usize,
    /// Per batch: its rows, `width` bytes each.
    rows: Vec<Vec<u8>>,
    /// Per batch: its other columns, in schema order.
    rest: Vec<Vec<ArrayRef>>,
    /// Schema indices of the other columns.
    rest_columns: Vec<usize>,
}

/// The fixed width of a column's values, for the types a row store holds.
fn fixed_width(data_type: &DataType) -> Option<usize> {
    match data_type {
        DataType::Boolean | DataType::Null => None,
        t => t.primitive_width(),
    }
}

/// Where each column of a schema goes in a row store.
struct Layout {
    fixed: Vec<Fixed>,
    /// Schema indices of the other columns.
    rest_columns: Vec<usize>,
    /// Bytes per row.
    width: usize,
}

/// The row store layout of `schema`; `None` when fewer than
/// [`MIN_FIXED_COLUMNS`] columns are fixed-width.
fn layout(schema: &SchemaRef) -> Option<Layout> {
    let mut fixed = Vec::new();
    let mut rest_columns = Vec::new();
    let mut width = 0;
    for (c, f) in schema.fields().iter().enumerate() {
        match fixed_width(f.data_type()) {
            Some(w) => {
                fixed.push(Fixed {
                    column: c,
                    offset: width,
                    width: w,
                    nullable: f.is_nullable(),
                });
                width += w + usize::from(f.is_nullable());
            }
            None => rest_columns.push(c),
        }
    }
    (fixed.len() >= MIN_FIXED_COLUMNS).then_some(Layout {
        fixed,
        rest_columns,
        width,
    })
}

/// Bytes a row store of `rows` rows of `schema` takes beyond the columnar
/// batches it replaces: a validity byte per nullable fixed-width value
/// where the batches take a bit (0 when no row store would be built).
pub(crate) fn extra_bytes(schema: &SchemaRef, rows: u64) -> u64 {
    layout(schema).map_or(0, |l| {
        rows * l.fixed.iter().filter(|f| f.nullable).count() as u64
    })
}

impl RowStore {
    /// The row store of `batches` (each of `schema`), consuming them; the
    /// batches back when fewer than [`MIN_FIXED_COLUMNS`] columns are
    /// fixed-width.
    pub(crate) fn build(
        schema: &SchemaRef,
        batches: Vec<RecordBatch>,
    ) -> Result<RowStore, Vec<RecordBatch>> {
        let Some(Layout {
            fixed,
            rest_columns,
            width,
        }) = layout(schema)
        else {
            return Err(batches);
        };
        let (rows, rest): (Vec<_>, Vec<_>) = batches
            .into_par_iter()
            .map(|b| {
                let rows = lay_out(&b, &fixed, width);
                let rest = rest_columns.iter().map(|&c| b.column(c).clone()).collect();
                (rows, rest)
            })
            .unzip();
        Ok(RowStore {
            schema: schema.clone(),
            fixed,
            width,
            rows,
            rest,
            rest_columns,
        })
    }

    /// The rows `pairs` ((batch, row), in output order) as one batch.
    pub(crate) fn gather(&self, pairs: &[(usize, usize)]) -> Result<RecordBatch, Error> {
        let n = pairs.len();
        let w = self.width;
        // The rows, one contiguous copy each.
        let mut chunk = vec![0u8; n * w];
        for (out, &(b, i)) in chunk.chunks_exact_mut(w).zip(pairs) {
            out.copy_from_slice(&self.rows[b][i * w..(i + 1) * w]);
        }
        let mut columns: Vec<Option<ArrayRef>> = vec![None; self.schema.fields().len()];
        for f in &self.fixed {
            // Aligned for the value type (a `Vec<u8>` is not).
            let mut values = MutableBuffer::from_len_zeroed(n * f.width);
            copy_column(&chunk, w, f.offset, f.width, values.as_slice_mut());
            let nulls = f.nullable.then(|| {
                NullBuffer::from_iter(
                    chunk
                        .chunks_exact(w)
                        .map(|row| row[f.offset + f.width] != 0),
                )
            });
            let nulls = nulls.filter(|n| n.null_count() > 0);
            let data_type = self.schema.field(f.column).data_type().clone();
            let data = ArrayDataBuilder::new(data_type)
                .len(n)
                .add_buffer(values.into())
                .nulls(nulls)
                .build()?;
            columns[f.column] = Some(make_array(data));
        }
        for (k, &c) in self.rest_columns.iter().enumerate() {
            let parts: Vec<&dyn arrow_array::Array> =
                self.rest.iter().map(|r| r[k].as_ref()).collect();
            columns[c] = Some(crate::dictionaries::interleave(&parts, pairs)?);
        }
        let columns = columns
            .into_iter()
            .map(|c| c.ok_or_else(|| Error::InvalidConfig("a column was not gathered".into())))
            .collect::<Result<Vec<_>, _>>()?;
        let options = RecordBatchOptions::new().with_row_count(Some(n));
        Ok(RecordBatch::try_new_with_options(
            Arc::clone(&self.schema),
            columns,
            &options,
        )?)
    }
}

/// Batch `b`'s fixed-width columns row by row, `width` bytes a row.
fn lay_out(b: &RecordBatch, fixed: &[Fixed], width: usize) -> Vec<u8> {
    let n = b.num_rows();
    let data: Vec<_> = fixed.iter().map(|f| b.column(f.column).to_data()).collect();
    let columns: Vec<(&[u8], Option<&NullBuffer>)> = fixed
        .iter()
        .zip(&data)
        .map(|(f, d)| {
            let values = d.buffers().first().map_or(&[][..], |b| b.as_slice());
            let start = (d.offset() * f.width).min(values.len());
            (&values[start..], d.nulls())
        })
        .collect();
    let mut rows = vec![0u8; n * width];
    for start in (0..n).step_by(TILE_ROWS) {
        let end = (start + TILE_ROWS).min(n);
        let tile = &mut rows[start * width..end * width];
        for (f, &(values, nulls)) in fixed.iter().zip(&columns) {
            let src = &values[start * f.width..end * f.width];
            scatter_column(src, f.width, tile, width, f.offset);
            if f.nullable {
                for (k, row) in tile.chunks_exact_mut(width).enumerate() {
                    row[f.offset + f.width] = u8::from(nulls.is_none_or(|v| v.is_valid(start + k)));
                }
            }
        }
    }
    rows
}

/// Runs `$body` with `$n` bound to the width `$w`: a constant for the
/// common widths (so each copy compiles to a move of that size), the
/// width itself for the rest.
macro_rules! with_width {
    ($w:expr, $n:ident => $body:block) => {
        match $w {
            1 => {
                const $n: usize = 1;
                $body
            }
            2 => {
                const $n: usize = 2;
                $body
            }
            4 => {
                const $n: usize = 4;
                $body
            }
            8 => {
                const $n: usize = 8;
                $body
            }
            16 => {
                const $n: usize = 16;
                $body
            }
            other => {
                // The same name as the constants above.
                #[allow(non_snake_case)]
                let $n = other;
                $body
            }
        }
    };
}

/// Writes the values `src` (`w` bytes each) into consecutive rows of
/// `rows` (`stride` bytes each) at `offset`.
fn scatter_column(src: &[u8], w: usize, rows: &mut [u8], stride: usize, offset: usize) {
    with_width!(w, N => {
        for (v, row) in src.chunks_exact(N).zip(rows.chunks_exact_mut(stride)) {
            row[offset..offset + N].copy_from_slice(v);
        }
    })
}

/// Reads the values at `offset` (`w` bytes each) of consecutive rows of
/// `rows` (`stride` bytes each) into `out`.
fn copy_column(rows: &[u8], stride: usize, offset: usize, w: usize, out: &mut [u8]) {
    with_width!(w, N => {
        for (v, row) in out.chunks_exact_mut(N).zip(rows.chunks_exact(stride)) {
            v.copy_from_slice(&row[offset..offset + N]);
        }
    })
}

#[cfg(test)]
mod tests {
    use arrow_array::{
        BooleanArray, Date32Array, Decimal128Array, Float64Array, Int8Array, Int32Array,
        StringArray, TimestampMicrosecondArray, UInt64Array,
    };
    use arrow_schema::{Field, Schema, TimeUnit};

    use super::*;

    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("i8", DataType::Int8, false),
            Field::new("s", DataType::Utf8, true),
            Field::new("i32", DataType::Int32, true),
            Field::new("u64", DataType::UInt64, false),
            Field::new("f64", DataType::Float64, true),
            Field::new("b", DataType::Boolean, true),
            Field::new("dec", DataType::Decimal128(20, 3), true),
            Field::new(
                "ts",
                DataType::Timestamp(TimeUnit::Microsecond, Some("+00:00".into())),
                false,
            ),
            Field::new("d", DataType::Date32, true),
        ]))
    }

    /// A batch of `n` random rows, sliced from a longer one so that its
    /// arrays have offsets.
    fn batch(seed: u64, n: usize) -> RecordBatch {
        let mut r = strata_gen::rng::RowRng::seeded(seed);
        let m = n + 7;
        let mut maybe = |p: u64| r.next_below(p) != 0;
        let valid: Vec<bool> = (0..m * 6).map(|_| maybe(4)).collect();
        let mut r = strata_gen::rng::RowRng::seeded(seed ^ 0x5eed);
        let v = |k: usize, i: usize| valid[k * m + i];
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int8Array::from_iter_values(
                (0..m).map(|i| (i as i8).wrapping_mul(37)),
            )),
            Arc::new(StringArray::from_iter(
                (0..m).map(|i| v(0, i).then(|| format!("s{}", i * 13 % 101))),
            )),
            Arc::new(Int32Array::from_iter(
                (0..m).map(|i| v(1, i).then(|| r.next_below(1000) as i32 - 500)),
            )),
            Arc::new(UInt64Array::from_iter_values((0..m).map(|_| r.next_u64()))),
            Arc::new(Float64Array::from_iter(
                (0..m).map(|i| v(2, i).then(|| r.next_below(1 << 20) as f64 / 7.0)),
            )),
            Arc::new(BooleanArray::from_iter(
                (0..m).map(|i| v(3, i).then_some(i % 3 == 0)),
            )),
            Arc::new(
                Decimal128Array::from_iter(
                    (0..m)
                        .map(|i| v(4, i).then(|| i128::from(r.next_u64()) * 1_000_003 - (1 << 70))),
                )
                .with_precision_and_scale(20, 3)
                .unwrap(),
            ),
            Arc::new(
                TimestampMicrosecondArray::from_iter_values(
                    (0..m).map(|_| r.next_u64() as i64 >> 8),
                )
                .with_timezone("+00:00"),
            ),
            Arc::new(Date32Array::from_iter(
                (0..m).map(|i| v(5, i).then(|| r.next_below(40_000) as i32)),
            )),
        ];
        RecordBatch::try_new(schema(), columns).unwrap().slice(5, n)
    }

    #[test]
    fn gathered_rows_equal_interleave() {
        let schema = schema();
        let batches: Vec<RecordBatch> = [0, 1, 300, 257, 1000]
            .iter()
            .enumerate()
            .map(|(s, &n)| batch(s as u64, n))
            .collect();
        let refs: Vec<&RecordBatch> = batches.iter().collect();
        let mut r = strata_gen::rng::RowRng::seeded(99);
        let all: Vec<(usize, usize)> = batches
            .iter()
            .enumerate()
            .flat_map(|(b, x)| (0..x.num_rows()).map(move |i| (b, i)))
            .collect();
        let orders: Vec<Vec<(usize, usize)>> = vec![
            Vec::new(),
            all.clone(),
            all.iter().rev().copied().collect(),
            (0..5000)
                .map(|_| all[r.next_below(all.len() as u64) as usize])
                .collect(),
        ];
        let want: Vec<RecordBatch> = orders
            .iter()
            .map(|o| arrow_select::interleave::interleave_record_batch(&refs, o).unwrap())
            .collect();
        let store = RowStore::build(&schema, batches).unwrap_or_else(|_| panic!("no row store"));
        // Two bytes of value and validity for each of the nullable
        // fixed-width columns, one for the rest.
        assert_eq!(
            store.width,
            1 + (4 + 1) + 8 + (8 + 1) + (16 + 1) + 8 + (4 + 1)
        );
        for (o, want) in orders.iter().zip(&want) {
            let got = store.gather(o).unwrap();
            assert_eq!(&got, want, "{} rows", o.len());
            assert_eq!(got.schema(), schema);
        }
    }

    #[test]
    fn few_fixed_columns_stay_columnar() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int64, false),
            Field::new("s", DataType::Utf8, false),
        ]));
        let b = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(arrow_array::Int64Array::from(vec![1, 2])),
                Arc::new(StringArray::from(vec!["x", "y"])),
            ],
        )
        .unwrap();
        let back = RowStore::build(&schema, vec![b.clone()])
            .err()
            .expect("two columns are not worth a row store");
        assert_eq!(back, vec![b]);
    }
}
