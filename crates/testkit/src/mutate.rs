//! Seeded corruption of valid files, for tests of every reader: bit flips,
//! truncations, extreme offsets and lengths, random bytes, half of them in
//! the footer and headers.

use strata_gen::rng::RowRng;

/// One seeded mutation of `valid`: bit flips, a truncation, an extreme
/// offset or length (4 or 8 bytes), or a random byte; half of the
/// positions fall in the last `tail_focus` bytes (footers and headers).
pub fn mutate(rng: &mut RowRng, valid: &[u8], tail_focus: usize) -> Vec<u8> {
    let mut b = valid.to_vec();
    let n = b.len() as u64;
    // Where: the footer and headers (near the end, or anywhere).
    let pos = |rng: &mut RowRng| -> usize {
        if rng.next_below(2) == 0 {
            let w = (tail_focus as u64).min(n);
            (n - 1 - rng.next_below(w)) as usize
        } else {
            rng.next_below(n) as usize
        }
    };
    match rng.next_below(4) {
        0 => {
            // Flip one to four bytes.
            for _ in 0..1 + rng.next_below(4) {
                let p = pos(rng);
                b[p] ^= 1 << rng.next_below(8);
            }
        }
        1 => {
            // Truncate.
            b.truncate(rng.next_below(n) as usize);
        }
        2 => {
            // An offset or length replaced by an extreme value.
            let extremes: [u64; 8] = [
                0,
                1,
                7,
                0x7fff_ffff,
                0xffff_ffff,
                u64::MAX,
                1 << 40,
                0x8000_0000_0000_0000,
            ];
            let v = extremes[rng.next_below(8) as usize];
            let p = pos(rng) & !3;
            let width = if rng.next_below(2) == 0 { 4 } else { 8 };
            for i in 0..width {
                if p + i < b.len() {
                    b[p + i] = (v >> (8 * i)) as u8;
                }
            }
        }
        _ => {
            // A random byte.
            let p = pos(rng);
            b[p] = rng.next_below(256) as u8;
        }
    }
    b
}
