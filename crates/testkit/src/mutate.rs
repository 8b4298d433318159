//! Seeded corruption of valid files, for tests of every reader: bit flips,
//! truncations, zeroed runs, extreme offsets and lengths, random bytes.
//! Half of the positions fall in the regions a reader trusts most: the
//! footer, and with [`parquet_regions`] or [`ipc_regions`] the dictionary
//! pages, page headers and record-batch headers (buffer offsets and
//! lengths) of a real file.

use std::ops::Range;

use bytes::Bytes;
use strata_gen::rng::RowRng;

/// One seeded mutation of `valid`, half of its positions in the last
/// `tail_focus` bytes (footers and headers).
pub fn mutate(rng: &mut RowRng, valid: &[u8], tail_focus: usize) -> Vec<u8> {
    let n = valid.len();
    let tail = n.saturating_sub(tail_focus)..n;
    mutate_in(rng, valid, std::slice::from_ref(&tail))
}

/// One seeded mutation of `valid`: one to four bit flips, a truncation, a
/// run of up to 64 zero bytes, an extreme offset or length (4 or 8 bytes
/// little-endian), or a random byte. Half of the positions fall in one of
/// `focus` (chosen uniformly), the rest anywhere.
pub fn mutate_in(rng: &mut RowRng, valid: &[u8], focus: &[Range<usize>]) -> Vec<u8> {
    let mut b = valid.to_vec();
    let n = b.len() as u64;
    if n == 0 {
        return b;
    }
    let focus: Vec<&Range<usize>> = focus
        .iter()
        .filter(|r| r.start < r.end && r.end <= b.len())
        .collect();
    let pos = |rng: &mut RowRng| -> usize {
        if !focus.is_empty() && rng.next_below(2) == 0 {
            let r = focus[rng.next_below(focus.len() as u64) as usize];
            r.start + rng.next_below((r.end - r.start) as u64) as usize
        } else {
            rng.next_below(n) as usize
        }
    };
    match rng.next_below(5) {
        0 => {
            for _ in 0..1 + rng.next_below(4) {
                let p = pos(rng);
                b[p] ^= 1 << rng.next_below(8);
            }
        }
        1 => b.truncate(rng.next_below(n) as usize),
        2 => {
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
        3 => {
            let p = pos(rng);
            let end = (p + 1 + rng.next_below(64) as usize).min(b.len());
            b[p..end].fill(0);
        }
        _ => {
            let p = pos(rng);
            b[p] = rng.next_below(256) as u8;
        }
    }
    b
}

/// The regions of a valid Parquet file its readers trust: the footer,
/// every column chunk's dictionary page and the first bytes (the page
/// header, then levels) of its first data page. Empty when `file` is not
/// a readable Parquet file.
pub fn parquet_regions(file: &[u8]) -> Vec<Range<usize>> {
    let n = file.len();
    let Ok(md) = parquet::file::metadata::ParquetMetaDataReader::new()
        .parse_and_finish(&Bytes::copy_from_slice(file))
    else {
        return Vec::new();
    };
    let footer_len = n
        .checked_sub(8)
        .and_then(|i| file.get(i..i + 4))
        .map_or(0, |l| u32::from_le_bytes([l[0], l[1], l[2], l[3]]) as usize);
    let mut out = Vec::new();
    out.push(n.saturating_sub(footer_len + 8)..n);
    for rg in md.row_groups() {
        for c in rg.columns() {
            let data = c.data_page_offset().max(0) as usize;
            if let Some(d) = c.dictionary_page_offset() {
                out.push((d.max(0) as usize)..data);
            }
            out.push(data..(data + 64).min(n));
        }
    }
    out
}

/// The regions of a valid Arrow IPC file its readers trust: the footer,
/// and every dictionary and record batch message's header (its node
/// lengths, null counts and buffer offsets and lengths). Empty when
/// `file` is not a readable IPC file.
pub fn ipc_regions(file: &[u8]) -> Vec<Range<usize>> {
    let n = file.len();
    if n < 10 {
        return Vec::new();
    }
    let len = i32::from_le_bytes([file[n - 10], file[n - 9], file[n - 8], file[n - 7]]);
    let Some(start) = usize::try_from(len)
        .ok()
        .and_then(|l| (n - 10).checked_sub(l))
    else {
        return Vec::new();
    };
    let Ok(footer) = arrow_ipc::root_as_footer(&file[start..n - 10]) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    out.push(start..n);
    let blocks = footer
        .dictionaries()
        .into_iter()
        .flatten()
        .chain(footer.recordBatches().into_iter().flatten());
    for b in blocks {
        let at = b.offset().max(0) as usize;
        let end = at.saturating_add(b.metaDataLength().max(0) as usize).min(n);
        if at < end {
            out.push(at..end);
        }
    }
    out
}
