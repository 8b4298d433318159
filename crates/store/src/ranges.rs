//! Read planning: byte ranges a reader needs, coalesced into fewer fetches.
//!
//! A projected read wants many small ranges (one per column buffer).
//! Fetching each on its own pays a request's latency many times; fetching
//! everything wastes bandwidth. [`coalesce`] merges ranges whose gap is at
//! most `hole_size_limit` as long as the merged fetch stays within
//! `range_size_limit`, and maps every requested range to the fetch that
//! holds it, so callers slice fetched bytes without copying.
//!
//! Overlapping requests always share a fetch (a request is never split
//! across fetches), so one request larger than the size limit, or a chain
//! of overlapping ones, becomes one fetch of its own size. Touching
//! requests join like any others, within the size limit, so neighbouring
//! blocks read whole still come in requests of at most that size.

use std::{ops::Range, time::Duration};

use crate::Error;

/// Limits for [`coalesce`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoalesceOptions {
    /// The largest gap, in bytes, fetched to join two ranges.
    pub hole_size_limit: u64,
    /// The largest fetch built by joining ranges.
    pub range_size_limit: u64,
}

impl Default for CoalesceOptions {
    /// 8 KiB holes and 32 MiB fetches, for local files.
    fn default() -> Self {
        CoalesceOptions {
            hole_size_limit: 8 * 1024,
            range_size_limit: 32 * 1024 * 1024,
        }
    }
}

impl CoalesceOptions {
    /// Limits for a source with this time to first byte and bandwidth: a
    /// hole costs less than a request when it is shorter than
    /// `ttfb x bandwidth`, and fetches are sized so a request's latency is
    /// at most a tenth of its time (capped at 64 MiB).
    pub fn for_network(time_to_first_byte: Duration, bytes_per_second: f64) -> Self {
        // `as` saturates: NaN becomes 0, huge products u64::MAX.
        let hole = ((time_to_first_byte.as_secs_f64() * bytes_per_second) as u64).max(1);
        let range = hole
            .saturating_mul(9)
            .min(64 * 1024 * 1024)
            .max(hole.saturating_add(1));
        CoalesceOptions {
            hole_size_limit: hole,
            range_size_limit: range,
        }
    }
}

/// Fetches to make and where each requested range lies in them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadPlan {
    /// Byte ranges to fetch: sorted and disjoint (they may touch when
    /// joining them would pass the size limit).
    pub fetches: Vec<Range<u64>>,
    /// For each requested range, in request order: the index of the fetch
    /// holding it and its offset in that fetch. Empty requests map to
    /// `None`.
    pub slices: Vec<Option<(usize, u64)>>,
}

impl ReadPlan {
    /// The bytes of each request, in request order, sliced without a copy
    /// from `fetched` (the bytes of [`ReadPlan::fetches`], in order; extra
    /// entries are allowed). Empty requests give empty bytes.
    pub fn slice_requests(
        &self,
        requests: &[Range<u64>],
        fetched: &[bytes::Bytes],
    ) -> Vec<bytes::Bytes> {
        requests
            .iter()
            .zip(&self.slices)
            .map(|(r, slice)| match slice {
                Some((fetch, offset)) => {
                    let start = *offset as usize;
                    fetched[*fetch].slice(start..start + (r.end - r.start) as usize)
                }
                None => bytes::Bytes::new(),
            })
            .collect()
    }

    /// Total bytes fetched.
    pub fn fetched_bytes(&self) -> u64 {
        self.fetches.iter().map(|r| r.end - r.start).sum()
    }
}

/// Plans fetches for `requests` (in any order, possibly overlapping).
///
/// # Errors
///
/// [`Error::InvalidConfig`] for a range that ends before it starts, or
/// limits where the size limit is not above the hole limit.
pub fn coalesce(requests: &[Range<u64>], opts: CoalesceOptions) -> Result<ReadPlan, Error> {
    if opts.range_size_limit <= opts.hole_size_limit {
        return Err(Error::InvalidConfig(format!(
            "range size limit {} must be above the hole size limit {}",
            opts.range_size_limit, opts.hole_size_limit
        )));
    }
    if let Some(r) = requests.iter().find(|r| r.end < r.start) {
        return Err(Error::InvalidConfig(format!(
            "byte range {}..{} ends before it starts",
            r.start, r.end
        )));
    }
    let mut order: Vec<usize> = (0..requests.len())
        .filter(|&i| requests[i].end > requests[i].start)
        .collect();
    order.sort_by_key(|&i| (requests[i].start, requests[i].end));

    // First the union of the requests: overlapping ones form one piece,
    // since a request is never split.
    let mut pieces: Vec<Range<u64>> = Vec::new();
    let mut piece_of = vec![usize::MAX; requests.len()];
    for &i in &order {
        let r = &requests[i];
        match pieces.last_mut() {
            Some(cur) if r.start < cur.end => cur.end = cur.end.max(r.end),
            _ => pieces.push(r.clone()),
        }
        piece_of[i] = pieces.len() - 1;
    }
    // Then pieces are joined across gaps within the limits.
    let mut fetches: Vec<Range<u64>> = Vec::new();
    let mut fetch_of_piece = Vec::with_capacity(pieces.len());
    for p in pieces {
        match fetches.last_mut() {
            Some(cur)
                if p.start - cur.end <= opts.hole_size_limit
                    && p.end - cur.start <= opts.range_size_limit =>
            {
                cur.end = p.end;
            }
            _ => fetches.push(p),
        }
        fetch_of_piece.push(fetches.len() - 1);
    }
    let owner: Vec<usize> = piece_of
        .iter()
        .map(|&p| {
            if p == usize::MAX {
                usize::MAX
            } else {
                fetch_of_piece[p]
            }
        })
        .collect();
    let slices = requests
        .iter()
        .zip(&owner)
        .map(|(r, &f)| (f != usize::MAX).then(|| (f, r.start - fetches[f].start)))
        .collect();
    Ok(ReadPlan { fetches, slices })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks every property of a plan against the requests, by brute force.
    fn check(requests: &[Range<u64>], opts: CoalesceOptions, plan: &ReadPlan) {
        // Fetches are sorted and disjoint.
        for w in plan.fetches.windows(2) {
            assert!(w[0].end <= w[1].start, "{:?}", plan.fetches);
        }
        // Every request lies inside its fetch at the stated offset.
        for (r, s) in requests.iter().zip(&plan.slices) {
            match s {
                None => assert!(r.is_empty()),
                Some((f, off)) => {
                    let fr = &plan.fetches[*f];
                    assert_eq!(fr.start + off, r.start);
                    assert!(r.end <= fr.end);
                }
            }
        }
        // Every fetched byte is within a hole limit of a requested byte,
        // and each fetch starts and ends on requested bytes.
        for f in &plan.fetches {
            let inside: Vec<&Range<u64>> = requests
                .iter()
                .filter(|r| !r.is_empty() && r.start >= f.start && r.end <= f.end)
                .collect();
            assert!(!inside.is_empty());
            assert_eq!(inside.iter().map(|r| r.start).min(), Some(f.start));
            assert_eq!(inside.iter().map(|r| r.end).max(), Some(f.end));
            // Gaps inside a fetch are at most the hole limit, and a fetch
            // above the size limit is one chain of overlapping requests
            // (nothing was joined to it).
            let mut sorted = inside.clone();
            sorted.sort_by_key(|r| r.start);
            let mut end = sorted[0].end;
            let mut gaps = false;
            for r in &sorted[1..] {
                if r.start >= end {
                    assert!(r.start - end <= opts.hole_size_limit);
                    gaps = true;
                }
                end = end.max(r.end);
            }
            if gaps {
                assert!(f.end - f.start <= opts.range_size_limit, "{f:?}");
            }
        }
        // Neighbouring fetches could not have been joined.
        for w in plan.fetches.windows(2) {
            let gap = w[1].start - w[0].end;
            let joined = w[1].end - w[0].start;
            assert!(gap > opts.hole_size_limit || joined > opts.range_size_limit);
        }
    }

    #[test]
    fn random_requests_give_valid_minimal_plans() {
        let mut rng = strata_gen::rng::RowRng::seeded(1);
        for case in 0..2000 {
            let opts = CoalesceOptions {
                hole_size_limit: rng.next_below(64),
                range_size_limit: 64 + rng.next_below(512),
            };
            let n = rng.next_below(40) as usize;
            let requests: Vec<Range<u64>> = (0..n)
                .map(|_| {
                    let start = rng.next_below(4000);
                    let len = match rng.next_below(10) {
                        0 => 0,
                        1 => 600 + rng.next_below(600),
                        _ => rng.next_below(80),
                    };
                    start..start + len
                })
                .collect();
            let plan = coalesce(&requests, opts).unwrap();
            check(&requests, opts, &plan);
            let _ = case;
        }
    }

    #[test]
    fn examples() {
        let opts = CoalesceOptions {
            hole_size_limit: 10,
            range_size_limit: 100,
        };
        // Two close ranges join; a far one stays apart.
        let plan = coalesce(&[0..10, 15..20, 200..210], opts).unwrap();
        assert_eq!(plan.fetches, vec![0..20, 200..210]);
        assert_eq!(plan.slices, vec![Some((0, 0)), Some((0, 15)), Some((1, 0))]);
        // The size limit stops joining across a gap...
        let plan = coalesce(&[0..60, 65..120], opts).unwrap();
        assert_eq!(plan.fetches, vec![0..60, 65..120]);
        // ...but never splits overlapping ranges or one large range.
        let plan = coalesce(&[0..60, 50..150, 300..700], opts).unwrap();
        assert_eq!(plan.fetches, vec![0..150, 300..700]);
        // Touching ranges join within the size limit only.
        let plan = coalesce(&[0..60, 60..120, 120..150], opts).unwrap();
        assert_eq!(plan.fetches, vec![0..60, 60..150]);
        // Empty requests fetch nothing; order of requests is kept.
        let plan = coalesce(&[40..50, 7..7, 0..5], opts).unwrap();
        assert_eq!(plan.fetches, vec![0..5, 40..50]);
        assert_eq!(plan.slices, vec![Some((1, 0)), None, Some((0, 0))]);
        assert_eq!(plan.fetched_bytes(), 15);
    }

    #[test]
    fn bad_input_is_an_error() {
        let opts = CoalesceOptions::default();
        let backwards = Range { start: 10, end: 5 };
        assert!(coalesce(&[backwards], opts).is_err());
        let bad = CoalesceOptions {
            hole_size_limit: 100,
            range_size_limit: 100,
        };
        assert!(coalesce(&[Range { start: 0, end: 1 }], bad).is_err());
    }

    #[test]
    fn network_limits_follow_latency_and_bandwidth() {
        // 20 ms at 100 MB/s: holes up to 2 MB are cheaper than a request.
        let o = CoalesceOptions::for_network(Duration::from_millis(20), 100e6);
        assert_eq!(o.hole_size_limit, 2_000_000);
        assert_eq!(o.range_size_limit, 18_000_000);
        // Fetches are capped at 64 MiB, and stay above the hole limit.
        let o = CoalesceOptions::for_network(Duration::from_millis(500), 1e9);
        assert_eq!(o.range_size_limit, 500_000_001);
        let o = CoalesceOptions::for_network(Duration::from_millis(50), 100.0 * 1024.0 * 1024.0);
        assert_eq!(o.range_size_limit, 45 * 1024 * 1024);
    }
}
