//! Order-preserving byte encodings of fixed-width native values.
//!
//! Every value becomes big-endian bytes whose unsigned lexicographic order
//! is the value's order: unsigned integers as they are, signed integers with
//! the sign bit toggled, floats in IEEE 754 totalOrder (negative values have
//! every bit but the sign flipped first, so `-0.0 < +0.0` and NaNs sort at
//! the ends), intervals as their components in sequence. Descending order
//! inverts every byte.

use arrow_buffer::{IntervalDayTime, IntervalMonthDayNano, i256};
use half::f16;

/// A fixed-width value with an order-preserving encoding of `WIDTH` bytes.
pub(crate) trait Encodable: Copy + Default + 'static {
    /// Bytes in the encoding.
    const WIDTH: usize;
    /// For 8-byte integers: the encoding is the big-endian bytes of the
    /// value XORed with this mask (before any inversion).
    const XOR64: Option<u64> = None;
    /// Writes the encoding into `out[..WIDTH]`, every byte XORed with
    /// `invert` (0x00 for ascending, 0xFF for descending).
    fn put(self, out: &mut [u8], invert: u8);
    /// As [`Encodable::put`], through a raw pointer.
    ///
    /// # Safety
    ///
    /// `out` must be valid for writes of `WIDTH` bytes.
    #[inline(always)]
    unsafe fn put_raw(self, out: *mut u8, invert: u8) {
        // SAFETY: the caller guarantees WIDTH writable bytes at `out`.
        let dst = unsafe { std::slice::from_raw_parts_mut(out, Self::WIDTH) };
        self.put(dst, invert)
    }
    /// As [`Encodable::put_raw`] when `keep`, else writes `WIDTH` zeros.
    ///
    /// # Safety
    ///
    /// `out` must be valid for writes of `WIDTH` bytes.
    #[inline(always)]
    unsafe fn put_masked_raw(self, out: *mut u8, invert: u8, keep: bool) {
        // SAFETY: the caller guarantees WIDTH writable bytes at `out`.
        let dst = unsafe { std::slice::from_raw_parts_mut(out, Self::WIDTH) };
        self.put_masked(dst, invert, keep)
    }
    /// As [`Encodable::put`] when `keep`, else writes `WIDTH` zero bytes.
    #[inline(always)]
    fn put_masked(self, out: &mut [u8], invert: u8, keep: bool) {
        if keep {
            self.put(out, invert)
        } else {
            out[..Self::WIDTH].fill(0)
        }
    }
    /// Reads a value back from `bytes[..WIDTH]`.
    fn get(bytes: &[u8], invert: u8) -> Self;
    /// As [`Encodable::get`], through a raw pointer.
    ///
    /// # Safety
    ///
    /// `bytes` must be valid for reads of `WIDTH` bytes.
    #[inline(always)]
    unsafe fn get_raw(bytes: *const u8, invert: u8) -> Self {
        // SAFETY: the caller guarantees WIDTH readable bytes.
        Self::get(
            unsafe { std::slice::from_raw_parts(bytes, Self::WIDTH) },
            invert,
        )
    }
}

macro_rules! unsigned {
    ($($t:ty),*) => {$(
        impl Encodable for $t {
            const WIDTH: usize = size_of::<$t>();
            const XOR64: Option<u64> = if size_of::<$t>() == 8 { Some(0) } else { None };
            #[inline(always)]
            fn put(self, out: &mut [u8], invert: u8) {
                let mask = <$t>::from_ne_bytes([invert; size_of::<$t>()]);
                out[..Self::WIDTH].copy_from_slice(&(self ^ mask).to_be_bytes());
            }
            #[inline(always)]
            unsafe fn put_raw(self, out: *mut u8, invert: u8) {
                let mask = <$t>::from_ne_bytes([invert; size_of::<$t>()]);
                // SAFETY: the caller guarantees WIDTH writable bytes at `out`;
                // the write is unaligned.
                unsafe { std::ptr::write_unaligned(out.cast::<$t>(), (self ^ mask).to_be()) }
            }
            #[inline(always)]
            unsafe fn put_masked_raw(self, out: *mut u8, invert: u8, keep: bool) {
                let mask = <$t>::from_ne_bytes([invert; size_of::<$t>()]);
                let keep = <$t>::from(keep).wrapping_neg();
                // SAFETY: the caller guarantees WIDTH writable bytes at `out`.
                unsafe { std::ptr::write_unaligned(out.cast::<$t>(), ((self ^ mask) & keep).to_be()) }
            }
            #[inline(always)]
            fn put_masked(self, out: &mut [u8], invert: u8, keep: bool) {
                let mask = <$t>::from_ne_bytes([invert; size_of::<$t>()]);
                let keep = <$t>::from(keep).wrapping_neg();
                out[..Self::WIDTH].copy_from_slice(&((self ^ mask) & keep).to_be_bytes());
            }
            #[inline(always)]
            fn get(bytes: &[u8], invert: u8) -> Self {
                let mask = <$t>::from_ne_bytes([invert; size_of::<$t>()]);
                let raw: [u8; size_of::<$t>()] = bytes[..Self::WIDTH].try_into().unwrap();
                <$t>::from_be_bytes(raw) ^ mask
            }
            #[inline(always)]
            unsafe fn get_raw(bytes: *const u8, invert: u8) -> Self {
                let mask = <$t>::from_ne_bytes([invert; size_of::<$t>()]);
                // SAFETY: the caller guarantees WIDTH readable bytes.
                <$t>::from_be(unsafe { std::ptr::read_unaligned(bytes.cast::<$t>()) }) ^ mask
            }
        }
    )*};
}
unsigned!(u8, u16, u32, u64, u128);

macro_rules! signed {
    ($($t:ty => $u:ty),*) => {$(
        impl Encodable for $t {
            const WIDTH: usize = size_of::<$t>();
            const XOR64: Option<u64> = if size_of::<$t>() == 8 { Some(1 << 63) } else { None };
            #[inline(always)]
            fn put(self, out: &mut [u8], invert: u8) {
                let flipped = (self as $u) ^ (1 << (<$u>::BITS - 1));
                flipped.put(out, invert)
            }
            #[inline(always)]
            unsafe fn put_raw(self, out: *mut u8, invert: u8) {
                let flipped = (self as $u) ^ (1 << (<$u>::BITS - 1));
                // SAFETY: forwarded from the caller.
                unsafe { flipped.put_raw(out, invert) }
            }
            #[inline(always)]
            unsafe fn put_masked_raw(self, out: *mut u8, invert: u8, keep: bool) {
                let flipped = (self as $u) ^ (1 << (<$u>::BITS - 1));
                // SAFETY: forwarded from the caller.
                unsafe { flipped.put_masked_raw(out, invert, keep) }
            }
            #[inline(always)]
            fn put_masked(self, out: &mut [u8], invert: u8, keep: bool) {
                let flipped = (self as $u) ^ (1 << (<$u>::BITS - 1));
                flipped.put_masked(out, invert, keep)
            }
            #[inline(always)]
            fn get(bytes: &[u8], invert: u8) -> Self {
                (<$u>::get(bytes, invert) ^ (1 << (<$u>::BITS - 1))) as $t
            }
            #[inline(always)]
            unsafe fn get_raw(bytes: *const u8, invert: u8) -> Self {
                // SAFETY: forwarded from the caller.
                (unsafe { <$u>::get_raw(bytes, invert) } ^ (1 << (<$u>::BITS - 1))) as $t
            }
        }
    )*};
}
signed!(i8 => u8, i16 => u16, i32 => u32, i64 => u64, i128 => u128);

/// Maps float bits to a signed integer with the same total order.
macro_rules! float {
    ($($t:ty => $i:ty, $u:ty),*) => {$(
        impl Encodable for $t {
            const WIDTH: usize = size_of::<$t>();
            #[inline(always)]
            fn put(self, out: &mut [u8], invert: u8) {
                let s = self.to_bits() as $i;
                let ordered = s ^ ((((s >> (<$i>::BITS - 1)) as $u) >> 1) as $i);
                ordered.put(out, invert)
            }
            #[inline(always)]
            unsafe fn put_raw(self, out: *mut u8, invert: u8) {
                let s = self.to_bits() as $i;
                let ordered = s ^ ((((s >> (<$i>::BITS - 1)) as $u) >> 1) as $i);
                // SAFETY: forwarded from the caller.
                unsafe { ordered.put_raw(out, invert) }
            }
            #[inline(always)]
            unsafe fn put_masked_raw(self, out: *mut u8, invert: u8, keep: bool) {
                let s = self.to_bits() as $i;
                let ordered = s ^ ((((s >> (<$i>::BITS - 1)) as $u) >> 1) as $i);
                // SAFETY: forwarded from the caller.
                unsafe { ordered.put_masked_raw(out, invert, keep) }
            }
            #[inline(always)]
            fn put_masked(self, out: &mut [u8], invert: u8, keep: bool) {
                let s = self.to_bits() as $i;
                let ordered = s ^ ((((s >> (<$i>::BITS - 1)) as $u) >> 1) as $i);
                ordered.put_masked(out, invert, keep)
            }
            #[inline(always)]
            fn get(bytes: &[u8], invert: u8) -> Self {
                let s = <$i>::get(bytes, invert);
                let bits = s ^ ((((s >> (<$i>::BITS - 1)) as $u) >> 1) as $i);
                <$t>::from_bits(bits as $u)
            }
            #[inline(always)]
            unsafe fn get_raw(bytes: *const u8, invert: u8) -> Self {
                // SAFETY: forwarded from the caller.
                let s = unsafe { <$i>::get_raw(bytes, invert) };
                let bits = s ^ ((((s >> (<$i>::BITS - 1)) as $u) >> 1) as $i);
                <$t>::from_bits(bits as $u)
            }
        }
    )*};
}
float!(f32 => i32, u32, f64 => i64, u64, f16 => i16, u16);

impl Encodable for i256 {
    const WIDTH: usize = 32;
    #[inline(always)]
    fn put(self, out: &mut [u8], invert: u8) {
        let mut b = self.to_be_bytes();
        b[0] ^= 0x80;
        for (o, v) in out[..32].iter_mut().zip(b) {
            *o = v ^ invert;
        }
    }
    #[inline(always)]
    fn get(bytes: &[u8], invert: u8) -> Self {
        let mut b = [0u8; 32];
        for (o, v) in b.iter_mut().zip(&bytes[..32]) {
            *o = v ^ invert;
        }
        b[0] ^= 0x80;
        i256::from_be_bytes(b)
    }
}

impl Encodable for IntervalDayTime {
    const WIDTH: usize = 8;
    #[inline(always)]
    fn put(self, out: &mut [u8], invert: u8) {
        self.days.put(&mut out[..4], invert);
        self.milliseconds.put(&mut out[4..8], invert);
    }
    #[inline(always)]
    fn get(bytes: &[u8], invert: u8) -> Self {
        IntervalDayTime::new(
            i32::get(&bytes[..4], invert),
            i32::get(&bytes[4..8], invert),
        )
    }
}

impl Encodable for IntervalMonthDayNano {
    const WIDTH: usize = 16;
    #[inline(always)]
    fn put(self, out: &mut [u8], invert: u8) {
        self.months.put(&mut out[..4], invert);
        self.days.put(&mut out[4..8], invert);
        self.nanoseconds.put(&mut out[8..16], invert);
    }
    #[inline(always)]
    fn get(bytes: &[u8], invert: u8) -> Self {
        IntervalMonthDayNano::new(
            i32::get(&bytes[..4], invert),
            i32::get(&bytes[4..8], invert),
            i64::get(&bytes[8..16], invert),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc<T: Encodable>(v: T, invert: u8) -> Vec<u8> {
        let mut out = vec![0; T::WIDTH];
        v.put(&mut out, invert);
        out
    }

    #[test]
    fn order_matches_values() {
        let ints = [i64::MIN, -5, -1, 0, 1, 7, i64::MAX];
        for w in ints.windows(2) {
            assert!(enc(w[0], 0) < enc(w[1], 0));
            assert!(enc(w[0], 0xFF) > enc(w[1], 0xFF));
        }
        let floats = [
            f64::NEG_INFINITY,
            -2.5,
            -0.0,
            0.0,
            1e-300,
            3.0,
            f64::INFINITY,
            f64::NAN,
        ];
        for w in floats.windows(2) {
            assert!(enc(w[0], 0) < enc(w[1], 0), "{} {}", w[0], w[1]);
        }
        let wide = [i256::MIN, i256::from_i128(-3), i256::ZERO, i256::MAX];
        for w in wide.windows(2) {
            assert!(enc(w[0], 0) < enc(w[1], 0));
        }
    }

    #[test]
    fn round_trips() {
        for v in [i32::MIN, -1, 0, 1, i32::MAX] {
            for inv in [0, 0xFF] {
                assert_eq!(i32::get(&enc(v, inv), inv), v);
            }
        }
        for v in [-0.0f32, 0.0, -1.5, f32::MAX, f32::MIN_POSITIVE] {
            assert_eq!(f32::get(&enc(v, 0xFF), 0xFF).to_bits(), v.to_bits());
        }
        let iv = IntervalMonthDayNano::new(-1, 2, -3);
        assert_eq!(IntervalMonthDayNano::get(&enc(iv, 0), 0), iv);
        let w = i256::from_i128(-123456789);
        assert_eq!(i256::get(&enc(w, 0xFF), 0xFF), w);
    }
}
