//! Rows back to columns.
//!
//! The mirror of the writer: rows are decoded a tile at a time; within a
//! tile every column decoder takes its bytes from `data[cur[k] + off]` for
//! each row `k`, fixed-width columns adding to `off` and variable-width
//! ones moving `cur[k]` past their bytes. Every read is bounds-checked and
//! every row must be consumed exactly, so malformed bytes from a
//! [`crate::RowParser`] give [`Error::InvalidRow`], never a panic.

use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, BooleanArray, FixedSizeBinaryArray, FixedSizeListArray,
    GenericBinaryArray, GenericListArray, GenericListViewArray, GenericStringArray, MapArray,
    NullArray, OffsetSizeTrait, PrimitiveArray, RunArray, StructArray, downcast_primitive,
    types::{Int16Type, Int32Type, Int64Type, RunEndIndexType},
};
use arrow_buffer::{
    ArrowNativeType, BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer,
};
use arrow_schema::{DataType, Field, FieldRef, Fields};

use crate::{
    Error, Row, Rows, SortField,
    encode::{Codec, RowEncoder},
    field::{invert_mask, null_sentinel},
    fixed::Encodable,
    variable::{self, truncated},
};

/// Target bytes per tile. Measured: 32 KiB decodes the bench cases up to
/// 30% faster than 8 KiB (fewer calls per value); 64 KiB and more gained
/// nothing.
const TILE_BYTES: usize = 32768;

impl RowEncoder {
    /// Decodes rows back into one array per field. Dictionary fields come
    /// back as arrays of their value type.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the rows came from another encoder.
    pub fn decode(&self, rows: &Rows) -> Result<Vec<ArrayRef>, Error> {
        if !Arc::ptr_eq(&rows.fields, &self.fields) {
            return Err(Error::InvalidArgument(
                "rows were made by a different encoder".into(),
            ));
        }
        self.decode_buffer(&rows.buffer, &rows.offsets, true)
    }

    /// Decodes individual rows, for instance rebuilt by a
    /// [`crate::RowParser`] from stored bytes.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when a row came from another encoder,
    /// [`Error::InvalidRow`] when bytes are not a row of this encoder.
    pub fn decode_rows<'a, I>(&self, rows: I) -> Result<Vec<ArrayRef>, Error>
    where
        I: IntoIterator<Item = Row<'a>>,
    {
        let mut data = Vec::new();
        let mut offsets = vec![0];
        for row in rows {
            if !Arc::ptr_eq(row.fields, &self.fields) {
                return Err(Error::InvalidArgument(
                    "a row was made by a different encoder".into(),
                ));
            }
            data.extend_from_slice(row.as_bytes());
            offsets.push(data.len());
        }
        self.decode_buffer(&data, &offsets, false)
    }

    /// Decodes rows `data[offsets[i]..offsets[i + 1]]`. `trusted` rows were
    /// written by this encoder (a [`Rows`] cannot be built otherwise), so
    /// their strings are valid UTF-8 and need no check.
    pub(crate) fn decode_buffer(
        &self,
        data: &[u8],
        offsets: &[usize],
        trusted: bool,
    ) -> Result<Vec<ArrayRef>, Error> {
        let n = offsets.len() - 1;
        let mut decoders = self
            .fields
            .iter()
            .zip(&self.codecs)
            .map(|(f, c)| decoder(f, c, n, trusted))
            .collect::<Result<Vec<_>, _>>()?;
        let lens: Option<Vec<usize>> = decoders.iter().map(|d| d.fixed_len()).collect();
        if let Some(lens) = lens {
            let fixed: usize = lens.iter().sum();
            if offsets.windows(2).all(|w| w[1] - w[0] == fixed) && offsets[n] <= data.len() {
                // Every row has exactly the fixed length, so every field's
                // bytes are in bounds: decode without per-value checks.
                let tile = (TILE_BYTES / fixed.max(1)).clamp(1, 1024);
                let mut cur = Vec::with_capacity(tile);
                for r0 in (0..n).step_by(tile) {
                    cur.clear();
                    cur.extend_from_slice(&offsets[r0..(r0 + tile).min(n)]);
                    let mut off = 0;
                    for (d, len) in decoders.iter_mut().zip(&lens) {
                        // SAFETY: row k spans cur[k]..cur[k] + fixed within
                        // data, and this field's bytes lie at off..off + len
                        // with off + len <= fixed.
                        unsafe { d.decode_trusted(data, &cur, off) };
                        off += len;
                    }
                }
                return decoders.into_iter().map(|d| d.finish()).collect();
            }
        }
        let mut cur = Vec::new();
        let mut r0 = 0;
        while r0 < n {
            let mut r1 = r0 + 1;
            while r1 < n && offsets[r1] - offsets[r0] < TILE_BYTES {
                r1 += 1;
            }
            cur.clear();
            cur.extend_from_slice(&offsets[r0..r1]);
            let off = decode_seq(&mut decoders, data, &mut cur, 0)?;
            for (k, c) in cur.iter().enumerate() {
                let end = offsets[r0 + k + 1];
                if c + off != end {
                    return Err(Error::InvalidRow(format!(
                        "row {} has {} bytes, the fields take {}",
                        r0 + k,
                        end - offsets[r0 + k],
                        (c + off) as isize - offsets[r0 + k] as isize
                    )));
                }
            }
            r0 = r1;
        }
        decoders.into_iter().map(|d| d.finish()).collect()
    }
}

/// Decodes one value per row of a tile.
pub(crate) trait Decoder {
    /// `Some(bytes)` when every value takes the same number of bytes.
    fn fixed_len(&self) -> Option<usize>;
    /// Decodes the value of row `k` at `data[cur[k] + off]`; variable-width
    /// decoders then set `cur[k]` to the end of the value.
    fn decode(&mut self, data: &[u8], cur: &mut [usize], off: usize) -> Result<(), Error>;
    /// As [`Decoder::decode`] for a fixed-width decoder, without bounds
    /// checks.
    ///
    /// # Safety
    ///
    /// `data` must hold `fixed_len()` bytes at every `cur[k] + off`.
    unsafe fn decode_trusted(&mut self, data: &[u8], cur: &[usize], off: usize) {
        let mut cur = cur.to_vec();
        let _ = self.decode(data, &mut cur, off);
    }
    /// The decoded array.
    fn finish(self: Box<Self>) -> Result<ArrayRef, Error>;
}

/// Runs decoders one after the other over a tile; returns the final `off`.
fn decode_seq(
    decoders: &mut [Box<dyn Decoder + '_>],
    data: &[u8],
    cur: &mut [usize],
    mut off: usize,
) -> Result<usize, Error> {
    for d in decoders {
        d.decode(data, cur, off)?;
        match d.fixed_len() {
            Some(l) => off += l,
            None => off = 0,
        }
    }
    Ok(off)
}

/// Decodes a single value at `pos` and returns where it ends.
fn decode_one(d: &mut dyn Decoder, data: &[u8], pos: usize) -> Result<usize, Error> {
    let mut cur = [pos];
    d.decode(data, &mut cur, 0)?;
    Ok(match d.fixed_len() {
        Some(l) => pos + l,
        None => cur[0],
    })
}

macro_rules! prim_decoder {
    ($t:ty, $field:expr, $cap:expr) => {
        Box::new(PrimDecoder::<$t>::new($field, $cap)) as Box<dyn Decoder>
    };
}

pub(crate) fn decoder<'a>(
    field: &SortField,
    codec: &'a Codec,
    cap: usize,
    trusted: bool,
) -> Result<Box<dyn Decoder + 'a>, Error> {
    let opts = field.options;
    let dt = field.data_type.clone();
    Ok(match codec {
        Codec::Flat => downcast_primitive! {
            dt => (prim_decoder, field, cap),
            DataType::Null => Box::new(NullTypeDecoder { len: 0, invert: invert_mask(opts) }),
            DataType::Boolean => Box::new(BoolDecoder {
                values: Bits::with_capacity(cap),
                valid: Bits::with_capacity(cap),
                invert: invert_mask(opts),
                omit: field.non_nullable,
            }),
            DataType::FixedSizeBinary(w) => Box::new(FsbDecoder {
                width: usize::try_from(w).map_err(|_| Error::Unsupported(format!("width {w}")))?,
                values: Vec::new(),
                valid: Bits::with_capacity(cap),
                invert: invert_mask(opts),
                omit: field.non_nullable,
            }),
            DataType::Utf8 => bytes_decoder::<i32>(field, cap, Kind::Utf8, trusted),
            DataType::LargeUtf8 => bytes_decoder::<i64>(field, cap, Kind::Utf8, trusted),
            DataType::Utf8View => bytes_decoder::<i64>(field, cap, Kind::Utf8View, trusted),
            DataType::Binary => bytes_decoder::<i32>(field, cap, Kind::Binary, trusted),
            DataType::LargeBinary => bytes_decoder::<i64>(field, cap, Kind::Binary, trusted),
            DataType::BinaryView => bytes_decoder::<i64>(field, cap, Kind::BinaryView, trusted),
            other => return Err(Error::Unsupported(format!("row decoding of {other}"))),
        },
        Codec::Dictionary { values, .. } => {
            decoder(&values.fields[0], &values.codecs[0], cap, trusted)?
        }
        Codec::Struct { children, .. } => {
            let DataType::Struct(fields) = &field.data_type else {
                return Err(Error::Unsupported(format!("struct codec for {dt}")));
            };
            Box::new(StructDecoder {
                children: children
                    .fields
                    .iter()
                    .zip(&children.codecs)
                    .map(|(f, c)| decoder(f, c, cap, trusted))
                    .collect::<Result<_, _>>()?,
                fields: fields.clone(),
                valid: Bits::with_capacity(cap),
                omit: field.non_nullable,
                len: 0,
            })
        }
        Codec::List { child } => Box::new(ListDecoder {
            child,
            trusted,
            data_type: dt,
            rows: Vec::new(),
            row_offsets: vec![0],
            offsets: vec![0],
            valid: Bits::with_capacity(cap),
            invert: invert_mask(opts),
            sentinel: null_sentinel(opts),
        }),
        Codec::FixedSizeList { child, null_row } => {
            let DataType::FixedSizeList(f, size) = &field.data_type else {
                return Err(Error::Unsupported(format!(
                    "fixed-size list codec for {dt}"
                )));
            };
            Box::new(FslDecoder {
                child: decoder(&child.fields[0], &child.codecs[0], cap, trusted)?,
                field: f.clone(),
                size: *size,
                null_row,
                valid: Bits::with_capacity(cap),
                sentinel: null_sentinel(opts),
                omit: field.non_nullable,
            })
        }
        Codec::RunEnd { child } => Box::new(RunDecoder {
            child,
            trusted,
            data_type: dt,
            values: Vec::new(),
            value_offsets: vec![0],
            run_ends: Vec::new(),
            scratch: Vec::new(),
            len: 0,
            invert: invert_mask(opts),
        }),
    })
}

/// A growable bitmap written a bit at a time.
struct Bits {
    words: Vec<u64>,
    len: usize,
}

impl Bits {
    fn with_capacity(bits: usize) -> Self {
        Bits {
            words: Vec::with_capacity(bits.div_ceil(64)),
            len: 0,
        }
    }

    #[inline]
    fn push(&mut self, bit: bool) {
        if self.len.is_multiple_of(64) {
            self.words.push(0);
        }
        *self.words.last_mut().expect("pushed above") |= u64::from(bit) << (self.len % 64);
        self.len += 1;
    }

    fn into_buffer(self) -> BooleanBuffer {
        BooleanBuffer::new(Buffer::from_vec(self.words), 0, self.len)
    }

    fn into_nulls(self) -> Option<NullBuffer> {
        let b = self.into_buffer();
        (b.count_set_bits() < b.len()).then(|| NullBuffer::new(b))
    }
}

/// Packs one-byte validity flags into a null buffer, or `None` when all
/// are valid (checked first: the common case costs one pass).
fn pack_validity(valid: &[u8]) -> Option<NullBuffer> {
    if valid.iter().fold(1u8, |a, &b| a & b) == 1 {
        return None;
    }
    // Eight flags (0 or 1 each) at a time: the multiply moves flag i to
    // bit 56 + i, with no carries between them.
    let (chunks, rest) = valid.as_chunks::<8>();
    let mut bits: Vec<u8> = chunks
        .iter()
        .map(|c| (u64::from_le_bytes(*c).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8)
        .collect();
    if !rest.is_empty() {
        bits.push(rest.iter().enumerate().fold(0u8, |b, (i, &f)| b | (f << i)));
    }
    Some(NullBuffer::new(BooleanBuffer::new(
        Buffer::from_vec(bits),
        0,
        valid.len(),
    )))
}

fn byte_at(data: &[u8], p: usize) -> Result<u8, Error> {
    data.get(p).copied().ok_or_else(truncated)
}

// ---------------------------------------------------------------- primitives

struct PrimDecoder<T: ArrowPrimitiveType> {
    values: Vec<T::Native>,
    /// One byte per row, 1 when valid; packed into bits at the end.
    valid: Vec<u8>,
    invert: u8,
    omit: bool,
    data_type: DataType,
}

impl<T: ArrowPrimitiveType> PrimDecoder<T> {
    fn new(field: &SortField, cap: usize) -> Self {
        PrimDecoder {
            values: Vec::with_capacity(cap),
            valid: Vec::with_capacity(if field.non_nullable { 0 } else { cap }),
            invert: invert_mask(field.options),
            omit: field.non_nullable,
            data_type: field.data_type.clone(),
        }
    }
}

impl<T: ArrowPrimitiveType> Decoder for PrimDecoder<T>
where
    T::Native: Encodable,
{
    fn fixed_len(&self) -> Option<usize> {
        Some(T::Native::WIDTH + usize::from(!self.omit))
    }

    fn decode(&mut self, data: &[u8], cur: &mut [usize], off: usize) -> Result<(), Error> {
        let w = T::Native::WIDTH;
        let head = usize::from(!self.omit);
        let last = cur.iter().max().map_or(0, |m| m + off + head + w);
        if last > data.len() {
            return Err(truncated());
        }
        // SAFETY: every value ends at or before `last` <= data.len().
        unsafe { self.decode_trusted(data, cur, off) };
        Ok(())
    }

    unsafe fn decode_trusted(&mut self, data: &[u8], cur: &[usize], off: usize) {
        let inv = self.invert;
        let ptr = data.as_ptr();
        let n = cur.len();
        self.values.reserve(n);
        let len = self.values.len();
        let vals = self.values.as_mut_ptr();
        if self.omit {
            for (k, &c) in cur.iter().enumerate() {
                // SAFETY: the caller guarantees WIDTH readable bytes at
                // c + off; `values` has room for n more (reserved above).
                unsafe {
                    vals.add(len + k)
                        .write(T::Native::get_raw(ptr.add(c + off), inv))
                };
            }
        } else {
            self.valid.reserve(n);
            let vlen = self.valid.len();
            let flags = self.valid.as_mut_ptr();
            for (k, &c) in cur.iter().enumerate() {
                // SAFETY: the caller guarantees 1 + WIDTH readable bytes at
                // c + off; `values` and `valid` have room for n more.
                unsafe {
                    let p = ptr.add(c + off);
                    vals.add(len + k).write(T::Native::get_raw(p.add(1), inv));
                    flags.add(vlen + k).write(u8::from(*p == 1));
                }
            }
            // SAFETY: the n slots after vlen were written above.
            unsafe { self.valid.set_len(vlen + n) };
        }
        // SAFETY: the n slots after len were written above.
        unsafe { self.values.set_len(len + n) };
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef, Error> {
        let nulls = pack_validity(&self.valid);
        Ok(Arc::new(
            PrimitiveArray::<T>::try_new(ScalarBuffer::from(self.values), nulls)?
                .with_data_type(self.data_type),
        ))
    }
}

struct NullTypeDecoder {
    len: usize,
    invert: u8,
}

impl Decoder for NullTypeDecoder {
    fn fixed_len(&self) -> Option<usize> {
        Some(2)
    }

    fn decode(&mut self, data: &[u8], cur: &mut [usize], off: usize) -> Result<(), Error> {
        let want = [
            variable::NON_EMPTY_SENTINEL ^ self.invert,
            variable::NULL_VALUE_SENTINEL ^ self.invert,
        ];
        for &c in cur.iter() {
            if data.get(c + off..c + off + 2) != Some(&want[..]) {
                return Err(Error::InvalidRow(
                    "bad encoding of a null-type value".into(),
                ));
            }
        }
        self.len += cur.len();
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef, Error> {
        Ok(Arc::new(NullArray::new(self.len)))
    }
}

struct BoolDecoder {
    values: Bits,
    valid: Bits,
    invert: u8,
    omit: bool,
}

impl Decoder for BoolDecoder {
    fn fixed_len(&self) -> Option<usize> {
        Some(if self.omit { 1 } else { 2 })
    }

    fn decode(&mut self, data: &[u8], cur: &mut [usize], off: usize) -> Result<(), Error> {
        for &c in cur.iter() {
            let p = c + off;
            if self.omit {
                self.values.push(byte_at(data, p)? ^ self.invert == 1);
            } else {
                let v = byte_at(data, p)? == 1;
                self.valid.push(v);
                self.values.push(byte_at(data, p + 1)? ^ self.invert == 1);
            }
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef, Error> {
        let nulls = self.valid.into_nulls();
        Ok(Arc::new(BooleanArray::new(
            self.values.into_buffer(),
            nulls,
        )))
    }
}

struct FsbDecoder {
    width: usize,
    values: Vec<u8>,
    valid: Bits,
    invert: u8,
    omit: bool,
}

impl Decoder for FsbDecoder {
    fn fixed_len(&self) -> Option<usize> {
        Some(self.width + usize::from(!self.omit))
    }

    fn decode(&mut self, data: &[u8], cur: &mut [usize], off: usize) -> Result<(), Error> {
        let head = usize::from(!self.omit);
        for &c in cur.iter() {
            let p = c + off;
            let b = data.get(p..p + head + self.width).ok_or_else(truncated)?;
            if head == 1 {
                let v = b[0] == 1;
                self.valid.push(v);
            }
            self.values
                .extend(b[head..].iter().map(|x| x ^ self.invert));
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef, Error> {
        let nulls = self.valid.into_nulls();
        let width = i32::try_from(self.width)
            .map_err(|_| Error::Unsupported(format!("width {}", self.width)))?;
        if self.width == 0 {
            let len = self.values.len();
            debug_assert_eq!(len, 0);
        }
        Ok(Arc::new(FixedSizeBinaryArray::try_new(
            width,
            Buffer::from_vec(self.values),
            nulls,
        )?))
    }
}

// ------------------------------------------------------------------- strings

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Utf8,
    Utf8View,
    Binary,
    BinaryView,
}

struct BytesDecoder<O> {
    kind: Kind,
    trusted: bool,
    large: bool,
    values: Vec<u8>,
    offsets: Vec<O>,
    valid: Bits,
    invert: u8,
    sentinel: u8,
}

fn bytes_decoder<O: OffsetSizeTrait>(
    field: &SortField,
    cap: usize,
    kind: Kind,
    trusted: bool,
) -> Box<dyn Decoder> {
    let mut offsets = Vec::with_capacity(cap + 1);
    offsets.push(O::usize_as(0));
    Box::new(BytesDecoder {
        kind,
        trusted,
        large: O::IS_LARGE,
        values: Vec::new(),
        offsets,
        valid: Bits::with_capacity(cap),
        invert: invert_mask(field.options),
        sentinel: null_sentinel(field.options),
    })
}

impl<O: OffsetSizeTrait> Decoder for BytesDecoder<O> {
    fn fixed_len(&self) -> Option<usize> {
        None
    }

    fn decode(&mut self, data: &[u8], cur: &mut [usize], off: usize) -> Result<(), Error> {
        for c in cur.iter_mut() {
            let p = *c + off;
            // Values of 1 to 64 bytes with the longest such encoding's bytes
            // left in `data`: read without branches on their length.
            let (valid, used) = if let Some(win) = data.get(p..p + variable::LONG_TOTAL)
                && let Some((len, used, buf)) =
                    variable::take_medium(win.try_into().expect("a window"), self.invert)
            {
                let at = self.values.len();
                self.values.extend_from_slice(&buf);
                self.values.truncate(at + len);
                (true, used)
            } else {
                let row = data.get(p..).ok_or_else(truncated)?;
                variable::take_value(row, self.invert, self.sentinel, &mut self.values)?
            };
            self.valid.push(valid);
            let end = O::from_usize(self.values.len()).ok_or_else(|| {
                Error::InvalidRow("string data exceeds the 32-bit offset range".into())
            })?;
            self.offsets.push(end);
            *c = p + used;
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef, Error> {
        let nulls = self.valid.into_nulls();
        let offsets = OffsetBuffer::new(ScalarBuffer::from(self.offsets));
        let values = Buffer::from_vec(self.values);
        let _ = self.large;
        let strings = |offsets, values, nulls| -> Result<GenericStringArray<O>, Error> {
            if self.trusted {
                // SAFETY: trusted rows were written by this encoder from
                // string arrays, a whole value at a time, so the bytes
                // between consecutive offsets are valid UTF-8; offsets are
                // monotonic and within `values` by construction.
                Ok(unsafe { GenericStringArray::<O>::new_unchecked(offsets, values, nulls) })
            } else {
                Ok(GenericStringArray::<O>::try_new(offsets, values, nulls)?)
            }
        };
        Ok(match self.kind {
            Kind::Utf8 => Arc::new(strings(offsets, values, nulls)?),
            Kind::Binary => Arc::new(GenericBinaryArray::<O>::try_new(offsets, values, nulls)?),
            Kind::Utf8View => {
                let a = strings(offsets, values, nulls)?;
                Arc::new(a.iter().collect::<arrow_array::StringViewArray>())
            }
            Kind::BinaryView => {
                let a = GenericBinaryArray::<O>::try_new(offsets, values, nulls)?;
                Arc::new(a.iter().collect::<arrow_array::BinaryViewArray>())
            }
        })
    }
}

// -------------------------------------------------------------------- nested

struct StructDecoder<'a> {
    children: Vec<Box<dyn Decoder + 'a>>,
    fields: Fields,
    valid: Bits,
    omit: bool,
    len: usize,
}

impl Decoder for StructDecoder<'_> {
    fn fixed_len(&self) -> Option<usize> {
        let head = usize::from(!self.omit);
        self.children
            .iter()
            .map(|c| c.fixed_len())
            .sum::<Option<usize>>()
            .map(|l| l + head)
    }

    fn decode(&mut self, data: &[u8], cur: &mut [usize], off: usize) -> Result<(), Error> {
        let mut off = off;
        if !self.omit {
            for &c in cur.iter() {
                let v = byte_at(data, c + off)? == 1;
                self.valid.push(v);
            }
            off += 1;
        }
        self.len += cur.len();
        let end = decode_seq(&mut self.children, data, cur, off)?;
        if self.fixed_len().is_none() {
            cur.iter_mut().for_each(|c| *c += end);
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef, Error> {
        let nulls = self.valid.into_nulls();
        let children: Vec<ArrayRef> = self
            .children
            .into_iter()
            .map(|c| c.finish())
            .collect::<Result<_, _>>()?;
        let fields: Fields = self
            .fields
            .iter()
            .zip(&children)
            .map(|(f, c)| f.as_ref().clone().with_data_type(c.data_type().clone()))
            .collect();
        Ok(Arc::new(StructArray::try_new_with_length(
            fields, children, nulls, self.len,
        )?))
    }
}

/// Lists, list views and maps: collects element rows, decoded together by
/// the child encoder at the end.
struct ListDecoder<'a> {
    child: &'a RowEncoder,
    trusted: bool,
    data_type: DataType,
    rows: Vec<u8>,
    row_offsets: Vec<usize>,
    offsets: Vec<usize>,
    valid: Bits,
    invert: u8,
    sentinel: u8,
}

impl Decoder for ListDecoder<'_> {
    fn fixed_len(&self) -> Option<usize> {
        None
    }

    fn decode(&mut self, data: &[u8], cur: &mut [usize], off: usize) -> Result<(), Error> {
        for c in cur.iter_mut() {
            let mut p = *c + off;
            let first = byte_at(data, p)?;
            if first == self.sentinel {
                self.valid.push(false);
                p += 1;
            } else {
                self.valid.push(true);
                loop {
                    let head = byte_at(data, p)?;
                    if head ^ self.invert == variable::EMPTY_SENTINEL {
                        p += 1;
                        break;
                    }
                    if head ^ self.invert != variable::NON_EMPTY_SENTINEL {
                        return Err(Error::InvalidRow(format!(
                            "bad list element header {head:#04x}"
                        )));
                    }
                    let (_, used) =
                        variable::take_value(&data[p..], self.invert, !head, &mut self.rows)?;
                    self.row_offsets.push(self.rows.len());
                    p += used;
                }
            }
            self.offsets.push(self.row_offsets.len() - 1);
            *c = p;
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef, Error> {
        let children = self
            .child
            .decode_buffer(&self.rows, &self.row_offsets, self.trusted)?;
        let nulls = self.valid.into_nulls();
        let with_type = |f: &FieldRef, c: &ArrayRef| -> FieldRef {
            Arc::new(f.as_ref().clone().with_data_type(c.data_type().clone()))
        };
        fn offsets<O: OffsetSizeTrait>(v: &[usize]) -> Result<OffsetBuffer<O>, Error> {
            let v = v
                .iter()
                .map(|&o| O::from_usize(o))
                .collect::<Option<Vec<O>>>()
                .ok_or_else(|| Error::InvalidRow("list exceeds the 32-bit offset range".into()))?;
            Ok(OffsetBuffer::new(ScalarBuffer::from(v)))
        }
        fn sizes<O: OffsetSizeTrait>(v: &[usize]) -> Result<ScalarBuffer<O>, Error> {
            let s = v
                .windows(2)
                .map(|w| O::from_usize(w[1] - w[0]))
                .collect::<Option<Vec<O>>>()
                .ok_or_else(|| Error::InvalidRow("list exceeds the 32-bit offset range".into()))?;
            Ok(ScalarBuffer::from(s))
        }
        fn list<O: OffsetSizeTrait>(
            f: FieldRef,
            offs: &[usize],
            c: ArrayRef,
            nulls: Option<NullBuffer>,
        ) -> Result<ArrayRef, Error> {
            Ok(Arc::new(GenericListArray::<O>::try_new(
                f,
                offsets(offs)?,
                c,
                nulls,
            )?))
        }
        fn view<O: OffsetSizeTrait>(
            f: FieldRef,
            offs: &[usize],
            c: ArrayRef,
            nulls: Option<NullBuffer>,
        ) -> Result<ArrayRef, Error> {
            let o = offsets::<O>(offs)?;
            let starts = ScalarBuffer::from(o[..o.len() - 1].to_vec());
            Ok(Arc::new(GenericListViewArray::<O>::try_new(
                f,
                starts,
                sizes(offs)?,
                c,
                nulls,
            )?))
        }
        let child = children.first().cloned();
        let offs = &self.offsets;
        Ok(match (&self.data_type, child) {
            (DataType::List(f), Some(c)) => list::<i32>(with_type(f, &c), offs, c, nulls)?,
            (DataType::LargeList(f), Some(c)) => list::<i64>(with_type(f, &c), offs, c, nulls)?,
            (DataType::ListView(f), Some(c)) => view::<i32>(with_type(f, &c), offs, c, nulls)?,
            (DataType::LargeListView(f), Some(c)) => view::<i64>(with_type(f, &c), offs, c, nulls)?,
            (DataType::Map(f, sorted), _) => {
                let DataType::Struct(kv) = f.data_type() else {
                    return Err(Error::Unsupported(format!("map entries {f}")));
                };
                let kv: Fields = kv
                    .iter()
                    .zip(&children)
                    .map(|(f, c)| f.as_ref().clone().with_data_type(c.data_type().clone()))
                    .collect();
                let entries = StructArray::try_new(kv.clone(), children, None)?;
                let f = Arc::new(Field::new(f.name(), DataType::Struct(kv), f.is_nullable()));
                Arc::new(MapArray::try_new(
                    f,
                    offsets(&self.offsets)?,
                    entries,
                    nulls,
                    *sorted,
                )?)
            }
            (other, _) => return Err(Error::Unsupported(format!("list decoding of {other}"))),
        })
    }
}

struct FslDecoder<'a> {
    child: Box<dyn Decoder + 'a>,
    field: FieldRef,
    size: i32,
    null_row: &'a [u8],
    valid: Bits,
    sentinel: u8,
    omit: bool,
}

impl Decoder for FslDecoder<'_> {
    fn fixed_len(&self) -> Option<usize> {
        None
    }

    fn decode(&mut self, data: &[u8], cur: &mut [usize], off: usize) -> Result<(), Error> {
        let size = usize::try_from(self.size).unwrap_or(0);
        for c in cur.iter_mut() {
            let mut p = *c + off;
            let valid = if self.omit {
                true
            } else {
                let b = byte_at(data, p)?;
                p += 1;
                if b != 1 && b != self.sentinel {
                    return Err(Error::InvalidRow(format!("bad validity byte {b:#04x}")));
                }
                b == 1
            };
            self.valid.push(valid);
            for _ in 0..size {
                if valid {
                    p = decode_one(self.child.as_mut(), data, p)?;
                } else {
                    decode_one(self.child.as_mut(), self.null_row, 0)?;
                }
            }
            *c = p;
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef, Error> {
        let child = self.child.finish()?;
        let nulls = self.valid.into_nulls();
        let f = Arc::new(
            self.field
                .as_ref()
                .clone()
                .with_data_type(child.data_type().clone()),
        );
        Ok(Arc::new(FixedSizeListArray::try_new(
            f, self.size, child, nulls,
        )?))
    }
}

/// Run-end encoded: consecutive equal values become one run.
struct RunDecoder<'a> {
    child: &'a RowEncoder,
    trusted: bool,
    data_type: DataType,
    values: Vec<u8>,
    value_offsets: Vec<usize>,
    run_ends: Vec<usize>,
    scratch: Vec<u8>,
    len: usize,
    invert: u8,
}

impl Decoder for RunDecoder<'_> {
    fn fixed_len(&self) -> Option<usize> {
        None
    }

    fn decode(&mut self, data: &[u8], cur: &mut [usize], off: usize) -> Result<(), Error> {
        for c in cur.iter_mut() {
            let p = *c + off;
            self.scratch.clear();
            let head = byte_at(data, p)?;
            let (_, used) =
                variable::take_value(&data[p..], self.invert, !head, &mut self.scratch)?;
            let n = self.value_offsets.len();
            let same = n > 1
                && self.values[self.value_offsets[n - 2]..self.value_offsets[n - 1]]
                    == self.scratch[..];
            self.len += 1;
            if same {
                *self.run_ends.last_mut().expect("a run exists") = self.len;
            } else {
                self.values.extend_from_slice(&self.scratch);
                self.value_offsets.push(self.values.len());
                self.run_ends.push(self.len);
            }
            *c = p + used;
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef, Error> {
        let values = self
            .child
            .decode_buffer(&self.values, &self.value_offsets, self.trusted)?
            .remove(0);
        fn build<R: RunEndIndexType>(ends: &[usize], values: &ArrayRef) -> Result<ArrayRef, Error> {
            let ends = ends
                .iter()
                .map(|&e| R::Native::from_usize(e))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| Error::InvalidRow("run end out of range".into()))?;
            let ends = PrimitiveArray::<R>::new(ScalarBuffer::from(ends), None);
            Ok(Arc::new(RunArray::<R>::try_new(&ends, values.as_ref())?))
        }
        match &self.data_type {
            DataType::RunEndEncoded(r, _) => match r.data_type() {
                DataType::Int16 => build::<Int16Type>(&self.run_ends, &values),
                DataType::Int32 => build::<Int32Type>(&self.run_ends, &values),
                DataType::Int64 => build::<Int64Type>(&self.run_ends, &values),
                other => Err(Error::Unsupported(format!("run ends of type {other}"))),
            },
            other => Err(Error::Unsupported(format!("run-end decoding of {other}"))),
        }
    }
}
