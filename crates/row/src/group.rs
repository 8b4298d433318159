//! [`GroupKeyEncoder`]: keys for grouping and hashing, with no order.
//!
//! Layout of a key: a validity bitmap (bit `i` set when column `i` is
//! valid), padded to the widest fixed-width column; then the fixed-width
//! columns, widest first, each in its native little-endian bytes at an
//! offset that is a multiple of its width; then the variable-width columns,
//! each a 4-byte little-endian length and the bytes. A null writes zero
//! bytes and zero length. Keys of an all-fixed-width schema are padded to a
//! multiple of 8 bytes so consecutive keys stay aligned.
//!
//! Two keys are equal exactly when the rows are equal, nulls equal to
//! nulls and floats compared by their bits (so `-0.0 != 0.0`, and NaNs with
//! the same bits are equal), as [`crate::RowEncoder`] compares them. There is
//! no order: [`GroupKey`] implements `Eq` and `Hash` but not `Ord`, and
//! [`GroupKeys`] is a different type from [`crate::Rows`].

use arrow_array::{
    Array, ArrayRef, cast::AsArray, downcast_dictionary_array, downcast_primitive_array,
};
use arrow_buffer::ArrowNativeType;
use arrow_schema::DataType;

use crate::Error;

/// Encodes rows into unordered, equality-preserving keys.
#[derive(Debug, Clone)]
pub struct GroupKeyEncoder {
    types: Vec<DataType>,
    /// Fixed-width columns as (column, width, offset in the key).
    fixed: Vec<(usize, usize, usize)>,
    /// Variable-width columns, in column order.
    variable: Vec<usize>,
    /// Bytes before the variable part.
    fixed_len: usize,
}

/// Keys made by a [`GroupKeyEncoder`].
#[derive(Debug, Clone, Default)]
pub struct GroupKeys {
    buffer: Vec<u8>,
    offsets: Vec<usize>,
}

/// One key: compares and hashes as its bytes; it has no order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GroupKey<'a>(&'a [u8]);

impl<'a> GroupKey<'a> {
    /// The key's bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.0
    }
}

impl GroupKeys {
    /// Number of keys.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Key `i`.
    ///
    /// # Panics
    ///
    /// If `i >= self.len()`, like slice indexing.
    pub fn key(&self, i: usize) -> GroupKey<'_> {
        GroupKey(&self.buffer[self.offsets[i]..self.offsets[i + 1]])
    }

    /// The keys in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = GroupKey<'_>> + '_ {
        self.offsets
            .windows(2)
            .map(|w| GroupKey(&self.buffer[w[0]..w[1]]))
    }
}

/// The value type a column's bytes come from (dictionaries are hydrated).
fn value_type(dt: &DataType) -> &DataType {
    match dt {
        DataType::Dictionary(_, v) => v,
        other => other,
    }
}

/// Bytes of a fixed-width type, `None` for variable-width types.
fn width(dt: &DataType) -> Result<Option<usize>, Error> {
    use DataType::*;
    Ok(match dt {
        Boolean => Some(1),
        FixedSizeBinary(w) => Some(*w as usize),
        Utf8 | LargeUtf8 | Utf8View | Binary | LargeBinary | BinaryView => None,
        d if d.is_primitive() => d.primitive_width(),
        other => return Err(Error::Unsupported(format!("group key of {other}"))),
    })
}

impl GroupKeyEncoder {
    /// An encoder for columns of these types.
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] for nested types (lists, structs, maps,
    /// unions) and `Null`.
    pub fn new(types: Vec<DataType>) -> Result<Self, Error> {
        let mut fixed = Vec::new();
        let mut variable = Vec::new();
        for (i, dt) in types.iter().enumerate() {
            if let DataType::Dictionary(k, _) = dt
                && !k.is_dictionary_key_type()
            {
                return Err(Error::Unsupported(format!("dictionary key type {k}")));
            }
            match width(value_type(dt))? {
                Some(w) => fixed.push((i, w, 0)),
                None => variable.push(i),
            }
        }
        // Widest first; power-of-two widths then fall on multiples of
        // themselves once the bitmap is padded to the widest.
        fixed.sort_by_key(|&(i, w, _)| (std::cmp::Reverse(w), i));
        let align = fixed.first().map_or(1, |&(_, w, _)| w.clamp(1, 8));
        let mut at = types.len().div_ceil(8).next_multiple_of(align);
        for f in &mut fixed {
            f.2 = at;
            at += f.1;
        }
        let fixed_len = if variable.is_empty() {
            at.next_multiple_of(8)
        } else {
            at
        };
        Ok(GroupKeyEncoder {
            types,
            fixed,
            variable,
            fixed_len,
        })
    }

    /// Encodes the columns into one key per row.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the columns do not match the types.
    pub fn encode(&self, columns: &[ArrayRef]) -> Result<GroupKeys, Error> {
        let n = crate::field::check_columns(columns, self.types.iter())?;
        let mut lens = vec![self.fixed_len; n];
        for &c in &self.variable {
            for_each_bytes(columns[c].as_ref(), |r, v| {
                lens[r] += 4 + v.map_or(0, <[u8]>::len)
            })?;
        }
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0);
        let mut end = 0;
        offsets.extend(lens.iter().map(|l| {
            end += l;
            end
        }));
        let mut buffer = vec![0u8; end];
        for &(c, w, at) in &self.fixed {
            let col = columns[c].as_ref();
            put_fixed(col, w, |r, bytes| {
                let start = offsets[r];
                buffer[start + c / 8] |= 1 << (c % 8);
                buffer[start + at..start + at + w].copy_from_slice(bytes);
            })?;
        }
        let mut cursor: Vec<usize> = offsets[..n].iter().map(|o| o + self.fixed_len).collect();
        for &c in &self.variable {
            for_each_bytes(columns[c].as_ref(), |r, v| {
                let p = cursor[r];
                if let Some(v) = v {
                    buffer[offsets[r] + c / 8] |= 1 << (c % 8);
                    buffer[p..p + 4].copy_from_slice(&(v.len() as u32).to_le_bytes());
                    buffer[p + 4..p + 4 + v.len()].copy_from_slice(v);
                    cursor[r] = p + 4 + v.len();
                } else {
                    cursor[r] = p + 4;
                }
            })?;
        }
        Ok(GroupKeys { buffer, offsets })
    }
}

/// Calls `f(row, bytes)` for every valid row of a fixed-width column
/// (dictionaries hydrated).
fn put_fixed(col: &dyn Array, w: usize, mut f: impl FnMut(usize, &[u8])) -> Result<(), Error> {
    let mut keyed =
        |value: &dyn Array, pick: &dyn Fn(usize) -> Option<usize>| -> Result<(), Error> {
            downcast_primitive_array! {
                value => {
                    let raw = value.values().inner().as_slice();
                    for r in 0..col.len() {
                        if let Some(i) = pick(r).filter(|&i| value.is_valid(i)) {
                            f(r, &raw[i * w..(i + 1) * w]);
                        }
                    }
                }
                DataType::Boolean => {
                    let b = value.as_boolean();
                    for r in 0..col.len() {
                        if let Some(i) = pick(r).filter(|&i| b.is_valid(i)) {
                            f(r, &[u8::from(b.value(i))]);
                        }
                    }
                }
                DataType::FixedSizeBinary(_) => {
                    let b = value.as_fixed_size_binary();
                    for r in 0..col.len() {
                        if let Some(i) = pick(r).filter(|&i| b.is_valid(i)) {
                            f(r, b.value(i));
                        }
                    }
                }
                other => return Err(Error::Unsupported(format!("group key of {other}")))
            }
            Ok(())
        };
    downcast_dictionary_array! {
        col => {
            let keys = col.keys();
            keyed(col.values().as_ref(), &|r| keys.is_valid(r).then(|| keys.values()[r].as_usize()))
        }
        _ => keyed(col, &|r| Some(r))
    }
}

/// Calls `f(row, Some(bytes))` or `f(row, None)` for every row of a
/// variable-width column (dictionaries hydrated).
fn for_each_bytes(col: &dyn Array, mut f: impl FnMut(usize, Option<&[u8]>)) -> Result<(), Error> {
    fn value(a: &dyn Array, i: usize) -> Result<Option<&[u8]>, Error> {
        if a.is_null(i) {
            return Ok(None);
        }
        Ok(Some(match a.data_type() {
            DataType::Utf8 => a.as_string::<i32>().value(i).as_bytes(),
            DataType::LargeUtf8 => a.as_string::<i64>().value(i).as_bytes(),
            DataType::Utf8View => a.as_string_view().value(i).as_bytes(),
            DataType::Binary => a.as_binary::<i32>().value(i),
            DataType::LargeBinary => a.as_binary::<i64>().value(i),
            DataType::BinaryView => a.as_binary_view().value(i),
            other => return Err(Error::Unsupported(format!("group key of {other}"))),
        }))
    }
    downcast_dictionary_array! {
        col => {
            let keys = col.keys();
            let values = col.values().as_ref();
            for r in 0..col.len() {
                let v = if keys.is_valid(r) { value(values, keys.values()[r].as_usize())? } else { None };
                f(r, v);
            }
        }
        _ => for r in 0..col.len() {
            f(r, value(col, r)?);
        }
    }
    Ok(())
}
