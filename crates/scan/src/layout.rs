//! The buffer layout of an Arrow IPC record batch: which buffer belongs to
//! which column and what it holds, checked against the body; and the
//! bounds that keep a compressed buffer from declaring more bytes than its
//! column's lengths allow.

use std::{io::Read, ops::Range};

use arrow_ipc::{CompressionType, MetadataVersion};
use arrow_schema::{DataType, IntervalUnit, UnionMode};
use bytes::Bytes;

/// What a buffer holds, for bounding its decompressed size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// Validity bits of the node.
    Validity,
    /// `width` bytes per value (bits when `bits`).
    Values { width: u64, bits: bool },
    /// `n + 1` offsets of `width` bytes.
    Offsets { width: u64 },
    /// Bytes addressed by the offsets in buffer `offsets`.
    Data { offsets: usize, width: u64 },
    /// 16-byte views.
    Views,
    /// Variadic data buffer `k` addressed by the views in buffer `views`.
    Variadic { views: usize, k: i32 },
}

#[derive(Debug, Clone)]
pub(super) struct BufRef {
    pub(super) index: usize,
    pub(super) range: Range<u64>,
    pub(super) role: Role,
    pub(super) node_len: u64,
    pub(super) needed: bool,
}

#[derive(Debug)]
pub(super) struct Layout {
    /// Per top-level column, its buffers in order.
    pub(super) columns: Vec<Vec<BufRef>>,
}

struct Walker {
    nodes: Vec<(u64, u64)>,
    buffers: Vec<(u64, u64)>,
    variadic: Vec<i64>,
    node: usize,
    buffer: usize,
    var: usize,
    version: MetadataVersion,
    /// Whether buffers are compressed (their lengths are then checked
    /// after reading their length prefix, in [`check_compressed`]).
    compressed: bool,
    out: Vec<BufRef>,
}

/// Checks that a buffer of `len` bytes holds whole values of its role's
/// width: Arrow's validation reads offsets and views as typed slices, and
/// panics on a ragged end.
fn whole_values(index: usize, role: Role, len: u64) -> Result<(), String> {
    let width = match role {
        Role::Offsets { width } | Role::Values { width, bits: false } => width,
        Role::Views => 16,
        _ => 1,
    };
    if width > 1 && !len.is_multiple_of(width) {
        return Err(format!(
            "buffer {index} holds {len} bytes, not a whole number of {width}-byte values"
        ));
    }
    Ok(())
}

impl Walker {
    fn node(&mut self) -> Result<(u64, u64), String> {
        let n = *self
            .nodes
            .get(self.node)
            .ok_or("fewer field nodes than the schema needs")?;
        self.node += 1;
        Ok(n)
    }

    fn buffer(&mut self, role: Role, node: (u64, u64)) -> Result<usize, String> {
        let i = self.buffer;
        let &(off, len) = self
            .buffers
            .get(i)
            .ok_or("fewer buffers than the schema needs")?;
        self.buffer += 1;
        if !self.compressed {
            whole_values(i, role, len)?;
        }
        let needed = len > 0 && !(role == Role::Validity && node.1 == 0);
        self.out.push(BufRef {
            index: i,
            range: off..off + len,
            role,
            node_len: node.0,
            needed,
        });
        Ok(i)
    }

    fn field(&mut self, dt: &DataType) -> Result<(), String> {
        use DataType::*;
        let node = self.node()?;
        let fixed = |w: u64| Role::Values {
            width: w,
            bits: false,
        };
        match dt {
            Null => {}
            Boolean => {
                self.buffer(Role::Validity, node)?;
                self.buffer(
                    Role::Values {
                        width: 1,
                        bits: true,
                    },
                    node,
                )?;
            }
            Int8 | UInt8 => self.fixed(node, fixed(1))?,
            Int16 | UInt16 | Float16 => self.fixed(node, fixed(2))?,
            Int32 | UInt32 | Float32 | Date32 | Time32(_) | Decimal32(_, _) => {
                self.fixed(node, fixed(4))?
            }
            Int64
            | UInt64
            | Float64
            | Date64
            | Time64(_)
            | Timestamp(_, _)
            | Duration(_)
            | Decimal64(_, _) => self.fixed(node, fixed(8))?,
            Decimal128(_, _) => self.fixed(node, fixed(16))?,
            Decimal256(_, _) => self.fixed(node, fixed(32))?,
            Interval(IntervalUnit::YearMonth) => self.fixed(node, fixed(4))?,
            Interval(IntervalUnit::DayTime) => self.fixed(node, fixed(8))?,
            Interval(IntervalUnit::MonthDayNano) => self.fixed(node, fixed(16))?,
            FixedSizeBinary(w) => {
                let w = u64::try_from(*w).map_err(|_| "negative fixed size")?;
                self.fixed(node, fixed(w))?
            }
            Utf8 | Binary => self.var(node, 4)?,
            LargeUtf8 | LargeBinary => self.var(node, 8)?,
            Utf8View | BinaryView => {
                let count = *self
                    .variadic
                    .get(self.var)
                    .ok_or("missing variadic buffer count")?;
                self.var += 1;
                let count = i32::try_from(count).map_err(|_| "bad variadic buffer count")?;
                if count < 0 || count as usize > self.buffers.len() {
                    return Err("bad variadic buffer count".into());
                }
                self.buffer(Role::Validity, node)?;
                let views = self.buffer(Role::Views, node)?;
                for k in 0..count {
                    self.buffer(Role::Variadic { views, k }, node)?;
                }
            }
            List(c) | Map(c, _) => {
                self.buffer(Role::Validity, node)?;
                self.buffer(Role::Offsets { width: 4 }, node)?;
                self.field(c.data_type())?;
            }
            LargeList(c) => {
                self.buffer(Role::Validity, node)?;
                self.buffer(Role::Offsets { width: 8 }, node)?;
                self.field(c.data_type())?;
            }
            ListView(c) | LargeListView(c) => {
                let w = if matches!(dt, ListView(_)) { 4 } else { 8 };
                self.buffer(Role::Validity, node)?;
                self.buffer(fixed(w), node)?;
                self.buffer(fixed(w), node)?;
                self.field(c.data_type())?;
            }
            FixedSizeList(c, _) => {
                self.buffer(Role::Validity, node)?;
                self.field(c.data_type())?;
            }
            Struct(fs) => {
                self.buffer(Role::Validity, node)?;
                for f in fs {
                    self.field(f.data_type())?;
                }
            }
            RunEndEncoded(a, b) => {
                self.field(a.data_type())?;
                self.field(b.data_type())?;
            }
            Dictionary(k, _) => {
                let w = k.primitive_width().ok_or("bad dictionary key type")? as u64;
                self.fixed(node, fixed(w))?;
            }
            Union(fs, mode) => {
                if self.version < MetadataVersion::V5 {
                    self.buffer(Role::Validity, node)?;
                }
                self.buffer(fixed(1), node)?;
                if *mode == UnionMode::Dense {
                    self.buffer(fixed(4), node)?;
                }
                for (_, f) in fs.iter() {
                    self.field(f.data_type())?;
                }
            }
        }
        Ok(())
    }

    fn fixed(&mut self, node: (u64, u64), role: Role) -> Result<(), String> {
        self.buffer(Role::Validity, node)?;
        self.buffer(role, node)?;
        Ok(())
    }

    fn var(&mut self, node: (u64, u64), width: u64) -> Result<(), String> {
        self.buffer(Role::Validity, node)?;
        let offsets = self.buffer(Role::Offsets { width }, node)?;
        self.buffer(Role::Data { offsets, width }, node)?;
        Ok(())
    }
}

/// Walks a batch header against the schema: every buffer's range, role
/// and column, checked against the body.
pub(super) fn walk(
    fields: &arrow_schema::Fields,
    version: MetadataVersion,
    rb: &arrow_ipc::RecordBatch<'_>,
    body_len: u64,
) -> Result<Layout, String> {
    let length = rb.length();
    if length < 0 {
        return Err(format!("negative row count {length}"));
    }
    let nodes = rb
        .nodes()
        .ok_or("no field nodes")?
        .iter()
        .map(|n| {
            let (len, nulls) = (n.length(), n.null_count());
            if len < 0 || nulls < 0 || nulls > len {
                Err(format!("field node with length {len} and {nulls} nulls"))
            } else {
                Ok((len as u64, nulls as u64))
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let buffers = rb
        .buffers()
        .ok_or("no buffers")?
        .iter()
        .map(|b| {
            let (off, len) = (b.offset(), b.length());
            match (u64::try_from(off), u64::try_from(len)) {
                (Ok(o), Ok(l)) if o.checked_add(l).is_some_and(|e| e <= body_len) => Ok((o, l)),
                _ => Err(format!(
                    "buffer at {off} of length {len} is outside the body of {body_len} bytes"
                )),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(c) = rb.compression()
        && (c.method() != arrow_ipc::BodyCompressionMethod::BUFFER
            || !matches!(
                c.codec(),
                CompressionType::LZ4_FRAME | CompressionType::ZSTD
            ))
    {
        return Err("unknown body compression".into());
    }
    let variadic: Vec<i64> = rb
        .variadicBufferCounts()
        .map(|v| v.iter().collect())
        .unwrap_or_default();
    let mut w = Walker {
        nodes,
        buffers,
        variadic,
        node: 0,
        buffer: 0,
        var: 0,
        version,
        compressed: rb.compression().is_some(),
        out: Vec::new(),
    };
    let mut columns = Vec::with_capacity(fields.len());
    for f in fields {
        let first = w.node;
        w.field(f.data_type())?;
        if w.nodes[first].0 != length as u64 {
            return Err(format!(
                "column '{}' has {} rows, the batch {length}",
                f.name(),
                w.nodes[first].0
            ));
        }
        columns.push(std::mem::take(&mut w.out));
    }
    let w_state = (w.node, w.buffer, w.var);
    let (nodes, buffers, variadic) = (w.nodes, w.buffers, w.variadic);
    if w_state != (nodes.len(), buffers.len(), variadic.len()) {
        return Err(format!(
            "the header has {} nodes, {} buffers and {} variadic counts; the schema uses {}, {} and {}",
            nodes.len(),
            buffers.len(),
            variadic.len(),
            w_state.0,
            w_state.1,
            w_state.2
        ));
    }
    Ok(Layout { columns })
}

pub(super) fn codec(rb: &arrow_ipc::RecordBatch<'_>) -> Option<CompressionType> {
    rb.compression().map(|c| c.codec())
}

/// The declared decompressed length of a compressed buffer: `None` when
/// it is stored raw or empty.
pub(super) fn declared(bytes: &[u8]) -> Result<Option<u64>, String> {
    if bytes.is_empty() {
        return Ok(None);
    }
    let prefix: [u8; 8] = bytes
        .get(..8)
        .and_then(|p| p.try_into().ok())
        .ok_or("compressed buffer shorter than its length prefix")?;
    match i64::from_le_bytes(prefix) {
        -1 | 0 => Ok(None),
        n if n > 0 => Ok(Some(n as u64)),
        n => Err(format!("compressed buffer declares length {n}")),
    }
}

/// Decompresses a small buffer (offsets or views) to bound another one.
pub(super) fn decompress(
    bytes: &[u8],
    codec: CompressionType,
    limit: u64,
) -> Result<Vec<u8>, String> {
    let Some(n) = declared(bytes)? else {
        return Ok(bytes.get(8..).unwrap_or_default().to_vec());
    };
    if n > limit {
        return Err(format!(
            "compressed buffer declares {n} bytes, at most {limit} fit"
        ));
    }
    let input = &bytes[8..];
    let mut out = Vec::with_capacity(n as usize);
    match codec {
        CompressionType::LZ4_FRAME => {
            lz4_flex::frame::FrameDecoder::new(input)
                .take(n)
                .read_to_end(&mut out)
                .map_err(|e| format!("lz4: {e}"))?;
        }
        _ => {
            out = zstd::bulk::decompress(input, n as usize).map_err(|e| format!("zstd: {e}"))?;
        }
    }
    Ok(out)
}

/// The most bytes a buffer of this role may decompress to, given the
/// node's length and, for data buffers, the decompressed offsets or views.
pub(super) fn bound(
    r: &BufRef,
    codec: CompressionType,
    get: &dyn Fn(usize) -> Option<Bytes>,
) -> Result<u64, String> {
    let n = r.node_len;
    let pad = |x: u64| x.saturating_add(63) & !63;
    Ok(match r.role {
        Role::Validity => pad(n.div_ceil(8)),
        Role::Values { width, bits: true } => pad(n.saturating_mul(width).div_ceil(8)),
        Role::Values { width, .. } => pad(n.saturating_mul(width)),
        Role::Offsets { width } => pad(n.saturating_add(1).saturating_mul(width)),
        Role::Views => pad(n.saturating_mul(16)),
        Role::Data { offsets, width } => {
            let Some(off) = get(offsets) else {
                return Ok(0);
            };
            let limit = pad(n.saturating_add(1).saturating_mul(width));
            let v = decompress(&off, codec, limit)?;
            let at = (n * width) as usize;
            let last = match width {
                4 => v
                    .get(at..at + 4)
                    .map(|b| i32::from_le_bytes(b.try_into().unwrap_or_default()) as i64),
                _ => v
                    .get(at..at + 8)
                    .map(|b| i64::from_le_bytes(b.try_into().unwrap_or_default())),
            };
            pad(last.map_or(0, |l| l.max(0) as u64))
        }
        Role::Variadic { views, k } => {
            let Some(vb) = get(views) else { return Ok(0) };
            let v = decompress(&vb, codec, pad(n.saturating_mul(16)))?;
            let mut end = 0u64;
            for view in v.chunks_exact(16) {
                let len = u32::from_le_bytes([view[0], view[1], view[2], view[3]]);
                if len > 12 {
                    let idx = i32::from_le_bytes([view[8], view[9], view[10], view[11]]);
                    let off = u32::from_le_bytes([view[12], view[13], view[14], view[15]]);
                    if idx == k {
                        end = end.max(u64::from(off) + u64::from(len));
                    }
                }
            }
            pad(end)
        }
    })
}

/// Checks the declared decompressed sizes of the buffers of `columns`
/// that a decode will decompress: every buffer when `all` (a decode of
/// the original header decompresses skipped validity buffers too), else
/// the needed ones. `bytes(i)` gives buffer `i`'s bytes, `None` when it
/// is not at hand.
pub(super) fn check_compressed(
    rb: &arrow_ipc::RecordBatch<'_>,
    layout: &Layout,
    columns: &[usize],
    all: bool,
    bytes: &dyn Fn(&BufRef) -> Option<Bytes>,
) -> Result<(), String> {
    let Some(codec) = codec(rb) else {
        return Ok(());
    };
    for &c in columns {
        let bufs = &layout.columns[c];
        let by_index = |i: usize| bufs.iter().find(|r| r.index == i).and_then(bytes);
        for r in bufs.iter().filter(|r| all || r.needed) {
            let Some(b) = bytes(r) else {
                if r.needed {
                    return Err(format!("buffer {} was not fetched", r.index));
                }
                continue;
            };
            let declared = declared(&b)?;
            let raw = b.len().saturating_sub(8) as u64;
            whole_values(r.index, r.role, declared.unwrap_or(raw))?;
            if let Some(n) = declared {
                let limit = bound(r, codec, &by_index)?;
                if n > limit {
                    return Err(format!(
                        "compressed buffer {} declares {n} bytes, at most {limit} fit",
                        r.index
                    ));
                }
            }
        }
    }
    Ok(())
}
