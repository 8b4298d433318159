//! One leaf column of one row group ([`LeafEncoder`]): rows in (whole
//! batches or rows gathered from several), levels and values into the
//! open page, a page closed at the properties' limits, and the finished
//! chunk with its statistics, column index and offset index. The levels
//! of the last page, and the last walk, are shared with the sibling
//! leaves of the row group ([`LevelPages`]).

use arrow_array::{
    Array, ArrayRef, DictionaryArray, RecordBatch, StringArray, cast::AsArray, types::UInt8Type,
};
use parquet::{
    basic::{Encoding, Type as PhysicalType},
    bloom_filter::Sbbf,
    column::writer::ColumnCloseResult,
    data_type::ByteArray,
    file::properties::EnabledStatistics,
    file::{
        metadata::{ColumnChunkMetaData, ColumnIndexBuilder, OffsetIndexBuilder},
        statistics::{Statistics, ValueStatistics},
    },
    schema::types::ColumnDescPtr,
};

use std::sync::{Arc, Mutex};

use super::{
    chunk::ColumnChunk,
    dict,
    fast::{DictValues, IntValues, LeafValues, Part},
    general,
    kernels::{
        bit_width, byte_stream_split, delta_binary_packed, encode_hybrid, encode_hybrid_wide,
        encode_levels, plain_to_prefixed, plain_to_split, plain_values, take_seen,
    },
    page::{Page, PageCompressor, PageKind, page_header, parquet_codec, write_page, write_page_v2},
    pool::BufferPool,
    shape::{LeafShape, Values, float_le, int_le, uint_le, unsupported},
    stats::{
        Stats, float_min_max, int_min_max, plain_min_max, raise_bytes, raise_utf8, split_min_max,
        uint_min_max,
    },
};
use crate::{Compression, Error};

/// Rows handled between two checks of the page limits.
const CHUNK_ROWS: usize = 1024;

/// Where one data page landed in the chunk, and what it holds.
struct PageMeta {
    /// Offset of the page header in the chunk (before a dictionary page
    /// is put in front).
    offset: usize,
    /// Header and stored body.
    size: usize,
    /// Header and uncompressed body.
    uncompressed: usize,
    levels: u32,
    rows: usize,
    stats: Stats,
}

/// The repetition and definition levels of the last page a leaf of the
/// row group encoded, and their encoding. The fields of a struct below the
/// same lists and nulls (`items`' `sku`, `qty` and `price` in `events`)
/// have equal levels page after page: the first leaf encodes them, its
/// siblings compare and copy. The leaves of a row group are written one
/// after another by one thread, so the lock is never contended.
#[derive(Default)]
pub(super) struct LevelPages {
    rep: Vec<u8>,
    def: Vec<u8>,
    /// Bit widths of the repetition and definition levels (0: none).
    widths: (u8, u8),
    levels: Vec<u8>,
    /// The pieces of rows the last general leaf walked in one batch.
    walk: WalkMemo,
    /// Which lists of the last column met hold null lists over entries.
    spans: general::SpansMemo,
}

/// The levels and value runs of the pieces of rows the last general leaf
/// of the row group walked in one batch: a sibling with the same
/// [`general::Chain::identity`] copies those of the same rows instead of
/// walking.
#[derive(Default)]
struct WalkMemo {
    identity: Vec<usize>,
    /// The column the identity's addresses are in, kept alive so that no
    /// other buffer can take those addresses while they are compared.
    column: Option<ArrayRef>,
    /// Per piece, in the order walked: its rows, the ends of its levels
    /// in `def` and `rep` and of its runs in `runs`, and whether it met a
    /// null where the schema allows none.
    pieces: Vec<MemoPiece>,
    def: Vec<u8>,
    rep: Vec<u8>,
    runs: Vec<(u32, u32, u32)>,
}

#[derive(Clone, Copy)]
struct MemoPiece {
    rows: (usize, usize),
    ends: (usize, usize, usize),
    bad: bool,
}

/// Encodes one leaf column of one row group.
pub struct LeafEncoder {
    shape: LeafShape,
    descr: ColumnDescPtr,
    codec: PageCompressor,
    def: Vec<u8>,
    rep: Vec<u8>,
    /// Plain: length-prefixed strings, or the bytes alone when the
    /// lengths go to `lengths`. Dictionary: one key per value.
    values: Vec<u8>,
    /// The page's byte-string lengths (4 bytes each, little-endian) of a
    /// leaf written `DELTA_LENGTH_BYTE_ARRAY` with no dictionary (see
    /// [`LeafShape::split_lengths`]); then their encoding.
    lengths: Vec<u8>,
    lengths_out: Vec<u8>,
    page_rows: usize,
    page_stats: Stats,
    /// Dictionary entries seen so far, in first-seen order.
    dict: dict::Dictionary,
    /// The same for integer and float leaves.
    numbers: dict::Numbers,
    /// Keys of the current page that occur (for min/max).
    used: [u64; 4],
    /// The same for dictionaries of more than 256 entries: one byte per
    /// entry, set by a plain store (or-ing bits into words made each value
    /// wait for the one before).
    seen: Vec<u8>,
    /// Scratch: runs of present leaf values (general leaves).
    runs: Vec<(u32, u32, u32)>,
    /// Scratch of the level walk (general leaves).
    walk_scratch: (Vec<u8>, Vec<u8>, Vec<u32>),
    /// The last page's levels among the row group's leaves and their
    /// encoding (see [`LevelPages`]); `None` for a leaf made on its own.
    pub(super) level_pages: Option<Arc<Mutex<LevelPages>>>,
    /// Where chunk buffers come from (the pool of the last close).
    pool: Option<BufferPool>,
    /// Bytes of the last chunk this encoder closed: the next one takes a
    /// pooled buffer at least as large, so that it does not grow (copy
    /// and page-fault) its way there again.
    last_bytes: usize,
    /// Whether the chunk fell back from its dictionary to `PLAIN` (or the
    /// encoding the properties set).
    fell_back: bool,
    /// Whether some page of the chunk is dictionary-encoded.
    dict_pages: bool,
    /// A page's dictionary keys: a byte-string leaf with its dictionary on
    /// interns its values as they are written (the page keeps no `PLAIN`
    /// copy of them, `plain_pending` counts their `PLAIN` size).
    keys: Vec<u32>,
    /// `PLAIN` bytes of the values interned into `keys` so far.
    plain_pending: usize,
    /// Dictionary entries before the open page (kept if the page falls
    /// back to `PLAIN`).
    page_dict_start: usize,
    pages: Vec<PageMeta>,
    /// The data pages of the chunk, headers included, back to back, but
    /// for the `splices`.
    chunk: Vec<u8>,
    /// Page bodies shared with the batches (see [`ColumnChunk`]):
    /// `(at, buffer)` puts `buffer` after `chunk[..at]`.
    splices: Vec<(usize, arrow_buffer::Buffer)>,
    /// Bytes in `splices`.
    spliced: usize,
    /// The open page's values as slices of the batches' buffers, when the
    /// leaf shares them (`values` is empty then).
    shared: Vec<arrow_buffer::Buffer>,
    /// Bytes in `shared`.
    shared_bytes: usize,
    /// Scratch: a page's encoded levels, and a page body to compress.
    levels: Vec<u8>,
    body: Vec<u8>,
    /// Scratch: a v2 page's levels, without length prefixes.
    v2_levels: Vec<u8>,
    rows: u64,
    /// Whether page headers carry the CRC-32 of the stored body.
    pub(super) checksums: bool,
    /// The chunk's Bloom filter, where the properties ask for one: every
    /// present value inserted as its `PLAIN` bytes, as parquet's writer
    /// inserts them (so the filters are the same bits).
    bloom: Option<Sbbf>,
    /// Whether some data page of the chunk is not dictionary-encoded.
    plain_pages: bool,
}

/// Checks that every `(batch, row)` pair names a row of `batches`.
pub fn check_gather(batches: &[RecordBatch], rows: &[(usize, usize)]) -> Result<(), Error> {
    match rows
        .iter()
        .find(|&&(b, i)| batches.get(b).is_none_or(|batch| i >= batch.num_rows()))
    {
        Some(&(b, i)) => Err(Error::InvalidConfig(format!(
            "cannot gather row {i} of batch {b}: there is no such row"
        ))),
        None => Ok(()),
    }
}

/// Which rows [`LeafEncoder::write_from`] writes.
#[derive(Clone, Copy)]
enum Gather<'a> {
    /// Every row of the one batch.
    All,
    /// `(batch, row)` pairs, in output order.
    Rows(&'a [(usize, usize)]),
}

impl LeafEncoder {
    pub(super) fn new(shape: LeafShape, descr: ColumnDescPtr, codec: Compression) -> Self {
        LeafEncoder {
            shape,
            descr,
            codec: PageCompressor::new(codec),
            def: Vec::new(),
            rep: Vec::new(),
            values: Vec::new(),
            lengths: Vec::new(),
            lengths_out: Vec::new(),
            page_rows: 0,
            page_stats: Stats::default(),
            dict: dict::Dictionary::default(),
            numbers: dict::Numbers::default(),
            used: [0; 4],
            seen: Vec::new(),
            runs: Vec::new(),
            walk_scratch: (Vec::new(), Vec::new(), Vec::new()),
            level_pages: None,
            pool: None,
            last_bytes: 0,
            fell_back: false,
            dict_pages: false,
            keys: Vec::new(),
            plain_pending: 0,
            page_dict_start: 0,
            pages: Vec::new(),
            chunk: Vec::new(),
            splices: Vec::new(),
            spliced: 0,
            shared: Vec::new(),
            shared_bytes: 0,
            levels: Vec::new(),
            body: Vec::new(),
            v2_levels: Vec::new(),
            rows: 0,
            checksums: true,
            bloom: None,
            plain_pages: false,
        }
    }

    /// Whether the pages written from now on carry a CRC-32 of their
    /// stored body (see
    /// [`Shredder::with_page_checksums`](super::Shredder::with_page_checksums)).
    pub fn set_page_checksums(&mut self, on: bool) {
        self.checksums = on;
    }

    /// Bytes held for the open column chunk: finished pages and the page
    /// being filled.
    pub fn buffered_bytes(&self) -> usize {
        self.chunk.len()
            + self.spliced
            + self.values.len()
            + self.lengths.len()
            + self.plain_pending
            + self.shared_bytes
            + self.def.len()
            + self.rep.len()
    }

    /// Whether this leaf's row-group dictionary can take the values of
    /// `batches`' dictionaries (a one-byte key indexes at most 256).
    pub fn dictionary_room(&self, batches: &[&RecordBatch]) -> bool {
        if let Some(path) = &self.shape.general {
            if self.shape.values != Values::Dict {
                return true;
            }
            let mut new: std::collections::HashSet<&[u8]> = std::collections::HashSet::new();
            for b in batches {
                let Ok(chain) = path.chain(b.column(self.shape.column), None) else {
                    return true;
                };
                let Ok((_, values)) = general::dictionary_parts(chain.leaf) else {
                    return true;
                };
                new.extend(values.into_iter().filter(|v| self.dict.find(v).is_none()));
            }
            return self.dict.len() + new.len() <= path.dict_capacity;
        }
        if self.shape.values != Values::Dictionary {
            return true;
        }
        let mut new: std::collections::HashSet<&[u8]> = std::collections::HashSet::new();
        for b in batches {
            let Some(values) = b
                .column(self.shape.column)
                .as_dictionary_opt::<UInt8Type>()
                .and_then(|d| d.values().as_string_opt::<i32>())
            else {
                return true;
            };
            for v in values.iter().flatten() {
                if self.dict.find(v.as_bytes()).is_none() {
                    new.insert(v.as_bytes());
                }
            }
        }
        self.dict.len() + new.len() <= 256
    }

    /// Appends the rows of `batch`.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), Error> {
        self.write_from(&[batch], Gather::All)
    }

    #[cfg(test)]
    /// Appends rows gathered from `batches`: `rows[k] = (b, i)` makes row
    /// `i` of `batches[b]` the next row. Values are copied once, from the
    /// batches into the page (no gathered batch is built first). The pairs
    /// must have passed [`check_gather`] (the caller checks once for all
    /// leaves).
    pub fn write_gather(
        &mut self,
        batches: &[RecordBatch],
        rows: &[(usize, usize)],
    ) -> Result<(), Error> {
        let refs: Vec<&RecordBatch> = batches.iter().collect();
        self.write_gather_refs(&refs, rows)
    }

    /// Appends rows gathered from `batches`: `rows[k] = (b, i)` makes row
    /// `i` of `batches[b]` the next row. Values are copied once, from the
    /// batches into the page. The pairs must have passed [`check_gather`]
    /// (the caller checks once for all leaves).
    pub fn write_gather_refs(
        &mut self,
        batches: &[&RecordBatch],
        rows: &[(usize, usize)],
    ) -> Result<(), Error> {
        self.write_from(batches, Gather::Rows(rows))
    }

    /// The column's path, for messages.
    pub fn column(&self) -> String {
        self.descr.path().string()
    }

    fn remap(&mut self, leaf: &ArrayRef) -> Result<Vec<u8>, Error> {
        let dict: &DictionaryArray<UInt8Type> = leaf
            .as_dictionary_opt()
            .ok_or_else(|| unsupported("a UInt8 dictionary"))?;
        let values: &StringArray = dict
            .values()
            .as_string_opt()
            .ok_or_else(|| unsupported("Utf8 dictionary values"))?;
        if values.null_count() > 0 {
            return Err(unsupported("dictionary values without nulls"));
        }
        let mut map = Vec::with_capacity(values.len());
        for v in values.iter() {
            let v = v.unwrap_or_default().as_bytes();
            if self.dict.len() == 256 && self.dict.find(v).is_none() {
                return Err(Error::DictionaryOverflow {
                    column: self.descr.path().string(),
                });
            }
            map.push(self.dict.intern(v) as u8);
        }
        Ok(map)
    }

    /// Maps a general dictionary leaf's entries onto the chunk's
    /// dictionary, adding those it lacks.
    fn remap_wide(&mut self, leaf: &dyn Array, capacity: usize) -> Result<Vec<u32>, Error> {
        let (_, values) = general::dictionary_parts(leaf)?;
        let mut map = Vec::with_capacity(values.len());
        for v in values {
            if self.dict.len() >= capacity.min(u32::MAX as usize) && self.dict.find(v).is_none() {
                return Err(Error::DictionaryOverflow {
                    column: self.descr.path().string(),
                });
            }
            map.push(self.dict.intern(v));
        }
        Ok(map)
    }

    /// Rows to write in one piece, of `left`: at most [`CHUNK_ROWS`], and
    /// no more than the open page still takes.
    fn piece_len(&self, left: usize) -> usize {
        CHUNK_ROWS
            .min(left)
            .min(self.shape.page_rows.saturating_sub(self.page_rows).max(1))
    }

    /// Counts a written piece of `len` rows and closes the page at its
    /// limits.
    fn end_piece(&mut self, len: usize) -> Result<(), Error> {
        self.page_rows += len;
        self.rows += len as u64;
        if self.page_rows >= self.shape.page_rows
            || self.values.len() + self.lengths.len() + self.plain_pending + self.shared_bytes
                >= self.shape.page_bytes
        {
            self.flush_page()?;
        }
        Ok(())
    }

    /// Writes rows of a leaf at any depth: levels by walking its path,
    /// then the present values, run by run.
    fn write_general(&mut self, batches: &[&RecordBatch], rows: Gather<'_>) -> Result<(), Error> {
        let Some(path) = self.shape.general.take() else {
            return Ok(());
        };
        let result = self.write_path(&path, batches, rows);
        self.shape.general = Some(path);
        result
    }

    fn write_path(
        &mut self,
        path: &general::Path,
        batches: &[&RecordBatch],
        rows: Gather<'_>,
    ) -> Result<(), Error> {
        let mut chains = Vec::with_capacity(batches.len());
        {
            // Sibling leaves check a list's nulls once.
            let mut pages = self
                .level_pages
                .as_ref()
                .map(|p| p.lock().unwrap_or_else(|e| e.into_inner()));
            for b in batches {
                let memo = pages.as_deref_mut().map(|p| &mut p.spans);
                chains.push(path.chain(b.column(self.shape.column), memo)?);
            }
        }
        // Values stored as Arrow holds them (no widening, no decimal
        // conversion) can be shared.
        let share = self.shares()
            && matches!(path.source, general::Source::Copy(_))
            && matches!(rows, Gather::All);
        let buffers = if share {
            let mut b = Vec::with_capacity(chains.len());
            for chain in &chains {
                b.push(
                    general::values_buffer(chain.leaf)
                        .ok_or_else(|| unsupported("a primitive array"))?,
                );
            }
            b
        } else {
            Vec::new()
        };
        let mut values = Vec::with_capacity(chains.len());
        for chain in &chains {
            let map = if path.source == general::Source::Dict {
                self.remap_wide(chain.leaf, path.dict_capacity)?
            } else {
                Vec::new()
            };
            values.push(general::Values::new(chain.leaf, path.source, map)?);
        }
        if self.shape.values == Values::Dict {
            self.seen.resize(self.dict.len(), 0);
        }
        let n = match rows {
            Gather::All => batches.first().map_or(0, |b| b.num_rows()),
            Gather::Rows(r) => r.len(),
        };
        // Siblings share walks of whole batches written one at a time.
        let memo = match (rows, &chains[..], &self.level_pages) {
            (Gather::All, [chain], Some(_)) => Some((
                chain.identity(path),
                batches[0].column(self.shape.column).clone(),
            )),
            _ => None,
        };
        let mut at = 0;
        let mut open = None;
        while at < n {
            let len = self.piece_len(n - at);
            let levels_before = if self.shape.max_def > 0 {
                self.def.len()
            } else {
                self.page_rows
            };
            let mut runs = std::mem::take(&mut self.runs);
            runs.clear();
            let bad = self.walk_piece(path, &chains, rows, at, len, &memo, &mut runs);
            if bad {
                self.runs = runs;
                return Err(unsupported(
                    "no nulls where the schema has a required field",
                ));
            }
            let mut present = 0u64;
            // A chunk falls back to `PLAIN` only when a page closes, after
            // the piece.
            let interning =
                self.shape.values == Values::Plain && self.shape.dictionary && !self.fell_back;
            let split = self.shape.split_lengths();
            for &(b, s, e) in &runs {
                if let (Some(buffer), general::Source::Copy(w)) =
                    (buffers.get(b as usize), path.source)
                {
                    // Only when sharing: `buffers` is empty otherwise.
                    self.share(buffer, b, w, s as usize..e as usize, &mut open);
                } else if interning {
                    let (dict, keys) = (&mut self.dict, &mut self.keys);
                    let plain = values[b as usize].intern(s as usize, e as usize, dict, keys);
                    self.plain_pending += plain.unwrap_or(0);
                } else if split {
                    values[b as usize].put_split(
                        s as usize,
                        e as usize,
                        &mut self.values,
                        &mut self.lengths,
                    );
                } else {
                    values[b as usize].put(
                        s as usize,
                        e as usize,
                        &mut self.values,
                        &mut self.seen,
                    );
                }
                present += u64::from(e - s);
            }
            self.runs = runs;
            let levels = if self.shape.max_def > 0 {
                self.def.len() - levels_before
            } else {
                len
            };
            self.page_stats.nulls += levels as u64 - present;
            at += len;
            self.end_piece(len)?;
        }
        Ok(())
    }

    /// Levels of rows `at..at + len` appended to the leaf's and their value
    /// runs to `runs`: copied from the row group's last walk when `memo`
    /// (this batch's chain identity and column) matches it, else walked
    /// (and left there for the siblings). Returns whether a null was met
    /// where the schema allows none.
    #[allow(clippy::too_many_arguments)]
    fn walk_piece(
        &mut self,
        path: &general::Path,
        chains: &[general::Chain<'_>],
        rows: Gather<'_>,
        at: usize,
        len: usize,
        memo: &Option<(Vec<usize>, ArrayRef)>,
        runs: &mut Vec<(u32, u32, u32)>,
    ) -> bool {
        let shared = match (memo, &self.level_pages) {
            (Some((identity, column)), Some(pages)) => Some((identity, column, pages.clone())),
            _ => None,
        };
        if let Some((identity, _, pages)) = &shared {
            let last = pages.lock().unwrap_or_else(|e| e.into_inner());
            let w = &last.walk;
            if w.column.is_some() && w.identity == **identity {
                let k = w.pieces.partition_point(|p| p.rows.0 < at);
                if let Some(p) = w.pieces.get(k).filter(|p| p.rows == (at, len)) {
                    let (d, r, u) = k.checked_sub(1).map_or((0, 0, 0), |k| w.pieces[k].ends);
                    self.def.extend_from_slice(&w.def[d..p.ends.0]);
                    self.rep.extend_from_slice(&w.rep[r..p.ends.1]);
                    runs.extend_from_slice(&w.runs[u..p.ends.2]);
                    return p.bad;
                }
            }
        }
        let (def_at, rep_at) = (self.def.len(), self.rep.len());
        let mut walk = general::Walk::new(
            path,
            &mut self.def,
            &mut self.rep,
            runs,
            &mut self.walk_scratch,
        );
        match rows {
            Gather::All => walk.rows(&chains[0], 0, at..at + len),
            Gather::Rows(r) => {
                for &(b, i) in &r[at..at + len] {
                    walk.rows(&chains[b], b as u32, i..i + 1);
                }
            }
        }
        let bad = walk.bad;
        if let Some((identity, column, pages)) = shared {
            let mut last = pages.lock().unwrap_or_else(|e| e.into_inner());
            let w = &mut last.walk;
            // A new batch or leaf shape starts over; pieces are kept in
            // row order.
            if w.column.is_none()
                || w.identity != *identity
                || w.pieces.last().is_some_and(|p| p.rows.0 >= at)
            {
                w.identity.clone_from(identity);
                w.column = Some(column.clone());
                w.pieces.clear();
                w.def.clear();
                w.rep.clear();
                w.runs.clear();
            }
            w.def.extend_from_slice(&self.def[def_at..]);
            w.rep.extend_from_slice(&self.rep[rep_at..]);
            w.runs.extend_from_slice(runs);
            let ends = (w.def.len(), w.rep.len(), w.runs.len());
            w.pieces.push(MemoPiece {
                rows: (at, len),
                ends,
                bad,
            });
        }
        bad
    }

    /// Whether this leaf's pages can be the batches' value buffers: a
    /// required, unnested fixed-width leaf written `PLAIN` (with no
    /// dictionary, or after its chunk fell back from one, from a page not
    /// yet holding values of its own) and uncompressed (the caller checks
    /// that the values are stored as Arrow holds them).
    fn shares(&self) -> bool {
        self.shape.max_def == 0
            && self.shape.max_rep == 0
            && matches!(
                self.shape.values,
                Values::Int(_) | Values::UInt(_) | Values::Float(_)
            )
            && !self.shape.delta
            && !self.shape.split
            && (!self.shape.dictionary
                || self.fell_back && (self.page_rows == 0 || !self.shared.is_empty()))
            && self.codec.codec == Compression::None
    }

    /// Dispatches once on the leaf's value kind, then writes the rows.
    fn write_from(&mut self, batches: &[&RecordBatch], rows: Gather<'_>) -> Result<(), Error> {
        if self.shape.general.is_some() {
            return self.write_general(batches, rows);
        }
        let columns: Vec<&ArrayRef> = batches
            .iter()
            .map(|b| b.column(self.shape.column))
            .collect();
        // A top-level `Int32` or `Int64` column, stored as Arrow holds it.
        if let (Values::Int(w), Gather::All, [column]) = (self.shape.values, rows, &columns[..])
            && self.shares()
        {
            return self.write_shared(column, w);
        }
        match self.shape.values {
            Values::Int(4) => self.write_kind(&columns, rows, |_, leaf| IntValues::<4>::new(leaf)),
            Values::Int(_) => self.write_kind(&columns, rows, |_, leaf| IntValues::<8>::new(leaf)),
            Values::Dictionary => {
                // Per batch: map its dictionary onto the chunk's.
                let maps = columns
                    .iter()
                    .map(|c| self.remap(c))
                    .collect::<Result<Vec<_>, Error>>()?;
                self.write_kind(&columns, rows, |b, leaf| DictValues::new(leaf, &maps[b]))
            }
            // Only general leaves hold the other kinds.
            Values::Plain
            | Values::UInt(_)
            | Values::Float(_)
            | Values::Bool
            | Values::Dict
            | Values::Fixed(_)
            | Values::FixedBytes(_) => Err(unsupported("a leaf of a fast shape")),
        }
    }

    /// Writes a required top-level column of `width`-byte integers as
    /// slices of its values buffer (see [`Self::shares`]).
    fn write_shared(&mut self, column: &ArrayRef, width: usize) -> Result<(), Error> {
        if column.null_count() > 0 {
            return Err(unsupported("nulls in a required column"));
        }
        let buffer = general::values_buffer(column.as_ref())
            .filter(|b| b.len() == column.len() * width)
            .ok_or_else(|| unsupported("a primitive array"))?;
        let n = column.len();
        let mut at = 0;
        let mut open = None;
        while at < n {
            let len = self.piece_len(n - at);
            self.share(&buffer, 0, width, at..at + len, &mut open);
            at += len;
            self.end_piece(len)?;
        }
        Ok(())
    }

    /// Adds values `rows` of `buffer` (batch `b`'s, of `width`-byte
    /// values) to the open page's shared slices: one slice per batch and
    /// page, grown while the rows follow on (`open`: the batch and first
    /// row of the last slice, when this call made it).
    fn share(
        &mut self,
        buffer: &arrow_buffer::Buffer,
        b: u32,
        width: usize,
        rows: std::ops::Range<usize>,
        open: &mut Option<(u32, usize, usize)>,
    ) {
        self.shared_bytes += rows.len() * width;
        // Statistics now, while the batch is in cache (at the page's end
        // its first rows are megabytes behind).
        let kind = self.shape.values;
        let bytes = &buffer.as_slice()[rows.start * width..rows.end * width];
        let (min_max, nans) = match kind {
            Values::Int(w) => (int_min_max(bytes, w), 0),
            Values::UInt(w) => (uint_min_max(bytes, w), 0),
            Values::Float(w) => float_min_max(bytes, w),
            _ => (None, 0),
        };
        if let Some((lo, hi)) = min_max {
            self.page_stats.update(&lo, kind);
            self.page_stats.update(&hi, kind);
        }
        self.page_stats.nans += nans;
        if let (Some((ob, from, end)), Some(last)) = (open.as_mut(), self.shared.last_mut())
            && *ob == b
            && *end == rows.start
        {
            *last = buffer.slice_with_length(*from * width, (rows.end - *from) * width);
            *end = rows.end;
            return;
        }
        self.shared
            .push(buffer.slice_with_length(rows.start * width, rows.len() * width));
        *open = Some((b, rows.start, rows.end));
    }

    /// Builds each batch's value writer with `make` (given the batch's
    /// number and leaf array) and writes the rows in
    /// pieces of [`CHUNK_ROWS`], closing pages at the limits.
    fn write_kind<'a, V: LeafValues>(
        &mut self,
        columns: &[&'a ArrayRef],
        rows: Gather<'_>,
        make: impl Fn(usize, &'a ArrayRef) -> Result<V, Error>,
    ) -> Result<(), Error> {
        let mut parts = Vec::with_capacity(columns.len());
        let mut values = Vec::with_capacity(columns.len());
        for (b, column) in columns.iter().enumerate() {
            let part = Part::new(&self.shape, column)?;
            values.push(make(b, part.leaf)?);
            parts.push(part);
        }
        let n = match rows {
            Gather::All => columns.first().map_or(0, |c| c.len()),
            Gather::Rows(r) => r.len(),
        };
        let mut at = 0;
        while at < n {
            let len = self.piece_len(n - at);
            match rows {
                // A required top-level leaf: its rows' values in one run,
                // with no levels.
                Gather::All if self.shape.max_def == 0 && parts[0].leaf_nulls.is_none() => {
                    values[0].extend_run(at..at + len, &mut self.values);
                }
                Gather::All => {
                    let bound = values[0].bound(at..at + len);
                    let rows = (at..at + len).map(|i| (0, i));
                    self.write_rows(&parts[..1], &mut values[..1], rows, len, bound);
                }
                Gather::Rows(r) => {
                    let r = &r[at..at + len];
                    let mut bound = V::SLACK;
                    for &(b, i) in r {
                        bound += values[b].bound(i..i + 1) - V::SLACK;
                    }
                    self.write_rows(&parts, &mut values, r.iter().copied(), len, bound);
                }
            }
            // The keys these rows used count for the page they are in,
            // which may close just below.
            for v in &mut values {
                self.or_used(v.take_used());
            }
            at += len;
            self.end_piece(len)?;
        }
        Ok(())
    }

    // The loop below writes levels and values by index into buffers sized
    // up front (`levels` and `bound` are upper bounds for the rows), and
    // turns the data-dependent choice (null or not) into arithmetic: a
    // null value is written anyway and the cursor simply does not move.

    fn write_rows<V: LeafValues>(
        &mut self,
        parts: &[Part<'_>],
        values: &mut [V],
        rows: impl Iterator<Item = (usize, usize)>,
        levels: usize,
        bound: usize,
    ) {
        let vbase = self.values.len();
        self.values.resize(vbase + bound, 0);
        let mut vp = vbase;
        let mut null_count = 0u64;
        let optional = self.shape.max_def > 0;
        let dbase = self.def.len();
        if optional {
            self.def.resize(dbase + levels, 0);
        }
        let mut dp = dbase;
        for (b, i) in rows {
            let valid = parts[b].leaf_nulls.is_none_or(|n| n.is_valid(i));
            if optional {
                self.def[dp] = u8::from(valid);
                dp += 1;
            }
            vp += values[b].put(i, valid, &mut self.values[vp..]);
            null_count += u64::from(!valid);
        }
        self.def.truncate(dp);
        self.values.truncate(vp);
        self.page_stats.nulls += null_count;
    }

    fn or_used(&mut self, used: [u64; 4]) {
        for (u, v) in self.used.iter_mut().zip(used) {
            *u |= v;
        }
    }

    /// Makes the page's values its keys in the chunk's dictionary (the
    /// byte strings were interned as written): a bit width byte and the
    /// RLE-hybrid keys. `false`, with the page's values `PLAIN` and the
    /// chunk `PLAIN` from here on, when the dictionary would pass its
    /// limit.
    fn dictionary_encode(&mut self) -> bool {
        let before = self.page_dict_start;
        if self.dict.plain().len() > self.shape.dict_limit {
            // The page's `PLAIN` values from their entries, before the
            // page's new entries go.
            self.values.clear();
            self.values.reserve(self.plain_pending);
            for &k in &self.keys {
                let v = self.dict.get(k as usize).unwrap_or_default();
                self.values
                    .extend_from_slice(&(v.len() as u32).to_le_bytes());
                self.values.extend_from_slice(v);
            }
            self.dict.truncate(before);
            self.fell_back = true;
            return false;
        }
        let width = (32 - (self.dict.len().saturating_sub(1) as u32).leading_zeros()).max(1) as u8;
        self.body.clear();
        self.body.push(width);
        encode_hybrid_wide(&mut self.body, &self.keys, width);
        std::mem::swap(&mut self.body, &mut self.values);
        true
    }

    /// Makes the page's `width`-byte values (integers or floats) keys in
    /// the chunk's dictionary of numbers: a bit width byte and the
    /// RLE-hybrid keys. `false`, with the values left as they are and the
    /// chunk off its dictionary from here on, when the dictionary would
    /// pass its limit, or when the chunk's first dictionary page (keys and
    /// new entries) would be no smaller than its values: a column of
    /// nearly all distinct values is then hashed for one page only, not
    /// until its dictionary fills. A page without values is left `PLAIN`.
    fn number_dictionary(&mut self, width: usize) -> bool {
        if !self.shape.dictionary || self.fell_back || self.values.is_empty() {
            return false;
        }
        let before = self.numbers.len();
        self.keys.clear();
        self.numbers
            .intern_page(&self.values, width, &mut self.keys);
        let entries = self.numbers.len();
        let bits = (32 - (entries.saturating_sub(1) as u32).leading_zeros()).max(1) as u8;
        let packed = (self.keys.len() * usize::from(bits)).div_ceil(8);
        let grown = (entries - before) * width;
        if self.numbers.plain().len() > self.shape.dict_limit
            || (!self.dict_pages && packed + grown >= self.values.len())
        {
            self.numbers.truncate(before);
            self.keys.clear();
            self.fell_back = true;
            return false;
        }
        self.body.clear();
        self.body.push(bits);
        encode_hybrid_wide(&mut self.body, &self.keys, bits);
        std::mem::swap(&mut self.body, &mut self.values);
        self.keys.clear();
        self.dict_pages = true;
        true
    }

    /// Inserts the open page's present values into the chunk's Bloom
    /// filter (made at the chunk's first page), each as its `PLAIN` bytes:
    /// numbers little-endian, booleans one byte, byte strings without
    /// their length, dictionary keys as their entries.
    fn bloom_page(&mut self) -> Result<(), Error> {
        let Some((ndv, fpp)) = self.shape.bloom else {
            return Ok(());
        };
        if self.bloom.is_none() {
            self.bloom = Some(Sbbf::new_with_ndv_fpp(ndv, fpp)?);
        }
        let Some(bloom) = &mut self.bloom else {
            return Ok(());
        };
        let interning =
            self.shape.values == Values::Plain && self.shape.dictionary && !self.fell_back;
        match self.shape.values {
            Values::Int(w) | Values::UInt(w) | Values::Float(w) if !self.shared.is_empty() => {
                for b in &self.shared {
                    for v in b.as_slice().chunks_exact(w) {
                        bloom.insert(v);
                    }
                }
            }
            Values::Int(w)
            | Values::UInt(w)
            | Values::Float(w)
            | Values::Fixed(w)
            | Values::FixedBytes(w) => {
                for v in self.values.chunks_exact(w) {
                    bloom.insert(v);
                }
            }
            Values::Bool => {
                for v in &self.values {
                    bloom.insert(&[*v & 1][..]);
                }
            }
            Values::Plain if interning => {
                for &k in &self.keys {
                    if let Some(v) = self.dict.get(k as usize) {
                        bloom.insert(v);
                    }
                }
            }
            Values::Plain if self.shape.split_lengths() => {
                let mut at = 0;
                for l in self.lengths.chunks_exact(4) {
                    let len = u32::from_le_bytes([l[0], l[1], l[2], l[3]]) as usize;
                    if let Some(v) = self.values.get(at..at + len) {
                        bloom.insert(v);
                    }
                    at += len;
                }
            }
            Values::Plain => {
                for v in plain_values(&self.values) {
                    bloom.insert(v);
                }
            }
            Values::Dictionary => {
                for &k in &self.values {
                    if let Some(v) = self.dict.get(usize::from(k)) {
                        bloom.insert(v);
                    }
                }
            }
            Values::Dict => {
                for k in self.values.chunks_exact(4) {
                    let k = u32::from_le_bytes([k[0], k[1], k[2], k[3]]) as usize;
                    if let Some(v) = self.dict.get(k) {
                        bloom.insert(v);
                    }
                }
            }
        }
        Ok(())
    }

    /// Replaces the page's values with what `encode` makes of them.
    fn reencode(&mut self, encode: impl FnOnce(&mut Vec<u8>, &[u8])) {
        self.body.clear();
        encode(&mut self.body, &self.values);
        std::mem::swap(&mut self.body, &mut self.values);
    }

    /// Encodes the page's repetition and definition levels into
    /// `self.levels`, or copies their encoding from the row group's last
    /// page when a sibling leaf's levels were the same.
    fn encode_page_levels(&mut self) {
        self.levels.clear();
        let widths = (
            if self.shape.max_rep > 0 {
                bit_width(self.shape.max_rep)
            } else {
                0
            },
            if self.shape.max_def > 0 {
                bit_width(self.shape.max_def)
            } else {
                0
            },
        );
        if widths == (0, 0) {
            return;
        }
        let encode = |out: &mut Vec<u8>, rep: &[u8], def: &[u8]| {
            if widths.0 > 0 {
                encode_levels(out, rep, widths.0);
            }
            if widths.1 > 0 {
                encode_levels(out, def, widths.1);
            }
        };
        let Some(share) = &self.level_pages else {
            encode(&mut self.levels, &self.rep, &self.def);
            return;
        };
        let mut last = share.lock().unwrap_or_else(|e| e.into_inner());
        if last.widths == widths && last.rep == self.rep && last.def == self.def {
            self.levels.extend_from_slice(&last.levels);
            return;
        }
        encode(&mut self.levels, &self.rep, &self.def);
        // The page's levels are dropped after it: the share keeps them
        // instead (a swap, no copy), and gives back buffers to reuse.
        let last = &mut *last;
        std::mem::swap(&mut last.rep, &mut self.rep);
        std::mem::swap(&mut last.def, &mut self.def);
        last.levels.clear();
        last.levels.extend_from_slice(&self.levels);
        last.widths = widths;
    }

    /// Encodes the buffered levels and values as one data page and appends
    /// it, header first, to the chunk: the values are copied once.
    fn flush_page(&mut self) -> Result<(), Error> {
        if self.page_rows == 0 {
            return Ok(());
        }
        let num_levels = if self.shape.max_def > 0 {
            self.def.len()
        } else {
            self.page_rows
        } as u32;
        // A v2 page's header counts its nulls (levels below the leaf's).
        let nulls = if self.shape.page_v2 && self.shape.max_def > 0 {
            let max = self.shape.max_def;
            self.def.iter().filter(|&&d| d < max).count() as u32
        } else {
            0
        };
        self.encode_page_levels();
        self.bloom_page()?;
        let mut stats = std::mem::take(&mut self.page_stats);
        let encoding = match self.shape.values {
            Values::Plain => {
                if self.shape.dictionary
                    && !self.fell_back
                    && self.plain_pending > 0
                    && self.dictionary_encode()
                {
                    // Min and max over the page's distinct entries: a mark
                    // per value, then one comparison per entry used.
                    self.seen.clear();
                    self.seen.resize(self.dict.len(), 0);
                    for &k in &self.keys {
                        if let Some(x) = self.seen.get_mut(k as usize) {
                            *x = 1;
                        }
                    }
                    let dict = &self.dict;
                    take_seen(&mut self.seen, |k| {
                        if let Some(v) = dict.get(k) {
                            stats.update(v, Values::Plain);
                        }
                    });
                    self.dict_pages = true;
                    Encoding::RLE_DICTIONARY
                } else if self.shape.split_lengths() {
                    if let Some((lo, hi)) = split_min_max(&self.lengths, &mut self.values) {
                        stats.update(lo, Values::Plain);
                        stats.update(hi, Values::Plain);
                    }
                    // The lengths, then the bytes as they are.
                    self.lengths_out.clear();
                    delta_binary_packed(&mut self.lengths_out, &self.lengths, 4);
                    Encoding::DELTA_LENGTH_BYTE_ARRAY
                } else {
                    if let Some((lo, hi)) = plain_min_max(&mut self.values) {
                        stats.update(lo, Values::Plain);
                        stats.update(hi, Values::Plain);
                    }
                    if self.shape.lengths {
                        // A chunk past its dictionary's limit.
                        self.reencode(plain_to_split);
                        Encoding::DELTA_LENGTH_BYTE_ARRAY
                    } else if self.shape.prefixes {
                        self.reencode(plain_to_prefixed);
                        Encoding::DELTA_BYTE_ARRAY
                    } else {
                        Encoding::PLAIN
                    }
                }
            }
            // Shared slices: min, max and NaNs were taken as they came.
            Values::Int(_) | Values::UInt(_) | Values::Float(_) if !self.shared.is_empty() => {
                Encoding::PLAIN
            }
            Values::Int(width) | Values::UInt(width) => {
                let min_max = if self.shape.values == Values::Int(width) {
                    int_min_max(&self.values, width)
                } else {
                    uint_min_max(&self.values, width)
                };
                if let Some((lo, hi)) = min_max {
                    stats.min = Some(lo);
                    stats.max = Some(hi);
                }
                if self.number_dictionary(width) {
                    Encoding::RLE_DICTIONARY
                } else if self.shape.split {
                    self.reencode(|out, v| byte_stream_split(out, v, width));
                    Encoding::BYTE_STREAM_SPLIT
                } else if self.shape.delta {
                    self.reencode(|out, v| delta_binary_packed(out, v, width));
                    Encoding::DELTA_BINARY_PACKED
                } else {
                    Encoding::PLAIN
                }
            }
            Values::Dictionary => {
                // Keys become a bit width byte and the hybrid encoding.
                let width = bit_width(self.dict.len().saturating_sub(1) as u8).max(1);
                self.reencode(|out, v| {
                    out.push(width);
                    encode_hybrid(out, v, width);
                });
                for k in 0..self.dict.len() {
                    if self.used[k >> 6] & (1 << (k & 63)) != 0
                        && let Some(v) = self.dict.get(k)
                    {
                        stats.update(v, Values::Dictionary);
                    }
                }
                self.used = [0; 4];
                Encoding::RLE_DICTIONARY
            }
            Values::Fixed(width) | Values::FixedBytes(width) => {
                for v in self.values.chunks_exact(width) {
                    stats.update(v, self.shape.values);
                }
                Encoding::PLAIN
            }
            Values::Float(width) => {
                let (min_max, nans) = float_min_max(&self.values, width);
                if let Some((lo, hi)) = min_max {
                    stats.min = Some(lo);
                    stats.max = Some(hi);
                }
                stats.nans = nans;
                if self.number_dictionary(width) {
                    Encoding::RLE_DICTIONARY
                } else if self.shape.split {
                    self.reencode(|out, v| byte_stream_split(out, v, width));
                    Encoding::BYTE_STREAM_SPLIT
                } else {
                    Encoding::PLAIN
                }
            }
            Values::Bool => {
                // One byte per value becomes one bit, least significant first.
                self.body.clear();
                for group in self.values.chunks(8) {
                    let mut byte = 0u8;
                    for (i, &v) in group.iter().enumerate() {
                        byte |= (v & 1) << i;
                    }
                    self.body.push(byte);
                }
                let (f, t) = (self.values.contains(&0), self.values.contains(&1));
                if f || t {
                    stats.min = Some(vec![u8::from(!f)]);
                    stats.max = Some(vec![u8::from(t)]);
                }
                std::mem::swap(&mut self.body, &mut self.values);
                Encoding::PLAIN
            }
            Values::Dict => {
                let keys: Vec<u32> = self
                    .values
                    .chunks_exact(4)
                    .map(|k| u32::from_le_bytes([k[0], k[1], k[2], k[3]]))
                    .collect();
                let width =
                    (32 - (self.dict.len().saturating_sub(1) as u32).leading_zeros()).max(1) as u8;
                self.body.clear();
                self.body.push(width);
                encode_hybrid_wide(&mut self.body, &keys, width);
                std::mem::swap(&mut self.body, &mut self.values);
                let dict = &self.dict;
                take_seen(&mut self.seen, |k| {
                    if let Some(v) = dict.get(k) {
                        stats.update(v, Values::Dict);
                    }
                });
                Encoding::RLE_DICTIONARY
            }
        };
        self.plain_pages |= encoding != Encoding::RLE_DICTIONARY;
        if self.chunk.capacity() == 0
            && let Some(pool) = &self.pool
        {
            self.chunk = pool.take(self.last_bytes);
        }
        let offset = self.chunk.len() + self.spliced;
        let (size, uncompressed) = if self.shape.page_v2 && self.shared.is_empty() {
            // The levels without their length prefixes, repetition first.
            let mut v2_levels = std::mem::take(&mut self.v2_levels);
            v2_levels.clear();
            let (mut at, mut rep_bytes, mut def_bytes) = (0, 0, 0);
            for (present, bytes) in [
                (self.shape.max_rep > 0, &mut rep_bytes),
                (self.shape.max_def > 0, &mut def_bytes),
            ] {
                if present && at + 4 <= self.levels.len() {
                    let mut len = [0u8; 4];
                    len.copy_from_slice(&self.levels[at..at + 4]);
                    let len = (u32::from_le_bytes(len) as usize).min(self.levels.len() - at - 4);
                    v2_levels.extend_from_slice(&self.levels[at + 4..at + 4 + len]);
                    *bytes = len as u32;
                    at += 4 + len;
                }
            }
            let compressed = self.codec.codec != crate::Compression::None;
            let written = write_page_v2(
                &mut self.chunk,
                &mut self.body,
                &mut self.codec,
                Page {
                    kind: PageKind::DataV2 {
                        encoding,
                        nulls,
                        rows: self.page_rows as u32,
                        rep_bytes,
                        def_bytes,
                        compressed,
                    },
                    values: num_levels,
                    checksum: self.checksums,
                },
                &v2_levels,
                &[&self.lengths_out, &self.values],
            );
            self.v2_levels = v2_levels;
            written?
        } else if self.shared.is_empty() {
            write_page(
                &mut self.chunk,
                &mut self.body,
                &mut self.codec,
                Page {
                    kind: PageKind::Data { encoding },
                    values: num_levels,
                    checksum: self.checksums,
                },
                &[&self.levels, &self.lengths_out, &self.values],
            )?
        } else {
            // The header here, the body spliced in from the batches.
            let raw = self.shared_bytes;
            let crc = self.checksums.then(|| {
                let mut h = crc32fast::Hasher::new();
                for b in &self.shared {
                    h.update(b.as_slice());
                }
                h.finalize()
            });
            // Shared slices are values alone (a leaf without levels),
            // never compressed.
            let kind = if self.shape.page_v2 {
                PageKind::DataV2 {
                    encoding,
                    nulls,
                    rows: self.page_rows as u32,
                    rep_bytes: 0,
                    def_bytes: 0,
                    compressed: false,
                }
            } else {
                PageKind::Data { encoding }
            };
            page_header(&mut self.chunk, kind, raw, raw, num_levels, crc);
            for b in self.shared.drain(..) {
                self.splices.push((self.chunk.len(), b));
            }
            self.spliced += raw;
            self.shared_bytes = 0;
            let size = self.chunk.len() + self.spliced - offset;
            (size, size)
        };
        self.pages.push(PageMeta {
            offset,
            size,
            uncompressed,
            levels: num_levels,
            rows: self.page_rows,
            stats,
        });
        self.def.clear();
        self.rep.clear();
        self.values.clear();
        self.lengths.clear();
        self.lengths_out.clear();
        self.keys.clear();
        self.plain_pending = 0;
        self.page_dict_start = self.dict.len();
        self.page_rows = 0;
        Ok(())
    }

    /// The finished column chunk: its bytes (offsets start at 0) and the
    /// metadata parquet needs to splice it into a row group. The encoder is
    /// left empty, keeping its buffers, for the next row group; chunk
    /// buffers come from, and go back to, `pool` (see [`BufferPool`]).
    pub fn close(&mut self, pool: &BufferPool) -> Result<(ColumnChunk, ColumnCloseResult), Error> {
        self.flush_page()?;
        // The next chunk's buffer comes from the pool at its first page, by
        // when this one's may have been given back.
        self.pool = Some(pool.clone());
        let mut encodings = vec![Encoding::RLE];
        // With a dictionary on, the properties' encoding is only for the
        // pages after a fall-back.
        let fallback = !self.shape.dictionary || self.fell_back;
        if self.shape.delta && fallback {
            encodings.push(Encoding::DELTA_BINARY_PACKED);
        }
        if self.shape.split && fallback {
            encodings.push(Encoding::BYTE_STREAM_SPLIT);
        }
        if self.shape.lengths && fallback {
            encodings.push(Encoding::DELTA_LENGTH_BYTE_ARRAY);
        }
        if self.shape.prefixes && fallback {
            encodings.push(Encoding::DELTA_BYTE_ARRAY);
        }
        let mut uncompressed = 0usize;
        let dictionary = match self.shape.values {
            Values::Dictionary | Values::Dict => true,
            Values::Plain | Values::Int(_) | Values::UInt(_) | Values::Float(_) => self.dict_pages,
            _ => false,
        };
        // `PLAIN` where values or a dictionary page take it, as parquet's
        // writer lists them.
        if dictionary || encodings.len() == 1 {
            encodings.insert(0, Encoding::PLAIN);
        }
        let (chunk, dictionary_offset, shift) = match dictionary {
            false => (std::mem::take(&mut self.chunk), None, 0),
            true => {
                // The dictionary page goes first; the (small) data pages
                // are copied in behind it.
                encodings.push(Encoding::RLE_DICTIONARY);
                // Never an empty dictionary: readers give the hidden slots
                // of a required leaf under a null parent key 0, which must
                // exist in the dictionary they build.
                if self.dict.is_empty() {
                    self.dict.intern(b"");
                }
                // Numbers' dictionaries are never empty: a page is
                // dictionary-encoded only with values.
                let (entries, plain) = match self.shape.values {
                    Values::Int(_) | Values::UInt(_) | Values::Float(_) => {
                        (self.numbers.len(), self.numbers.plain())
                    }
                    _ => (self.dict.len(), self.dict.plain()),
                };
                let mut out = pool.take(self.last_bytes);
                let (size, raw) = write_page(
                    &mut out,
                    &mut self.body,
                    &mut self.codec,
                    Page {
                        kind: PageKind::Dictionary,
                        values: entries as u32,
                        checksum: self.checksums,
                    },
                    &[plain],
                )?;
                uncompressed += raw;
                out.extend_from_slice(&self.chunk);
                self.chunk.clear();
                for (at, _) in &mut self.splices {
                    *at += size;
                }
                (out, Some(0), size)
            }
        };
        self.last_bytes = chunk.len();
        let kind = self.shape.values;
        let mut column_index = ColumnIndexBuilder::new(kind.physical_type());
        let mut offset_index = OffsetIndexBuilder::new();
        let mut chunk_stats = Stats::default();
        let mut num_values = 0i64;
        for p in std::mem::take(&mut self.pages) {
            uncompressed += p.uncompressed;
            num_values += i64::from(p.levels);
            offset_index.append_row_count(p.rows as i64);
            offset_index.append_offset_and_size((p.offset + shift) as i64, p.size as i32);
            chunk_stats.merge(&p.stats, kind);
            let nans = matches!(kind, Values::Float(_)).then_some(p.stats.nans as i64);
            let (min, max) = match (p.stats.min, p.stats.max) {
                (Some(lo), Some(hi)) => (
                    self.truncate_min(lo, self.shape.index_truncate).0,
                    self.truncate_max(hi, self.shape.index_truncate).0,
                ),
                _ => (Vec::new(), Vec::new()),
            };
            column_index.append(
                min.is_empty() && max.is_empty(),
                min,
                max,
                p.stats.nulls as i64,
                nans,
            );
        }
        let stats = self.chunk_statistics(chunk_stats);
        let chunk = ColumnChunk::new(chunk, std::mem::take(&mut self.splices));
        self.spliced = 0;
        let compressed = chunk.len();
        let mut metadata = ColumnChunkMetaData::builder(self.descr.clone())
            .set_compression(parquet_codec(self.codec.codec)?)
            .set_encodings(encodings)
            .set_num_values(num_values)
            .set_total_compressed_size(compressed as i64)
            .set_total_uncompressed_size(uncompressed as i64)
            .set_data_page_offset(shift as i64)
            .set_dictionary_page_offset(dictionary_offset);
        // Statistics per the column's setting, as parquet's writer keeps
        // them: none, the chunk's alone, or the chunk's and each page's
        // (the column index).
        if self.shape.statistics != EnabledStatistics::None {
            metadata = metadata.set_statistics(stats);
        }
        let metadata = metadata.build()?;
        let column_index = match self.shape.statistics {
            EnabledStatistics::Page => Some(column_index.build()?),
            _ => None,
        };
        self.dict.clear();
        self.numbers.clear();
        self.page_dict_start = 0;
        self.used = [0; 4];
        self.seen.clear();
        self.fell_back = false;
        self.dict_pages = false;
        let rows = std::mem::take(&mut self.rows);
        // Folded to the smallest size within the target rate, and left out
        // of a chunk of dictionary pages alone where the properties say
        // so, as parquet's writer does.
        let bloom_filter = self.bloom.take().and_then(|mut b| {
            let (_, fpp) = self.shape.bloom?;
            b.fold_to_target_fpp(fpp);
            (self.shape.bloom_dictionary || self.plain_pages).then_some(b)
        });
        self.plain_pages = false;
        let close = ColumnCloseResult {
            bytes_written: compressed as u64,
            rows_written: rows,
            metadata,
            bloom_filter,
            column_index,
            offset_index: Some(offset_index.build()),
        };
        Ok((chunk, close))
    }
}

impl LeafEncoder {
    /// Whether min and max are cut as UTF-8 (the column holds strings).
    fn is_utf8(&self) -> bool {
        matches!(
            self.descr.logical_type_ref(),
            Some(parquet::basic::LogicalType::String)
        ) || self.descr.converted_type() == parquet::basic::ConvertedType::UTF8
    }

    /// Whether statistics are cut to a length limit: byte strings only.
    /// Fixed-length values stay whole: their statistics are `PLAIN`, the
    /// type's length, and Arrow C++ (pyarrow 26) aborts the process reading
    /// the shorter ones parquet's writer cuts for `FixedSizeBinary` wider
    /// than the limit.
    fn cuts_statistics(&self) -> bool {
        self.shape.values.physical_type() == PhysicalType::BYTE_ARRAY
    }

    /// A byte-string minimum cut to at most `limit` bytes (at a character
    /// boundary for strings), as parquet's writer cuts it; `true` when cut.
    fn truncate_min(&self, v: Vec<u8>, limit: Option<usize>) -> (Vec<u8>, bool) {
        let Some(l) = limit.filter(|&l| v.len() > l && self.cuts_statistics()) else {
            return (v, false);
        };
        match std::str::from_utf8(&v) {
            Ok(s) if self.is_utf8() => match (1..=l).rfind(|&x| s.is_char_boundary(x)) {
                Some(cut) => (v[..cut].to_vec(), true),
                None => (v, false),
            },
            _ => (v[..l].to_vec(), true),
        }
    }

    /// A byte-string maximum cut to at most `limit` bytes and then raised
    /// so that it stays an upper bound, as parquet's writer does; `true`
    /// when cut. Left whole when no shorter upper bound exists.
    fn truncate_max(&self, v: Vec<u8>, limit: Option<usize>) -> (Vec<u8>, bool) {
        let Some(l) = limit.filter(|&l| v.len() > l && self.cuts_statistics()) else {
            return (v, false);
        };
        let raised = match std::str::from_utf8(&v) {
            Ok(s) if self.is_utf8() => {
                let lower = l.saturating_sub(3);
                (lower..=l)
                    .rfind(|&x| s.is_char_boundary(x))
                    .and_then(|cut| raise_utf8(&s[..cut]))
            }
            _ => raise_bytes(v[..l].to_vec()),
        };
        match raised {
            Some(r) => (r, true),
            None => (v, false),
        }
    }

    /// The column chunk's statistics from its pages' (byte strings cut as
    /// parquet's writer cuts them).
    fn chunk_statistics(&self, s: Stats) -> Statistics {
        let nulls = Some(s.nulls);
        let nans = s.min.is_some().then_some(s.nans);
        let signed = self.descr.sort_order().is_signed();
        macro_rules! typed {
            ($variant:ident, $conv:expr, $nans:expr) => {
                Statistics::$variant(
                    ValueStatistics::new(s.min.map($conv), s.max.map($conv), None, nulls, false)
                        .with_min_is_exact(true)
                        .with_max_is_exact(true)
                        .with_nan_count($nans)
                        .with_backwards_compatible_min_max(signed),
                )
            };
        }
        match self.shape.values {
            Values::Plain | Values::Dictionary | Values::Dict => {
                let (min, min_cut) = match s.min {
                    Some(v) => {
                        let (v, cut) = self.truncate_min(v, self.shape.truncate);
                        (Some(ByteArray::from(v)), cut)
                    }
                    None => (None, false),
                };
                let (max, max_cut) = match s.max {
                    Some(v) => {
                        let (v, cut) = self.truncate_max(v, self.shape.truncate);
                        (Some(ByteArray::from(v)), cut)
                    }
                    None => (None, false),
                };
                Statistics::ByteArray(
                    ValueStatistics::new(min, max, None, nulls, false)
                        .with_min_is_exact(!min_cut)
                        .with_max_is_exact(!max_cut)
                        .with_backwards_compatible_min_max(signed),
                )
            }
            Values::Int(4) | Values::UInt(4) => typed!(Int32, |v: Vec<u8>| int_le(&v) as i32, None),
            Values::Int(_) | Values::UInt(_) => {
                typed!(Int64, |v: Vec<u8>| uint_le(&v) as i64, None)
            }
            // parquet's writer counts NaNs of chunks that hold a value.
            Values::Float(4) => typed!(Float, |v: Vec<u8>| float_le(&v) as f32, nans),
            Values::Float(_) => typed!(Double, |v: Vec<u8>| float_le(&v), nans),
            Values::Bool => typed!(Boolean, |v: Vec<u8>| v.first() == Some(&1), None),
            // Decimals and other fixed-length bytes: never cut (see
            // `cuts_statistics`).
            Values::Fixed(_) | Values::FixedBytes(_) => typed!(
                FixedLenByteArray,
                |v: Vec<u8>| parquet::data_type::FixedLenByteArray::from(v),
                None
            ),
        }
    }
}
