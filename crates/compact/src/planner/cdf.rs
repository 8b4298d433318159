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
    if let Some(head) = key.get(start..start.saturating_add(8)) {
        return u64::from_be_bytes(head.try_into().expect("8 bytes"));
    }
    let tail = key.get(start..).unwrap_or(&[]);
    let mut buf = [0u8; 8];
    let n = tail.len().min(8);
    buf[..n].copy_from_slice(&tail[..n]);
    u64::from_be_bytes(buf)
}

/// What the sweep keeps per rowset to evaluate `StringFractionInRange`.
#[derive(Clone)]
struct Span {
    prefix: usize,
    min_int: u64,
    max_int: u64,
    /// `max_int - min_int` as f64; 0 for a rowset of no width.
    range: f64,
}

impl Span {
    fn new(r: &RowsetInput) -> Self {
        let prefix = common_prefix(&r.min_key, &r.max_key);
        let min_int = tail_to_u64(&r.min_key, prefix);
        let max_int = tail_to_u64(&r.max_key, prefix);
        Self {
            prefix,
            min_int,
            max_int,
            range: max_int.saturating_sub(min_int) as f64,
        }
    }

    /// [`fraction`](Self::fraction) from the range's ends already read
    /// at this rowset's prefix.
    #[inline]
    fn fraction_of_tails(&self, lo: u64, hi: u64) -> f64 {
        if self.min_int == self.max_int {
            return 0.0;
        }
        hi.saturating_sub(lo) as f64 / self.range
    }

    /// Fraction of the rowset's key range that `[lo, hi]` covers, with the
    /// keys' common prefix stripped and the next 8 bytes read as a number;
    /// 0 when min and max agree on those bytes.
    fn fraction(&self, lo: &[u8], hi: &[u8]) -> f64 {
        if self.min_int == self.max_int {
            return 0.0;
        }
        self.fraction_of_tails(tail_to_u64(lo, self.prefix), tail_to_u64(hi, self.prefix))
    }
}

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

/// `StringFractionInRange` for a rowset `[min, max]` and a sub-range
/// `[lo, hi]` of it.
#[cfg(test)]
pub(crate) fn string_fraction_in_range(min: &[u8], max: &[u8], lo: &[u8], hi: &[u8]) -> f64 {
    let r = RowsetInput::new(0, min, max);
    Span::new(&r).fraction(lo, hi)
}

/// The key of endpoint `(i, stop)`: input `i`'s max key for a STOP, else
/// its min key.
fn endpoint_key(inputs: &[RowsetInput], (i, stop): (u32, bool)) -> &[u8] {
    let r = &inputs[i as usize];
    if stop { &r.max_key } else { &r.min_key }
}

/// The endpoints of `inputs` as (input index, is STOP), sorted by key
/// bytes, then input index, then START before STOP.
///
/// Sorts packed integers, not keys: the 8 key bytes after the prefix all
/// keys share, big-endian and zero-padded, then the index and the kind.
/// Those 8 bytes order two keys as their bytes do whenever they differ,
/// so only runs that tie on them are re-sorted by the whole key.
fn sorted_endpoints(inputs: &[RowsetInput]) -> Vec<(u32, bool)> {
    let shared = inputs
        .iter()
        .flat_map(|r| [&r.min_key, &r.max_key])
        .fold(None::<&[u8]>, |acc, k| match acc {
            None => Some(k),
            Some(a) => Some(&a[..common_prefix(a, k)]),
        })
        .map_or(0, <[u8]>::len);
    let mut packed: Vec<u128> = Vec::with_capacity(2 * inputs.len());
    for (i, r) in inputs.iter().enumerate() {
        for (stop, key) in [(false, &r.min_key), (true, &r.max_key)] {
            let head = u128::from(tail_to_u64(key, shared)) << 64;
            packed.push(head | ((i as u128) << 1) | u128::from(stop));
        }
    }
    packed.sort_unstable();
    let unpack = |p: u128| ((p as u64 >> 1) as u32, p & 1 == 1);
    let mut out: Vec<(u32, bool)> = packed.iter().map(|&p| unpack(p)).collect();
    let mut a = 0;
    while a < packed.len() {
        let head = packed[a] >> 64;
        let mut b = a + 1;
        while b < packed.len() && packed[b] >> 64 == head {
            b += 1;
        }
        if b - a > 1 {
            // Stable: the run is already in (index, kind) order.
            out[a..b].sort_by(|&x, &y| endpoint_key(inputs, x).cmp(endpoint_key(inputs, y)));
        }
        a = b;
    }
    out
}

/// Sweeps the endpoints of `inputs` (sorted by key bytes, then input index,
/// then START before STOP) and builds both orders with normalised CDF
/// values, values and densities under `rules`.
pub(crate) fn prepare(inputs: &[RowsetInput], rules: &Rules) -> Prepared {
    let n = inputs.len();
    let endpoints = sorted_endpoints(inputs);
    let spans: Vec<Span> = inputs.iter().map(Span::new).collect();

    let mut cdf_min = vec![0.0f64; n];
    let mut cdf_max = vec![0.0f64; n];
    // The active rowsets: what the interval sum reads, copied into one
    // contiguous vector (the inputs are scattered), and their ids.
    let mut active: Vec<(Span, f64)> = Vec::new();
    let mut active_id: Vec<u32> = Vec::new();
    let mut pos_in_active = vec![u32::MAX; n];
    let mut start_order: Vec<u32> = Vec::with_capacity(n);
    let mut stop_order: Vec<u32> = Vec::with_capacity(n);
    let mut total = 0.0f64;
    let mut weighted = 0.0f64;
    let mut prev: &[u8] = &[];
    // Every active rowset reads the same two keys, each at its own prefix
    // length: read each key once per prefix length, when those are short.
    let longest_prefix = spans.iter().map(|s| s.prefix).max().unwrap_or(0);
    let by_prefix = longest_prefix < 64;
    let mut prev_tails = vec![0u64; if by_prefix { longest_prefix + 1 } else { 0 }];
    let mut next_tails = prev_tails.clone();

    for &ep in &endpoints {
        let next = endpoint_key(inputs, ep);
        let mut interval = 0.0f64;
        if by_prefix {
            for (p, t) in next_tails.iter_mut().enumerate() {
                *t = tail_to_u64(next, p);
            }
            for (span, size) in &active {
                let (lo, hi) = (prev_tails[span.prefix], next_tails[span.prefix]);
                interval += size * span.fraction_of_tails(lo, hi);
            }
            std::mem::swap(&mut prev_tails, &mut next_tails);
        } else {
            for (span, size) in &active {
                interval += size * span.fraction(prev, next);
            }
        }
        weighted += active.len() as f64 * interval;
        total += interval;
        prev = next;

        let (i, stop) = ep;
        let iu = i as usize;
        if stop {
            // Kudu adds every interval to each active rowset's `cdf_max`,
            // starting from `total` at its START: the same additions as
            // `total`'s, so the same value.
            cdf_max[iu] = total;
            let p = pos_in_active[iu] as usize;
            active.swap_remove(p);
            active_id.swap_remove(p);
            if let Some(&moved) = active_id.get(p) {
                pos_in_active[moved as usize] = p as u32;
            }
            stop_order.push(i);
        } else {
            cdf_min[iu] = total;
            pos_in_active[iu] = active.len() as u32;
            active.push((spans[iu].clone(), inputs[iu].size_bytes as f64));
            active_id.push(i);
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

    /// The packed sort gives the order of sorting by whole keys, with keys
    /// that share long prefixes, differ only past 8 bytes, end in zero
    /// bytes, or are equal.
    #[test]
    fn endpoints_sort_as_whole_keys_do() {
        let mut r = strata_gen::rng::RowRng::seeded(3);
        for case in 0..200 {
            let n = 1 + r.next_below(60) as usize;
            let shared: Vec<u8> = (0..r.next_below(12)).map(|_| b'k').collect();
            let mut key = || {
                let mut k = shared.clone();
                let len = r.next_below(14) as usize;
                // Few distinct bytes, zero among them, so ties and
                // prefixes are common.
                k.extend((0..len).map(|_| [0u8, 1, b'a'][r.next_below(3) as usize]));
                k
            };
            let inputs: Vec<RowsetInput> = (0..n)
                .map(|_| {
                    let (a, b) = (key(), key());
                    RowsetInput::new(1, a.clone().min(b.clone()), a.max(b))
                })
                .collect();
            let mut want: Vec<(u32, bool)> = (0..n as u32)
                .flat_map(|i| [(i, false), (i, true)])
                .collect();
            want.sort_by(|&a, &b| {
                endpoint_key(&inputs, a)
                    .cmp(endpoint_key(&inputs, b))
                    .then(a.cmp(&b))
            });
            assert_eq!(sorted_endpoints(&inputs), want, "case {case}");
        }
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
