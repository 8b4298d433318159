//! The built-in vocabularies: given names, family names and common words.
//!
//! strata ships its own lists (`crates/gen/data/*.txt`, one ASCII name per
//! line). A full name is `"{first} {last}"` with both parts drawn
//! uniformly, so the number of distinct full names is
//! `first_names().len() * last_names().len()` (see the crate docs for the
//! figures).

use std::sync::LazyLock;

/// Bytes in one slot of a [`NameTable`]: names are shorter.
pub const SLOT: usize = 16;

/// A vocabulary stored as fixed-size slots, so a pick is one index and one
/// short copy.
#[derive(Debug)]
pub struct NameTable {
    slots: Vec<[u8; SLOT]>,
    lens: Vec<u8>,
}

impl NameTable {
    /// Parses one name per line.
    fn parse(text: &'static str) -> NameTable {
        let mut slots = Vec::new();
        let mut lens = Vec::new();
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let mut slot = [0u8; SLOT];
            let b = line.as_bytes();
            // The lists are part of the crate and checked by a unit test;
            // an over-long entry is cut, on a character boundary, so every
            // slot holds valid UTF-8 (which string generators rely on).
            let mut n = b.len().min(SLOT - 1);
            while !line.is_char_boundary(n) {
                n -= 1;
            }
            slot[..n].copy_from_slice(&b[..n]);
            slots.push(slot);
            lens.push(n as u8);
        }
        NameTable { slots, lens }
    }

    /// Number of names.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the table is empty (never, for the shipped lists).
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Name `i`.
    #[inline(always)]
    pub fn get(&self, i: usize) -> &[u8] {
        &self.slots[i][..self.lens[i] as usize]
    }

    /// Name `i` as a whole slot and its length (bytes past the length are 0).
    #[inline(always)]
    pub fn slot(&self, i: usize) -> (&[u8; SLOT], usize) {
        (&self.slots[i], self.lens[i] as usize)
    }
}

static FIRST: LazyLock<NameTable> =
    LazyLock::new(|| NameTable::parse(include_str!("../data/first_names.txt")));
static LAST: LazyLock<NameTable> =
    LazyLock::new(|| NameTable::parse(include_str!("../data/last_names.txt")));

static WORDS: LazyLock<NameTable> =
    LazyLock::new(|| NameTable::parse(include_str!("../data/words.txt")));

/// Given names.
pub fn first_names() -> &'static NameTable {
    &FIRST
}

/// Family names.
pub fn last_names() -> &'static NameTable {
    &LAST
}

/// Common English words.
pub fn words() -> &'static NameTable {
    &WORDS
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn check(text: &str, min: usize) {
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.len() >= min, "{} names", lines.len());
        let mut seen = HashSet::new();
        for l in &lines {
            assert!((2..SLOT).contains(&l.len()), "bad length: {l:?}");
            assert!(
                l.bytes().all(|b| b.is_ascii_alphabetic()),
                "not ASCII letters: {l:?}"
            );
            assert!(seen.insert(l.to_ascii_lowercase()), "duplicate: {l}");
        }
    }

    #[test]
    fn shipped_lists_are_clean() {
        check(include_str!("../data/first_names.txt"), 3000);
        check(include_str!("../data/last_names.txt"), 500);
        check(include_str!("../data/words.txt"), 400);
        assert_eq!(
            first_names().len(),
            include_str!("../data/first_names.txt").lines().count()
        );
    }
}
