//! Pages as they go into a column chunk: the `PageHeader` in Thrift's
//! compact protocol (with the body's CRC-32 when asked), a page written
//! header then body, and the codecs that compress the body
//! ([`PageCompressor`]).

use parquet::basic::{Compression as PqCompression, Encoding, ZstdLevel};

use super::{kernels::varint, shape::unsupported};
use crate::{Compression, Error};

/// A page's kind and what its header records.
#[derive(Debug, Clone, Copy)]
pub(super) enum PageKind {
    Data {
        encoding: Encoding,
    },
    /// A `DATA_PAGE_V2`: its nulls and rows, the bytes of its repetition
    /// and definition levels (stored first, never compressed), and
    /// whether its values are compressed.
    DataV2 {
        encoding: Encoding,
        nulls: u32,
        rows: u32,
        rep_bytes: u32,
        def_bytes: u32,
        compressed: bool,
    },
    Dictionary,
}

/// What a page's header says apart from its sizes.
#[derive(Clone, Copy)]
pub(super) struct Page {
    pub(super) kind: PageKind,
    /// Values (levels) in a data page, entries in a dictionary page.
    pub(super) values: u32,
    /// Whether the header carries the CRC-32 of the stored body.
    pub(super) checksum: bool,
}

/// Parquet's `Encoding` enum values (parquet.thrift).
fn encoding_id(e: Encoding) -> i32 {
    match e {
        Encoding::PLAIN => 0,
        Encoding::RLE => 3,
        Encoding::DELTA_BINARY_PACKED => 5,
        Encoding::DELTA_LENGTH_BYTE_ARRAY => 6,
        Encoding::DELTA_BYTE_ARRAY => 7,
        Encoding::RLE_DICTIONARY => 8,
        Encoding::BYTE_STREAM_SPLIT => 9,
        _ => 0,
    }
}

/// Appends a compact-protocol `i32` field: header byte (field-id delta in
/// the high nibble, type 5) and the zigzag varint.
fn i32_field(out: &mut Vec<u8>, delta: u8, v: i32) {
    out.push((delta << 4) | 5);
    varint(out, u64::from(((v << 1) ^ (v >> 31)) as u32));
}

/// Appends a `PageHeader` (parquet.thrift) in the compact protocol:
/// type (1), uncompressed and compressed size (2, 3), the CRC-32 of the
/// stored body when given (4: the standard CRC-32 of zlib and gzip, as a
/// signed 32-bit integer), then a `DataPageHeader` (5: values, encoding,
/// RLE definition and repetition level encodings), a
/// `DataPageHeaderV2` (8: values, nulls, rows, encoding, definition and
/// repetition level bytes, is_compressed) or a `DictionaryPageHeader`
/// (7: values, PLAIN, is_sorted false).
pub(super) fn page_header(
    out: &mut Vec<u8>,
    kind: PageKind,
    uncompressed: usize,
    stored: usize,
    values: u32,
    crc: Option<u32>,
) {
    let page_type = match kind {
        PageKind::Data { .. } => 0,
        PageKind::Dictionary => 2,
        PageKind::DataV2 { .. } => 3,
    };
    i32_field(out, 1, page_type);
    i32_field(out, 1, uncompressed as i32);
    i32_field(out, 1, stored as i32);
    // Field-id deltas from the last field written: 3, or 4 (the CRC).
    let last = match crc {
        Some(crc) => {
            i32_field(out, 1, crc as i32);
            4
        }
        None => 3,
    };
    match kind {
        PageKind::Data { encoding } => {
            out.push(((5 - last) << 4) | 12);
            i32_field(out, 1, values as i32);
            i32_field(out, 1, encoding_id(encoding));
            i32_field(out, 1, encoding_id(Encoding::RLE));
            i32_field(out, 1, encoding_id(Encoding::RLE));
        }
        PageKind::DataV2 {
            encoding,
            nulls,
            rows,
            rep_bytes,
            def_bytes,
            compressed,
        } => {
            out.push(((8 - last) << 4) | 12);
            i32_field(out, 1, values as i32);
            i32_field(out, 1, nulls as i32);
            i32_field(out, 1, rows as i32);
            i32_field(out, 1, encoding_id(encoding));
            i32_field(out, 1, def_bytes as i32);
            i32_field(out, 1, rep_bytes as i32);
            // A bool field's value is its type: 1 true, 2 false.
            out.push((1 << 4) | if compressed { 1 } else { 2 });
        }
        PageKind::Dictionary => {
            out.push(((7 - last) << 4) | 12);
            i32_field(out, 1, values as i32);
            i32_field(out, 1, encoding_id(Encoding::PLAIN));
            out.push((1 << 4) | 2);
        }
    }
    out.push(0);
    out.push(0);
}

/// Appends one page, header then body (the concatenation of `parts`),
/// compressing the body with `codec` (`scratch` holds it meanwhile).
/// Returns the page's stored and uncompressed sizes, headers included.
pub(super) fn write_page(
    out: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
    codec: &mut PageCompressor,
    page: Page,
    parts: &[&[u8]],
) -> Result<(usize, usize), Error> {
    let Page {
        kind,
        values,
        checksum,
    } = page;
    let raw: usize = parts.iter().map(|p| p.len()).sum();
    let start = out.len();
    if codec.codec == Compression::None {
        let crc = checksum.then(|| {
            let mut h = crc32fast::Hasher::new();
            for p in parts {
                h.update(p);
            }
            h.finalize()
        });
        out.reserve(raw + 32);
        page_header(out, kind, raw, raw, values, crc);
        for p in parts {
            out.extend_from_slice(p);
        }
        let size = out.len() - start;
        return Ok((size, size));
    }
    // A body of one part (no levels) is compressed where it lies; others
    // are put together first.
    let mut nonempty = parts.iter().filter(|p| !p.is_empty());
    let body: &[u8] = match (nonempty.next(), nonempty.next()) {
        (None, _) => &[],
        (Some(only), None) => only,
        _ => {
            scratch.clear();
            for p in parts {
                scratch.extend_from_slice(p);
            }
            scratch
        }
    };
    if let Compression::Zstd(_) = codec.codec {
        // Compressed straight into `out`, behind a header written for a
        // body as long as the raw one, then rewritten for the stored
        // length; the body moves only when that header's length differs
        // (a body that shrank enough to save a varint byte, so a small
        // one). `wide-u64` with zstd, 2M rows: 0.680 s to 0.638 s median
        // against copying every page out of the compressor's buffer. The
        // guessed CRC takes the most bytes a CRC can (5), as 15 in 16 do.
        page_header(out, kind, raw, raw, values, checksum.then_some(1 << 31));
        let guess = out.len() - start;
        let stored = codec.compress_zstd_into(body, out)?;
        let crc = checksum.then(|| crc32fast::hash(&out[start + guess..]));
        let mut header = Vec::with_capacity(guess + 8);
        page_header(&mut header, kind, raw, stored, values, crc);
        if header.len() != guess {
            let body_at = start + guess;
            let end = out.len();
            if header.len() > guess {
                out.resize(end + header.len() - guess, 0);
            }
            out.copy_within(body_at..end, start + header.len());
            out.truncate(start + header.len() + stored);
        }
        out[start..start + header.len()].copy_from_slice(&header);
        return Ok((header.len() + stored, header.len() + raw));
    }
    let stored = codec.compress(body)?;
    let crc = checksum.then(|| crc32fast::hash(stored));
    page_header(out, kind, raw, stored.len(), values, crc);
    let header = out.len() - start;
    out.extend_from_slice(stored);
    Ok((header + stored.len(), header + raw))
}

/// Appends one `DATA_PAGE_V2` (`page.kind` says its counts): header,
/// then `levels` as they are (repetition then definition levels, no
/// length prefixes), then the concatenation of `values` compressed with
/// `codec` (`scratch` holds it meanwhile). Returns the page's stored and
/// uncompressed sizes, headers included.
pub(super) fn write_page_v2(
    out: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
    codec: &mut PageCompressor,
    page: Page,
    levels: &[u8],
    values: &[&[u8]],
) -> Result<(usize, usize), Error> {
    let raw: usize = values.iter().map(|p| p.len()).sum();
    scratch.clear();
    for p in values {
        scratch.extend_from_slice(p);
    }
    let stored: &[u8] = if codec.codec == Compression::None {
        scratch
    } else {
        codec.compress(scratch)?
    };
    let crc = page.checksum.then(|| {
        let mut h = crc32fast::Hasher::new();
        h.update(levels);
        h.update(stored);
        h.finalize()
    });
    let start = out.len();
    page_header(
        out,
        page.kind,
        levels.len() + raw,
        levels.len() + stored.len(),
        page.values,
        crc,
    );
    let header = out.len() - start;
    out.extend_from_slice(levels);
    out.extend_from_slice(stored);
    Ok((
        header + levels.len() + stored.len(),
        header + levels.len() + raw,
    ))
}

/// The Parquet codec of a [`Compression`].
pub fn parquet_codec(c: Compression) -> Result<PqCompression, Error> {
    Ok(match c {
        Compression::None => PqCompression::UNCOMPRESSED,
        Compression::Snappy => PqCompression::SNAPPY,
        Compression::Lz4 => PqCompression::LZ4_RAW,
        Compression::Zstd(l) => PqCompression::ZSTD(ZstdLevel::try_new(l)?),
    })
}

/// Compresses page bodies as Parquet's codecs define them: raw Snappy,
/// an LZ4 block without a size prefix (`LZ4_RAW`), a zstd frame. A zstd
/// context is made once per column and reused for every page (making one
/// per page costs as much as compressing a small page).
pub(super) struct PageCompressor {
    pub(super) codec: Compression,
    zstd: Option<zstd::bulk::Compressor<'static>>,
    /// The last compressed page (kept to reuse its memory).
    out: Vec<u8>,
}

impl PageCompressor {
    pub(super) fn new(codec: Compression) -> Self {
        PageCompressor {
            codec,
            zstd: None,
            out: Vec::new(),
        }
    }

    /// Appends the zstd frame of `page` to `out` (no copy through a
    /// buffer of its own) and returns its length.
    fn compress_zstd_into(&mut self, page: &[u8], out: &mut Vec<u8>) -> Result<usize, Error> {
        let io = |e: std::io::Error| {
            Error::Parquet(parquet::errors::ParquetError::External(Box::new(e)))
        };
        let Compression::Zstd(level) = self.codec else {
            return Err(unsupported("a zstd column"));
        };
        let z = match &mut self.zstd {
            Some(z) => z,
            None => self
                .zstd
                .insert(zstd::bulk::Compressor::new(level).map_err(io)?),
        };
        let at = out.len();
        out.reserve(zstd::zstd_safe::compress_bound(page.len()));
        // zstd writes into the capacity after the cursor.
        let mut cursor = std::io::Cursor::new(&mut *out);
        cursor.set_position(at as u64);
        let n = z.compress_to_buffer(page, &mut cursor).map_err(io)?;
        debug_assert_eq!(out.len(), at + n);
        Ok(n)
    }

    fn compress(&mut self, page: &[u8]) -> Result<&[u8], Error> {
        let io = |e: std::io::Error| {
            Error::Parquet(parquet::errors::ParquetError::External(Box::new(e)))
        };
        // Taken out for the call to `compress_zstd_into`, put back after.
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        let done = match self.codec {
            Compression::None => {
                out.extend_from_slice(page);
                Ok(())
            }
            Compression::Snappy => {
                out.resize(snap::raw::max_compress_len(page.len()), 0);
                snap::raw::Encoder::new()
                    .compress(page, &mut out)
                    .map(|n| out.truncate(n))
                    .map_err(|e| io(e.into()))
            }
            Compression::Lz4 => {
                out.resize(lz4_flex::block::get_maximum_output_size(page.len()), 0);
                lz4_flex::block::compress_into(page, &mut out)
                    .map(|n| out.truncate(n))
                    .map_err(|e| io(std::io::Error::other(e)))
            }
            Compression::Zstd(_) => self.compress_zstd_into(page, &mut out).map(|_| ()),
        };
        self.out = out;
        done?;
        Ok(&self.out)
    }
}
