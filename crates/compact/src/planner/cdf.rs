//! Step 1: the data-weighted key-space CDF, swept over the sorted rowset
//! endpoints, and the two sorted orders the planner loops over.

use super::options::{Rules, size_mb};
use crate::rowsets::RowsetInput;

/// One sorted order of the rowsets, struct-of-arrays: entry `k` of every
/// vector describes the same rowset, `id[k]` (its input index). The hot
/// loops stream `cdf_min` alone and touch the rest only for survivors.
#[derive(Debug, Clone, Default)]
pub(crate) struct Soa {
    pub(crate) cdf_min: Vec<f64>,
    pub(crate) cdf_max: Vec<f64>,
    pub(crate) value: Vec<f64>,
    pub(crate) density: Vec<f64>,
    pub(crate) size_mb: Vec<u32>,
    pub(crate) id: Vec<u32>,
}

impl Soa {
    fn with_capacity(n: usize) -> Self {
        Self {
            cdf_min: Vec::with_capacity(n),
            cdf_max: Vec::with_capacity(n),
            value: Vec::with_capacity(n),
            density: Vec::with_capacity(n),
            size_mb: Vec::with_capacity(n),
            id: Vec::with_capacity(n),
        }
    }
}

/// The sweep's output: rowsets by ascending `cdf_min` (START order) and by
/// ascending `cdf_max` (STOP order), plus the totals behind the average
/// height.
#[derive(Debug, Clone, Default)]
pub(crate) struct Prepared {
    pub(crate) by_min: Soa,
    pub(crate) by_max: Soa,
    /// Σ over intervals of the interval's data width (bytes).
    pub(crate) total_width: f64,
    /// Σ over intervals of height × data width.
    pub(crate) weighted_height_sum: f64,
}

impl Prepared {
    /// Data-weighted average height (KUDU-2056); 0 when no data has width.
    pub(crate) fn average_height(&self) -> f64 {
        if self.total_width > 0.0 {
            self.weighted_height_sum / self.total_width
        } else {
            0.0
        }
    }
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// The up-to-8 bytes of `key` after `start`, zero-padded, big-endian.
fn tail_to_u64(key: &[u8], start: usize) -> u64 {
    let tail = key.get(start..).unwrap_or(&[]);
    let mut buf = [0u8; 8];
    let n = tail.len().min(8);
    buf[..n].copy_from_slice(&tail[..n]);
    u64::from_be_bytes(buf)
}

/// What the sweep keeps per rowset to evaluate `StringFractionInRange`.
struct Span {
    prefix: usize,
    min_int: u64,
    max_int: u64,
}

impl Span {
    fn new(r: &RowsetInput) -> Self {
        let prefix = common_prefix(&r.min_key, &r.max_key);
        Self {
            prefix,
            min_int: tail_to_u64(&r.min_key, prefix),
            max_int: tail_to_u64(&r.max_key, prefix),
        }
    }

    /// Fraction of the rowset's key range that `[lo, hi]` covers, with the
    /// keys' common prefix stripped and the next 8 bytes read as a number;
    /// 0 when min and max agree on those bytes.
    fn fraction(&self, lo: &[u8], hi: &[u8]) -> f64 {
        if self.min_int == self.max_int {
            return 0.0;
        }
        let a = tail_to_u64(lo, self.prefix);
        let b = tail_to_u64(hi, self.prefix);
        b.saturating_sub(a) as f64 / self.max_int.saturating_sub(self.min_int) as f64
    }
}

/// `StringFractionInRange` for a rowset `[min, max]` and a sub-range
/// `[lo, hi]` of it.
/// Read access to one sorted order, whatever its memory layout.
pub(crate) trait Order {
    fn len(&self) -> usize;
    fn cdf_min(&self, i: usize) -> f64;
    fn cdf_max(&self, i: usize) -> f64;
    fn value(&self, i: usize) -> f64;
    fn density(&self, i: usize) -> f64;
    fn size_mb(&self, i: usize) -> u32;
    fn id(&self, i: usize) -> u32;
}

impl Order for Soa {
    #[inline]
    fn len(&self) -> usize {
        self.id.len()
    }
    #[inline]
    fn cdf_min(&self, i: usize) -> f64 {
        self.cdf_min[i]
    }
    #[inline]
    fn cdf_max(&self, i: usize) -> f64 {
        self.cdf_max[i]
    }
    #[inline]
    fn value(&self, i: usize) -> f64 {
        self.value[i]
    }
    #[inline]
    fn density(&self, i: usize) -> f64 {
        self.density[i]
    }
    #[inline]
    fn size_mb(&self, i: usize) -> u32 {
        self.size_mb[i]
    }
    #[inline]
    fn id(&self, i: usize) -> u32 {
        self.id[i]
    }
}

#[cfg(test)]
pub(crate) fn string_fraction_in_range(min: &[u8], max: &[u8], lo: &[u8], hi: &[u8]) -> f64 {
    let r = RowsetInput::new(0, min, max);
    Span::new(&r).fraction(lo, hi)
}

/// Sweeps the endpoints of `inputs` (sorted by key bytes, then input index,
/// then START before STOP) and builds both orders with normalised CDF
/// values, values and densities under `rules`.
pub(crate) fn prepare(inputs: &[RowsetInput], rules: &Rules) -> Prepared {
    let n = inputs.len();
    // (input index, is_stop); key looked up in the cold inputs.
    let mut endpoints: Vec<(u32, bool)> = Vec::with_capacity(2 * n);
    for i in 0..n as u32 {
        endpoints.push((i, false));
        endpoints.push((i, true));
    }
    let key_of = |&(i, stop): &(u32, bool)| -> &[u8] {
        let r = &inputs[i as usize];
        if stop { &r.max_key } else { &r.min_key }
    };
    endpoints.sort_unstable_by(|a, b| {
        key_of(a)
            .cmp(key_of(b))
            .then(a.0.cmp(&b.0))
            .then(a.1.cmp(&b.1))
    });

    let spans: Vec<Span> = inputs.iter().map(Span::new).collect();
    let mut cdf_min = vec![0.0f64; n];
    let mut cdf_max = vec![0.0f64; n];
    let mut active: Vec<u32> = Vec::new();
    let mut pos_in_active = vec![u32::MAX; n];
    let mut start_order: Vec<u32> = Vec::with_capacity(n);
    let mut stop_order: Vec<u32> = Vec::with_capacity(n);
    let mut total = 0.0f64;
    let mut weighted = 0.0f64;
    let mut prev: &[u8] = &[];

    for ep in &endpoints {
        let next = key_of(ep);
        let mut interval = 0.0f64;
        for &a in &active {
            let a = a as usize;
            interval += inputs[a].size_bytes as f64 * spans[a].fraction(prev, next);
        }
        for &a in &active {
            cdf_max[a as usize] += interval;
        }
        weighted += active.len() as f64 * interval;
        total += interval;
        prev = next;

        let (i, stop) = *ep;
        let iu = i as usize;
        if stop {
            let p = pos_in_active[iu] as usize;
            active.swap_remove(p);
            if let Some(&moved) = active.get(p) {
                pos_in_active[moved as usize] = p as u32;
            }
            stop_order.push(i);
        } else {
            cdf_min[iu] = total;
            cdf_max[iu] = total;
            pos_in_active[iu] = active.len() as u32;
            active.push(i);
            start_order.push(i);
        }
    }

    // FinalizeCDFVector: normalise; value and density only when there is
    // any width at all (otherwise they stay 0).
    let build = |order: &[u32]| -> Soa {
        let mut s = Soa::with_capacity(n);
        for &i in order {
            let iu = i as usize;
            let mb = size_mb(inputs[iu].size_bytes);
            let (lo, hi, value, density) = if total == 0.0 {
                (cdf_min[iu], cdf_max[iu], 0.0, 0.0)
            } else {
                let lo = cdf_min[iu] / total;
                let hi = cdf_max[iu] / total;
                let value = rules.value(hi - lo, inputs[iu].size_bytes);
                (lo, hi, value, value / f64::from(mb))
            };
            s.cdf_min.push(lo);
            s.cdf_max.push(hi);
            s.value.push(value);
            s.density.push(density);
            s.size_mb.push(mb);
            s.id.push(i);
        }
        s
    };
    Prepared {
        by_min: build(&start_order),
        by_max: build(&stop_order),
        total_width: total,
        weighted_height_sum: weighted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(min: &str, max: &str, point: &str) -> f64 {
        string_fraction_in_range(
            min.as_bytes(),
            max.as_bytes(),
            min.as_bytes(),
            point.as_bytes(),
        )
    }

    #[test]
    fn fraction_matches_kudus_cases() {
        // Kudu's TestStringFractionInRange, as [min, point] sub-ranges.
        let near = |got: f64, want: f64| assert!((got - want).abs() < 0.01, "{got} vs {want}");
        near(whole("a", "z", "a"), 0.0);
        near(whole("a", "z", "z"), 1.0);
        near(whole("a", "z", "m"), 0.48);
        near(whole("a", "z", "mmmm"), 0.5);
        near(whole("a", "zoo", "mmmm"), 0.48);
        near(whole("a", "zoo", "z"), 0.98);
        near(whole("0000", "9999", "4"), 0.42);
        near(whole("0000a", "0000c", "0000b"), 0.5);
        // Keys equal in the 8 bytes after the prefix: zero width.
        assert_eq!(whole("aaaaaaaaaa", "aaaaaaaaaab", "aaaaaaaaaa"), 0.0);
        assert_eq!(tail_to_u64(b"ab", 5), 0);
    }

    #[test]
    fn orders_are_sorted_and_cover_zero_to_one() {
        let inputs = crate::rowsets::tiny_overlap(50);
        let p = prepare(&inputs, &Rules::Kudu2017);
        assert_eq!(p.by_min.cdf_min[0], 0.0);
        assert_eq!(*p.by_max.cdf_max.last().unwrap(), 1.0);
        assert!(p.by_min.cdf_min.windows(2).all(|w| w[0] <= w[1]));
        assert!(p.by_max.cdf_max.windows(2).all(|w| w[0] <= w[1]));
        for s in [&p.by_min, &p.by_max] {
            for k in 0..s.id.len() {
                assert!(s.cdf_min[k] <= s.cdf_max[k]);
                assert_eq!(s.size_mb[k], 1);
                assert_eq!(s.value[k], s.cdf_max[k] - s.cdf_min[k]);
            }
        }
    }
}
