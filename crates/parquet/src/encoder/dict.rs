//! A column chunk's dictionary of byte strings.
//!
//! Entries are kept in first-seen order, already in the `PLAIN` layout of
//! the dictionary page (a 4-byte length before each), so the page body is
//! the buffer itself. A hash table of entry numbers finds a value's key:
//! it stores no copy of the bytes, so a new entry costs one append to the
//! buffer, never an allocation of its own.

use hashbrown::HashTable;

/// The dictionary: `PLAIN` entries back to back and their index.
#[derive(Default)]
pub(super) struct Dictionary {
    plain: Vec<u8>,
    /// Where entry `k`'s bytes start in `plain` (after its length), and
    /// their length.
    spans: Vec<(usize, usize)>,
    index: HashTable<u32>,
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
        self.index
            .find(hash(v), |&k| same(entry(plain, spans, k), v))
            .copied()
    }

    /// The key of `v`, adding it as the next entry when it is new.
    #[inline]
    pub fn intern(&mut self, v: &[u8]) -> u32 {
        let h = hash(v);
        let Dictionary {
            plain,
            spans,
            index,
        } = self;
        if let Some(&k) = index.find(h, |&k| same(entry(plain, spans, k), v)) {
            return k;
        }
        let k = spans.len() as u32;
        plain.extend_from_slice(&(v.len() as u32).to_le_bytes());
        spans.push((plain.len(), v.len()));
        plain.extend_from_slice(v);
        index.insert_unique(h, k, |&j| hash(entry(plain, spans, j)));
        k
    }

    /// Drops the entries from `len` on (those a page added before its
    /// chunk fell back to `PLAIN`).
    pub fn truncate(&mut self, len: usize) {
        for k in len..self.len() {
            let h = hash(entry(&self.plain, &self.spans, k as u32));
            if let Ok(e) = self.index.find_entry(h, |&j| j == k as u32) {
                e.remove();
            }
        }
        if let Some(&(at, _)) = self.spans.get(len) {
            self.plain.truncate(at - 4);
        }
        self.spans.truncate(len);
    }

    /// Empties the dictionary, keeping its memory.
    pub fn clear(&mut self) {
        self.plain.clear();
        self.spans.clear();
        self.index.clear();
    }
}

/// Eight bytes of `b` from `at` (the caller keeps `at + 8 <= b.len()`).
#[inline(always)]
fn word(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Four bytes of `b` from `at` (the caller keeps `at + 4 <= b.len()`).
#[inline(always)]
fn half(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u64::from(u32::from_le_bytes(w))
}

/// Up to 8 bytes as one word, by fixed-size loads that may overlap (no
/// copy of a variable length): for values of one length, equal words mean
/// equal bytes (the hash mixes the length in first).
#[inline(always)]
fn short(b: &[u8]) -> u64 {
    let n = b.len();
    if n >= 4 {
        half(b, 0) << 32 | half(b, n - 4)
    } else if n > 0 {
        u64::from(b[0]) << 16 | u64::from(b[n / 2]) << 8 | u64::from(b[n - 1])
    } else {
        0
    }
}

/// The dictionary's hash: the length, then eight bytes at a time (the
/// last eight overlapping the word before them), a rotate, xor and
/// multiply per word, and murmur3's finaliser (a multiply carries input
/// bits only upwards, and the table picks buckets by the low ones). The
/// keys are the column's own values, and a page's lookups dominate a
/// dictionary-encoded string column's cost.
#[inline]
pub(super) fn hash(b: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mix = |h: u64, w: u64| (h.rotate_left(5) ^ w).wrapping_mul(K);
    let n = b.len();
    let mut h = (n as u64).wrapping_mul(K);
    if n > 8 {
        let mut at = 0;
        while at + 8 < n {
            h = mix(h, word(b, at));
            at += 8;
        }
        h = mix(h, word(b, n - 8));
    } else if n == 8 {
        h = mix(h, word(b, 0));
    } else {
        h = mix(h, short(b));
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// Byte equality with fixed-size loads for values up to 16 bytes (most
/// dictionary entries), instead of a call to `memcmp`.
#[inline(always)]
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n > 16 {
        return a == b;
    }
    if n >= 8 {
        return word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8);
    }
    short(a) == short(b)
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
        ];
        for a in &values {
            for b in &values {
                assert_eq!(same(a, b), a == b, "{a:?} {b:?}");
                if a == b {
                    assert_eq!(hash(a), hash(b));
                }
            }
        }
        let hashes: std::collections::HashSet<u64> = values.iter().map(|v| hash(v)).collect();
        assert_eq!(hashes.len(), values.len());
    }

    /// Keys that differ only past their first byte spread over the low
    /// bits the table picks buckets by.
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
