//! Strings built by the evaluator: string columns read in place, a
//! string column built from parts, and integers and timestamps as text.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int64Array, StringArray, TimestampMicrosecondArray};
use arrow_schema::DataType;

use super::value::{Val, expr_error, strings};
use crate::Error;

/// Strings of a column or a constant, by row.
pub(super) struct Strs<'a> {
    pub(super) a: &'a StringArray,
    pub(super) scalar: bool,
    /// Whether any value is null (else no bitmap is read per value).
    pub(super) nulls: bool,
}

impl<'a> Strs<'a> {
    pub(super) fn of(v: &'a Val) -> Result<Strs<'a>, Error> {
        let (a, scalar) = match v {
            Val::Array(a) => (a, false),
            Val::Scalar(a) => (a, true),
        };
        let a = strings(a)?;
        Ok(Strs {
            a,
            scalar,
            nulls: a.null_count() > 0,
        })
    }

    #[inline(always)]
    pub(super) fn get(&self, i: usize) -> Option<&'a str> {
        let i = if self.scalar { 0 } else { i };
        if self.nulls && self.a.is_null(i) {
            return None;
        }
        Some(self.a.value(i))
    }

    pub(super) fn bytes_hint(&self, rows: usize) -> usize {
        if self.scalar {
            self.a.value_data().len() * rows
        } else {
            self.a.value_data().len()
        }
    }
}

/// A string column built in one buffer.
pub(super) struct StrBuild {
    pub(super) bytes: Vec<u8>,
    pub(super) offsets: Vec<i32>,
    /// Validity by row, kept from the first null on.
    pub(super) valid: Option<Vec<bool>>,
}

impl StrBuild {
    /// A builder for `rows` values of about `bytes` bytes in all (a hint,
    /// capped at what one column can hold).
    pub(super) fn new(rows: usize, bytes: usize) -> StrBuild {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        StrBuild {
            bytes: Vec::with_capacity(bytes.min(i32::MAX as usize)),
            offsets,
            valid: None,
        }
    }

    #[inline(always)]
    pub(super) fn push_part(&mut self, s: &str) {
        self.bytes.extend_from_slice(s.as_bytes());
    }

    pub(super) fn push_repeated(&mut self, b: u8, n: usize) {
        self.bytes.resize(self.bytes.len() + n, b);
    }

    #[inline(always)]
    pub(super) fn end_value(&mut self) {
        self.offsets.push(self.bytes.len() as i32);
        if let Some(v) = &mut self.valid {
            v.push(true);
        }
    }

    pub(super) fn null(&mut self) {
        let before = self.offsets.len() - 1;
        self.offsets.push(self.bytes.len() as i32);
        self.valid
            .get_or_insert_with(|| vec![true; before])
            .push(false);
    }

    /// The column; [`Error::BatchTooLarge`] past 2 GiB of bytes.
    pub(super) fn finish(self) -> Result<ArrayRef, Error> {
        // Offsets were written as `as i32`; they are right when the last
        // (the largest) fits.
        if i32::try_from(self.bytes.len()).is_err() {
            return Err(Error::BatchTooLarge);
        }
        let nulls = self.valid.map(arrow_buffer::NullBuffer::from);
        let offsets = arrow_buffer::OffsetBuffer::new(self.offsets.into());
        // SAFETY: the offsets start at 0 and never decrease (each is the
        // buffer's length after a value, and the last fits `i32`, checked
        // above), and every value is the bytes of whole `&str`s, so each
        // slice is valid UTF-8.
        Ok(Arc::new(unsafe {
            StringArray::new_unchecked(offsets, self.bytes.into(), nulls)
        }))
    }
}

/// Timestamps as DuckDB writes them: `1995-06-17 08:30:00`, with the
/// fraction of a second when there is one (`.5`, `.000123`).
pub(super) fn timestamp_strings(a: &ArrayRef) -> Result<ArrayRef, Error> {
    let v = a
        .as_any()
        .downcast_ref::<TimestampMicrosecondArray>()
        .ok_or_else(|| expr_error("a timestamp is not a timestamp"))?;
    let mut b = StrBuild::new(v.len(), v.len() * 26);
    for i in 0..v.len() {
        let t = match v.is_valid(i) {
            true => chrono::DateTime::from_timestamp_micros(v.value(i)),
            false => None,
        };
        let Some(t) = t else {
            b.null();
            continue;
        };
        let text = t.naive_utc().format("%Y-%m-%d %H:%M:%S").to_string();
        b.push_part(&text);
        let us = v.value(i).rem_euclid(1_000_000);
        if us != 0 {
            let frac = format!(".{us:06}");
            b.push_part(frac.trim_end_matches('0'));
        }
        b.end_value();
    }
    b.finish()
}

/// `x`'s decimal text, written at the end of `buf` (64-bit division by 10
/// is a multiply).
#[inline(always)]
pub(super) fn decimal_text(x: i64, buf: &mut [u8; 20]) -> &[u8] {
    let mut at = buf.len();
    let mut m = x.unsigned_abs();
    loop {
        at -= 1;
        buf[at] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    if x < 0 {
        at -= 1;
        buf[at] = b'-';
    }
    &buf[at..]
}

/// Integers as their decimal text (as `CAST(x AS VARCHAR)`).
pub(super) fn int_strings(a: &ArrayRef) -> Result<ArrayRef, Error> {
    let v = arrow_cast::cast(a, &DataType::Int64)?;
    let v = v
        .as_any()
        .downcast_ref::<Int64Array>()
        .ok_or_else(|| expr_error("an integer is not an integer"))?;
    let mut b = StrBuild::new(v.len(), v.len() * 4);
    for i in 0..v.len() {
        if v.is_null(i) {
            b.null();
            continue;
        }
        let mut digits = [0u8; 20];
        b.bytes
            .extend_from_slice(decimal_text(v.value(i), &mut digits));
        b.end_value();
    }
    b.finish()
}
