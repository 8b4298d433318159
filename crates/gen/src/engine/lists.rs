//! List and map lengths: each parent row's length drawn, and the
//! offsets and child ids of a batch's elements.

use std::mem::MaybeUninit;

use super::MAX_BATCH_ELEMENTS;
use super::sample::Sampler;
use super::scratch::SpecScratch;
use crate::Error;
use crate::rng::StreamKey;

/// List offsets, element ids and list validity.
pub(super) type Lengths = (Vec<u32>, Vec<u64>, Vec<u8>);

/// List offsets, element ids and list validity for parents `ids`.
///
/// Lengths are drawn for every parent (a null one then gets 0), and for
/// short lists every possible child id is stored and the cursor advances by
/// the length: no branch depends on the random length.
#[allow(clippy::too_many_arguments)]
pub(super) fn lengths(
    ids: &[u64],
    valid: &[u8],
    length: &Sampler,
    key: StreamKey,
    max_len: u64,
    empty_as_null: bool,
    s: &mut SpecScratch,
) -> Result<Lengths, Error> {
    let n = ids.len();
    let mut offsets = s.v32(n + 1);
    offsets.resize(n + 1, 0);
    let mut valid2 = s.v8(n);
    valid2.resize(n, 0);
    // Short lists (the common case) take a loop specialised for their
    // longest length and for an alias-table length, the usual one.
    macro_rules! short {
        ($($n:literal)*) => {
            match (max_len, length) {
                $(
                    // Table lengths are clamped at compile time.
                    ($n, Sampler::IntTable { alias, values }) => short_lists::<$n>(
                        ids, valid, |id| values[alias.sample(key.first(id)) as usize] as usize,
                        empty_as_null, &mut offsets, &mut valid2, s,
                    ),
                    ($n, other) => short_lists::<$n>(
                        ids, valid, |id| clamp_length(other.int(key, id).0, $n),
                        empty_as_null, &mut offsets, &mut valid2, s,
                    ),
                )*
                _ => long_lists(ids, valid, length, key, max_len, empty_as_null,
                                &mut offsets, &mut valid2, s)?,
            }
        };
    }
    let child_ids = short!(1 2 3 4 5 6 7 8);
    if child_ids.len() as u64 > MAX_BATCH_ELEMENTS {
        return Err(Error::BatchTooLarge);
    }
    Ok((offsets, child_ids, valid2))
}

/// Lists of at most `N` elements: every possible child id of a parent is
/// stored and the cursor advances by the drawn length, so no branch
/// depends on the random length.
#[inline(always)]
pub(super) fn short_lists<const N: usize>(
    ids: &[u64],
    valid: &[u8],
    draw: impl Fn(u64) -> usize,
    empty_as_null: bool,
    offsets: &mut [u32],
    valid2: &mut [u8],
    s: &mut SpecScratch,
) -> Vec<u64> {
    let n = ids.len();
    // Capacity for every slot up front, written without zeroing first:
    // each parent's `N` candidate ids overwrite the unused ones before.
    let mut child_ids = s.v64(n * N + N);
    let spare = &mut child_ids.spare_capacity_mut()[..n * N + N];
    let mut total = 0usize;
    let outs = offsets[1..].iter_mut().zip(valid2.iter_mut());
    for ((&id, &ok), (offset, valid2)) in ids.iter().zip(valid).zip(outs) {
        // `draw` returns at most N already; the `min` (a conditional move)
        // and the 0/1 factor keep `len <= N`, so the `set_len` below is
        // sound whatever `draw` returns and whatever the validity bytes.
        let len = draw(id).min(N) * usize::from(ok == 1);
        let base = id.wrapping_mul(N as u64);
        let slots: &mut [MaybeUninit<u64>; N] =
            (&mut spare[total..total + N]).try_into().expect("N slots");
        for (j, slot) in slots.iter_mut().enumerate() {
            slot.write(base.wrapping_add(j as u64));
        }
        total += len;
        *offset = total as u32;
        *valid2 = u8::from(ok == 1) & !u8::from(empty_as_null && len == 0);
    }
    // SAFETY: the capacity is at least `n * N + N`, and every slot below
    // `total` was written: each step writes slots `total..total + N`
    // before `total` grows by at most `N`.
    unsafe { child_ids.set_len(total) };
    child_ids
}

/// A drawn length (two's-complement bits) clamped to `0..=max`.
#[inline(always)]
pub(super) fn clamp_length(bits: u64, max: u64) -> usize {
    (bits as i64).clamp(0, max as i64) as usize
}

/// Lists longer than eight elements: ids written as drawn.
#[allow(clippy::too_many_arguments)]
pub(super) fn long_lists(
    ids: &[u64],
    valid: &[u8],
    length: &Sampler,
    key: StreamKey,
    max_len: u64,
    empty_as_null: bool,
    offsets: &mut [u32],
    valid2: &mut [u8],
    s: &mut SpecScratch,
) -> Result<Vec<u64>, Error> {
    let mut child_ids = s.v64(ids.len() * 8);
    let mut total: u64 = 0;
    for (i, (&id, &ok)) in ids.iter().zip(valid).enumerate() {
        let len = clamp_length(length.int(key, id).0, max_len) as u64 * u64::from(ok);
        if total + len > MAX_BATCH_ELEMENTS {
            s.put64(child_ids);
            return Err(Error::BatchTooLarge);
        }
        let base = id.wrapping_mul(max_len);
        child_ids.extend((0..len).map(|j| base.wrapping_add(j)));
        total += len;
        offsets[i + 1] = total as u32;
        valid2[i] = u8::from(ok == 1 && !(empty_as_null && len == 0));
    }
    Ok(child_ids)
}
