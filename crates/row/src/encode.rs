//! [`RowEncoder`]: columns to rows.
//!
//! Each column gets a writer for the batch. Row lengths come first (fixed
//! widths add a constant; variable columns add per-row lengths), which fix
//! every row's offset. Rows are then written a tile at a time: a tile is a
//! run of rows of about 32 KiB (at most 64 rows), and every column writes
//! its bytes of those rows before the next tile starts, so the tile's
//! lines stay in L1 while all columns fill them, instead of each column
//! pass sweeping the whole output.
//!
//! * Schemas of fixed-width primitives are written straight into the
//!   output's spare capacity: nothing is zeroed first, since every byte is
//!   written. Other schemas are written into the zeroed output (the zero
//!   padding of string blocks is then already there).
//! * Consecutive primitive columns of one type share a writer that handles
//!   four columns per pass, nulls without branches; 8-byte integers without
//!   nulls go through an AVX-512 (eight columns per pass) or AVX2 (four)
//!   kernel where the CPU has it.
//! * Columns of strings up to 32 bytes use a branch-free block encoder.
//!
//! Within a tile, `cur[k]` is where row `k`'s next variable-width column
//! starts and `off` the bytes of fixed-width columns since then, so fixed
//! columns never update per-row state.

use std::{ops::Range, sync::Arc};

use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, BooleanArray, FixedSizeBinaryArray, GenericByteArray,
    GenericByteViewArray, GenericListArray, GenericListViewArray, MapArray, OffsetSizeTrait,
    PrimitiveArray, RunArray, StructArray,
    cast::AsArray,
    downcast_dictionary_array, downcast_primitive, downcast_primitive_array, new_null_array,
    types::{
        ArrowDictionaryKeyType, ByteArrayType, ByteViewType, Int16Type, Int32Type, Int64Type,
        RunEndIndexType,
    },
};
use arrow_buffer::{ArrowNativeType, BooleanBuffer, NullBuffer};
use arrow_schema::{DataType, SortOptions};

use crate::{
    Error, Rows, SortField,
    field::{invert_mask, null_sentinel},
    fixed::Encodable,
    rows::RowParser,
    variable,
};

/// Target bytes per tile: about the L1 size. Measured on the bench cases:
/// 4 to 28 KiB made no difference for scalar writers, but with the SIMD
/// kernels 32 KiB (64 rows of 450 bytes) beat 16 KiB by 20%, and more rows
/// gained nothing.
const TILE_BYTES: usize = 32768;

/// Encodes columns into byte-comparable [`Rows`]; see the crate docs.
#[derive(Debug)]
pub struct RowEncoder {
    pub(crate) fields: Arc<[SortField]>,
    pub(crate) codecs: Vec<Codec>,
}

/// Per-field state fixed when the encoder is built.
#[derive(Debug)]
pub(crate) enum Codec {
    /// A type without children.
    Flat,
    /// Dictionary values are encoded with `values`; a null key takes
    /// `null_row`.
    Dictionary {
        values: RowEncoder,
        null_row: Vec<u8>,
    },
    /// Children are encoded with `children`; a null struct takes
    /// `null_row` (the children's all-null row) so masked values never
    /// decide order.
    Struct {
        children: RowEncoder,
        null_row: Vec<u8>,
    },
    /// List, large list, list view and map: each element's row (of
    /// `child`) is written as a byte string.
    List { child: RowEncoder },
    /// Fixed-size list: the element rows back to back.
    FixedSizeList {
        child: RowEncoder,
        null_row: Vec<u8>,
    },
    /// Run-end encoded: each row is its run value's row as a byte string.
    RunEnd { child: RowEncoder },
}

/// Options for children written as byte strings: the parent inverts
/// those strings when descending, so the child sorts ascending with nulls
/// placed as the parent's inversion will leave them.
fn inner_options(o: SortOptions) -> SortOptions {
    SortOptions {
        descending: false,
        nulls_first: o.nulls_first != o.descending,
    }
}

fn is_flat_supported(dt: &DataType) -> bool {
    use DataType::*;
    matches!(
        dt,
        Null | Boolean
            | Int8
            | Int16
            | Int32
            | Int64
            | UInt8
            | UInt16
            | UInt32
            | UInt64
            | Float16
            | Float32
            | Float64
            | Decimal32(..)
            | Decimal64(..)
            | Decimal128(..)
            | Decimal256(..)
            | Date32
            | Date64
            | Time32(_)
            | Time64(_)
            | Timestamp(..)
            | Duration(_)
            | Interval(_)
            | Binary
            | LargeBinary
            | BinaryView
            | Utf8
            | LargeUtf8
            | Utf8View
            | FixedSizeBinary(_)
    )
}

impl Codec {
    fn new(field: &SortField) -> Result<Codec, Error> {
        let opts = field.options;
        Ok(match &field.data_type {
            dt if is_flat_supported(dt) => Codec::Flat,
            DataType::Dictionary(key, values) => {
                if !key.is_dictionary_key_type() {
                    return Err(Error::Unsupported(format!("dictionary key type {key}")));
                }
                let values = RowEncoder::new(vec![
                    SortField::new(values.as_ref().clone()).with_options(opts),
                ])?;
                let null_row = values.null_row()?;
                Codec::Dictionary { values, null_row }
            }
            DataType::Struct(fields) => {
                let children = RowEncoder::new(
                    fields
                        .iter()
                        .map(|f| SortField::new(f.data_type().clone()).with_options(opts))
                        .collect(),
                )?;
                let null_row = children.null_row()?;
                Codec::Struct { children, null_row }
            }
            DataType::List(f)
            | DataType::LargeList(f)
            | DataType::ListView(f)
            | DataType::LargeListView(f) => Codec::List {
                child: RowEncoder::new(vec![
                    SortField::new(f.data_type().clone()).with_options(inner_options(opts)),
                ])?,
            },
            DataType::Map(f, _) => {
                let DataType::Struct(kv) = f.data_type() else {
                    return Err(Error::Unsupported(format!("map entries of type {}", f)));
                };
                Codec::List {
                    child: RowEncoder::new(
                        kv.iter()
                            .map(|f| {
                                SortField::new(f.data_type().clone())
                                    .with_options(inner_options(opts))
                            })
                            .collect(),
                    )?,
                }
            }
            DataType::FixedSizeList(f, _) => {
                let child = RowEncoder::new(vec![
                    SortField::new(f.data_type().clone()).with_options(opts),
                ])?;
                let null_row = child.null_row()?;
                Codec::FixedSizeList { child, null_row }
            }
            DataType::RunEndEncoded(_, values) => Codec::RunEnd {
                child: RowEncoder::new(vec![
                    SortField::new(values.data_type().clone()).with_options(inner_options(opts)),
                ])?,
            },
            other => return Err(Error::Unsupported(format!("row encoding of {other}"))),
        })
    }
}

impl RowEncoder {
    /// An encoder for columns of these fields, in this order (the first
    /// field decides first).
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] for a type this crate cannot encode (unions
    /// and types without an order, such as unions of them).
    pub fn new(fields: Vec<SortField>) -> Result<RowEncoder, Error> {
        let codecs = fields.iter().map(Codec::new).collect::<Result<_, _>>()?;
        Ok(RowEncoder {
            fields: fields.into(),
            codecs,
        })
    }

    /// The fields, in order.
    pub fn fields(&self) -> &[SortField] {
        &self.fields
    }

    /// An empty [`Rows`] for this encoder with room for `rows` rows of
    /// `bytes` bytes in all.
    pub fn empty_rows(&self, rows: usize, bytes: usize) -> Rows {
        Rows::new(self.fields.clone(), rows, bytes)
    }

    /// A parser that rebuilds this encoder's rows from bytes.
    pub fn parser(&self) -> RowParser {
        RowParser {
            fields: self.fields.clone(),
        }
    }

    /// Encodes the columns (one per field, all of the same length).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the number of columns, their lengths
    /// or their types do not match the fields, or a non-nullable field
    /// holds nulls.
    pub fn encode(&self, columns: &[ArrayRef]) -> Result<Rows, Error> {
        let n = columns.first().map_or(0, |c| c.len());
        let mut rows = self.empty_rows(n, 0);
        self.append(&mut rows, columns)?;
        Ok(rows)
    }

    /// Encodes the columns and appends the rows to `rows`. On error `rows`
    /// is unchanged.
    ///
    /// # Errors
    ///
    /// As [`RowEncoder::encode`], and [`Error::InvalidArgument`] when `rows`
    /// came from another encoder.
    pub fn append(&self, rows: &mut Rows, columns: &[ArrayRef]) -> Result<(), Error> {
        if !Arc::ptr_eq(&rows.fields, &self.fields) {
            return Err(Error::InvalidArgument(
                "rows were made by a different encoder".into(),
            ));
        }
        self.check_columns(columns)?;
        let n = columns.first().map_or(0, |c| c.len());
        let mut writers: Vec<Box<dyn Writer + '_>> = Vec::with_capacity(columns.len());
        let mut i = 0;
        while i < columns.len() {
            let dt = &self.fields[i].data_type;
            if dt.is_primitive() {
                // A run of columns of one primitive type shares a writer.
                let mut j = i + 1;
                while j < columns.len() && self.fields[j].data_type == *dt {
                    j += 1;
                }
                writers.push(prim_run(&columns[i..j], &self.fields[i..j])?);
                i = j;
                continue;
            }
            push_writer(
                &mut writers,
                columns[i].as_ref(),
                &self.fields[i],
                &self.codecs[i],
            )?;
            i += 1;
        }
        write_rows(&writers, n, rows);
        Ok(())
    }

    fn check_columns(&self, columns: &[ArrayRef]) -> Result<(), Error> {
        crate::field::check_columns(columns, self.fields.iter().map(|f| &f.data_type))?;
        for (i, (col, field)) in columns.iter().zip(self.fields.iter()).enumerate() {
            if field.non_nullable && col.logical_null_count() > 0 {
                return Err(Error::InvalidArgument(format!(
                    "column {i} is declared non-nullable but holds {} nulls",
                    col.logical_null_count()
                )));
            }
        }
        Ok(())
    }

    /// The encoding of a row whose every column is null.
    fn null_row(&self) -> Result<Vec<u8>, Error> {
        let nulls: Vec<ArrayRef> = self
            .fields
            .iter()
            .map(|f| new_null_array(&f.data_type, 1))
            .collect();
        Ok(self.encode(&nulls)?.row(0).to_owned_bytes())
    }
}

/// Writes row lengths, offsets and then the bytes, tile by tile.
fn write_rows(writers: &[Box<dyn Writer + '_>], n: usize, rows: &mut Rows) {
    let Rows {
        buffer, offsets, ..
    } = rows;
    let first = offsets.len() - 1;
    let base = offsets[first];
    let fixed: usize = writers.iter().filter_map(|w| w.fixed_len()).sum();
    let all_fixed = writers.iter().all(|w| w.fixed_len().is_some());
    if all_fixed {
        offsets.extend((1..=n).map(|i| base + i * fixed));
    } else {
        let mut lens = vec![fixed; n];
        for w in writers.iter().filter(|w| w.fixed_len().is_none()) {
            w.add_lengths(&mut lens);
        }
        let mut end = base;
        offsets.extend(lens.iter().map(|l| {
            end += l;
            end
        }));
    }
    let offs = &offsets[first..];
    buffer.reserve(offs[n] - base);
    let tile_rows = if all_fixed {
        (TILE_BYTES / fixed.max(1)).clamp(1, MAX_TILE_ROWS)
    } else {
        0
    };
    if all_fixed && n > 0 {
        let direct: Option<Vec<&dyn DirectWriter>> = writers.iter().map(|w| w.direct()).collect();
        if let Some(direct) = direct {
            // Fixed-width primitive rows are written in place: the output
            // is neither zeroed first nor copied from a scratch tile.
            let start = buffer.len();
            let total = offs[n] - base;
            debug_assert_eq!(start, base);
            let out = buffer.spare_capacity_mut();
            assert!(out.len() >= total);
            let ptr = out.as_mut_ptr().cast::<u8>();
            let mut cur: Vec<usize> = Vec::with_capacity(tile_rows);
            let mut r0 = 0;
            while r0 < n {
                let r1 = (r0 + tile_rows).min(n);
                cur.clear();
                cur.extend((0..r1 - r0).map(|k| (r0 + k) * fixed));
                let mut off = 0;
                for (w, d) in writers.iter().zip(&direct) {
                    // SAFETY: `ptr` has `total` = n * fixed writable bytes;
                    // row k ends at (r0 + k + 1) * fixed, and this writer's
                    // bytes end at off + its length <= fixed. Rows r0..r1
                    // are within the columns (all of length n).
                    unsafe { d.write_direct(ptr, &cur, off, r0..r1) };
                    off += w.fixed_len().unwrap_or(0);
                }
                debug_assert_eq!(off, fixed);
                r0 = r1;
            }
            // SAFETY: the writers wrote every byte of every row (their
            // fixed lengths sum to the row length), so the first
            // start + total bytes are initialised.
            unsafe { buffer.set_len(start + total) };
            return;
        }
    }
    // Other rows are written into the zeroed output, a tile of rows at a
    // time: zeroing costs less than copying tiles from a scratch buffer.
    let start = buffer.len();
    buffer.resize(start + offs[n] - base, 0);
    let out = &mut buffer[start..];
    let mut cur: Vec<usize> = Vec::new();
    let mut r0 = 0;
    while r0 < n {
        let r1 = if all_fixed {
            (r0 + tile_rows).min(n)
        } else {
            let mut r1 = r0 + 1;
            while r1 < n && r1 - r0 < MAX_TILE_ROWS && offs[r1] - offs[r0] < TILE_BYTES {
                r1 += 1;
            }
            r1
        };
        cur.clear();
        cur.extend(offs[r0..r1].iter().map(|o| o - offs[r0]));
        let tile = &mut out[offs[r0] - base..offs[r1] - base];
        let mut off = 0;
        for w in writers {
            w.write(tile, &mut cur, off, r0..r1);
            match w.fixed_len() {
                Some(l) => off += l,
                None => off = 0,
            }
        }
        debug_assert!(
            cur.iter()
                .zip(offs[r0 + 1..=r1].iter())
                .all(|(c, end)| c + off == end - offs[r0])
        );
        r0 = r1;
    }
}

/// Writes one column (or a run of columns) of a batch.
trait Writer {
    /// `Some(bytes)` when every row takes the same number of bytes.
    fn fixed_len(&self) -> Option<usize>;
    /// Adds each row's length (variable-width writers only).
    fn add_lengths(&self, _lens: &mut [usize]) {}
    /// Writes batch rows `rows`; the `k`-th starts at `out[cur[k] + off]`.
    /// Variable-width writers then set `cur[k]` to the end of their bytes.
    fn write(&self, out: &mut [u8], cur: &mut [usize], off: usize, rows: Range<usize>);
    /// Writers whose rows may go straight into uninitialised memory.
    fn direct(&self) -> Option<&dyn DirectWriter> {
        None
    }
}

fn push_writer<'a>(
    writers: &mut Vec<Box<dyn Writer + 'a>>,
    col: &'a dyn Array,
    field: &SortField,
    codec: &'a Codec,
) -> Result<(), Error> {
    let opts = field.options;
    let omit = field.non_nullable;
    let w: Box<dyn Writer + 'a> = match codec {
        Codec::Flat => {
            downcast_primitive_array! {
                col => {
                    // `append` hands every primitive column to `prim_run`.
                    return Err(Error::Unsupported(format!(
                        "{} column outside a primitive run",
                        col.data_type()
                    )));
                }
                DataType::Null => Box::new(NullTypeWriter { invert: invert_mask(opts) }),
                DataType::Boolean => {
                    let a: &BooleanArray = col.as_boolean();
                    Box::new(BoolWriter {
                        values: a.values().clone(),
                        nulls: nonempty_nulls(a.nulls()),
                        invert: invert_mask(opts),
                        sentinel: null_sentinel(opts),
                        omit,
                    })
                }
                DataType::FixedSizeBinary(_) => {
                    let a: &FixedSizeBinaryArray = col.as_fixed_size_binary();
                    Box::new(FsbWriter {
                        array: a,
                        width: a.value_length() as usize,
                        invert: invert_mask(opts),
                        sentinel: null_sentinel(opts),
                        omit,
                    })
                }
                DataType::Utf8 => bytes_writer(col.as_string::<i32>(), opts),
                DataType::LargeUtf8 => bytes_writer(col.as_string::<i64>(), opts),
                DataType::Binary => bytes_writer(col.as_binary::<i32>(), opts),
                DataType::LargeBinary => bytes_writer(col.as_binary::<i64>(), opts),
                DataType::Utf8View => view_writer(col.as_string_view(), opts),
                DataType::BinaryView => view_writer(col.as_binary_view(), opts),
                other => return Err(Error::Unsupported(format!("row encoding of {other}"))),
            }
        }
        Codec::Dictionary { values, null_row } => {
            downcast_dictionary_array! {
                col => {
                    let rows = values.encode(std::slice::from_ref(col.values()))?;
                    Box::new(CopyWriter::dictionary(rows, null_row, col.keys())?)
                }
                other => return Err(Error::Unsupported(format!("dictionary {other}")))
            }
        }
        Codec::Struct { children, null_row } => {
            let a: &StructArray = col.as_struct();
            let rows = children.encode(a.columns())?;
            let picks = (0..a.len()).map(|i| a.is_valid(i).then_some(i));
            let prefix = (!omit).then_some(null_sentinel(opts));
            Box::new(CopyWriter::new(rows, null_row, picks, prefix)?)
        }
        Codec::FixedSizeList { child, .. } => {
            let a = col.as_fixed_size_list();
            let rows = child.encode(std::slice::from_ref(a.values()))?;
            Box::new(FslWriter {
                rows,
                size: a.value_length() as usize,
                nulls: a.nulls().cloned(),
                sentinel: null_sentinel(opts),
                omit,
            })
        }
        Codec::List { child } => {
            let (ranges, values) = list_ranges(col)?;
            let rows = child.encode(&values)?;
            Box::new(ListWriter {
                rows,
                ranges,
                invert: invert_mask(opts),
                sentinel: null_sentinel(opts),
            })
        }
        Codec::RunEnd { child } => {
            let (phys, values) = match col.data_type() {
                DataType::RunEndEncoded(r, _) => match r.data_type() {
                    DataType::Int16 => run_indices(col.as_run::<Int16Type>()),
                    DataType::Int32 => run_indices(col.as_run::<Int32Type>()),
                    DataType::Int64 => run_indices(col.as_run::<Int64Type>()),
                    other => return Err(Error::Unsupported(format!("run ends of type {other}"))),
                },
                other => return Err(Error::Unsupported(format!("run-end encoding of {other}"))),
            };
            let rows = child.encode(&[values])?;
            Box::new(RunWriter {
                rows,
                phys,
                invert: invert_mask(opts),
            })
        }
    };
    writers.push(w);
    Ok(())
}

fn nonempty_nulls(n: Option<&NullBuffer>) -> Option<NullBuffer> {
    n.filter(|n| n.null_count() > 0).cloned()
}

// ---------------------------------------------------------------- primitives

struct PrimCol<'a, T> {
    values: &'a [T],
    /// Validity bits and their bit offset, when there are nulls.
    nulls: Option<(&'a [u8], usize)>,
    invert: u8,
    sentinel: u8,
    omit: bool,
}

/// Consecutive primitive columns of one type, written across each row.
struct PrimRun<'a, T> {
    cols: Vec<PrimCol<'a, T>>,
    /// No column has nulls or omits its validity byte.
    plain: bool,
    len: usize,
}

macro_rules! prim_run_of {
    ($t:ty, $columns:expr, $fields:expr) => {{
        let cols = $columns
            .iter()
            .zip($fields)
            .map(|(c, f): (&ArrayRef, &SortField)| {
                let a = c.as_primitive::<$t>();
                PrimCol {
                    values: a.values().as_ref(),
                    nulls: a
                        .nulls()
                        .filter(|n| n.null_count() > 0)
                        .map(|n| (n.validity(), n.offset())),
                    invert: invert_mask(f.options),
                    sentinel: null_sentinel(f.options),
                    omit: f.non_nullable,
                }
            })
            .collect::<Vec<_>>();
        let plain = cols.iter().all(|c| c.nulls.is_none() && !c.omit);
        let len = cols
            .iter()
            .map(|c| {
                <<$t as ArrowPrimitiveType>::Native as Encodable>::WIDTH + usize::from(!c.omit)
            })
            .sum();
        Box::new(PrimRun { cols, plain, len }) as Box<dyn Writer + 'a>
    }};
}

/// One writer for consecutive columns of the same primitive type.
fn prim_run<'a>(
    columns: &'a [ArrayRef],
    fields: &[SortField],
) -> Result<Box<dyn Writer + 'a>, Error> {
    let dt = columns[0].data_type().clone();
    Ok(downcast_primitive! {
        dt => (prim_run_of, columns, fields),
        other => return Err(Error::Unsupported(format!("row encoding of {other}")))
    })
}

/// Rows per tile of a fixed-width run, at most: one `u64` holds a tile's
/// validity bits.
const MAX_TILE_ROWS: usize = 64;

/// Bits `start..start + len` (`len <= 64`) of an LSB-first bitmap.
#[inline]
fn load_bits(bits: &[u8], start: usize, len: usize) -> u64 {
    debug_assert!(len <= MAX_TILE_ROWS);
    let first = start / 8;
    let mut word = [0u8; 16];
    let end = (start + len).div_ceil(8).min(bits.len());
    let n = end.saturating_sub(first).min(16);
    word[..n].copy_from_slice(&bits[first..first + n]);
    let v = u128::from_le_bytes(word) >> (start % 8);
    (v as u64)
        & if len == 64 {
            u64::MAX
        } else {
            (1u64 << len) - 1
        }
}

impl<T: Encodable> PrimRun<'_, T> {
    /// Writes the run's bytes of batch rows `rows`, the `k`-th at
    /// `base + min(cur[k], limit) + off`. Clamping each position (one
    /// instruction) keeps every write in bounds without a pass over `cur`.
    ///
    /// # Safety
    ///
    /// `base` must be valid for writes of `min(max(cur), limit) + off +
    /// self.len` bytes, `cur.len() >= rows.len()`, and `rows.end` must not
    /// exceed the columns' length.
    unsafe fn write_raw(
        &self,
        base: *mut u8,
        cur: &[usize],
        off: usize,
        rows: Range<usize>,
        limit: usize,
    ) {
        let w = T::WIDTH;
        if self.plain {
            // Column by column inside the tile (the tile is in L1, and each
            // column's values are read in order), four columns per pass so
            // each row's address is computed once for four values.
            let unit = 1 + w;
            let mut at = off;
            #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
            let mut wide = 0;
            #[cfg(target_arch = "x86_64")]
            if let Some(x) = T::XOR64
                && crate::simd::has_avx512_vbmi()
            {
                // Eight columns per pass with AVX-512.
                wide = self.cols.len() / 8 * 8;
                for g in self.cols[..wide].chunks_exact(8) {
                    let vals: [&[T]; 8] = std::array::from_fn(|q| &g[q].values[rows.clone()]);
                    let n = vals[0].len();
                    let vals = vals.map(|v| &v[..n]);
                    let masks: [u64; 8] =
                        std::array::from_fn(|q| x ^ u64::from_ne_bytes([g[q].invert; 8]));
                    let first = n / 8 * 8;
                    // SAFETY: AVX-512 F/BW/VBMI are present; T is an 8-byte
                    // integer (XOR64), so each column is `n` u64s; every row
                    // has off + self.len writable bytes from
                    // min(cur[k], limit) (the caller's promise), and these
                    // eight columns end at at + 72 <= off + self.len.
                    unsafe {
                        crate::simd::write_u64x8(
                            base,
                            &cur[..n],
                            limit,
                            at,
                            vals.map(|v| v.as_ptr().cast::<u64>()),
                            masks,
                            first,
                        )
                    };
                    for (k, &row) in cur[..n].iter().enumerate().skip(first) {
                        for (q, c) in g.iter().enumerate() {
                            // SAFETY: as above; column q of the group
                            // starts at at + q * unit.
                            unsafe {
                                let d = base.add(row.min(limit) + at + q * unit);
                                *d = 1;
                                vals[q][k].put_raw(d.add(1), c.invert);
                            }
                        }
                    }
                    at += 8 * unit;
                }
            }
            let mut groups = self.cols[wide..].chunks_exact(4);
            for g in groups.by_ref() {
                let vals = [
                    &g[0].values[rows.clone()],
                    &g[1].values[rows.clone()],
                    &g[2].values[rows.clone()],
                    &g[3].values[rows.clone()],
                ];
                let inv = [g[0].invert, g[1].invert, g[2].invert, g[3].invert];
                let n = vals[0].len();
                let vals = vals.map(|v| &v[..n]);
                #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
                let mut first = 0;
                #[cfg(target_arch = "x86_64")]
                if let Some(x) = T::XOR64
                    && crate::simd::has_avx2()
                {
                    first = n / 4 * 4;
                    let masks = inv.map(|i| x ^ u64::from_ne_bytes([i; 8]));
                    let spill = at + 4 * unit + 12 <= off + self.len;
                    // SAFETY: AVX2 is present; T is an 8-byte integer
                    // (XOR64), so each column is `n` u64s; every row has
                    // off + self.len writable bytes from min(cur[k], limit)
                    // (the caller's promise), which covers at + 36, and
                    // at + 48 when `spill`, whose extra bytes belong to
                    // later columns of this run, written after this group.
                    unsafe {
                        crate::simd::write_u64x4(
                            base,
                            &cur[..n],
                            limit,
                            at,
                            vals.map(|v| v.as_ptr().cast::<u64>()),
                            masks,
                            first,
                            spill,
                        )
                    };
                }
                for (k, &row) in cur[..n].iter().enumerate().skip(first) {
                    // SAFETY: min(row, limit) + off + self.len bytes are
                    // writable (the caller's promise) and these four columns
                    // end at at + 4 * unit <= off + self.len.
                    unsafe {
                        let d = base.add(row.min(limit) + at);
                        for q in 0..4 {
                            *d.add(q * unit) = 1;
                            vals[q][k].put_raw(d.add(q * unit + 1), inv[q]);
                        }
                    }
                }
                at += 4 * unit;
            }
            for c in groups.remainder() {
                let vals = &c.values[rows.clone()];
                // A local, as the raw writes below could alias `c`.
                let inv = c.invert;
                for (&row, v) in cur.iter().zip(vals) {
                    // SAFETY: as above; this column ends at at + unit.
                    unsafe {
                        let d = base.add(row.min(limit) + at);
                        *d = 1;
                        v.put_raw(d.add(1), inv);
                    }
                }
                at += unit;
            }
            return;
        }
        // With nulls: four columns per pass as well, each row's validity
        // bits from one word per column, written without branches.
        let unit = 1 + w;
        let grouped = if self.cols.iter().any(|c| c.omit) {
            0
        } else {
            self.cols.len() / 4 * 4
        };
        let mut at = off;
        for g in self.cols[..grouped].chunks_exact(4) {
            let vals = [
                &g[0].values[rows.clone()],
                &g[1].values[rows.clone()],
                &g[2].values[rows.clone()],
                &g[3].values[rows.clone()],
            ];
            let n = vals[0].len();
            let vals = vals.map(|v| &v[..n]);
            let inv = [g[0].invert, g[1].invert, g[2].invert, g[3].invert];
            let sentinel = [g[0].sentinel, g[1].sentinel, g[2].sentinel, g[3].sentinel];
            let mut masks = [0u64; 4];
            for (m, c) in masks.iter_mut().zip(g) {
                *m = c.nulls.map_or(u64::MAX, |(bits, o)| {
                    load_bits(bits, o + rows.start, rows.len())
                });
            }
            if sentinel == [0; 4] && inv == [0; 4] {
                // Ascending with nulls first (the default): the validity
                // byte is the validity bit itself.
                for (k, &row) in cur[..n].iter().enumerate() {
                    // SAFETY: as below.
                    unsafe {
                        let d = base.add(row.min(limit) + at);
                        for q in 0..4 {
                            let valid = ((masks[q] >> k) & 1) as u8;
                            *d.add(q * unit) = valid;
                            vals[q][k].put_masked_raw(d.add(q * unit + 1), 0, valid != 0);
                        }
                    }
                }
                at += 4 * unit;
                continue;
            }
            for (k, &row) in cur[..n].iter().enumerate() {
                // SAFETY: min(row, limit) + off + self.len bytes are
                // writable (the caller's promise) and these four columns end
                // at at + 4 * unit <= off + self.len.
                unsafe {
                    let d = base.add(row.min(limit) + at);
                    for q in 0..4 {
                        let valid = ((masks[q] >> k) & 1) as u8;
                        *d.add(q * unit) = sentinel[q] ^ ((1 ^ sentinel[q]) & valid.wrapping_neg());
                        vals[q][k].put_masked_raw(d.add(q * unit + 1), inv[q], valid != 0);
                    }
                }
            }
            at += 4 * unit;
        }
        for c in &self.cols[grouped..] {
            let vals = &c.values[rows.clone()];
            // Locals, as the raw writes below could alias `c`.
            let (inv, sentinel) = (c.invert, c.sentinel);
            if c.omit {
                for (&row, v) in cur.iter().zip(vals) {
                    // SAFETY: as above; the column takes w bytes at `at`.
                    unsafe { v.put_raw(base.add(row.min(limit) + at), inv) }
                }
                at += w;
                continue;
            }
            match c.nulls {
                None => {
                    for (&row, v) in cur.iter().zip(vals) {
                        // SAFETY: as above; the column takes 1 + w bytes.
                        unsafe {
                            let d = base.add(row.min(limit) + at);
                            *d = 1;
                            v.put_raw(d.add(1), inv);
                        }
                    }
                }
                Some((bits, o)) => {
                    let mut mask = load_bits(bits, o + rows.start, rows.len());
                    if sentinel == 0 && inv == 0 {
                        // Ascending with nulls first: the validity byte is
                        // the validity bit.
                        for (&row, v) in cur.iter().zip(vals) {
                            let valid = (mask & 1) as u8;
                            mask >>= 1;
                            // SAFETY: as above; the column takes 1 + w bytes.
                            unsafe {
                                let d = base.add(row.min(limit) + at);
                                *d = valid;
                                v.put_masked_raw(d.add(1), 0, valid != 0);
                            }
                        }
                        at += 1 + w;
                        continue;
                    }
                    let flip = 1 ^ sentinel;
                    for (&row, v) in cur.iter().zip(vals) {
                        // Branch-free: nulls write the sentinel and zeros.
                        let valid = (mask & 1) as u8;
                        mask >>= 1;
                        // SAFETY: as above; the column takes 1 + w bytes.
                        unsafe {
                            let d = base.add(row.min(limit) + at);
                            *d = sentinel ^ (flip & valid.wrapping_neg());
                            v.put_masked_raw(d.add(1), inv, valid != 0);
                        }
                    }
                }
            }
            at += 1 + w;
        }
    }
}

impl<T: Encodable> Writer for PrimRun<'_, T> {
    fn fixed_len(&self) -> Option<usize> {
        Some(self.len)
    }

    fn write(&self, out: &mut [u8], cur: &mut [usize], off: usize, rows: Range<usize>) {
        let cur = &cur[..rows.len()];
        // Positions past `limit` would write out of bounds; write_raw clamps
        // them (correct cursors never exceed it).
        let limit = out
            .len()
            .checked_sub(off + self.len)
            .expect("the tile holds this run's bytes");
        // SAFETY: base + limit + off + self.len is the end of `out`;
        // `values[rows]` is bounds-checked.
        unsafe { self.write_raw(out.as_mut_ptr(), cur, off, rows, limit) }
    }

    fn direct(&self) -> Option<&dyn DirectWriter> {
        Some(self)
    }
}

/// Writers that can write straight into uninitialised output.
trait DirectWriter {
    /// As [`Writer::write`], through a raw pointer.
    ///
    /// # Safety
    ///
    /// As [`PrimRun::write_raw`]; the writer must write every byte of its
    /// part of each row.
    unsafe fn write_direct(&self, base: *mut u8, cur: &[usize], off: usize, rows: Range<usize>);
}

impl<T: Encodable> DirectWriter for PrimRun<'_, T> {
    unsafe fn write_direct(&self, base: *mut u8, cur: &[usize], off: usize, rows: Range<usize>) {
        // SAFETY: forwarded from the caller, whose positions are all valid
        // (so none is clamped: the limit is never reached); write_raw
        // writes the sentinel (or nothing, when omitted) and WIDTH bytes
        // for every column.
        unsafe { self.write_raw(base, cur, off, rows, usize::MAX) }
    }
}

struct NullTypeWriter {
    invert: u8,
}

impl Writer for NullTypeWriter {
    fn fixed_len(&self) -> Option<usize> {
        Some(2)
    }

    fn write(&self, out: &mut [u8], cur: &mut [usize], off: usize, rows: Range<usize>) {
        for &c in &cur[..rows.len()] {
            let p = c + off;
            out[p] = variable::NON_EMPTY_SENTINEL ^ self.invert;
            out[p + 1] = variable::NULL_VALUE_SENTINEL ^ self.invert;
        }
    }
}

struct BoolWriter {
    values: BooleanBuffer,
    nulls: Option<NullBuffer>,
    invert: u8,
    sentinel: u8,
    omit: bool,
}

impl Writer for BoolWriter {
    fn fixed_len(&self) -> Option<usize> {
        Some(if self.omit { 1 } else { 2 })
    }

    fn write(&self, out: &mut [u8], cur: &mut [usize], off: usize, rows: Range<usize>) {
        for (k, r) in rows.enumerate() {
            let p = cur[k] + off;
            let v = u8::from(self.values.value(r)) ^ self.invert;
            if self.omit {
                out[p] = v;
            } else if self.nulls.as_ref().is_none_or(|n| n.is_valid(r)) {
                out[p] = 1;
                out[p + 1] = v;
            } else {
                out[p] = self.sentinel;
                out[p + 1] = 0;
            }
        }
    }
}

struct FsbWriter<'a> {
    array: &'a FixedSizeBinaryArray,
    width: usize,
    invert: u8,
    sentinel: u8,
    omit: bool,
}

impl Writer for FsbWriter<'_> {
    fn fixed_len(&self) -> Option<usize> {
        Some(self.width + usize::from(!self.omit))
    }

    fn write(&self, out: &mut [u8], cur: &mut [usize], off: usize, rows: Range<usize>) {
        let head = usize::from(!self.omit);
        for (k, r) in rows.enumerate() {
            let p = cur[k] + off;
            let dst = &mut out[p..p + head + self.width];
            if self.array.is_valid(r) {
                if head == 1 {
                    dst[0] = 1;
                }
                for (o, v) in dst[head..].iter_mut().zip(self.array.value(r)) {
                    *o = v ^ self.invert;
                }
            } else {
                dst[0] = self.sentinel;
                dst[1..].fill(0);
            }
        }
    }
}

// ------------------------------------------------------------------- strings

/// Binary and string arrays with offsets.
struct BytesWriter<'a, O> {
    offsets: &'a [O],
    data: &'a [u8],
    /// The longest value: up to 32 or 64 bytes, the branch-free encoders
    /// take every value far enough from the end of `data`.
    longest: usize,
    nulls: Option<&'a NullBuffer>,
    invert: u8,
    sentinel: u8,
}

fn bytes_writer<'a, T: ByteArrayType>(
    a: &'a GenericByteArray<T>,
    opts: SortOptions,
) -> Box<dyn Writer + 'a> {
    let offsets = a.value_offsets();
    // Two shifted slices rather than windows: the loop vectorises.
    let n = offsets.len().saturating_sub(1);
    let longest = offsets[1..]
        .iter()
        .zip(&offsets[..n])
        .fold(0, |m, (e, s)| m.max(e.as_usize() - s.as_usize()));
    Box::new(BytesWriter {
        offsets,
        data: a.value_data(),
        longest,
        nulls: a.nulls().filter(|n| n.null_count() > 0),
        invert: invert_mask(opts),
        sentinel: null_sentinel(opts),
    })
}

impl<O: OffsetSizeTrait> Writer for BytesWriter<'_, O> {
    fn fixed_len(&self) -> Option<usize> {
        None
    }

    fn add_lengths(&self, lens: &mut [usize]) {
        let n = lens.len();
        let len = |e: &O, s: &O| variable::encoded_len(e.as_usize() - s.as_usize());
        let (ends, starts) = (&self.offsets[1..=n], &self.offsets[..n]);
        match self.nulls {
            None => {
                for ((l, e), s) in lens.iter_mut().zip(ends).zip(starts) {
                    *l += len(e, s);
                }
            }
            // Validity a word at a time, and a select, not a branch: nulls
            // fall at random.
            Some(nulls) => {
                for (c, lens) in lens.chunks_mut(64).enumerate() {
                    let at = 64 * c;
                    let mask = load_bits(nulls.validity(), nulls.offset() + at, lens.len());
                    let rows = ends[at..].iter().zip(&starts[at..]);
                    for (k, (l, (e, s))) in lens.iter_mut().zip(rows).enumerate() {
                        *l += std::hint::select_unpredictable((mask >> k) & 1 != 0, len(e, s), 1);
                    }
                }
            }
        }
    }

    fn write(&self, out: &mut [u8], cur: &mut [usize], off: usize, rows: Range<usize>) {
        if self.longest <= variable::SHORT_MAX {
            self.write_values::<false>(out, cur, off, rows);
        } else {
            self.write_values::<true>(out, cur, off, rows);
        }
    }
}

impl<O: OffsetSizeTrait> BytesWriter<'_, O> {
    /// [`Writer::write`], with `BLOCK` telling whether values may pass 32
    /// bytes. Values of at most 64 bytes that have 64 readable bytes from
    /// their start, written where their longest possible encoding fits,
    /// take the branch-free encoder; others (and empty ones) the general
    /// one.
    #[inline(always)]
    fn write_values<const BLOCK: bool>(
        &self,
        out: &mut [u8],
        cur: &mut [usize],
        off: usize,
        rows: Range<usize>,
    ) {
        let offsets = &self.offsets[rows.start..=rows.end];
        let mask = self.nulls.map_or(u64::MAX, |n| {
            load_bits(n.validity(), n.offset() + rows.start, rows.len())
        });
        let fast = self.longest <= variable::MEDIUM_MAX;
        // The branch-free encoder's reach: values starting at or before
        // `last_src`, written at or before `last_dst`.
        let last_src = self.data.len().checked_sub(variable::MEDIUM_MAX);
        let last_dst = out.len().checked_sub(variable::LONG_TOTAL);
        for (k, (c, w)) in cur.iter_mut().zip(offsets.windows(2)).enumerate() {
            let p = *c + off;
            let n = if (mask >> k) & 1 != 0 {
                let (start, end) = (w[0].as_usize(), w[1].as_usize());
                let len = end - start;
                if fast
                    && len != 0
                    && last_src.is_some_and(|l| start <= l)
                    && last_dst.is_some_and(|l| p <= l)
                {
                    // SAFETY: `1 <= len <= longest <= 64` (32 without
                    // `BLOCK`); `data[start..]` has 64 bytes (`start <=
                    // data.len() - 64`) and `out[p..]` at least
                    // `LONG_TOTAL >= encoded_len(len)`.
                    unsafe {
                        variable::put_medium_raw::<BLOCK>(
                            out.as_mut_ptr().add(p),
                            self.data.as_ptr().add(start),
                            len,
                            self.invert,
                        )
                    }
                } else {
                    variable::put_value(&mut out[p..], &self.data[start..end], self.invert)
                }
            } else {
                out[p] = self.sentinel;
                1
            };
            *c = p + n;
        }
    }
}

/// String and binary views.
struct ViewWriter<'a, T: ByteViewType + ?Sized> {
    array: &'a GenericByteViewArray<T>,
    nulls: Option<NullBuffer>,
    invert: u8,
    sentinel: u8,
}

fn view_writer<'a, T: ByteViewType + ?Sized>(
    a: &'a GenericByteViewArray<T>,
    opts: SortOptions,
) -> Box<dyn Writer + 'a> {
    Box::new(ViewWriter {
        array: a,
        nulls: nonempty_nulls(a.nulls()),
        invert: invert_mask(opts),
        sentinel: null_sentinel(opts),
    })
}

impl<T: ByteViewType + ?Sized> Writer for ViewWriter<'_, T> {
    fn fixed_len(&self) -> Option<usize> {
        None
    }

    fn add_lengths(&self, lens: &mut [usize]) {
        for (i, (l, v)) in lens.iter_mut().zip(self.array.views().iter()).enumerate() {
            *l += if self.nulls.as_ref().is_none_or(|n| n.is_valid(i)) {
                variable::encoded_len(*v as u32 as usize)
            } else {
                1
            };
        }
    }

    fn write(&self, out: &mut [u8], cur: &mut [usize], off: usize, rows: Range<usize>) {
        for (k, r) in rows.enumerate() {
            let p = cur[k] + off;
            let n = if self.nulls.as_ref().is_none_or(|n| n.is_valid(r)) {
                let v: &[u8] = self.array.value(r).as_ref();
                variable::put_value(&mut out[p..], v, self.invert)
            } else {
                out[p] = self.sentinel;
                1
            };
            cur[k] = p + n;
        }
    }
}

// -------------------------------------------------------------------- nested

/// `dst.copy_from_slice(src)` for the short slices of encoded values:
/// up to 32 bytes with two overlapping fixed-size copies instead of a
/// `memcpy` call.
#[inline(always)]
fn copy_small(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    debug_assert_eq!(dst.len(), n);
    match n {
        0 => {}
        1..=3 => {
            dst[0] = src[0];
            dst[n / 2] = src[n / 2];
            dst[n - 1] = src[n - 1];
        }
        4..=7 => {
            dst[..4].copy_from_slice(&src[..4]);
            dst[n - 4..n].copy_from_slice(&src[n - 4..n]);
        }
        8..=16 => {
            dst[..8].copy_from_slice(&src[..8]);
            dst[n - 8..n].copy_from_slice(&src[n - 8..n]);
        }
        17..=32 => {
            dst[..16].copy_from_slice(&src[..16]);
            dst[n - 16..n].copy_from_slice(&src[n - 16..n]);
        }
        _ => dst.copy_from_slice(src),
    }
}

/// Copies a child row per row: dictionary values (no prefix) and structs
/// (a validity byte first unless omitted).
struct CopyWriter {
    /// The child rows back to back, then the null row.
    table: Vec<u8>,
    /// Entry `i` of the table is `table[ends[i]..ends[i + 1]]`; the last
    /// entry is the null row.
    ends: Vec<usize>,
    /// Each row's table entry.
    picks: Vec<u32>,
    /// For structs: `Some(null sentinel)`; valid rows start with 0x01.
    prefix: Option<u8>,
    /// No prefix and no entry longer than [`BLEND`] bytes: rows are
    /// written by [`CopyWriter::write_blended`].
    blend: bool,
}

/// The longest entry [`CopyWriter::write_blended`] takes, and the zeros
/// after its table's entries: a [`BLEND`]-byte load from any entry's start
/// stays inside the table.
const BLEND: usize = 32;

impl CopyWriter {
    /// The `r`-th pick is row `r`'s child row, `None` for a null.
    fn new(
        rows: Rows,
        null_row: &[u8],
        picks: impl Iterator<Item = Option<usize>>,
        prefix: Option<u8>,
    ) -> Result<Self, Error> {
        let (table, ends, null) = Self::table(rows, null_row)?;
        let picks = picks.map(|p| p.map_or(null, |i| i as u32)).collect();
        Ok(Self::with_picks(table, ends, picks, prefix))
    }

    /// The child rows with the null row after them, their ends, and the
    /// null row's entry number.
    fn table(rows: Rows, null_row: &[u8]) -> Result<(Vec<u8>, Vec<usize>, u32), Error> {
        if rows.num_rows() >= u32::MAX as usize {
            return Err(Error::Unsupported(format!(
                "{} child rows in one batch",
                rows.num_rows()
            )));
        }
        let null = rows.num_rows() as u32;
        let Rows {
            buffer: mut table,
            offsets: mut ends,
            ..
        } = rows;
        table.extend_from_slice(null_row);
        ends.push(table.len());
        Ok((table, ends, null))
    }

    /// The writer of a dictionary's rows: `rows` are its values' rows, and
    /// each row picks the entry its key names (the null row when the key is
    /// null).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a valid key that names no value.
    fn dictionary<K: ArrowDictionaryKeyType>(
        rows: Rows,
        null_row: &[u8],
        keys: &PrimitiveArray<K>,
    ) -> Result<Self, Error> {
        let (table, ends, null) = Self::table(rows, null_row)?;
        // Keys as entry numbers, nulls as the null row's: a select per key
        // and the validity a word at a time (nulls fall at random). A
        // negative key becomes a large number, caught below.
        let raw = keys.values();
        let mut picks: Vec<u32> = Vec::with_capacity(raw.len());
        match keys.nulls().filter(|n| n.null_count() > 0) {
            None => picks.extend(
                raw.iter()
                    .map(|k| k.as_usize().min(u32::MAX as usize) as u32),
            ),
            Some(n) => {
                for (c, chunk) in raw.chunks(64).enumerate() {
                    let mask = load_bits(n.validity(), n.offset() + 64 * c, chunk.len());
                    picks.extend(chunk.iter().enumerate().map(|(j, k)| {
                        let key = k.as_usize().min(u32::MAX as usize) as u32;
                        std::hint::select_unpredictable((mask >> j) & 1 != 0, key, null)
                    }));
                }
            }
        }
        if picks.iter().fold(0, |m, &p| m.max(p)) > null {
            return Err(Error::InvalidArgument(format!(
                "a dictionary key is outside its {null} values"
            )));
        }
        Ok(Self::with_picks(table, ends, picks, None))
    }

    fn with_picks(
        mut table: Vec<u8>,
        ends: Vec<usize>,
        picks: Vec<u32>,
        prefix: Option<u8>,
    ) -> Self {
        let blend = prefix.is_none() && ends.windows(2).all(|w| w[1] - w[0] <= BLEND);
        if blend {
            table.extend_from_slice(&[0; BLEND]);
        }
        CopyWriter {
            table,
            ends,
            picks,
            prefix,
            blend,
        }
    }

    /// [`Writer::write`] for entries of at most [`BLEND`] bytes and no
    /// prefix: each is blended into the [`BLEND`] output bytes at its place
    /// (its bytes where the mask says, the output's own elsewhere), so the
    /// copy has no branch on the entry's length, which varies at random.
    /// Entries too near the end of `out` are copied as they are.
    fn write_blended(&self, out: &mut [u8], cur: &mut [usize], off: usize, rows: Range<usize>) {
        let keep = &crate::variable::KEEP_BYTES;
        let half = keep.len() / 2;
        for (k, r) in rows.enumerate() {
            let p = cur[k] + off;
            let i = self.picks[r] as usize;
            let (start, end) = (self.ends[i], self.ends[i + 1]);
            let n = end - start;
            if let Some(dst) = out.get_mut(p..p + BLEND) {
                // `KEEP_BYTES[half - n..]` starts with `n` bytes of 0xFF.
                let src = &self.table[start..start + BLEND];
                let mask = &keep[half - n..half - n + BLEND];
                for ((d, s), m) in dst.iter_mut().zip(src).zip(mask) {
                    *d = (s & m) | (*d & !m);
                }
            } else {
                copy_small(&mut out[p..p + n], &self.table[start..end]);
            }
            cur[k] = p + n;
        }
    }

    #[inline]
    fn entry(&self, r: usize) -> &[u8] {
        let i = self.picks[r] as usize;
        &self.table[self.ends[i]..self.ends[i + 1]]
    }

    #[inline]
    fn is_null(&self, r: usize) -> bool {
        self.picks[r] as usize == self.ends.len() - 2
    }
}

impl Writer for CopyWriter {
    fn fixed_len(&self) -> Option<usize> {
        None
    }

    fn add_lengths(&self, lens: &mut [usize]) {
        let head = usize::from(self.prefix.is_some());
        for (l, &i) in lens.iter_mut().zip(&self.picks) {
            let i = i as usize;
            *l += head + self.ends[i + 1] - self.ends[i];
        }
    }

    fn write(&self, out: &mut [u8], cur: &mut [usize], off: usize, rows: Range<usize>) {
        if self.blend {
            return self.write_blended(out, cur, off, rows);
        }
        for (k, r) in rows.enumerate() {
            let mut p = cur[k] + off;
            if let Some(sentinel) = self.prefix {
                out[p] = if self.is_null(r) { sentinel } else { 1 };
                p += 1;
            }
            let b = self.entry(r);
            copy_small(&mut out[p..p + b.len()], b);
            cur[k] = p + b.len();
        }
    }
}

struct FslWriter {
    rows: Rows,
    size: usize,
    nulls: Option<NullBuffer>,
    sentinel: u8,
    omit: bool,
}

impl FslWriter {
    fn valid(&self, r: usize) -> bool {
        self.nulls.as_ref().is_none_or(|n| n.is_valid(r))
    }

    fn children(&self, r: usize) -> &[u8] {
        let o = self.rows.offsets();
        &self.rows.data()[o[r * self.size]..o[(r + 1) * self.size]]
    }
}

impl Writer for FslWriter {
    fn fixed_len(&self) -> Option<usize> {
        None
    }

    fn add_lengths(&self, lens: &mut [usize]) {
        let head = usize::from(!self.omit);
        for (r, l) in lens.iter_mut().enumerate() {
            *l += head
                + if self.valid(r) {
                    self.children(r).len()
                } else {
                    0
                };
        }
    }

    fn write(&self, out: &mut [u8], cur: &mut [usize], off: usize, rows: Range<usize>) {
        for (k, r) in rows.enumerate() {
            let mut p = cur[k] + off;
            let valid = self.valid(r);
            if !self.omit {
                out[p] = if valid { 1 } else { self.sentinel };
                p += 1;
            }
            if valid {
                let b = self.children(r);
                out[p..p + b.len()].copy_from_slice(b);
                p += b.len();
            }
            cur[k] = p;
        }
    }
}

/// Lists, list views and maps: element rows as byte strings, then an
/// empty-string terminator.
struct ListWriter {
    rows: Rows,
    /// Each row's element range in `rows`, `None` for a null list.
    ranges: Vec<Option<Range<usize>>>,
    invert: u8,
    sentinel: u8,
}

impl Writer for ListWriter {
    fn fixed_len(&self) -> Option<usize> {
        None
    }

    fn add_lengths(&self, lens: &mut [usize]) {
        let o = self.rows.offsets();
        for (l, range) in lens.iter_mut().zip(&self.ranges) {
            *l += match range {
                None => 1,
                Some(r) => {
                    1 + r
                        .clone()
                        .map(|i| variable::encoded_len(o[i + 1] - o[i]))
                        .sum::<usize>()
                }
            };
        }
    }

    fn write(&self, out: &mut [u8], cur: &mut [usize], off: usize, rows: Range<usize>) {
        for (k, r) in rows.enumerate() {
            let mut p = cur[k] + off;
            match &self.ranges[r] {
                None => {
                    out[p] = self.sentinel;
                    p += 1;
                }
                Some(range) => {
                    for i in range.clone() {
                        p += variable::put_value(
                            &mut out[p..],
                            self.rows.row(i).as_bytes(),
                            self.invert,
                        );
                    }
                    out[p] = variable::EMPTY_SENTINEL ^ self.invert;
                    p += 1;
                }
            }
            cur[k] = p;
        }
    }
}

/// Each row's element range (`None` for a null list) and the referenced
/// child columns.
type ListParts = (Vec<Option<Range<usize>>>, Vec<ArrayRef>);

fn list_ranges(col: &dyn Array) -> Result<ListParts, Error> {
    /// Ranges of an offsets-based list or map, relative to its first
    /// offset, and the child range they reference.
    fn by_offsets<O: ArrowNativeType>(
        o: &[O],
        valid: impl Fn(usize) -> bool,
    ) -> (Vec<Option<Range<usize>>>, Range<usize>) {
        let shift = o[0].as_usize();
        let ranges = o
            .windows(2)
            .enumerate()
            .map(|(i, w)| valid(i).then(|| w[0].as_usize() - shift..w[1].as_usize() - shift))
            .collect();
        (ranges, shift..o[o.len() - 1].as_usize())
    }
    fn list<O: OffsetSizeTrait>(a: &GenericListArray<O>) -> ListParts {
        let (ranges, child) = by_offsets(a.value_offsets(), |i| a.is_valid(i));
        (ranges, vec![a.values().slice(child.start, child.len())])
    }
    fn view<O: OffsetSizeTrait>(a: &GenericListViewArray<O>) -> ListParts {
        let (offsets, sizes) = (a.value_offsets(), a.value_sizes());
        let mut lo = usize::MAX;
        let mut hi = 0;
        for (o, s) in offsets.iter().zip(sizes) {
            if s.as_usize() > 0 {
                lo = lo.min(o.as_usize());
                hi = hi.max(o.as_usize() + s.as_usize());
            }
        }
        if lo == usize::MAX {
            lo = 0;
        }
        let ranges = (0..a.len())
            .map(|i| {
                a.is_valid(i).then(|| {
                    let s = sizes[i].as_usize();
                    if s == 0 {
                        0..0
                    } else {
                        offsets[i].as_usize() - lo..offsets[i].as_usize() - lo + s
                    }
                })
            })
            .collect();
        (ranges, vec![a.values().slice(lo, hi - lo)])
    }
    Ok(match col.data_type() {
        DataType::List(_) => list(col.as_list::<i32>()),
        DataType::LargeList(_) => list(col.as_list::<i64>()),
        DataType::ListView(_) => view(col.as_list_view::<i32>()),
        DataType::LargeListView(_) => view(col.as_list_view::<i64>()),
        DataType::Map(_, _) => {
            let a: &MapArray = col.as_map();
            let (ranges, child) = by_offsets(a.value_offsets(), |i| a.is_valid(i));
            let entries = a.entries().slice(child.start, child.len());
            (ranges, entries.columns().to_vec())
        }
        other => return Err(Error::Unsupported(format!("list encoding of {other}"))),
    })
}

/// Each row is its run value's row as a byte string.
struct RunWriter {
    rows: Rows,
    phys: Vec<usize>,
    invert: u8,
}

impl Writer for RunWriter {
    fn fixed_len(&self) -> Option<usize> {
        None
    }

    fn add_lengths(&self, lens: &mut [usize]) {
        let o = self.rows.offsets();
        for (l, &i) in lens.iter_mut().zip(&self.phys) {
            *l += variable::encoded_len(o[i + 1] - o[i]);
        }
    }

    fn write(&self, out: &mut [u8], cur: &mut [usize], off: usize, rows: Range<usize>) {
        for (k, r) in rows.enumerate() {
            let p = cur[k] + off;
            let b = self.rows.row(self.phys[r]).as_bytes();
            cur[k] = p + variable::put_value(&mut out[p..], b, self.invert);
        }
    }
}

fn run_indices<R: RunEndIndexType>(a: &RunArray<R>) -> (Vec<usize>, ArrayRef) {
    let mut phys = Vec::with_capacity(a.len());
    for (i, end) in a.run_ends().sliced_values().enumerate() {
        let end = end.as_usize().min(a.len());
        phys.resize(end.max(phys.len()), i);
    }
    (phys, a.values_slice())
}
