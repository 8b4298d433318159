//! An AVX2 kernel for the hottest shape: runs of 8-byte integer columns
//! without nulls (the wide fixed-width sort keys of the seed case).
//!
//! Four columns by four rows are loaded as four vectors, byte-swapped and
//! transposed in registers, and each row's four `0x01 ‖ value` units (36
//! bytes) are written with two or three 16-byte stores instead of eight
//! scalar stores. The bytes are the same as the scalar path's.

#![cfg(target_arch = "x86_64")]

use std::arch::x86_64::{
    __m128i, __m256i, _mm_alignr_epi8, _mm_extract_epi32, _mm_loadu_si128, _mm_or_si128,
    _mm_shuffle_epi8, _mm_srli_si128, _mm_storeu_si128, _mm256_castsi256_si128,
    _mm256_extracti128_si256, _mm256_loadu_si256, _mm256_permute2x128_si256, _mm256_set1_epi64x,
    _mm256_shuffle_epi8, _mm256_unpackhi_epi64, _mm256_unpacklo_epi64, _mm256_xor_si256,
};

/// Whether the running CPU has AVX2 (checked once, then cached).
pub(crate) fn has_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
}

const BSWAP64: [u8; 32] = [
    7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12,
    11, 10, 9, 8,
];
/// `[a b]` -> `[1 a0..a7 1 b0..b5]`.
const FIRST: [u8; 16] = [0x80, 0, 1, 2, 3, 4, 5, 6, 7, 0x80, 8, 9, 10, 11, 12, 13];
const FIRST_ONES: [u8; 16] = [1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0];
/// `[b6 b7 c0..c7 d0..d5]` -> `[b6 b7 1 c0..c7 1 d0..d3]`.
const SECOND: [u8; 16] = [0, 1, 0x80, 2, 3, 4, 5, 6, 7, 8, 9, 0x80, 10, 11, 12, 13];
const SECOND_ONES: [u8; 16] = [0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0];

/// Writes rows `0..n` (a multiple of 4) of four 8-byte integer columns:
/// row `k`'s 36 bytes go to `base + min(cur[k], limit) + at`, each value `v` of column
/// `q` as `0x01` then the big-endian bytes of `v ^ masks[q]`.
///
/// # Safety
///
/// The CPU must support AVX2. `vals[q]` must hold `n` values and `cur`
/// `n` positions, and for every `k`, `base + min(cur[k], limit) + at` must
/// be valid for writes of 36 bytes, or of 48 when `spill` (the 12 bytes after the
/// 36 may then be overwritten with garbage: the caller writes them later).
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)] // a leaf kernel: plain values, no struct to build per call
pub(crate) unsafe fn write_u64x4(
    base: *mut u8,
    cur: &[usize],
    limit: usize,
    at: usize,
    vals: [*const u64; 4],
    masks: [u64; 4],
    n: usize,
    spill: bool,
) {
    debug_assert!(n.is_multiple_of(4) && cur.len() >= n);
    // SAFETY: the constants are 32 or 16 bytes; loads are unaligned.
    let (bswap, first, first_ones, second, second_ones) = unsafe {
        (
            _mm256_loadu_si256(BSWAP64.as_ptr().cast::<__m256i>()),
            _mm_loadu_si128(FIRST.as_ptr().cast::<__m128i>()),
            _mm_loadu_si128(FIRST_ONES.as_ptr().cast::<__m128i>()),
            _mm_loadu_si128(SECOND.as_ptr().cast::<__m128i>()),
            _mm_loadu_si128(SECOND_ONES.as_ptr().cast::<__m128i>()),
        )
    };
    let m = masks.map(|m| _mm256_set1_epi64x(m as i64));
    let mut k = 0;
    while k < n {
        // SAFETY: rows k..k + 4 < n are within every column (the caller's
        // promise); loads are unaligned.
        let y = unsafe {
            [0, 1, 2, 3].map(|q| {
                let v = _mm256_loadu_si256(vals[q].add(k).cast::<__m256i>());
                _mm256_shuffle_epi8(_mm256_xor_si256(v, m[q]), bswap)
            })
        };
        let t0 = _mm256_unpacklo_epi64(y[0], y[1]);
        let t1 = _mm256_unpackhi_epi64(y[0], y[1]);
        let t2 = _mm256_unpacklo_epi64(y[2], y[3]);
        let t3 = _mm256_unpackhi_epi64(y[2], y[3]);
        let rows = [
            _mm256_permute2x128_si256::<0x20>(t0, t2),
            _mm256_permute2x128_si256::<0x20>(t1, t3),
            _mm256_permute2x128_si256::<0x31>(t0, t2),
            _mm256_permute2x128_si256::<0x31>(t1, t3),
        ];
        for (j, r) in rows.into_iter().enumerate() {
            let lo = _mm256_castsi256_si128(r);
            let hi = _mm256_extracti128_si256::<1>(r);
            let o1 = _mm_or_si128(_mm_shuffle_epi8(lo, first), first_ones);
            let o2 = _mm_or_si128(
                _mm_shuffle_epi8(_mm_alignr_epi8::<14>(hi, lo), second),
                second_ones,
            );
            // SAFETY: k + j < n <= cur.len(), and 36 (48 with `spill`)
            // writable bytes at d, as promised.
            unsafe {
                let d = base.add((*cur.get_unchecked(k + j)).min(limit) + at);
                _mm_storeu_si128(d.cast::<__m128i>(), o1);
                _mm_storeu_si128(d.add(16).cast::<__m128i>(), o2);
                if spill {
                    // d's last 4 bytes of the value, then 12 bytes of garbage.
                    let tail = _mm_srli_si128::<12>(hi);
                    _mm_storeu_si128(d.add(32).cast::<__m128i>(), tail);
                } else {
                    let last = _mm_extract_epi32::<3>(hi);
                    std::ptr::write_unaligned(d.add(32).cast::<i32>(), last);
                }
            }
        }
        k += 4;
    }
}
