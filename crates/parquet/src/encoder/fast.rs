//! The values of the fast shape (a top-level `Int32`, `Int64` or
//! `Dictionary<UInt8, Utf8>` column), written value by value into a page
//! buffer: one batch's array ([`Part`]) and its value writers
//! ([`LeafValues`]: [`IntValues`], [`DictValues`]).

use arrow_array::{ArrayRef, DictionaryArray, cast::AsArray, types::UInt8Type};

use super::{
    kernels::pack8,
    shape::{LeafShape, unsupported},
};
use crate::Error;

/// One batch's array for a leaf of the fast shape and its validity.
#[derive(Clone, Copy)]
pub(super) struct Part<'a> {
    pub(super) leaf: &'a ArrayRef,
    pub(super) leaf_nulls: Option<&'a arrow_buffer::NullBuffer>,
}

/// A validity buffer worth checking: `None` when it has no null (readers
/// often attach an all-valid buffer), so the loops skip the bit tests.
fn nulls(n: Option<&arrow_buffer::NullBuffer>) -> Option<&arrow_buffer::NullBuffer> {
    n.filter(|n| n.null_count() > 0)
}

impl<'a> Part<'a> {
    /// The array of `column` for a leaf of `shape`, after checking that
    /// the data has no null where the schema allows none.
    pub(super) fn new(shape: &LeafShape, column: &'a ArrayRef) -> Result<Self, Error> {
        if shape.max_def == 0 && column.null_count() > 0 {
            return Err(unsupported("nulls in a required column"));
        }
        Ok(Part {
            leaf: column,
            leaf_nulls: nulls(column.nulls()),
        })
    }
}

/// Writes the values of one leaf array into a page buffer, by index.
pub(super) trait LeafValues {
    /// Bytes [`LeafValues::bound`] adds once for the fixed-size writes of
    /// [`LeafValues::put`] past a value's end.
    const SLACK: usize;

    /// An upper bound of the bytes that [`LeafValues::put`] needs for the
    /// values `range`, including [`LeafValues::SLACK`].
    fn bound(&self, range: std::ops::Range<usize>) -> usize;

    /// Writes value `i` at the start of `out` and returns its encoded
    /// length, or writes scratch and returns 0 when `valid` is false.
    fn put(&mut self, i: usize, valid: bool, out: &mut [u8]) -> usize;

    /// Writes the valid values `range` one after the other at the start
    /// of `out` and returns their encoded length.
    #[inline(always)]
    fn put_run(&mut self, range: std::ops::Range<usize>, out: &mut [u8]) -> usize {
        let mut at = 0;
        for i in range {
            at += self.put(i, true, &mut out[at..]);
        }
        at
    }

    /// Dictionary keys that occurred since the last call (for
    /// statistics); none by default.
    fn take_used(&mut self) -> [u64; 4] {
        [0; 4]
    }

    /// Appends the valid values `range` to `out` (by default through
    /// [`LeafValues::put_run`] into room made for them).
    #[inline(always)]
    fn extend_run(&mut self, range: std::ops::Range<usize>, out: &mut Vec<u8>) {
        let at = out.len();
        out.resize(at + self.bound(range.clone()), 0);
        let n = self.put_run(range, &mut out[at..]);
        out.truncate(at + n);
    }
}

/// `PLAIN` integers of `W` bytes, little-endian.
pub(super) struct IntValues<'a, const W: usize> {
    data: &'a [u8],
}

impl<'a, const W: usize> IntValues<'a, W> {
    pub(super) fn new(array: &'a ArrayRef) -> Result<Self, Error> {
        use arrow_array::types::{Int32Type, Int64Type};
        // The values buffer of a primitive array is already sliced to the
        // array's rows.
        let data = match W {
            4 => array
                .as_primitive_opt::<Int32Type>()
                .map(|a| a.values().inner().as_slice()),
            8 => array
                .as_primitive_opt::<Int64Type>()
                .map(|a| a.values().inner().as_slice()),
            _ => None,
        };
        Ok(IntValues {
            data: data.ok_or_else(|| unsupported("an Int32 or Int64 column"))?,
        })
    }
}

impl<const W: usize> LeafValues for IntValues<'_, W> {
    const SLACK: usize = 0;

    fn bound(&self, range: std::ops::Range<usize>) -> usize {
        range.len() * W
    }

    #[inline(always)]
    fn put(&mut self, i: usize, valid: bool, out: &mut [u8]) -> usize {
        out[..W].copy_from_slice(&self.data[i * W..i * W + W]);
        W * usize::from(valid)
    }

    #[inline(always)]
    fn put_run(&mut self, range: std::ops::Range<usize>, out: &mut [u8]) -> usize {
        let bytes = &self.data[range.start * W..range.end * W];
        out[..bytes.len()].copy_from_slice(bytes);
        bytes.len()
    }
    #[inline(always)]
    fn extend_run(&mut self, range: std::ops::Range<usize>, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.data[range.start * W..range.end * W]);
    }
}

/// `RLE_DICTIONARY` keys, mapped onto the chunk's dictionary; `used`
/// collects the keys that occur (for min/max).
pub(super) struct DictValues<'a> {
    keys: &'a [u8],
    map: &'a [u8],
    /// `seen[k]` is 1 when key `k` was written for a present value since
    /// the last [`LeafValues::take_used`] (slot 256 takes the nulls'
    /// keys): a plain store per value, where or-ing a bit into a word
    /// made each value wait for the last one's.
    seen: Box<[u8; 257]>,
}

impl<'a> DictValues<'a> {
    pub(super) fn new(array: &'a ArrayRef, map: &'a [u8]) -> Result<Self, Error> {
        let d: &DictionaryArray<UInt8Type> = array
            .as_dictionary_opt()
            .ok_or_else(|| unsupported("a UInt8 dictionary"))?;
        Ok(DictValues {
            keys: d.keys().values(),
            map,
            seen: Box::new([0; 257]),
        })
    }
}

impl LeafValues for DictValues<'_> {
    const SLACK: usize = 1;

    fn take_used(&mut self) -> [u64; 4] {
        let mut used = [0u64; 4];
        for (k, chunk) in self.seen[..256].chunks_exact(8).enumerate() {
            // Eight 0/1 bytes to eight bits, the first byte lowest.
            let bits = pack8(u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8])), 1);
            used[k / 8] |= bits << (8 * (k % 8));
        }
        self.seen.fill(0);
        used
    }

    fn bound(&self, range: std::ops::Range<usize>) -> usize {
        range.len() + 1
    }

    #[inline(always)]
    fn put(&mut self, i: usize, valid: bool, out: &mut [u8]) -> usize {
        let k = self
            .map
            .get(self.keys[i] as usize)
            .copied()
            .unwrap_or_default();
        out[0] = k;
        self.seen[if valid { usize::from(k) } else { 256 }] = 1;
        usize::from(valid)
    }
    #[inline(always)]
    fn extend_run(&mut self, range: std::ops::Range<usize>, out: &mut Vec<u8>) {
        let (map, seen) = (self.map, &mut self.seen);
        out.extend(self.keys[range].iter().map(|&k| {
            let k = map.get(k as usize).copied().unwrap_or_default();
            seen[usize::from(k)] = 1;
            k
        }));
    }
}
