//! AVX2 and AVX-512 kernels for the hottest shape: runs of 8-byte integer
//! columns without nulls (the wide fixed-width sort keys of the seed case).
//!
//! AVX2: four columns by four rows are loaded as four vectors,
//! byte-swapped and transposed in registers, and each row's four `0x01 ‖
//! value` units (36 bytes) are written with two or three 16-byte stores
//! instead of eight scalar stores. AVX-512: eight by eight, and one byte
//! permutation (VBMI) per row both byte-swaps and interleaves the validity
//! bytes. The bytes are the same as the scalar path's; the kernels are
//! chosen at run time, and valgrind (which has no AVX-512) gets AVX2.

#![cfg(target_arch = "x86_64")]

use std::arch::x86_64::{
    __m128i, __m256i, _mm_alignr_epi8, _mm_extract_epi32, _mm_loadu_si128, _mm_or_si128,
    _mm_shuffle_epi8, _mm_srli_si128, _mm_storeu_si128, _mm256_castsi256_si128,
    _mm256_extracti128_si256, _mm256_loadu_si256, _mm256_permute2x128_si256, _mm256_set1_epi64x,
    _mm256_shuffle_epi8, _mm256_unpackhi_epi64, _mm256_unpacklo_epi64, _mm256_xor_si256,
};

use std::sync::atomic::{AtomicU8, Ordering};

/// The widest kernels allowed: 0 scalar, 1 AVX2, 2 AVX-512. Lowered only
/// by tests, so every kernel is checked on a machine that has them all.
static MAX_LEVEL: AtomicU8 = AtomicU8::new(2);

/// Caps the kernels used from now on (see [`crate::set_simd_level`]).
pub(crate) fn set_level(level: u8) {
    MAX_LEVEL.store(level, Ordering::Relaxed);
}

/// Whether AVX2 kernels may run: the CPU has AVX2 (detection is cached)
/// and they are not capped.
pub(crate) fn has_avx2() -> bool {
    MAX_LEVEL.load(Ordering::Relaxed) >= 1 && std::arch::is_x86_feature_detected!("avx2")
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

/// Whether the running CPU has the AVX-512 subsets [`write_u64x8`] uses.
pub(crate) fn has_avx512_vbmi() -> bool {
    MAX_LEVEL.load(Ordering::Relaxed) >= 2
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vbmi")
}

/// Byte permutation of one row of eight big-endian-to-be values (eight
/// little-endian u64 lanes): output byte `9q + t` (t = 1..=8) is byte
/// `8 - t` of lane `q`; the 64 bytes end with the eighth value's validity
/// byte.
const fn row_index(first: bool) -> [u8; 64] {
    let mut idx = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        let pos = if first { i } else { i + 64 };
        let (q, t) = (pos / 9, pos % 9);
        idx[i] = if t == 0 || q >= 8 {
            0
        } else {
            (8 * q + (8 - t)) as u8
        };
        i += 1;
    }
    idx
}

const ROW_FIRST: [u8; 64] = row_index(true);
const ROW_REST: [u8; 64] = row_index(false);

/// Positions of the first 64 output bytes that hold value bytes (not a
/// validity byte).
const VALUE_BYTES: u64 = {
    let mut m = 0u64;
    let mut i = 0;
    while i < 64 {
        if i % 9 != 0 {
            m |= 1 << i;
        }
        i += 1;
    }
    m
};

/// As [`write_u64x4`] for eight columns (72 bytes per row), rows `0..n`
/// with `n` a multiple of 8: eight rows of each column are loaded,
/// transposed 8x8 in registers, and every row is written with one 64-byte
/// and one 8-byte store, the byte order and validity bytes coming from one
/// byte permutation. Nothing is written past each row's 72 bytes.
///
/// # Safety
///
/// The CPU must support AVX-512 F, BW and VBMI. `vals[q]` must hold `n`
/// values and `cur` `n` positions, and for every `k`,
/// `base + min(cur[k], limit) + at` must be valid for writes of 72 bytes.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[allow(clippy::too_many_arguments)] // a leaf kernel: plain values, no struct to build per call
pub(crate) unsafe fn write_u64x8(
    base: *mut u8,
    cur: &[usize],
    limit: usize,
    at: usize,
    vals: [*const u64; 8],
    masks: [u64; 8],
    n: usize,
) {
    use std::arch::x86_64::{
        __m512i, _mm_storel_epi64, _mm512_castsi512_si128, _mm512_loadu_si512,
        _mm512_mask_permutexvar_epi8, _mm512_permutexvar_epi8, _mm512_set1_epi8, _mm512_set1_epi64,
        _mm512_shuffle_i64x2, _mm512_storeu_si512, _mm512_unpackhi_epi64, _mm512_unpacklo_epi64,
        _mm512_xor_si512,
    };
    debug_assert!(n.is_multiple_of(8) && cur.len() >= n);
    // SAFETY: the tables are 64 bytes; loads are unaligned.
    let (first, rest) = unsafe {
        (
            _mm512_loadu_si512(ROW_FIRST.as_ptr().cast::<__m512i>()),
            _mm512_loadu_si512(ROW_REST.as_ptr().cast::<__m512i>()),
        )
    };
    let ones = _mm512_set1_epi8(1);
    let m = masks.map(|m| _mm512_set1_epi64(m as i64));
    let mut k = 0;
    while k < n {
        // SAFETY: rows k..k + 8 <= n are within every column (the caller's
        // promise); loads are unaligned.
        let z = unsafe {
            [0, 1, 2, 3, 4, 5, 6, 7].map(|q| {
                _mm512_xor_si512(_mm512_loadu_si512(vals[q].add(k).cast::<__m512i>()), m[q])
            })
        };
        // 8x8 transpose of u64 lanes: r[j] holds row j's eight values.
        let t = [
            _mm512_unpacklo_epi64(z[0], z[1]),
            _mm512_unpackhi_epi64(z[0], z[1]),
            _mm512_unpacklo_epi64(z[2], z[3]),
            _mm512_unpackhi_epi64(z[2], z[3]),
            _mm512_unpacklo_epi64(z[4], z[5]),
            _mm512_unpackhi_epi64(z[4], z[5]),
            _mm512_unpacklo_epi64(z[6], z[7]),
            _mm512_unpackhi_epi64(z[6], z[7]),
        ];
        let u = [
            _mm512_shuffle_i64x2::<0x88>(t[0], t[2]),
            _mm512_shuffle_i64x2::<0xDD>(t[0], t[2]),
            _mm512_shuffle_i64x2::<0x88>(t[1], t[3]),
            _mm512_shuffle_i64x2::<0xDD>(t[1], t[3]),
            _mm512_shuffle_i64x2::<0x88>(t[4], t[6]),
            _mm512_shuffle_i64x2::<0xDD>(t[4], t[6]),
            _mm512_shuffle_i64x2::<0x88>(t[5], t[7]),
            _mm512_shuffle_i64x2::<0xDD>(t[5], t[7]),
        ];
        let r = [
            _mm512_shuffle_i64x2::<0x88>(u[0], u[4]),
            _mm512_shuffle_i64x2::<0x88>(u[2], u[6]),
            _mm512_shuffle_i64x2::<0x88>(u[1], u[5]),
            _mm512_shuffle_i64x2::<0x88>(u[3], u[7]),
            _mm512_shuffle_i64x2::<0xDD>(u[0], u[4]),
            _mm512_shuffle_i64x2::<0xDD>(u[2], u[6]),
            _mm512_shuffle_i64x2::<0xDD>(u[1], u[5]),
            _mm512_shuffle_i64x2::<0xDD>(u[3], u[7]),
        ];
        for (j, row) in r.into_iter().enumerate() {
            let o1 = _mm512_mask_permutexvar_epi8(ones, VALUE_BYTES, first, row);
            let o2 = _mm512_permutexvar_epi8(rest, row);
            // SAFETY: k + j < n <= cur.len(), and 72 writable bytes at d,
            // as promised.
            unsafe {
                let d = base.add((*cur.get_unchecked(k + j)).min(limit) + at);
                _mm512_storeu_si512(d.cast::<__m512i>(), o1);
                _mm_storel_epi64(d.add(64).cast(), _mm512_castsi512_si128(o2));
            }
        }
        k += 8;
    }
}
