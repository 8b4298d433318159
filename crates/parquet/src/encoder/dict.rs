//! A column chunk's dictionaries: of byte strings ([`Dictionary`]), and
//! of integers and floats ([`Numbers`], at the end).
//!
//! Entries are kept in first-seen order, already in the `PLAIN` layout of
//! the dictionary page (a 4-byte length before each), so the page body is
//! the buffer itself. A hash table finds a value's key; each of its slots
//! holds the entry's number, its length and its bytes as two words (up
//! to 16 bytes zero-padded, else the first and last eight), so a lookup
//! of a value up to 16 bytes long (most dictionary values) reads the
//! table alone, never the entries (a new entry costs one append to the
//! buffer, never an allocation of its own). A slot of
//! just the entry number cost three dependent loads per lookup (table,
//! entry position, bytes): on `events`, with 50,000 SKUs, the lookups were
//! 10.3-10.8% of the run's samples, most of them waiting on those loads
//! (`perf annotate`), and 8.9-9.2% with the words in the slot (4M rows).
//! In front of the table, 1,024 places hold the last value of up to 16
//! bytes seen at each (picked by its words): a value met again is found
//! in one load and compare, without hashing it. On `events` (300k rows,
//! cachegrind) the dictionary's instructions went from 88.2M to 54.0M
//! with 256 places; with 1,024, a column of 100 distinct values (the
//! `os_version` of `events`) finds 99% of its values there instead of 75%
//! (the leaf's encoding 31.6M -> 27.4M instructions).

use hashbrown::HashTable;

/// The dictionary: `PLAIN` entries back to back and their index.
#[derive(Default)]
pub(super) struct Dictionary {
    plain: Vec<u8>,
    /// Where entry `k`'s bytes start in `plain` (after its length), and
    /// their length.
    spans: Vec<(usize, usize)>,
    index: HashTable<Slot>,
    /// The last value of up to 16 bytes seen in each of [`RECENT`] places
    /// (picked by its words): most dictionary columns have few distinct
    /// values, found here in one load and compare, before any hash table
    /// probe. None until the first value is interned; out of the
    /// dictionary while a loop of lookups holds it.
    recent: Option<Box<[Recent; RECENT]>>,
}

/// Recent places holding nothing.
fn new_places() -> Box<[Recent; RECENT]> {
    Box::new([NO_RECENT; RECENT])
}

/// Places in [`Dictionary::recent`].
const RECENT: usize = 1 << RECENT_BITS;
const RECENT_BITS: u32 = 10;

/// A recently interned value of up to 16 bytes: its length, words and key
/// (`len == u32::MAX`: none).
#[derive(Clone, Copy)]
struct Recent {
    len: u32,
    k: u32,
    words: Words,
}

const NO_RECENT: Recent = Recent {
    len: u32::MAX,
    k: 0,
    words: Words(0, 0),
};

/// The place in [`Dictionary::recent`] of a value of `len` bytes with
/// words `w`: the top byte of a multiplicative hash.
#[inline(always)]
fn recent_place(w: Words, len: usize) -> usize {
    let x = w.0 ^ w.1.rotate_left(29) ^ (len as u64) << 56;
    (x.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - RECENT_BITS)) as usize & (RECENT - 1)
}

/// A table slot: entry `k`, its length and its [`Words`].
#[derive(Clone, Copy)]
struct Slot {
    k: u32,
    len: u32,
    words: Words,
}

/// A value's bytes as two words: up to 16 bytes, the bytes themselves,
/// zero-padded to 16 (so for values of one length, equal words mean
/// equal bytes); past 16, the first and last eight.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Words(u64, u64);

/// For `n` in `0..=16`, the mask keeping the first `n` bytes of a
/// little-endian 16-byte load.
const KEEP: [u128; 17] = {
    let mut m = [u128::MAX; 17];
    let mut n = 0;
    while n < 16 {
        m[n] = (1u128 << (8 * n)) - 1;
        n += 1;
    }
    m
};

impl Words {
    #[inline(always)]
    fn of(b: &[u8]) -> Words {
        let n = b.len();
        if n > 16 {
            return Words(word(b, 0), word(b, n - 8));
        }
        let mut x = [0u8; 16];
        for (x, b) in x.iter_mut().zip(b) {
            *x = *b;
        }
        Words::from(u128::from_le_bytes(x))
    }

    /// [`Words::of`] the bytes `s..e` of `data`: for up to 16 bytes with
    /// 16 bytes of `data` from `s`, one load and a mask, with no branch
    /// on the length.
    #[inline(always)]
    fn at(data: &[u8], s: usize, e: usize) -> Words {
        match data.get(s..s + 16) {
            Some(raw) if e - s <= 16 => {
                let mut x = [0u8; 16];
                x.copy_from_slice(raw);
                Words::from(u128::from_le_bytes(x) & KEEP[e - s])
            }
            _ => Words::of(&data[s..e]),
        }
    }

    #[inline(always)]
    fn from(x: u128) -> Words {
        Words(x as u64, (x >> 64) as u64)
    }
}

impl Slot {
    /// Whether the slot holds `v` (with `w = Words::of(v)`).
    #[inline(always)]
    fn holds(&self, v: &[u8], w: Words, plain: &[u8], spans: &[(usize, usize)]) -> bool {
        self.len as usize == v.len()
            && self.words == w
            && (v.len() <= 16 || entry(plain, spans, self.k) == v)
    }
}

/// Entry `k` of a dictionary's parts (split so that the table can be
/// borrowed on its own).
#[inline(always)]
fn entry<'a>(plain: &'a [u8], spans: &[(usize, usize)], k: u32) -> &'a [u8] {
    let (at, len) = spans[k as usize];
    &plain[at..at + len]
}

impl Dictionary {
    /// Entries so far.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether there is no entry.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Entry `k`, if there is one.
    pub fn get(&self, k: usize) -> Option<&[u8]> {
        (k < self.len()).then(|| entry(&self.plain, &self.spans, k as u32))
    }

    /// The entries in the `PLAIN` encoding: the dictionary page's body.
    pub fn plain(&self) -> &[u8] {
        &self.plain
    }

    /// The key of `v`, if it is an entry.
    pub fn find(&self, v: &[u8]) -> Option<u32> {
        let (plain, spans) = (&self.plain, &self.spans);
        let w = Words::of(v);
        self.index
            .find(hash(v), |s| s.holds(v, w, plain, spans))
            .map(|s| s.k)
    }

    /// The key of `v`, adding it as the next entry when it is new.
    #[inline]
    pub fn intern(&mut self, v: &[u8]) -> u32 {
        let mut places = self.recent.take().unwrap_or_else(new_places);
        let k = self.intern_at(&mut places, v, 0, v.len());
        self.recent = Some(places);
        k
    }

    /// The keys of the byte strings between `offsets` in `data`,
    /// appended to `keys` (new values added as entries): one pass over
    /// the offsets, into room made once.
    #[inline]
    pub fn intern_run<O: arrow_array::OffsetSizeTrait>(
        &mut self,
        offsets: &[O],
        data: &[u8],
        keys: &mut Vec<u32>,
    ) {
        let at = keys.len();
        keys.resize(at + offsets.len().saturating_sub(1), 0);
        let mut places = self.recent.take().unwrap_or_else(new_places);
        for (k, o) in keys[at..].iter_mut().zip(offsets.windows(2)) {
            *k = self.intern_at(&mut places, data, o[0].as_usize(), o[1].as_usize());
        }
        self.recent = Some(places);
    }

    /// [`Self::intern`] of bytes `s..e` of `data`, with the recent places
    /// out of the dictionary. Inlined into the caller's loop: a value
    /// found among them costs one load and mask for its words, one load
    /// and a compare, with no call and no bounds check.
    #[inline(always)]
    fn intern_at(&mut self, places: &mut [Recent; RECENT], data: &[u8], s: usize, e: usize) -> u32 {
        let w = Words::at(data, s, e);
        let n = e - s;
        if n > 16 {
            return self.intern_indexed(&data[s..e], w);
        }
        // Up to 16 bytes, equal lengths and words mean equal values.
        let at = recent_place(w, n);
        let r = &places[at];
        if r.len as usize == n && r.words == w {
            return r.k;
        }
        let k = self.intern_indexed(&data[s..e], w);
        places[at] = Recent {
            len: n as u32,
            k,
            words: w,
        };
        k
    }

    /// [`Self::intern`] through the hash table (`w`: `v`'s words).
    #[inline(never)]
    fn intern_indexed(&mut self, v: &[u8], w: Words) -> u32 {
        let h = hash_of(v, w);
        let Dictionary {
            plain,
            spans,
            index,
            ..
        } = self;
        if let Some(s) = index.find(h, |s| s.holds(v, w, plain, spans)) {
            return s.k;
        }
        let k = spans.len() as u32;
        plain.extend_from_slice(&(v.len() as u32).to_le_bytes());
        spans.push((plain.len(), v.len()));
        plain.extend_from_slice(v);
        let slot = Slot {
            k,
            len: v.len() as u32,
            words: w,
        };
        index.insert_unique(h, slot, |s| hash(entry(plain, spans, s.k)));
        k
    }

    /// Drops the entries from `len` on (those a page added before its
    /// chunk fell back to `PLAIN`).
    pub fn truncate(&mut self, len: usize) {
        for k in len..self.len() {
            let h = hash(entry(&self.plain, &self.spans, k as u32));
            if let Ok(e) = self.index.find_entry(h, |s| s.k == k as u32) {
                e.remove();
            }
        }
        if let Some(&(at, _)) = self.spans.get(len) {
            self.plain.truncate(at - 4);
        }
        self.spans.truncate(len);
        for r in self.recent.iter_mut().flat_map(|p| p.iter_mut()) {
            if r.k as usize >= len {
                *r = NO_RECENT;
            }
        }
    }

    /// Empties the dictionary, keeping its memory.
    pub fn clear(&mut self) {
        self.plain.clear();
        self.spans.clear();
        self.index.clear();
        if let Some(p) = &mut self.recent {
            p.fill(NO_RECENT);
        }
    }
}

/// A column chunk's dictionary of fixed-width values (integers and floats
/// of 4 or 8 bytes), equal when their bits are: entries in first-seen
/// order, back to back as the `PLAIN` dictionary page holds them.
///
/// A value is looked up as its bits in a `u64` (4-byte values
/// sign-extended). When the chunk's first page spans fewer than
/// [`DENSE`] values (dates, quantities, prices in cents, small keys),
/// the values from its least on have their keys in an array, found by a
/// subtraction: the lookups of `lineitem`'s dictionaries were 7.9% of
/// a `tpch` run's samples with the hash table alone. Other values go to
/// the hash table, in front of which [`NUMBER_PLACES`] places hold the
/// last value seen at each (picked by its hash).
#[derive(Default)]
pub(super) struct Numbers {
    plain: Vec<u8>,
    /// Bytes per entry (0 until the first value).
    width: usize,
    /// `(value, key)` of the values outside the dense window.
    index: HashTable<(u64, u32)>,
    /// `(value, key)` last seen at each place (`key == NO_KEY`: none).
    recent: Vec<(u64, u32)>,
    /// The keys of values `base..base + dense.len()` (`NO_KEY`: none
    /// yet); empty when the first page spans too many values.
    dense: Vec<u32>,
    base: u64,
}

/// Places in [`Numbers::recent`].
const NUMBER_PLACES: usize = 1 << 10;
/// The most values [`Numbers::dense`] covers (256 KiB of keys).
const DENSE: u64 = 1 << 16;
/// No key.
const NO_KEY: u32 = u32::MAX;

/// [`Numbers`]' hash of a value's bits: a 128-bit multiply folded to 64
/// bits, so that both the low bits (the table's bucket) and the high
/// ones (its tag, and [`Numbers::recent`]'s place) depend on every input
/// bit.
#[inline(always)]
fn number_hash(v: u64) -> u64 {
    let p = u128::from(v ^ 0x243f_6a88_85a3_08d3) * 0x9e37_79b9_7f4a_7c15;
    (p as u64) ^ (p >> 64) as u64
}

/// The values of a page of `width`-byte values, as [`Numbers`] keys them.
fn numbers_of(values: &[u8], width: usize) -> impl Iterator<Item = u64> + '_ {
    values.chunks_exact(width).map(move |v| {
        if width == 4 {
            i64::from(i32::from_le_bytes([v[0], v[1], v[2], v[3]])) as u64
        } else {
            let mut b = [0u8; 8];
            b.copy_from_slice(v);
            u64::from_le_bytes(b)
        }
    })
}

impl Numbers {
    /// Entries so far.
    pub fn len(&self) -> usize {
        self.plain.len().checked_div(self.width).unwrap_or(0)
    }

    /// The entries in the `PLAIN` encoding: the dictionary page's body.
    pub fn plain(&self) -> &[u8] {
        &self.plain
    }

    /// Appends to `keys` the key of each `width`-byte value of `values`
    /// (little-endian, back to back), adding the new ones as entries.
    /// `width` is 4 or 8 and the same for every call until [`Self::clear`].
    pub fn intern_page(&mut self, values: &[u8], width: usize, keys: &mut Vec<u32>) {
        if self.width == 0 {
            self.width = width;
            self.open_window(values);
        }
        if self.recent.is_empty() {
            self.recent = vec![(0, NO_KEY); NUMBER_PLACES];
        }
        keys.reserve(values.len() / width);
        if width == 4 {
            for v in numbers_of(values, 4) {
                keys.push(self.intern(v));
            }
        } else {
            for v in numbers_of(values, 8) {
                keys.push(self.intern(v));
            }
        }
    }

    /// Sets the dense window from the chunk's first page: from its least
    /// value, twice its span (rounded up to a power of two), when that is
    /// at most [`DENSE`].
    fn open_window(&mut self, values: &[u8]) {
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        for v in numbers_of(values, self.width) {
            lo = lo.min(v as i64);
            hi = hi.max(v as i64);
        }
        self.dense.clear();
        let span = (hi as i128 - lo as i128 + 1).max(1) as u128;
        if span <= u128::from(DENSE) {
            let len = (span as u64 * 2).next_power_of_two().min(DENSE) as usize;
            self.dense.resize(len, NO_KEY);
            self.base = lo as u64;
        }
    }

    /// The key of `v`, adding it as the next entry when it is new.
    #[inline(always)]
    fn intern(&mut self, v: u64) -> u32 {
        if let Some(slot) = self.dense.get_mut(v.wrapping_sub(self.base) as usize) {
            if *slot == NO_KEY {
                let k = (self.plain.len() / self.width) as u32;
                self.plain.extend_from_slice(&v.to_le_bytes()[..self.width]);
                *slot = k;
            }
            return *slot;
        }
        let h = number_hash(v);
        let place = (h >> (64 - 10)) as usize & (NUMBER_PLACES - 1);
        let (seen, k) = self.recent[place];
        if seen == v && k != NO_KEY {
            return k;
        }
        let k = match self.index.find(h, |e| e.0 == v) {
            Some(&(_, k)) => k,
            None => {
                let k = self.len() as u32;
                self.plain.extend_from_slice(&v.to_le_bytes()[..self.width]);
                self.index.insert_unique(h, (v, k), |e| number_hash(e.0));
                k
            }
        };
        self.recent[place] = (v, k);
        k
    }

    /// Drops the entries from `len` on (those a page added before its
    /// chunk fell back).
    pub fn truncate(&mut self, len: usize) {
        if len >= self.len() {
            return;
        }
        let dropped: Vec<u64> = numbers_of(&self.plain[len * self.width..], self.width).collect();
        for v in dropped {
            match self.dense.get_mut(v.wrapping_sub(self.base) as usize) {
                Some(slot) => *slot = NO_KEY,
                None => {
                    if let Ok(e) = self.index.find_entry(number_hash(v), |e| e.0 == v) {
                        e.remove();
                    }
                }
            }
        }
        self.plain.truncate(len * self.width);
        for r in &mut self.recent {
            if r.1 != NO_KEY && r.1 as usize >= len {
                *r = (0, NO_KEY);
            }
        }
    }

    /// Empties the dictionary, keeping its memory.
    pub fn clear(&mut self) {
        self.plain.clear();
        self.width = 0;
        self.index.clear();
        self.recent.fill((0, NO_KEY));
        self.dense.clear();
    }
}

/// Eight bytes of `b` from `at` (the caller keeps `at + 8 <= b.len()`).
#[inline(always)]
fn word(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// The dictionary's hash: the length, then eight bytes at a time (up to
/// 16 bytes, the two [`Words`]; past that, eight at a time with the last
/// eight overlapping the word before them), a rotate, xor and multiply
/// per word, and murmur3's finaliser (a multiply carries input bits only
/// upwards, and the table picks buckets by the low ones). The keys are
/// the column's own values, and a page's lookups dominate a
/// dictionary-encoded string column's cost.
#[inline]
pub(super) fn hash(b: &[u8]) -> u64 {
    hash_of(b, Words::of(b))
}

/// [`hash`] of `b`, whose words are `w`.
#[inline]
fn hash_of(b: &[u8], w: Words) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mix = |h: u64, w: u64| (h.rotate_left(5) ^ w).wrapping_mul(K);
    let n = b.len();
    let mut h = (n as u64).wrapping_mul(K);
    if n > 16 {
        let mut at = 0;
        while at + 8 < n {
            h = mix(h, word(b, at));
            at += 8;
        }
        h = mix(h, word(b, n - 8));
    } else {
        h = mix(mix(h, w.0), w.1);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_keep_their_keys_and_plain_layout() {
        let mut d = Dictionary::default();
        let words: Vec<Vec<u8>> = (0..5000)
            .map(|i| format!("w{}", i % 1700).into_bytes())
            .collect();
        let keys: Vec<u32> = words.iter().map(|w| d.intern(w)).collect();
        assert_eq!(d.len(), 1700);
        for (w, k) in words.iter().zip(&keys) {
            assert_eq!(d.get(*k as usize), Some(w.as_slice()));
            assert_eq!(d.find(w), Some(*k));
        }
        assert_eq!(d.find(b"absent"), None);
        // The PLAIN page body: a length, then the bytes, per entry.
        assert_eq!(&d.plain()[..6], &[2, 0, 0, 0, b'w', b'0']);
        let total: usize = (0..1700).map(|i| 4 + format!("w{i}").len()).sum();
        assert_eq!(d.plain().len(), total);

        // Dropping the newest entries forgets them, and only them.
        d.truncate(1000);
        assert_eq!(d.len(), 1000);
        assert_eq!(d.find(b"w999"), Some(999));
        assert_eq!(d.find(b"w1000"), None);
        assert_eq!(d.intern(b"w1500"), 1000);
        let total: usize = (0..1000).map(|i| 4 + format!("w{i}").len()).sum();
        assert_eq!(d.plain().len(), total + 4 + 5);

        // The empty string is an entry like any other.
        assert_eq!(d.intern(b""), 1001);
        assert_eq!(d.get(1001), Some(&b""[..]));
        d.clear();
        assert!(d.is_empty() && d.plain().is_empty() && d.find(b"w1").is_none());
    }

    #[test]
    fn equality_by_words_matches_slices() {
        let values: Vec<&[u8]> = vec![
            b"",
            b"a",
            b"b",
            b"ab",
            b"ba",
            b"abc",
            b"abd",
            b"xbc",
            b"abcd",
            b"abce",
            b"abcde",
            b"abcdf",
            b"bbcde",
            b"abcdefgh",
            b"abcdefgi",
            b"bbcdefgh",
            b"abcdefghijklmnop",
            b"abcdefghijklmnoq",
            b"abcdefgxijklmnop",
            b"abcdefghijklmnopq",
            b"abcdefghijklmnopr",
            // Past 16 bytes, equal first and last words, a different
            // middle: only the entry's bytes tell them apart.
            b"abcdefgh-one-ijklmnop",
            b"abcdefgh-two-ijklmnop",
        ];
        let mut d = Dictionary::default();
        for (k, v) in values.iter().enumerate() {
            assert_eq!(d.intern(v), k as u32, "{v:?}");
        }
        for a in &values {
            let slot = d
                .index
                .find(hash(a), |s| s.k == d.find(a).unwrap())
                .unwrap();
            for b in &values {
                let holds = slot.holds(b, Words::of(b), &d.plain, &d.spans);
                assert_eq!(holds, a == b, "{a:?} {b:?}");
                if a == b {
                    assert_eq!(hash(a), hash(b));
                }
            }
        }
        let hashes: std::collections::HashSet<u64> = values.iter().map(|v| hash(v)).collect();
        assert_eq!(hashes.len(), values.len());
    }

    /// Keys against a map in first-seen order, for short values (through
    /// the recent places, which collide often here) and long ones, with
    /// the newest entries dropped now and then: fixed seed.
    #[test]
    fn keys_match_first_seen_order_through_truncations() {
        let mut d = Dictionary::default();
        let mut order: Vec<Vec<u8>> = Vec::new();
        let mut keys: std::collections::HashMap<Vec<u8>, usize> = Default::default();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for step in 0..200_000 {
            let r = next();
            let len = (r % 21) as usize;
            // Two symbols: many repeats and many place collisions.
            let v: Vec<u8> = (0..len)
                .map(|i| b'a' + ((r >> (8 + i % 40)) & 1) as u8)
                .collect();
            let want = *keys.entry(v.clone()).or_insert_with(|| {
                order.push(v.clone());
                order.len() - 1
            });
            assert_eq!(d.intern(&v), want as u32, "step {step}: {v:?}");
            if step % 9_973 == 9_972 {
                let keep = order.len() / 2;
                for gone in order.drain(keep..) {
                    keys.remove(&gone);
                }
                d.truncate(keep);
            }
            if step == 150_000 {
                order.clear();
                keys.clear();
                d.clear();
            }
        }
    }

    /// The words of bytes read in place (one 16-byte load and a mask,
    /// where the buffer allows it) equal those of the slice, for every
    /// length and position, up to the buffer's end: fixed seed.
    #[test]
    fn words_in_place_match_words_of_slices() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let data: Vec<u8> = (0..96)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        for s in 0..data.len() {
            for e in s..=data.len().min(s + 24) {
                let w = Words::at(&data, s, e);
                assert!(w == Words::of(&data[s..e]), "{s}..{e}");
                let h = hash_of(&data[s..e], w);
                assert_eq!(h, hash(&data[s..e]), "{s}..{e}");
            }
        }
        // A value padded with zeros is not the shorter value: the length
        // tells them apart.
        assert!(Words::of(b"ab") == Words::of(b"ab\0"));
        assert_ne!(hash(b"ab"), hash(b"ab\0"));
        let mut d = Dictionary::default();
        let mut keys = Vec::new();
        d.intern_run(&[0i32, 2, 5, 7, 10], b"ababaabab\0", &mut keys);
        assert_eq!(keys, [0, 1, 0, 2]);
        assert_eq!(d.get(1), Some(&b"aba"[..]));
        assert_eq!(d.get(2), Some(&b"ab\0"[..]));
    }

    /// Keys that differ only past their first byte spread over the low
    /// bits the table picks buckets by.
    #[test]
    fn numbers_keep_first_seen_keys_through_truncation() {
        let mut d = Numbers::default();
        let values: Vec<u8> = (0..5000i64)
            .flat_map(|i| ((i * 7919) % 1300 - 650).to_le_bytes())
            .collect();
        let mut keys = Vec::new();
        d.intern_page(&values, 8, &mut keys);
        assert_eq!(d.len(), 1300);
        // Each key names its value's entry, in the page's layout.
        for (v, &k) in values.chunks_exact(8).zip(&keys) {
            assert_eq!(&d.plain()[k as usize * 8..k as usize * 8 + 8], v);
        }
        // Keys are given in first-seen order.
        let mut next = 0;
        for &k in &keys {
            assert!(k <= next);
            next = next.max(k + 1);
        }
        // After a truncation the dropped values come back as new entries.
        d.truncate(1000);
        assert_eq!(d.len(), 1000);
        let mut again = Vec::new();
        d.intern_page(&values, 8, &mut again);
        assert_eq!(d.len(), 1300);
        for (v, &k) in values.chunks_exact(8).zip(&again) {
            assert_eq!(&d.plain()[k as usize * 8..k as usize * 8 + 8], v);
        }
        // A first page of few values opens a dense window; values past it
        // (and below it) are hashed; a truncation drops from both.
        d.clear();
        let page =
            |vals: &[i32]| -> Vec<u8> { vals.iter().flat_map(|v| v.to_le_bytes()).collect() };
        let mut keys = Vec::new();
        d.intern_page(&page(&[-3, 5, -3, 0]), 4, &mut keys);
        assert!(!d.dense.is_empty());
        d.intern_page(
            &page(&[i32::MIN, 5, 1 << 20, -4, 6, i32::MAX]),
            4,
            &mut keys,
        );
        assert_eq!(keys, [0, 1, 0, 2, 3, 1, 4, 5, 6, 7]);
        d.truncate(4);
        let mut again = Vec::new();
        d.intern_page(&page(&[6, 1 << 20, i32::MIN, -3]), 4, &mut again);
        assert_eq!(again, [4, 5, 3, 0]);
        assert_eq!(d.plain(), page(&[-3, 5, 0, i32::MIN, 6, 1 << 20]));
        // Four-byte values; -0.0 and 0.0 differ by their bits.
        d.clear();
        let floats: Vec<u8> = [0.0f32, -0.0, 0.0, f32::NAN, 1.5]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        let mut keys = Vec::new();
        d.intern_page(&floats, 4, &mut keys);
        assert_eq!(keys, [0, 1, 0, 2, 3]);
        assert_eq!(d.plain().len(), 16);
    }

    #[test]
    fn hash_spreads_low_bits() {
        let low: std::collections::HashSet<u64> = (0..1000)
            .map(|i| hash(format!("v{i}").as_bytes()) & 0xFF)
            .collect();
        assert!(low.len() > 200, "{} distinct low bytes", low.len());
        // Zero bytes at the end still count (the length is hashed).
        assert_ne!(hash(b"a"), hash(b"a\0"));
    }
}
