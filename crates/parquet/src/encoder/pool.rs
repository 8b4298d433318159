//! Column-chunk buffers reused from one row group to the next
//! ([`BufferPool`]).

use super::chunk::ColumnChunk;

/// Column-chunk buffers handed back after their bytes reached the file,
/// so that steady-state encoding allocates (and page-faults) nothing.
/// Clones share one pool.
#[derive(Debug, Default, Clone)]
pub struct BufferPool {
    free: std::sync::Arc<std::sync::Mutex<Pooled>>,
}

#[derive(Debug, Default)]
struct Pooled {
    buffers: Vec<Vec<u8>>,
    bytes: usize,
}

impl BufferPool {
    /// Most bytes kept: the chunks of a few row groups of a wide schema.
    const KEEP_BYTES: usize = 1 << 30;

    /// The smallest pooled buffer that holds `want` bytes, or a new one
    /// of that capacity (`want == 0`: the last one given back, or a new
    /// empty one).
    pub(super) fn take(&self, want: usize) -> Vec<u8> {
        let Ok(mut f) = self.free.lock() else {
            return Vec::with_capacity(want);
        };
        let fit = if want == 0 {
            f.buffers.len().checked_sub(1)
        } else {
            f.buffers
                .iter()
                .enumerate()
                .filter(|(_, b)| b.capacity() >= want)
                .min_by_key(|(_, b)| b.capacity())
                .map(|(i, _)| i)
        };
        match fit {
            Some(i) => {
                let v = f.buffers.swap_remove(i);
                f.bytes -= v.capacity();
                v
            }
            None => Vec::with_capacity(want),
        }
    }

    /// Returns a chunk's own buffer to the pool (dropped if still
    /// shared).
    pub fn give_back(&self, chunk: ColumnChunk) {
        let own = chunk.into_own();
        if !own.is_unique() {
            return;
        }
        let mut v = Vec::from(own);
        v.clear();
        if let Ok(mut f) = self.free.lock()
            && f.bytes + v.capacity() <= Self::KEEP_BYTES
        {
            f.bytes += v.capacity();
            f.buffers.push(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooled_buffers_fit_the_size_asked_for() {
        let pool = BufferPool::default();
        for cap in [1000usize, 10, 100] {
            let mut f = pool.free.lock().unwrap();
            f.bytes += cap;
            f.buffers.push(Vec::with_capacity(cap));
        }
        // The smallest that holds 50 bytes.
        let v = pool.take(50);
        assert!((100..1000).contains(&v.capacity()), "{}", v.capacity());
        // None holds 5000: a new buffer, the pool untouched.
        assert!(pool.take(5000).capacity() >= 5000);
        assert_eq!(pool.free.lock().unwrap().buffers.len(), 2);
        // No size known: the last one given back.
        assert!(pool.take(0).capacity() >= 10);
        assert_eq!(pool.free.lock().unwrap().buffers.len(), 1);
        assert!(pool.take(1).capacity() >= 1);
        assert!(pool.free.lock().unwrap().buffers.is_empty());
        assert_eq!(pool.free.lock().unwrap().bytes, 0);
    }
}
