//! [`Rows`], the encoded rows of a batch, and [`Row`], one of them.

use std::{cmp::Ordering, hash::Hash, sync::Arc};

use crate::SortField;

/// Encoded rows: one contiguous byte buffer and the offset of every row.
///
/// Rows remember which [`crate::RowEncoder`] made them; appending to or
/// decoding them with another encoder is an error.
#[derive(Debug, Clone)]
pub struct Rows {
    pub(crate) buffer: Vec<u8>,
    /// `offsets[i]..offsets[i + 1]` is row `i`; `offsets[0] == 0`.
    pub(crate) offsets: Vec<usize>,
    pub(crate) fields: Arc<[SortField]>,
}

impl Rows {
    pub(crate) fn new(fields: Arc<[SortField]>, rows: usize, bytes: usize) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        Rows {
            buffer: Vec::with_capacity(bytes),
            offsets,
            fields,
        }
    }

    /// Number of rows.
    pub fn num_rows(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.num_rows() == 0
    }

    /// Row `i`.
    ///
    /// # Panics
    ///
    /// If `i >= self.num_rows()`, like slice indexing.
    pub fn row(&self, i: usize) -> Row<'_> {
        Row {
            data: &self.buffer[self.offsets[i]..self.offsets[i + 1]],
            fields: &self.fields,
        }
    }

    /// Row `i`, or `None` when out of range.
    pub fn get(&self, i: usize) -> Option<Row<'_>> {
        (i < self.num_rows()).then(|| self.row(i))
    }

    /// The rows in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Row<'_>> + '_ {
        self.offsets.windows(2).map(|w| Row {
            data: &self.buffer[w[0]..w[1]],
            fields: &self.fields,
        })
    }

    /// Removes every row, keeping the allocations.
    pub fn clear(&mut self) {
        self.buffer.clear();
        self.offsets.truncate(1);
    }

    /// The bytes of all rows, back to back.
    pub fn data(&self) -> &[u8] {
        &self.buffer
    }

    /// Row boundaries: row `i` is `data()[offsets()[i]..offsets()[i + 1]]`.
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }

    /// Heap bytes held.
    pub fn size(&self) -> usize {
        self.buffer.capacity() + self.offsets.capacity() * size_of::<usize>()
    }
}

impl<'a> IntoIterator for &'a Rows {
    type Item = Row<'a>;
    type IntoIter = Box<dyn ExactSizeIterator<Item = Row<'a>> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

/// One encoded row. Rows compare, hash and test equal as their bytes.
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    data: &'a [u8],
    pub(crate) fields: &'a Arc<[SortField]>,
}

impl<'a> Row<'a> {
    /// The encoded bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.data
    }

    /// A copy that owns its bytes.
    pub fn to_owned_bytes(&self) -> Vec<u8> {
        self.data.to_vec()
    }
}

impl AsRef<[u8]> for Row<'_> {
    fn as_ref(&self) -> &[u8] {
        self.data
    }
}

impl PartialEq for Row<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.data == other.data
    }
}

impl Eq for Row<'_> {}

impl PartialOrd for Row<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Row<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.data.cmp(other.data)
    }
}

impl Hash for Row<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.data.hash(state)
    }
}

/// Rebuilds [`Row`]s from bytes kept elsewhere (a file, a network
/// message), so they can be compared with and decoded by the encoder that
/// made the parser. Decoding checks such rows and reports malformed bytes
/// as [`crate::Error::InvalidRow`].
#[derive(Debug, Clone)]
pub struct RowParser {
    pub(crate) fields: Arc<[SortField]>,
}

impl RowParser {
    /// Views `bytes` as a row.
    pub fn parse<'a>(&'a self, bytes: &'a [u8]) -> Row<'a> {
        Row {
            data: bytes,
            fields: &self.fields,
        }
    }
}
