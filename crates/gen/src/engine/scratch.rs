//! [`SpecScratch`]: the vectors a batch is built in, pooled between
//! batches, and validity bytes packed into Arrow's bitmaps.

use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer};
use arrow_data::ArrayData;

use super::MAX_BATCH_ELEMENTS;

/// Reusable vectors of one producer of spec batches.
#[derive(Debug, Default)]
pub struct SpecScratch {
    pub(super) p8: Vec<Vec<u8>>,
    pub(super) p16: Vec<Vec<u16>>,
    pub(super) p32: Vec<Vec<u32>>,
    pub(super) p64: Vec<Vec<u64>>,
    /// The last evaluation of each table a reference or an aggregate
    /// read, most recent last.
    memos: Vec<Memo>,
}

/// The fields of one compiled table evaluated at one list of rows:
/// another read of the same rows (a second field of one drawn row, a
/// second aggregate of the same children) takes the fields computed
/// already and computes only the others.
#[derive(Debug)]
pub(super) struct Memo {
    /// The compiled table's id.
    pub(super) table: u64,
    pub(super) rows: Vec<u64>,
    pub(super) codes: Vec<Option<Vec<u8>>>,
    pub(super) arrays: Vec<Option<arrow_array::ArrayRef>>,
}

/// Most tables whose last evaluation is kept.
const MEMOS_MAX: usize = 8;

pub(super) const POOL_MAX: usize = 256;

/// An empty vector from `pool` with room for `cap`: the smallest that has
/// it, so that big buffers are not handed to small uses and then regrown
/// (copied) for big ones; else a new one, the pool's largest given up for
/// it (growing that would copy its whole old allocation, though it holds
/// nothing: on `events` 10.6M of 776M instructions).
pub(super) fn take<T>(pool: &mut Vec<Vec<T>>, cap: usize) -> Vec<T> {
    let fit = (0..pool.len())
        .filter(|&i| pool[i].capacity() >= cap)
        .min_by_key(|&i| pool[i].capacity());
    match fit {
        Some(i) => {
            let mut v = pool.swap_remove(i);
            v.clear();
            v
        }
        None => {
            if let Some(i) = (0..pool.len()).max_by_key(|&i| pool[i].capacity()) {
                pool.swap_remove(i);
            }
            Vec::with_capacity(cap)
        }
    }
}

impl SpecScratch {
    /// The evaluation of table `table` (of `fields` top-level fields) at
    /// `rows` kept from before, else an empty one.
    pub(super) fn memo(&mut self, table: u64, fields: usize, rows: &[u64]) -> Memo {
        if let Some(i) = self.memos.iter().position(|m| m.table == table) {
            let m = self.memos.remove(i);
            if m.rows == rows {
                return m;
            }
            self.forget(m);
        }
        let mut kept = self.v64(rows.len());
        kept.extend_from_slice(rows);
        Memo {
            table,
            rows: kept,
            codes: vec![None; fields],
            arrays: vec![None; fields],
        }
    }

    /// Keeps `m` for the next evaluation of its table.
    pub(super) fn keep(&mut self, m: Memo) {
        if self.memos.len() == MEMOS_MAX {
            let oldest = self.memos.remove(0);
            self.forget(oldest);
        }
        self.memos.push(m);
    }

    fn forget(&mut self, m: Memo) {
        self.put64(m.rows);
        for c in m.codes.into_iter().flatten() {
            self.put8(c);
        }
    }

    pub(super) fn v8(&mut self, cap: usize) -> Vec<u8> {
        take(&mut self.p8, cap)
    }
    pub(super) fn v16(&mut self, cap: usize) -> Vec<u16> {
        take(&mut self.p16, cap)
    }
    pub(super) fn v32(&mut self, cap: usize) -> Vec<u32> {
        take(&mut self.p32, cap)
    }
    pub(super) fn v64(&mut self, cap: usize) -> Vec<u64> {
        take(&mut self.p64, cap)
    }
    /// The pooled byte vector with the most room, its length kept (its
    /// bytes are initialised; the string writer overwrites them).
    pub(super) fn largest8(&mut self) -> Vec<u8> {
        match (0..self.p8.len()).max_by_key(|&i| self.p8[i].capacity()) {
            Some(i) => self.p8.swap_remove(i),
            None => Vec::new(),
        }
    }
    pub(super) fn put8(&mut self, v: Vec<u8>) {
        if self.p8.len() < POOL_MAX && v.capacity() > 0 {
            self.p8.push(v);
        }
    }
    pub(super) fn put64(&mut self, v: Vec<u64>) {
        if self.p64.len() < POOL_MAX && v.capacity() > 0 {
            self.p64.push(v);
        }
    }
    pub(super) fn put32(&mut self, v: Vec<u32>) {
        if self.p32.len() < POOL_MAX && v.capacity() > 0 {
            self.p32.push(v);
        }
    }
    pub(super) fn reclaim(&mut self, buf: Buffer) {
        let buf = match buf.into_vec::<u64>() {
            Ok(v) => return self.put64(v),
            Err(b) => b,
        };
        let buf = match buf.into_vec::<u32>() {
            Ok(v) => return self.put32(v),
            Err(b) => b,
        };
        let buf = match buf.into_vec::<u16>() {
            Ok(v) => {
                if self.p16.len() < POOL_MAX {
                    self.p16.push(v);
                }
                return;
            }
            Err(b) => b,
        };
        if let Ok(v) = buf.into_vec::<u8>() {
            self.put8(v);
        }
    }
    pub(super) fn reclaim_data(&mut self, data: ArrayData) {
        let (_, _, nulls, _, buffers, children) = data.into_parts();
        if let Some(n) = nulls {
            self.reclaim(n.into_inner().into_inner());
        }
        for b in buffers {
            self.reclaim(b);
        }
        for c in children {
            self.reclaim_data(c);
        }
    }
}

/// Packs 8 bytes of 0/1 into one byte, element 0 in the lowest bit.
#[inline(always)]
pub(super) fn pack8(c: &[u8]) -> u8 {
    let mut w = [0u8; 8];
    w[..c.len()].copy_from_slice(c);
    (u64::from_le_bytes(w).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8
}

/// Packs 0/1 bytes into an Arrow bitmap; `None` when all are 1.
pub(super) fn pack(valid: &[u8], s: &mut SpecScratch) -> Option<NullBuffer> {
    let bytes = pack_bytes(valid, s);
    let nulls = NullBuffer::new(BooleanBuffer::new(Buffer::from_vec(bytes), 0, valid.len()));
    if nulls.null_count() == 0 {
        s.reclaim(nulls.into_inner().into_inner());
        return None;
    }
    Some(nulls)
}

/// Fills `v` with one value per id.
#[inline(always)]
pub(super) fn fill<T>(v: &mut Vec<T>, ids: &[u64], mut f: impl FnMut(usize, u64) -> T) {
    v.reserve(ids.len());
    v.extend(ids.iter().enumerate().map(|(i, &id)| f(i, id)));
}

/// Packs 0/1 bytes into bitmap bytes.
pub(super) fn pack_bytes(bits: &[u8], s: &mut SpecScratch) -> Vec<u8> {
    let mut bytes = s.v8(bits.len().div_ceil(8));
    let chunks = bits.chunks_exact(8);
    let rest = chunks.remainder();
    bytes.extend(chunks.map(pack8));
    if !rest.is_empty() {
        bytes.push(pack8(rest));
    }
    bytes
}

/// List or map offsets from [`lengths`]: cumulative sums of lengths,
/// starting at 0, at most [`MAX_BATCH_ELEMENTS`] (checked there).
pub(super) fn offsets_buffer(offsets: Vec<u32>) -> arrow_buffer::OffsetBuffer<i32> {
    debug_assert!(offsets.first() == Some(&0));
    debug_assert!(offsets.windows(2).all(|w| w[0] <= w[1]));
    debug_assert!(
        offsets
            .last()
            .is_some_and(|&o| u64::from(o) <= MAX_BATCH_ELEMENTS)
    );
    let n = offsets.len();
    let scalar = arrow_buffer::ScalarBuffer::<i32>::new(Buffer::from_vec(offsets), 0, n);
    // SAFETY: `lengths` writes offset 0 and then each parent's cumulative
    // element count, so the offsets are non-empty, start at 0 and never
    // decrease; the last is at most `MAX_BATCH_ELEMENTS` (2^26, checked
    // there), so every one is a non-negative i32. Skipping the scan saves
    // ~1.5% of `contacts` generation (perf, `examples/gen_loop`); debug
    // builds assert all of this above.
    unsafe { arrow_buffer::OffsetBuffer::new_unchecked(scalar) }
}
