//! Strings written by templates and word lists: a compiled template's
//! steps, the random draws they read, and the writer that fills a string
//! column's bytes (numbers, hex and names written in place).

use super::draw::{below, below32};
use crate::dist::Zipf;
use crate::names::NameTable;
use crate::rng::{RowRng, StreamKey};

/// A string value: short ones as a 16-byte block (copied whole, the
/// cursor advancing by the length), long ones as bytes.
#[derive(Debug)]
pub(super) enum Val {
    Small([u8; 16], usize),
    Big(Box<[u8]>),
}

impl Val {
    pub(super) fn new(b: &[u8]) -> Val {
        if b.len() <= 16 {
            let mut block = [0u8; 16];
            block[..b.len()].copy_from_slice(b);
            Val::Small(block, b.len())
        } else {
            Val::Big(b.into())
        }
    }

    pub(super) fn len(&self) -> usize {
        match self {
            Val::Small(_, n) => *n,
            Val::Big(b) => b.len(),
        }
    }

    #[inline(always)]
    pub(super) fn write(&self, w: &mut Writer) {
        match self {
            Val::Small(b, n) => w.block(b, *n),
            Val::Big(b) => w.bytes(b),
        }
    }
}

#[derive(Debug)]
pub(super) enum TPart {
    Lit(Val),
    Seq {
        width: usize,
        zero: bool,
    },
    Name(&'static NameTable),
    Uniform {
        min: i64,
        span: u128,
        width: usize,
        zero: bool,
    },
    Zipf {
        zipf: Zipf,
        width: usize,
        zero: bool,
    },
    Hex(u32),
    /// `n` characters, each drawn from the set with equal odds.
    Pick(&'static [u8], u32),
}

/// One step of a compiled template: the literal text before a part (up to
/// 16 bytes, stored as one block and possibly empty), then the part. A
/// literal longer than 16 bytes, or one at the end, is a step of its own
/// (`TPart::Lit` with no prefix). Folding literals into the next part
/// halves the steps of common templates (`+91-99-{seq:08}` is one step).
#[derive(Debug)]
pub(super) struct Step {
    pub(super) prefix: [u8; 16],
    pub(super) prefix_len: usize,
    pub(super) part: TPart,
}

impl Step {
    pub(super) fn new(prefix: &[u8], part: TPart) -> Step {
        let mut block = [0u8; 16];
        block[..prefix.len()].copy_from_slice(prefix);
        Step {
            prefix: block,
            prefix_len: prefix.len(),
            part,
        }
    }

    /// Steps of a template's parts, literals folded into the next part.
    pub(super) fn compile(parts: Vec<TPart>) -> Vec<Step> {
        let mut steps = Vec::new();
        let mut text: Vec<u8> = Vec::new();
        for part in parts {
            match part {
                TPart::Lit(v) => match v {
                    Val::Small(b, n) => text.extend_from_slice(&b[..n]),
                    Val::Big(b) => text.extend_from_slice(&b),
                },
                part => {
                    if text.len() > 16 {
                        steps.push(Step::new(&[], TPart::Lit(Val::new(&text))));
                        text.clear();
                    }
                    steps.push(Step::new(&text, part));
                    text.clear();
                }
            }
        }
        if !text.is_empty() {
            steps.push(Step::new(&[], TPart::Lit(Val::new(&text))));
        }
        steps
    }

    /// The list of a name or word step.
    pub(super) fn name(&self) -> Option<&'static NameTable> {
        match self.part {
            TPart::Name(t) => Some(t),
            _ => None,
        }
    }

    #[inline(always)]
    pub(super) fn write<const INLINE_NUMBERS: bool>(
        &self,
        id: u64,
        d: &mut Draws,
        out: &mut Writer,
    ) {
        out.block(&self.prefix, self.prefix_len);
        write_part::<INLINE_NUMBERS>(&self.part, id, d, out);
    }
}

/// Lower-case hexadecimal digits.
pub(super) const HEX: &[u8; 16] = b"0123456789abcdef";

/// Decimal digits.
pub(super) const DIGITS: &[u8] = b"0123456789";

/// Uppercase ASCII letters.
pub(super) const UPPER: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// Lowercase ASCII letters.
pub(super) const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz";

/// Random words for one element, handed out 32 or 64 bits at a time; the
/// first word is the element's stream state itself (one mix).
pub(super) struct Draws {
    pub(super) r: RowRng,
    pub(super) word: u64,
    pub(super) halves: u8,
}

impl Draws {
    #[inline(always)]
    pub(super) fn new(key: StreamKey, id: u64, random: bool) -> Draws {
        if !random {
            // Never read: a constant, not a mix per element.
            const UNUSED: RowRng = RowRng::seeded(0);
            return Draws {
                r: UNUSED,
                word: 0,
                halves: 0,
            };
        }
        let r = key.row(id);
        Draws {
            word: r.state(),
            r,
            halves: 2,
        }
    }

    #[inline(always)]
    pub(super) fn u32(&mut self) -> u32 {
        if self.halves == 0 {
            self.word = self.r.next_u64();
            self.halves = 2;
        }
        self.halves -= 1;
        (self.word >> (32 * u32::from(self.halves))) as u32
    }

    #[inline(always)]
    pub(super) fn u64(&mut self) -> u64 {
        if self.halves == 2 {
            self.halves = 0;
            self.word
        } else {
            self.r.next_u64()
        }
    }
}

/// A byte buffer written through a cursor: values are stored as whole
/// fixed-size blocks (one unaligned store, no call) and the cursor moves by
/// their real length; the buffer keeps enough slack for any block.
pub(super) struct Writer {
    pub(super) buf: Vec<u8>,
    pub(super) pos: usize,
}

/// Slack kept past the cursor beyond one value's own bytes.
pub(super) const SLACK: usize = 64;

impl Writer {
    /// Makes sure `n` bytes (plus the block slack) fit past the cursor.
    #[inline(always)]
    pub(super) fn room(&mut self, n: usize) {
        if self.buf.len() - self.pos < n + SLACK {
            self.grow(n + SLACK);
        }
    }

    #[cold]
    pub(super) fn grow(&mut self, n: usize) {
        let want = (self.buf.len() * 2).max(self.pos + n).max(4096);
        self.buf.resize(want, 0);
    }

    #[inline(always)]
    pub(super) fn block<const N: usize>(&mut self, b: &[u8; N], len: usize) {
        self.buf[self.pos..self.pos + N].copy_from_slice(b);
        self.pos += len;
    }

    #[inline(always)]
    pub(super) fn bytes(&mut self, b: &[u8]) {
        self.buf[self.pos..self.pos + b.len()].copy_from_slice(b);
        self.pos += b.len();
    }
}

/// Two ASCII digits per entry, first digit in the low byte.
pub(super) static PAIR16: [u16; 100] = {
    let mut t = [0u16; 100];
    let mut i = 0;
    while i < 100 {
        t[i] = (b'0' as u16 + (i % 10) as u16) << 8 | (b'0' as u16 + (i / 10) as u16);
        i += 1;
    }
    t
};

/// The 8 ASCII digits of `v < 10^8`, zero-padded, first digit in the low
/// byte: four independent two-digit lookups, no loop.
#[inline(always)]
pub(super) fn digits8(v: u32) -> u64 {
    let (a, r) = (v / 1_000_000, v % 1_000_000);
    let (b, r) = (r / 10_000, r % 10_000);
    let (c, d) = (r / 100, r % 100);
    u64::from(PAIR16[a as usize])
        | u64::from(PAIR16[b as usize]) << 16
        | u64::from(PAIR16[c as usize]) << 32
        | u64::from(PAIR16[d as usize]) << 48
}

/// `v` in decimal, padded to `width` with zeros or spaces (a minus sign
/// first when `negative`), as up to 16 characters in a register, first
/// character in the low byte, and their count; `None` past 16 characters
/// (see [`uint_text_long`]). Not inlined: inlined into a template's part
/// loop, its arithmetic on the element id was hoisted out of the loop and
/// run for every template, numbers or not.
#[inline(never)]
pub(super) fn uint_text(v: u64, width: usize, zero: bool, negative: bool) -> Option<(u128, usize)> {
    uint_text_inline(v, width, zero, negative)
}

/// [`uint_text`], inlined.
#[inline(always)]
pub(super) fn uint_text_inline(
    v: u64,
    width: usize,
    zero: bool,
    negative: bool,
) -> Option<(u128, usize)> {
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    if v < 100 && width <= 2 && !negative {
        // One or two digits (`{uniform(0,9)}`, hours, days): one lookup.
        let pair = u64::from(PAIR16[v as usize]);
        let total = width.max(1 + usize::from(v >= 10));
        let t = if total == 1 {
            pair >> 8
        } else if v < 10 && !zero {
            pair - 0x10
        } else {
            pair
        };
        return Some((u128::from(t), total));
    }
    if v < 100_000_000 && width <= 8 && !negative {
        // Up to 8 characters: the same steps on one 64-bit word.
        let text = digits8(v as u32);
        let leading = ((text ^ ZEROS).trailing_zeros() / 8) as usize;
        let digits = (8 - leading.min(8)).max(1);
        let total = width.max(digits);
        let pad = total - digits;
        let mut t = text >> (8 * (8 - total));
        if !zero {
            t -= 0x1010_1010_1010_1010 & ((1u64 << (8 * pad)) - 1);
        }
        return Some((u128::from(t), total));
    }
    if v >= 10_000_000_000_000_000 {
        return None;
    }
    // 16 zero-padded digits, first character in the low byte; the digit
    // count comes from the leading '0' characters (no logarithm).
    let (high, low) = if v < 100_000_000 {
        (ZEROS, digits8(v as u32))
    } else {
        (
            digits8((v / 100_000_000) as u32),
            digits8((v % 100_000_000) as u32),
        )
    };
    let text = u128::from(high) | u128::from(low) << 64;
    let leading =
        ((text ^ (u128::from(ZEROS) * ((1u128 << 64) + 1))).trailing_zeros() / 8) as usize;
    let digits = (16 - leading.min(16)).max(1);
    let total = width.max(digits + usize::from(negative));
    if total > 16 {
        return None;
    }
    let pad = total - digits;
    let at = if zero { 0 } else { pad.saturating_sub(1) };
    let mut t = text >> (8 * (16 - total));
    if !zero && pad > 0 {
        // Leading '0's of the padding become ' ' (0x30 - 0x10).
        t -= 0x1010_1010_1010_1010_1010_1010_1010_1010 & ((1u128 << (8 * pad)) - 1);
    }
    if negative {
        t = (t & !(0xffu128 << (8 * at))) | (u128::from(b'-') << (8 * at));
    }
    Some((t, total))
}

/// [`uint_text`] for more than 16 characters (widths up to 64).
#[cold]
pub(super) fn uint_text_long(
    mut v: u64,
    width: usize,
    zero: bool,
    negative: bool,
) -> ([u8; 88], usize) {
    let mut digits = [0u8; 20];
    let mut at = 20;
    loop {
        at -= 1;
        digits[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let n = 20 - at;
    let pad = width.saturating_sub(n + usize::from(negative));
    let mut out = [0u8; 88];
    let mut len = 0;
    let mut push = |b: u8| {
        out[len] = b;
        len += 1;
    };
    if negative && zero {
        push(b'-');
    }
    for _ in 0..pad {
        push(if zero { b'0' } else { b' ' });
    }
    if negative && !zero {
        push(b'-');
    }
    for &d in &digits[at..] {
        push(d);
    }
    (out, len)
}

/// Writes `v` as [`uint_text`] formats it; `INLINE` inlines the
/// formatting instead of calling it.
#[inline(always)]
pub(super) fn write_uint<const INLINE: bool>(
    out: &mut Writer,
    v: u64,
    width: usize,
    zero: bool,
    negative: bool,
) {
    let text = if INLINE {
        uint_text_inline(v, width, zero, negative)
    } else {
        uint_text(v, width, zero, negative)
    };
    match text {
        Some((t, len)) => out.block(&t.to_le_bytes(), len),
        None => {
            let (text, len) = uint_text_long(v, width, zero, negative);
            out.bytes(&text[..len]);
        }
    }
}

/// Writes one template part. `INLINE_NUMBERS` inlines number formatting
/// (for templates with number slots); without it, formatting is a call, so
/// that its arithmetic cannot be hoisted into templates that never use it.
#[inline(always)]
pub(super) fn write_part<const INLINE_NUMBERS: bool>(
    p: &TPart,
    id: u64,
    d: &mut Draws,
    out: &mut Writer,
) {
    match p {
        TPart::Lit(v) => v.write(out),
        TPart::Seq { width, zero } => write_uint::<INLINE_NUMBERS>(out, id, *width, *zero, false),
        TPart::Name(t) => {
            let (slot, len) = t.slot(below32(d.u32(), t.len() as u32) as usize);
            out.block(slot, len);
        }
        TPart::Uniform {
            min,
            span,
            width,
            zero,
        } => {
            let off = if *span < 1 << 32 {
                u64::from(below32(d.u32(), *span as u32))
            } else {
                below(d.u64(), *span)
            };
            let v = min.wrapping_add(off as i64);
            write_uint::<INLINE_NUMBERS>(out, v.unsigned_abs(), *width, *zero, v < 0);
        }
        TPart::Zipf { zipf, width, zero } => {
            write_uint::<false>(out, zipf.sample(&mut d.r), *width, *zero, false)
        }
        TPart::Hex(n) => {
            // The low `n` digits (the parser keeps 1 <= n <= 16).
            let t = hex16(d.u64()) >> (8 * (16 - (*n as usize).min(16)));
            out.block(&t.to_le_bytes(), *n as usize);
        }
        TPart::Pick(set, n) => pick(set, *n as usize, d, out),
    }
}

/// Writes `n` characters of `set` (up to 64, the parser's limit): eight
/// from each 64-bit draw, as the first eight base-`k` digits of the draw
/// read as a fraction (`k = set.len()`, at most 26), each a multiply and
/// a shift. Eight digits use at most `26^8 < 2^38` of the 2^64 values,
/// so their odds are equal to within 2^-26.
#[inline(never)]
fn pick(set: &[u8], n: usize, d: &mut Draws, out: &mut Writer) {
    let k = set.len() as u128;
    let n = n.min(64);
    let dest = &mut out.buf[out.pos..out.pos + n];
    for chunk in dest.chunks_mut(8) {
        let mut w = d.u64();
        for b in chunk {
            let wide = u128::from(w) * k;
            *b = set[(wide >> 64) as usize];
            w = wide as u64;
        }
    }
    out.pos += n;
}

/// The 16 lowercase hex digits of `v`, most significant first, the first
/// character in the low byte: the nibbles spread to bytes by shifts and
/// masks and turned into characters in one go (no table, no loop).
#[inline(always)]
pub(super) fn hex16(v: u64) -> u128 {
    fn spread(x: u32) -> u64 {
        let mut x = u64::from(x);
        x = (x | x << 16) & 0x0000_ffff_0000_ffff;
        x = (x | x << 8) & 0x00ff_00ff_00ff_00ff;
        x = (x | x << 4) & 0x0f0f_0f0f_0f0f_0f0f;
        // Nibble j is byte j now; those above 9 become 'a'..'f'.
        let letters = ((x + 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101;
        (x + 0x3030_3030_3030_3030 + letters * 39).swap_bytes()
    }
    u128::from(spread((v >> 32) as u32)) | u128::from(spread(v as u32)) << 64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(v: u64, width: usize, zero: bool, negative: bool) -> String {
        let mut w = Writer {
            buf: Vec::new(),
            pos: 0,
        };
        w.room(100);
        write_uint::<false>(&mut w, v, width, zero, negative);
        String::from_utf8(w.buf[..w.pos].to_vec()).unwrap()
    }

    #[test]
    fn hex_digits_match_std_formatting() {
        for v in [
            0u64,
            9,
            10,
            0xabcdef,
            0x0123_4567_89ab_cdef,
            u64::MAX,
            0xf0f0_0f0f_a5a5_5a5a,
        ] {
            let text = hex16(v).to_le_bytes();
            assert_eq!(std::str::from_utf8(&text).unwrap(), format!("{v:016x}"));
        }
    }

    #[test]
    fn numbers_match_std_formatting() {
        let mut values: Vec<u64> = (0..=100).collect();
        values.extend([1234, 12_345_678, 99_999_999, 100_000_000]);
        values.extend([
            u64::MAX,
            u64::MAX / 7,
            10u64.pow(15),
            10u64.pow(16) - 1,
            10u64.pow(16),
        ]);
        let mut r = crate::rng::RowRng::seeded(3);
        values.extend((0..200).map(|i| r.next_u64() >> (i % 64)));
        for &v in &values {
            for width in [0usize, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 20, 25, 40] {
                assert_eq!(text(v, width, true, false), format!("{v:0width$}"));
                assert_eq!(text(v, width, false, false), format!("{v:width$}"));
                if v > 0 && v <= i64::MAX as u64 {
                    let n = -(v as i128);
                    assert_eq!(
                        text(v, width, true, true),
                        format!("{n:0width$}"),
                        "{n} {width}"
                    );
                    assert_eq!(
                        text(v, width, false, true),
                        format!("{n:width$}"),
                        "{n} {width}"
                    );
                }
            }
        }
    }
}
