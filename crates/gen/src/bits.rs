//! Append-only validity bitmaps and small buffer helpers.

use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer};

/// Builds an Arrow validity bitmap one bit at a time into a reusable `Vec`.
#[derive(Debug, Default)]
pub(crate) struct BitmapBuilder {
    bytes: Vec<u8>,
    acc: u64,
    len: usize,
    nulls: usize,
}

impl BitmapBuilder {
    /// Empties the builder, keeping `bytes`'s allocation (or adopting
    /// `recycled`, a vector handed back from an earlier batch).
    pub(crate) fn reset(&mut self, recycled: Option<Vec<u8>>, capacity_bits: usize) {
        if let Some(v) = recycled {
            self.bytes = v;
        }
        self.bytes.clear();
        self.bytes.reserve(capacity_bits.div_ceil(8) + 8);
        self.acc = 0;
        self.len = 0;
        self.nulls = 0;
    }

    #[inline(always)]
    pub(crate) fn push(&mut self, valid: bool) {
        self.acc |= u64::from(valid) << (self.len & 63);
        self.nulls += usize::from(!valid);
        self.len += 1;
        if self.len & 63 == 0 {
            self.bytes.extend_from_slice(&self.acc.to_le_bytes());
            self.acc = 0;
        }
    }

    /// The finished bitmap, or `None` when every bit is set (Arrow's
    /// cheaper form of "no nulls").
    pub(crate) fn finish(&mut self) -> Option<NullBuffer> {
        let rem = self.len & 63;
        if rem != 0 {
            let tail = self.acc.to_le_bytes();
            self.bytes.extend_from_slice(&tail[..rem.div_ceil(8)]);
            self.acc = 0;
        }
        let bytes = std::mem::take(&mut self.bytes);
        if self.nulls == 0 {
            self.bytes = bytes;
            return None;
        }
        let bits = BooleanBuffer::new(Buffer::from_vec(bytes), 0, self.len);
        Some(NullBuffer::new(bits))
    }
}

/// Takes back the vector behind a buffer when nothing else shares it.
pub(crate) fn reclaim<T: arrow_buffer::ArrowNativeType>(buf: Buffer) -> Option<Vec<T>> {
    buf.into_vec::<T>().ok()
}

/// Takes back the vector behind a validity bitmap.
pub(crate) fn reclaim_nulls(nulls: Option<NullBuffer>) -> Option<Vec<u8>> {
    nulls.and_then(|n| {
        let b = n.into_inner();
        if b.offset() != 0 {
            return None;
        }
        reclaim::<u8>(b.into_inner())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitmap_matches_pushed_bits() {
        for n in [0usize, 1, 7, 8, 63, 64, 65, 200] {
            let mut b = BitmapBuilder::default();
            b.reset(None, n);
            let want: Vec<bool> = (0..n).map(|i| i % 3 != 1).collect();
            for &v in &want {
                b.push(v);
            }
            match b.finish() {
                None => assert!(want.iter().all(|&v| v)),
                Some(nb) => {
                    assert_eq!(nb.len(), n);
                    let got: Vec<bool> = nb.iter().collect();
                    assert_eq!(got, want);
                    assert_eq!(nb.null_count(), want.iter().filter(|v| !**v).count());
                }
            }
        }
    }
}
