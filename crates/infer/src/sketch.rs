//! Small summaries a scan keeps per column: a fixed hash, a HyperLogLog
//! distinct count and a reservoir sample. Deterministic: the same values
//! in the same order give the same summary.

use std::hash::BuildHasher as _;

/// The hash every summary uses (fixed seed, so runs agree).
pub(crate) fn hash_bytes(b: &[u8]) -> u64 {
    foldhash::quality::FixedState::with_seed(0x5354_5241_5441_0001).hash_one(b)
}

/// The hash of an integer-like key.
pub(crate) fn hash_int(v: i128) -> u64 {
    foldhash::quality::FixedState::with_seed(0x5354_5241_5441_0002).hash_one(v)
}

/// HyperLogLog with 2^14 registers (about 0.8% standard error).
#[derive(Debug, Clone)]
pub(crate) struct Hll {
    registers: Vec<u8>,
}

const HLL_BITS: u32 = 14;

impl Hll {
    pub(crate) fn new() -> Self {
        Hll {
            registers: vec![0; 1 << HLL_BITS],
        }
    }

    pub(crate) fn add(&mut self, hash: u64) {
        let index = (hash >> (64 - HLL_BITS)) as usize;
        let rest = (hash << HLL_BITS) | (1 << (HLL_BITS - 1));
        let rank = rest.leading_zeros() as u8 + 1;
        if rank > self.registers[index] {
            self.registers[index] = rank;
        }
    }

    pub(crate) fn estimate(&self) -> f64 {
        let m = self.registers.len() as f64;
        let sum: f64 = self
            .registers
            .iter()
            .map(|&r| 2f64.powi(-i32::from(r)))
            .sum();
        let raw = 0.7213 / (1.0 + 1.079 / m) * m * m / sum;
        let zeros = self.registers.iter().filter(|&&r| r == 0).count();
        if raw <= 2.5 * m && zeros > 0 {
            // Linear counting for small cardinalities.
            m * (m / zeros as f64).ln()
        } else {
            raw
        }
    }
}

/// splitmix64: the reservoir's random stream.
#[derive(Debug, Clone)]
pub(crate) struct Mix(u64);

impl Mix {
    pub(crate) fn new(seed: u64) -> Self {
        Mix(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1).
    pub(crate) fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
}

/// A uniform sample of at most `cap` items of a stream (Li's Algorithm
/// L: the number of items to skip is drawn, so a long stream costs a few
/// random draws per kept item, not one per item).
#[derive(Debug, Clone)]
pub(crate) struct Reservoir<T> {
    cap: usize,
    pub(crate) items: Vec<T>,
    seen: u64,
    /// The index (in the stream) of the next item that replaces one.
    next: u64,
    w: f64,
    rng: Mix,
}

impl<T> Reservoir<T> {
    pub(crate) fn new(cap: usize, seed: u64) -> Self {
        let mut rng = Mix::new(seed);
        let w = (rng.unit().ln() / cap.max(1) as f64).exp();
        let mut r = Reservoir {
            cap: cap.max(1),
            items: Vec::new(),
            seen: 0,
            next: 0,
            w,
            rng,
        };
        r.next = cap as u64 + r.skip();
        r
    }

    fn skip(&mut self) -> u64 {
        let s = (self.rng.unit().ln() / (1.0 - self.w).ln()).floor();
        if s.is_finite() && s >= 0.0 {
            s.min(1e18) as u64
        } else {
            0
        }
    }

    /// Whether the next item of the stream is kept: [`Self::put`] it when
    /// true.
    #[inline]
    fn wants(&mut self) -> bool {
        let i = self.seen;
        self.seen += 1;
        i < self.cap as u64 || i == self.next
    }

    /// Keeps an item [`Self::wants`] asked for.
    fn put(&mut self, item: T) {
        if self.items.len() < self.cap {
            self.items.push(item);
            return;
        }
        let slot = (self.rng.next_u64() % self.cap as u64) as usize;
        self.items[slot] = item;
        self.w *= (self.rng.unit().ln() / self.cap as f64).exp();
        self.next = self.seen + self.skip();
    }

    /// Offers an item.
    #[inline]
    pub(crate) fn offer(&mut self, item: impl FnOnce() -> T) {
        if self.wants() {
            self.put(item());
        }
    }

    /// Items offered so far.
    #[cfg(test)]
    pub(crate) fn seen(&self) -> u64 {
        self.seen
    }
}

/// The most frequent values of a stream, within a stated error: the
/// Misra-Gries summary with its decrements batched. At most `2 * cap`
/// counters are kept; when there are more, the `cap`-th largest count is
/// taken from every counter and those left at zero are dropped, so a
/// count is low by at most [`Heavy::error`] (which is at most
/// `items / (cap + 1)`), and every value more frequent than that is kept.
/// Values are integers (a string's hash for strings, whose bytes are kept
/// once their counter reaches two). Deterministic: the same values in the
/// same order give the same counters.
#[derive(Debug, Clone)]
pub(crate) struct Heavy {
    cap: usize,
    counts: std::collections::HashMap<i128, u64, foldhash::fast::FixedState>,
    texts: std::collections::HashMap<i128, Box<[u8]>, foldhash::fast::FixedState>,
    error: u64,
}

impl Heavy {
    pub(crate) fn new(cap: usize) -> Self {
        Heavy {
            cap: cap.max(1),
            counts: Default::default(),
            texts: Default::default(),
            error: 0,
        }
    }

    /// A sketch of a stream whose values so far were all distinct (not
    /// counted): every count is low by at most one.
    pub(crate) fn after_distinct(cap: usize) -> Self {
        Heavy {
            error: 1,
            ..Heavy::new(cap)
        }
    }

    /// Counts `n` occurrences of `key` (with its bytes, for a string).
    #[inline]
    pub(crate) fn add(&mut self, key: i128, n: u64, bytes: Option<&[u8]>) {
        match self.counts.get_mut(&key) {
            Some(c) => {
                *c += n;
                if let Some(b) = bytes
                    && *c >= 2
                    && !self.texts.contains_key(&key)
                {
                    self.texts.insert(key, b.into());
                }
            }
            None => {
                self.counts.insert(key, n);
                if let Some(b) = bytes
                    && n >= 2
                {
                    self.texts.insert(key, b.into());
                }
                if self.counts.len() > 2 * self.cap {
                    self.shrink();
                }
            }
        }
    }

    #[cold]
    fn shrink(&mut self) {
        let mut all: Vec<u64> = self.counts.values().copied().collect();
        let at = self.cap - 1;
        let (_, m, _) = all.select_nth_unstable_by(at, |a, b| b.cmp(a));
        let m = *m;
        self.counts.retain(|_, c| {
            *c = c.saturating_sub(m);
            *c > 0
        });
        let counts = &self.counts;
        self.texts.retain(|k, _| counts.contains_key(k));
        self.error += m;
    }

    /// The most a count is below the true one.
    pub(crate) fn error(&self) -> u64 {
        self.error
    }

    /// `(key, count, bytes)` most frequent first (ties by key), counts
    /// above the error bound only when `certain`.
    pub(crate) fn top(&self) -> Vec<(i128, u64, Option<&[u8]>)> {
        let mut out: Vec<(i128, u64, Option<&[u8]>)> = self
            .counts
            .iter()
            .map(|(&k, &c)| (k, c, self.texts.get(&k).map(|b| &b[..])))
            .collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hll_is_within_three_percent() {
        for n in [10u64, 1_000, 100_000, 1_000_000] {
            let mut h = Hll::new();
            for i in 0..n {
                h.add(hash_int(i128::from(i)));
                h.add(hash_int(i128::from(i)));
            }
            let e = h.estimate();
            assert!((e - n as f64).abs() <= 0.03 * n as f64 + 1.0, "{n}: {e}");
        }
    }

    #[test]
    fn reservoir_is_uniform_over_the_stream() {
        // 1M items, a sample of 10,000: each tenth of the stream holds
        // about a tenth of the sample.
        let mut r = Reservoir::new(10_000, 7);
        for i in 0..1_000_000u64 {
            r.offer(|| i);
        }
        assert_eq!(r.items.len(), 10_000);
        let mut tenths = [0u32; 10];
        for &i in &r.items {
            tenths[(i / 100_000) as usize] += 1;
        }
        for t in tenths {
            assert!((900..=1100).contains(&t), "{tenths:?}");
        }
        assert_eq!(r.seen(), 1_000_000);
    }

    #[test]
    fn heavy_keeps_frequent_values_within_its_error() {
        // Value v (0..5000) occurs 5000 / (v + 1) times, interleaved.
        let mut truth = std::collections::HashMap::new();
        let mut h = Heavy::new(64);
        let mut stream = Vec::new();
        for v in 0..5000i128 {
            for _ in 0..(5000 / (v + 1)) {
                stream.push(v);
            }
        }
        let mut rng = Mix::new(3);
        for i in (1..stream.len()).rev() {
            stream.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
        }
        for &v in &stream {
            *truth.entry(v).or_insert(0u64) += 1;
            h.add(v, 1, None);
        }
        let n = stream.len() as u64;
        assert!(h.error() <= n / 65, "{} of {n}", h.error());
        for (k, c, _) in h.top() {
            let t = truth[&k];
            assert!(c <= t && t - c <= h.error(), "{k}: {c} of {t}");
        }
        // Every value above the error is among the counters.
        let kept: std::collections::HashSet<i128> = h.top().iter().map(|x| x.0).collect();
        for (k, &t) in &truth {
            if t > h.error() {
                assert!(kept.contains(k), "{k} ({t}) dropped");
            }
        }
        assert_eq!(h.top()[0].0, 0);
    }
}
