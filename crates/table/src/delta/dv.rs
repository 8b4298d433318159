//! Deletion vectors: a data file's deleted rows (their indexes in the
//! file, from 0) kept beside it, so that a delete rewrites no data file.
//!
//! # Format
//!
//! A vector is a `RoaringBitmapArray` (all numbers little-endian): the
//! magic number 1681511377 (`u32`), then the 64-bit Roaring bitmap in
//! its portable form: the number of buckets (`u64`), then per bucket in
//! ascending order its key (`u32`, the rows' high 32 bits, below 2³¹)
//! and a 32-bit Roaring bitmap of the rows' low 32 bits. strata writes
//! those with the cookie 12346 (no run containers): the cookie and the
//! container count (`u32` each), per container its key (the values'
//! high 16 bits) and cardinality less one (`u16` each), per container
//! the offset of its data from the bitmap's start (`u32`), then each
//! container: up to 4096 values as sorted `u16`s, more as a bitmap of
//! 1024 `u64` words. It reads run containers (cookie 12347) too.
//!
//! A vector is stored inline in its `add` (storage type `i`: the bytes
//! in Z85, padded to four bytes) or in a file (`u`): at the table's root
//! (under a prefix directory when the descriptor has one),
//! `deletion_vector_<uuid>.bin`, holding a version byte (1) then per
//! vector its size (`u32`, big-endian), its bytes and their CRC-32
//! (`u32`, big-endian); the descriptor's offset points at the size, and
//! its path is the prefix and the UUID's 16 bytes in Z85. [`write()`]
//! writes one file for all of a commit's vectors (created only if
//! absent, before the commit names it); [`read()`] reads any of the three
//! storage types (`p`: a file at an absolute path).

use std::collections::BTreeSet;

use super::log::DeletionVector;
use crate::{Error, dir::TableDir, ids::uuid};

/// The first four bytes of a `RoaringBitmapArray`.
pub const MAGIC: u32 = 1_681_511_377;

/// The first byte of a deletion vector file.
const FILE_VERSION: u8 = 1;

/// The 32-bit bitmap cookie without run containers (an offset per
/// container follows the header).
const COOKIE_NO_RUNS: u32 = 12_346;

/// The 32-bit bitmap cookie with run containers (its high 16 bits hold
/// the container count less one).
const COOKIE_RUNS: u32 = 12_347;

/// Containers of more values than this are bitmaps.
const ARRAY_MAX: usize = 4096;

/// The Z85 alphabet.
const Z85: &[u8; 85] =
    b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

/// `bytes` in Z85, zero-padded to a multiple of four bytes.
pub fn z85_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(4) * 5);
    for chunk in bytes.chunks(4) {
        let mut word = [0u8; 4];
        word[..chunk.len()].copy_from_slice(chunk);
        let mut v = u32::from_be_bytes(word);
        let mut five = [0u8; 5];
        for c in five.iter_mut().rev() {
            *c = Z85[(v % 85) as usize];
            v /= 85;
        }
        out.extend(five.iter().map(|&c| char::from(c)));
    }
    out
}

/// The bytes of Z85 `text` (its length a multiple of five); `None` for
/// other text.
pub fn z85_decode(text: &str) -> Option<Vec<u8>> {
    let text = text.as_bytes();
    if !text.len().is_multiple_of(5) {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() / 5 * 4);
    for chunk in text.chunks(5) {
        let mut v: u64 = 0;
        for &c in chunk {
            let digit = Z85.iter().position(|&z| z == c)?;
            v = v * 85 + digit as u64;
        }
        out.extend_from_slice(&u32::try_from(v).ok()?.to_be_bytes());
    }
    Some(out)
}

/// The CRC-32 (IEEE, as zlib's and Java's) of `bytes`.
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0xEDB8_8320 & (crc & 1).wrapping_neg());
        }
    }
    !crc
}

/// `rows` (sorted, distinct, below 2⁶³) as a `RoaringBitmapArray`.
pub fn serialize(rows: &[u64]) -> Vec<u8> {
    let mut out = MAGIC.to_le_bytes().to_vec();
    let buckets = group(rows, |r| (r >> 32) as u32, |r| r as u32);
    out.extend_from_slice(&(buckets.len() as u64).to_le_bytes());
    for (key, lows) in buckets {
        out.extend_from_slice(&key.to_le_bytes());
        serialize32(&lows, &mut out);
    }
    out
}

/// Groups sorted `values` by `high`, each group's `low`s in order.
fn group<T: Copy, K: PartialEq, L>(
    values: &[T],
    high: impl Fn(T) -> K,
    low: impl Fn(T) -> L,
) -> Vec<(K, Vec<L>)> {
    let mut out: Vec<(K, Vec<L>)> = Vec::new();
    for &v in values {
        match out.last_mut() {
            Some((k, lows)) if *k == high(v) => lows.push(low(v)),
            _ => out.push((high(v), vec![low(v)])),
        }
    }
    out
}

/// Appends sorted distinct `values` as a 32-bit Roaring bitmap (cookie
/// without runs, offsets, array or bitmap containers).
fn serialize32(values: &[u32], out: &mut Vec<u8>) {
    let start = out.len();
    let containers = group(values, |v| (v >> 16) as u16, |v| v as u16);
    out.extend_from_slice(&COOKIE_NO_RUNS.to_le_bytes());
    out.extend_from_slice(&(containers.len() as u32).to_le_bytes());
    for (key, lows) in &containers {
        out.extend_from_slice(&key.to_le_bytes());
        out.extend_from_slice(&((lows.len() - 1) as u16).to_le_bytes());
    }
    let mut offset = out.len() - start + 4 * containers.len();
    for (_, lows) in &containers {
        out.extend_from_slice(&(offset as u32).to_le_bytes());
        offset += if lows.len() > ARRAY_MAX {
            8192
        } else {
            2 * lows.len()
        };
    }
    for (_, lows) in &containers {
        if lows.len() > ARRAY_MAX {
            let mut words = [0u64; 1024];
            for &l in lows {
                words[usize::from(l) / 64] |= 1 << (l % 64);
            }
            for w in words {
                out.extend_from_slice(&w.to_le_bytes());
            }
        } else {
            for l in lows {
                out.extend_from_slice(&l.to_le_bytes());
            }
        }
    }
}

/// A reader of little-endian numbers that fails past its end.
struct Bytes<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| format!("ends early, at byte {}", self.bytes.len()))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u16(&mut self) -> Result<u16, String> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, String> {
        let mut w = [0u8; 8];
        w.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(w))
    }
}

/// The rows of a `RoaringBitmapArray`, sorted; an error naming what is
/// wrong for bytes that are not one, or a row at or past `limit` (the
/// file's rows).
pub fn deserialize(bytes: &[u8], limit: u64) -> Result<Vec<u64>, String> {
    let mut r = Bytes { bytes, at: 0 };
    let magic = r.u32()?;
    if magic != MAGIC {
        return Err(format!("magic number {magic}, not {MAGIC}"));
    }
    let buckets = r.u64()?;
    let mut rows = Vec::new();
    let mut last_key = None;
    for _ in 0..buckets {
        let key = r.u32()?;
        if last_key.is_some_and(|k| k >= key) || key >= 1 << 31 {
            return Err(format!("bucket key {key} out of order or too large"));
        }
        last_key = Some(key);
        for low in deserialize32(&mut r)? {
            let row = u64::from(key) << 32 | u64::from(low);
            if row >= limit {
                return Err(format!("row {row} is past the file's {limit} rows"));
            }
            rows.push(row);
        }
    }
    if r.at != bytes.len() {
        return Err(format!("{} bytes after the bitmap", bytes.len() - r.at));
    }
    Ok(rows)
}

/// The values of the 32-bit Roaring bitmap at `r`.
fn deserialize32(r: &mut Bytes<'_>) -> Result<Vec<u32>, String> {
    let cookie = r.u32()?;
    let (count, runs) = if cookie & 0xFFFF == COOKIE_RUNS {
        let count = (cookie >> 16) as usize + 1;
        (count, r.take(count.div_ceil(8))?.to_vec())
    } else if cookie == COOKIE_NO_RUNS {
        (r.u32()? as usize, Vec::new())
    } else {
        return Err(format!("unknown Roaring cookie {cookie}"));
    };
    let mut headers = Vec::new();
    for _ in 0..count {
        let key = r.u16()?;
        let card = usize::from(r.u16()?) + 1;
        headers.push((key, card));
    }
    if runs.is_empty() || count >= 4 {
        r.take(4 * count)?;
    }
    let mut values = Vec::new();
    let mut last: Option<u32> = None;
    for (i, (key, card)) in headers.into_iter().enumerate() {
        let high = u32::from(key) << 16;
        let mut lows = Vec::new();
        if runs.get(i / 8).is_some_and(|b| b & (1 << (i % 8)) != 0) {
            for _ in 0..r.u16()? {
                let (start, len) = (u32::from(r.u16()?), u32::from(r.u16()?));
                if start + len > 0xFFFF {
                    return Err(format!("a run past its container: {start} + {len}"));
                }
                lows.extend((start..=start + len).map(|v| v as u16));
            }
        } else if card > ARRAY_MAX {
            let words = r.take(8192)?;
            for (w, chunk) in words.chunks(8).enumerate() {
                let mut word = [0u8; 8];
                word.copy_from_slice(chunk);
                let mut bits = u64::from_le_bytes(word);
                // One step per set bit, lowest first.
                while bits != 0 {
                    lows.push((w * 64 + bits.trailing_zeros() as usize) as u16);
                    bits &= bits - 1;
                }
            }
        } else {
            for _ in 0..card {
                lows.push(r.u16()?);
            }
        }
        for l in lows {
            let v = high | u32::from(l);
            if last.is_some_and(|p| p >= v) {
                return Err(format!("values out of order at {v}"));
            }
            last = Some(v);
            values.push(v);
        }
    }
    Ok(values)
}

/// The path, relative to the table, of the file of a `u` vector: its
/// prefix as a directory, then `deletion_vector_<uuid>.bin`; `None` for
/// another storage type or a malformed path.
pub fn file_rel(dv: &DeletionVector) -> Option<String> {
    if dv.storage_type != "u" {
        return None;
    }
    let split = dv.path_or_inline_dv.len().checked_sub(20)?;
    let prefix = dv.path_or_inline_dv.get(..split)?;
    let id = z85_decode(dv.path_or_inline_dv.get(split..)?)?;
    let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
    let name = format!(
        "deletion_vector_{}-{}-{}-{}-{}.bin",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    );
    Some(if prefix.is_empty() {
        name
    } else {
        format!("{prefix}/{name}")
    })
}

/// Writes `vectors` (each one data file's deleted rows, sorted and
/// distinct) into one new deletion vector file at the table's root, and
/// gives their descriptors (storage type `u`), in order.
///
/// # Errors
/// [`Error::Unsupported`] for an empty vector or a row past 2⁶³;
/// IO or store errors.
pub fn write(location: &TableDir, vectors: &[Vec<u64>]) -> Result<Vec<DeletionVector>, Error> {
    let id = uuid().replace('-', "");
    let bytes: Vec<u8> = (0..id.len())
        .step_by(2)
        .filter_map(|i| u8::from_str_radix(id.get(i..i + 2)?, 16).ok())
        .collect();
    let path = z85_encode(&bytes);
    let mut file = vec![FILE_VERSION];
    let mut out = Vec::with_capacity(vectors.len());
    for rows in vectors {
        if rows.is_empty() || rows.last().is_some_and(|&r| r >= 1 << 63) {
            return Err(Error::Unsupported(
                "a deletion vector holds rows, each below 2^63".into(),
            ));
        }
        let data = serialize(rows);
        let too_big = || Error::Unsupported("a deletion vector file past 2 GiB".into());
        let offset = i32::try_from(file.len()).map_err(|_| too_big())?;
        let size = i32::try_from(data.len()).map_err(|_| too_big())?;
        file.extend_from_slice(&size.to_be_bytes());
        file.extend_from_slice(&data);
        file.extend_from_slice(&crc32(&data).to_be_bytes());
        out.push(DeletionVector {
            storage_type: "u".into(),
            path_or_inline_dv: path.clone(),
            offset: Some(offset),
            size_in_bytes: size,
            cardinality: rows.len() as i64,
        });
    }
    if let Some(rel) = out.first().and_then(file_rel) {
        location.put_new(&rel, &file)?;
    }
    Ok(out)
}

/// The rows (sorted) of the deletion vector `dv` of a data file of
/// `limit` rows, of any storage type.
///
/// # Errors
/// [`Error::BadTable`] naming the vector when it does not read (a bad
/// descriptor, checksum or bitmap, a row past the file's); IO or store
/// errors, a missing file too.
pub fn read(location: &TableDir, dv: &DeletionVector, limit: u64) -> Result<Vec<u64>, Error> {
    let bad = |reason: String| Error::BadTable {
        path: location.root(),
        reason: format!("deletion vector {}: {reason}", dv.unique_id()),
    };
    let size = usize::try_from(dv.size_in_bytes).map_err(|_| bad("a negative size".into()))?;
    let data = if dv.storage_type == "i" {
        let mut bytes = z85_decode(&dv.path_or_inline_dv).ok_or_else(|| bad("not Z85".into()))?;
        if bytes.len() < size {
            return Err(bad(format!("{} bytes inline, not {size}", bytes.len())));
        }
        bytes.truncate(size);
        bytes
    } else {
        let file = match dv.storage_type.as_str() {
            "u" => {
                let rel = file_rel(dv).ok_or_else(|| bad("not a UUID path".into()))?;
                location
                    .read(&rel)?
                    .ok_or_else(|| bad(format!("its file {rel} is gone")))?
            }
            "p" => location.read_location(&dv.path_or_inline_dv)?,
            other => return Err(bad(format!("unknown storage type `{other}`"))),
        };
        let at = usize::try_from(dv.offset.unwrap_or(0)).map_err(|_| bad("a bad offset".into()))?;
        let slice = at
            .checked_add(8 + size)
            .and_then(|end| file.get(at..end))
            .ok_or_else(|| bad("past its file's end".into()))?;
        let stored = u32::from_be_bytes([slice[0], slice[1], slice[2], slice[3]]) as usize;
        let data = &slice[4..4 + size];
        let crc = u32::from_be_bytes([
            slice[4 + size],
            slice[5 + size],
            slice[6 + size],
            slice[7 + size],
        ]);
        if stored != size || crc != crc32(data) {
            return Err(bad("its size or checksum does not match".into()));
        }
        data.to_vec()
    };
    let rows = deserialize(&data, limit).map_err(bad)?;
    if rows.len() as i64 != dv.cardinality {
        return Err(bad(format!(
            "{} rows, where its cardinality is {}",
            rows.len(),
            dv.cardinality
        )));
    }
    Ok(rows)
}

/// The union of `old` and `new` rows, sorted; `None` when they share a
/// row.
pub fn merge(old: &[u64], new: &[u64]) -> Option<Vec<u64>> {
    let mut all: BTreeSet<u64> = old.iter().copied().collect();
    for r in new {
        if !all.insert(*r) {
            return None;
        }
    }
    Some(all.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn a_delta_tables_vector_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let table = TableDir::local(dir.path()).unwrap();
        // Inline: the bytes in Z85, padded to four bytes.
        let rows = [3, 4, 7, 11, 18, 29];
        let bytes = serialize(&rows);
        assert_eq!(bytes.len(), 44);
        let inline = DeletionVector {
            storage_type: "i".into(),
            path_or_inline_dv: z85_encode(&bytes),
            offset: None,
            size_in_bytes: 44,
            cardinality: 6,
        };
        assert_eq!(read(&table, &inline, 100).unwrap(), rows);
        assert_eq!(
            z85_encode(&[0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B]),
            "HelloWorld"
        );
        assert_eq!(
            z85_decode("HelloWorld").unwrap(),
            [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B]
        );
        assert_eq!(z85_decode("Hello"), Some(vec![0x86, 0x4F, 0xD2, 0x6F]));
        assert_eq!(z85_decode("Hell"), None);
        // The file of a table Databricks wrote (delta-rs's test table
        // `table-with-dv-small`: rows 0 and 9), its UUID path and CRC.
        let file = hex(
            "0100000024d1d339640100000000000000000000003a3000000100000000000100100000000000\
             09002a671846",
        );
        let on_disk = DeletionVector {
            storage_type: "u".into(),
            path_or_inline_dv: "vBn[lx{q8@P<9BNH/isA".into(),
            offset: Some(1),
            size_in_bytes: 36,
            cardinality: 2,
        };
        let rel = file_rel(&on_disk).unwrap();
        assert_eq!(
            rel,
            "deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin"
        );
        std::fs::write(dir.path().join(&rel), &file).unwrap();
        assert_eq!(read(&table, &on_disk, 10).unwrap(), [0, 9]);
        assert_eq!(serialize(&[0, 9]), file[5..41]);
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        // A row past the file's, a bad checksum: errors.
        let e = read(&table, &on_disk, 9).unwrap_err().to_string();
        assert!(e.contains("row 9 is past the file's 9 rows"), "{e}");
        let mut broken = file.clone();
        broken[20] ^= 1;
        std::fs::write(dir.path().join(&rel), &broken).unwrap();
        let e = read(&table, &on_disk, 10).unwrap_err().to_string();
        assert!(e.contains("checksum"), "{e}");
    }

    #[test]
    fn vectors_of_every_container_kind_round_trip() {
        let sets: Vec<Vec<u64>> = vec![
            vec![0],
            (0..5000).map(|i| i * 3).collect(),
            (0..70_000).collect(),
            vec![5, 1 << 32, (1 << 32) + 7, 3 << 40],
        ];
        let dir = tempfile::tempdir().unwrap();
        let table = TableDir::local(dir.path()).unwrap();
        let written = write(&table, &sets).unwrap();
        assert_eq!(written.len(), sets.len());
        for (rows, dv) in sets.iter().zip(&written) {
            assert_eq!(deserialize(&serialize(rows), u64::MAX).unwrap(), *rows);
            assert_eq!(read(&table, dv, u64::MAX).unwrap(), *rows);
            assert_eq!(dv.cardinality, rows.len() as i64);
        }
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "one file"
        );
        assert!(write(&table, &[vec![]]).is_err());
        assert_eq!(merge(&[1, 5], &[3]), Some(vec![1, 3, 5]));
        assert_eq!(merge(&[1, 5], &[5]), None);
    }

    #[test]
    fn run_containers_read() {
        // One container of runs [2, 4] and [10, 10], written by hand.
        let mut b = MAGIC.to_le_bytes().to_vec();
        b.extend_from_slice(&1u64.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&COOKIE_RUNS.to_le_bytes()); // one container
        b.push(1); // it is a run container
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&3u16.to_le_bytes()); // cardinality 4
        for v in [2u16, 2, 2, 10, 0] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        assert_eq!(deserialize(&b, 100).unwrap(), [2, 3, 4, 10]);
        for bad in [&b[..b.len() - 1], &[0u8; 12][..]] {
            assert!(deserialize(bad, 100).is_err());
        }
    }
}
