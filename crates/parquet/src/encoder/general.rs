//! Leaves at any depth: the path from a column down to one leaf, the
//! definition and repetition levels of a run of rows along it, and the
//! leaf's values.
//!
//! A [`Path`] lists the Arrow arrays met between a column and a leaf: each
//! [`Node`] is one array (the column, a struct, a list or map, the leaf)
//! with its nullability. [`Path::chain`] resolves the arrays of one batch
//! ([`Link`]s), and [`Walk`] turns rows into levels the way the Dremel
//! encoding defines them:
//!
//! * a null at a nullable node ends the value there, at the definition
//!   level reached so far;
//! * a present nullable node adds one level; a list adds one more for
//!   having an entry, so an empty list ends at the level of the list;
//! * the first entry of a row repeats at level 0, a later entry of a list
//!   at that list's repetition level (its depth among the lists).
//!
//! Present leaf values are recorded as runs of leaf indices, so a column
//! without nulls (or a list whose entries are contiguous) is copied in
//! one piece. The entries of a run of lists are visited in one piece too,
//! and the lists' own levels put between theirs; below the deepest list,
//! where no array has a null, the levels are written without a visit.

use arrow_array::{Array, ArrayRef, OffsetSizeTrait, cast::AsArray, types::*};
use arrow_buffer::{BooleanBuffer, NullBuffer};
use arrow_schema::{DataType, Field};
use std::sync::Arc;

use crate::Error;

/// How a node leads to the next array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// A struct: the path goes on in child `.0`.
    Struct(usize),
    /// A list or map with 32-bit offsets: the path goes on in its entries.
    List,
    /// A list with 64-bit offsets.
    LargeList,
    /// The leaf.
    Leaf,
}

/// One array on the path.
#[derive(Debug, Clone)]
pub(super) struct Node {
    pub step: Step,
    pub nullable: bool,
    /// For a list: its repetition level (1 for the outermost list).
    pub rep: u8,
    /// Whether a list lies below this node on the leaf's path (its entries
    /// may take several levels each).
    pub repeated_below: bool,
}

/// How the leaf array's values are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    Bool,
    /// Fixed-width values copied as they are (4 or 8 bytes).
    Copy(usize),
    /// 8- or 16-bit integers widened to 32 bits.
    I8,
    I16,
    U8,
    U16,
    /// Variable-length bytes with 32- or 64-bit offsets.
    Bytes,
    LargeBytes,
    /// A dictionary of bytes: values found through its keys.
    Dict,
    /// `Decimal128` values stored as parquet's writer stores them for the
    /// precision: as `INT32` (precision up to 9), `INT64` (up to 18), or
    /// else as big-endian two's complement cut to this many bytes
    /// (`FIXED_LEN_BYTE_ARRAY`).
    Decimal32,
    Decimal64,
    DecimalFixed(usize),
    /// `FixedSizeBinary` values of this many bytes, copied as they are.
    FixedBytes(usize),
    /// `Decimal256` values as big-endian bytes of this length (the last
    /// of their 32).
    Decimal256(usize),
}

/// Bytes of the `FIXED_LEN_BYTE_ARRAY` that holds every decimal of
/// `precision` digits: the fewest whose signed range covers `10^precision -
/// 1` (the Parquet format's rule, as parquet's writer applies it).
pub(super) fn decimal_bytes(precision: u8) -> usize {
    if precision > 38 {
        // Past `u128`: the same count from the bits of 10^precision (the
        // formula parquet's writer uses).
        return ((10f64.powi(i32::from(precision)).log2() + 1.0) / 8.0).ceil() as usize;
    }
    let most = 10u128.saturating_pow(u32::from(precision)) - 1;
    (1..=16)
        .find(|&n| most < 1u128 << (8 * n - 1))
        .unwrap_or(16)
}

/// The path from a column to one leaf.
#[derive(Debug, Clone)]
pub(super) struct Path {
    pub nodes: Vec<Node>,
    pub source: Source,
    pub max_def: u8,
    pub max_rep: u8,
    /// Most dictionary entries the leaf's Arrow key type can index.
    pub dict_capacity: usize,
}

fn source_of(t: &DataType) -> Option<(Source, usize)> {
    let s = match t {
        DataType::Boolean => Source::Bool,
        DataType::Int8 => Source::I8,
        DataType::Int16 => Source::I16,
        DataType::UInt8 => Source::U8,
        DataType::UInt16 => Source::U16,
        DataType::Int32
        | DataType::UInt32
        | DataType::Date32
        | DataType::Float32
        | DataType::Time32(_) => Source::Copy(4),
        DataType::Int64
        | DataType::UInt64
        | DataType::Float64
        | DataType::Timestamp(..)
        | DataType::Time64(_)
        | DataType::Duration(_) => Source::Copy(8),
        DataType::Utf8 | DataType::Binary => Source::Bytes,
        DataType::FixedSizeBinary(w) if *w > 0 => Source::FixedBytes(*w as usize),
        DataType::LargeUtf8 | DataType::LargeBinary => Source::LargeBytes,
        DataType::Decimal128(p, _) => match *p {
            1..=9 => Source::Decimal32,
            10..=18 => Source::Decimal64,
            19..=38 => Source::DecimalFixed(decimal_bytes(*p)),
            _ => return None,
        },
        // As parquet's writer stores them: the fewest bytes for the
        // precision (spec decimals past 38 digits are `Decimal256`).
        DataType::Decimal256(p, _) if *p > 38 && *p <= 76 => Source::Decimal256(decimal_bytes(*p)),
        DataType::Dictionary(k, v)
            if k.is_dictionary_key_type()
                && matches!(
                    **v,
                    DataType::Utf8 | DataType::Binary | DataType::LargeUtf8 | DataType::LargeBinary
                ) =>
        {
            let bits = k.primitive_width()? * 8 - usize::from(k.is_signed_integer());
            return Some((
                Source::Dict,
                1usize.checked_shl(bits as u32).unwrap_or(usize::MAX),
            ));
        }
        _ => return None,
    };
    Some((s, 0))
}

/// The paths of every leaf under `field`, in schema order; `None` when some
/// type on the way has no direct encoding.
pub(super) fn paths(field: &Field) -> Option<Vec<Path>> {
    let mut out = Vec::new();
    let mut stack = Vec::new();
    walk_field(field, &mut stack, 0, &mut out)?;
    Some(out)
}

fn walk_field(field: &Field, stack: &mut Vec<Node>, rep: u8, out: &mut Vec<Path>) -> Option<()> {
    let nullable = field.is_nullable();
    let node = |step, rep, repeated_below| Node {
        step,
        nullable,
        rep,
        repeated_below,
    };
    match field.data_type() {
        DataType::Struct(children) => {
            if children.is_empty() {
                return None;
            }
            for (i, c) in children.iter().enumerate() {
                stack.push(node(Step::Struct(i), 0, false));
                walk_field(c, stack, rep, out)?;
                stack.pop();
            }
        }
        DataType::List(item) | DataType::LargeList(item) | DataType::Map(item, _) => {
            let step = match field.data_type() {
                DataType::LargeList(_) => Step::LargeList,
                _ => Step::List,
            };
            stack.push(node(step, rep + 1, false));
            walk_field(item, stack, rep + 1, out)?;
            stack.pop();
        }
        t => {
            let (source, dict_capacity) = source_of(t)?;
            stack.push(node(Step::Leaf, 0, false));
            let mut nodes = stack.clone();
            stack.pop();
            // Only lists on this leaf's own path repeat its levels.
            for i in 0..nodes.len() {
                nodes[i].repeated_below = nodes[i + 1..]
                    .iter()
                    .any(|n| matches!(n.step, Step::List | Step::LargeList));
            }
            let max_def = nodes
                .iter()
                .map(|n| u32::from(n.nullable) + u32::from(n.rep > 0))
                .sum::<u32>();
            out.push(Path {
                max_def: u8::try_from(max_def).ok()?,
                max_rep: rep,
                nodes,
                source,
                dict_capacity,
            });
        }
    }
    Some(())
}

/// Offsets of a list array.
#[derive(Clone, Copy)]
pub(super) enum Offsets<'a> {
    None,
    Small(&'a [i32]),
    Large(&'a [i64]),
}

impl Offsets<'_> {
    /// Where list `i`'s entries start (the end of list `i - 1`'s).
    #[inline]
    fn start(&self, i: usize) -> usize {
        match self {
            Offsets::None => 0,
            Offsets::Small(o) => o[i] as usize,
            Offsets::Large(o) => o[i] as usize,
        }
    }
}

/// One node's array in one batch.
#[derive(Clone, Copy)]
pub(super) struct Link<'a> {
    /// Its nulls, when it has any.
    nulls: Option<&'a NullBuffer>,
    offsets: Offsets<'a>,
    /// Whether every array below this one is free of nulls and no list
    /// lies below: each of its elements then reaches the leaf, as one
    /// present value at the path's deepest level.
    dense_below: bool,
    /// For a list: whether some null list's offsets span entries (Arrow
    /// allows it; they are not part of the output).
    null_spans: bool,
}

/// A batch's arrays along a path, and its leaf array.
pub(super) struct Chain<'a> {
    links: Vec<Link<'a>>,
    pub leaf: &'a dyn Array,
}

fn unsupported(what: &str) -> Error {
    Error::InvalidConfig(format!("direct Parquet encoder: expected {what}"))
}

/// Whether the null lists of lists met in one column hold entries (see
/// [`spans_under_nulls`]), by the addresses of their validity and offsets:
/// the leaves under a list share the answer. The column is kept alive so
/// that no other buffer can take those addresses.
#[derive(Default)]
pub(super) struct SpansMemo {
    column: Option<ArrayRef>,
    known: Vec<([usize; 4], bool)>,
}

impl SpansMemo {
    /// [`spans_under_nulls`] of a list of `column`, remembered.
    fn get(&mut self, column: &ArrayRef, nulls: &NullBuffer, offsets: Offsets<'_>) -> bool {
        if !self.column.as_ref().is_some_and(|c| Arc::ptr_eq(c, column)) {
            self.column = Some(column.clone());
            self.known.clear();
        }
        let at = match offsets {
            Offsets::None => 0,
            Offsets::Small(o) => o.as_ptr() as usize,
            Offsets::Large(o) => o.as_ptr() as usize,
        };
        let key = [
            nulls.validity().as_ptr() as usize,
            nulls.offset(),
            nulls.len(),
            at,
        ];
        if let Some(&(_, spans)) = self.known.iter().find(|(k, _)| *k == key) {
            return spans;
        }
        let spans = spans_under_nulls(nulls, offsets);
        self.known.push((key, spans));
        spans
    }
}

impl Path {
    /// The arrays of `column` along the path (`memo`: the answers of
    /// sibling leaves' chains of the same column).
    pub fn chain<'a>(
        &self,
        column: &'a ArrayRef,
        mut memo: Option<&mut SpansMemo>,
    ) -> Result<Chain<'a>, Error> {
        let mut links = Vec::with_capacity(self.nodes.len());
        let mut array: &'a dyn Array = column.as_ref();
        for node in &self.nodes {
            let nulls = array.nulls().filter(|n| n.null_count() > 0);
            let (offsets, next) = match node.step {
                Step::Struct(i) => {
                    let s = array
                        .as_struct_opt()
                        .filter(|s| i < s.num_columns())
                        .ok_or_else(|| unsupported("a struct"))?;
                    (Offsets::None, s.column(i).as_ref())
                }
                Step::List => match array.data_type() {
                    DataType::Map(..) => {
                        let m = array.as_map();
                        (Offsets::Small(m.value_offsets()), m.entries() as &dyn Array)
                    }
                    _ => {
                        let l = array
                            .as_list_opt::<i32>()
                            .ok_or_else(|| unsupported("a list"))?;
                        (Offsets::Small(l.value_offsets()), l.values().as_ref())
                    }
                },
                Step::LargeList => {
                    let l = array
                        .as_list_opt::<i64>()
                        .ok_or_else(|| unsupported("a large list"))?;
                    (Offsets::Large(l.value_offsets()), l.values().as_ref())
                }
                Step::Leaf => (Offsets::None, array),
            };
            let null_spans = match nulls {
                Some(n) if !matches!(offsets, Offsets::None) => match memo.as_deref_mut() {
                    Some(m) => m.get(column, n, offsets),
                    None => spans_under_nulls(n, offsets),
                },
                _ => false,
            };
            links.push(Link {
                nulls,
                offsets,
                dense_below: false,
                null_spans,
            });
            array = next;
        }
        let mut dense = true;
        for (link, node) in links.iter_mut().zip(&self.nodes).rev() {
            link.dense_below = dense;
            dense &= link.nulls.is_none() && !matches!(node.step, Step::List | Step::LargeList);
        }
        Ok(Chain { links, leaf: array })
    }
}

impl Chain<'_> {
    /// What the levels and value runs of rows of this chain depend on:
    /// each node's kind, nullability and repetition level, and where its
    /// nulls and offsets lie (addresses, offsets and lengths). Two leaves
    /// of one batch with equal identities (a struct's fields without
    /// nulls of their own) have equal levels and runs. The addresses
    /// identify the buffers only while they are alive: a caller that keeps
    /// an identity must keep the arrays too.
    pub fn identity(&self, path: &Path) -> Vec<usize> {
        let mut id = Vec::with_capacity(2 + 8 * self.links.len());
        id.extend([usize::from(path.max_def), usize::from(path.max_rep)]);
        for (node, link) in path.nodes.iter().zip(&self.links) {
            let kind = match node.step {
                Step::Struct(_) => 0,
                Step::List => 1,
                Step::LargeList => 2,
                Step::Leaf => 3,
            };
            let (bits, bit0, bits_len) = link.nulls.map_or((0, 0, 0), |n| {
                (n.validity().as_ptr() as usize, n.offset(), n.len())
            });
            let (offsets, offsets_len) = match link.offsets {
                Offsets::None => (0, 0),
                Offsets::Small(o) => (o.as_ptr() as usize, o.len()),
                Offsets::Large(o) => (o.as_ptr() as usize, o.len()),
            };
            id.extend([
                kind | usize::from(node.nullable) << 2 | usize::from(node.repeated_below) << 3,
                usize::from(node.rep),
                bits,
                bit0,
                bits_len,
                offsets,
                offsets_len,
            ]);
        }
        id
    }
}

/// Whether a null list of `nulls` has entries in `offsets`: the gaps
/// between the runs of valid lists, each checked in one comparison.
fn spans_under_nulls(nulls: &NullBuffer, offsets: Offsets<'_>) -> bool {
    let mut at = 0;
    for (s, e) in nulls.inner().set_slices() {
        if offsets.start(at) != offsets.start(s) {
            return true;
        }
        at = e;
    }
    offsets.start(at) != offsets.start(nulls.len())
}

/// Levels and value runs being collected for one leaf.
pub(super) struct Walk<'p> {
    path: &'p Path,
    pub def: &'p mut Vec<u8>,
    pub rep: &'p mut Vec<u8>,
    /// Present leaf values: `(batch, start, end)` runs of leaf indices.
    pub runs: &'p mut Vec<(u32, u32, u32)>,
    /// Scratch: a list's entries' levels before the list's own levels go
    /// between them, and where each entry's levels start.
    scratch: &'p mut (Vec<u8>, Vec<u8>, Vec<u32>),
    want_def: bool,
    want_rep: bool,
    /// A null met where the schema allows none.
    pub bad: bool,
}

impl<'p> Walk<'p> {
    pub fn new(
        path: &'p Path,
        def: &'p mut Vec<u8>,
        rep: &'p mut Vec<u8>,
        runs: &'p mut Vec<(u32, u32, u32)>,
        scratch: &'p mut (Vec<u8>, Vec<u8>, Vec<u32>),
    ) -> Self {
        Walk {
            scratch,
            want_def: path.max_def > 0,
            want_rep: path.max_rep > 0,
            path,
            def,
            rep,
            runs,
            bad: false,
        }
    }

    /// Levels of rows `rows` of batch `b`.
    pub fn rows(&mut self, chain: &Chain<'_>, b: u32, rows: std::ops::Range<usize>) {
        self.visit(&chain.links, b, 0, rows, 0);
    }

    #[inline]
    fn push(&mut self, def: u8, n: usize) {
        if self.want_def {
            repeat(self.def, def, n);
        }
        if self.want_rep {
            repeat(self.rep, 0, n);
        }
    }

    #[inline]
    fn run(&mut self, b: u32, s: usize, e: usize) {
        if let Some(last) = self.runs.last_mut()
            && last.0 == b
            && last.2 as usize == s
        {
            last.2 = e as u32;
            return;
        }
        self.runs.push((b, s as u32, e as u32));
    }

    fn visit(
        &mut self,
        links: &[Link<'_>],
        b: u32,
        d: usize,
        range: std::ops::Range<usize>,
        def: u8,
    ) {
        let node = &self.path.nodes[d];
        let link = links[d];
        let here = def + u8::from(node.nullable);
        let nulls = match link.nulls {
            Some(n) if !node.nullable => {
                if range.clone().any(|i| n.is_null(i)) {
                    self.bad = true;
                }
                None
            }
            n => n,
        };
        match node.step {
            Step::Leaf => match nulls {
                None => {
                    self.push(here, range.len());
                    self.run(b, range.start, range.end);
                }
                Some(n) => {
                    // Valid values come in runs: one push and one value
                    // run each, the nulls between them in one push.
                    let mut at = range.start;
                    for (s, e) in valid_runs(n, range.clone()) {
                        let (s, e) = (range.start + s, range.start + e);
                        self.push(def, s - at);
                        self.push(here, e - s);
                        self.run(b, s, e);
                        at = e;
                    }
                    self.push(def, range.end - at);
                }
            },
            Step::Struct(_) => match nulls {
                None => self.visit(links, b, d + 1, range, here),
                Some(n) => {
                    let mut at = range.start;
                    for (s, e) in valid_runs(n, range.clone()) {
                        let (s, e) = (range.start + s, range.start + e);
                        self.push(def, s - at);
                        self.visit(links, b, d + 1, s..e, here);
                        at = e;
                    }
                    self.push(def, range.end - at);
                }
            },
            Step::List | Step::LargeList => match nulls {
                // Null lists whose offsets span entries: the runs of
                // present lists one by one, so that those entries stay
                // out.
                Some(n) if link.null_spans => {
                    let mut at = range.start;
                    for (s, e) in valid_runs(n, range.clone()) {
                        let (s, e) = (range.start + s, range.start + e);
                        self.push(def, s - at);
                        self.lists(links, b, d, s..e, def, None);
                        at = e;
                    }
                    self.push(def, range.end - at);
                }
                n => self.lists(links, b, d, range, def, n),
            },
        }
    }

    /// Levels of lists `range` of node `d`, below definition level `def`;
    /// `nulls` marks the null lists, whose offsets span no entry.
    ///
    /// The entries of all the lists are visited in one piece (they are
    /// contiguous), and the lists' own levels go between them: a null list
    /// ends at `def`, an empty one at the list's level, and each list's
    /// first entry repeats at level 0, its later ones at the list's.
    fn lists(
        &mut self,
        links: &[Link<'_>],
        b: u32,
        d: usize,
        range: std::ops::Range<usize>,
        def: u8,
        nulls: Option<&NullBuffer>,
    ) {
        if range.is_empty() {
            return;
        }
        debug_assert!(self.want_def && self.want_rep, "a list has levels");
        // One dispatch on the offsets' width, not one per list.
        match links[d].offsets {
            Offsets::Small(o) => self.lists_of(
                links,
                b,
                d,
                &o[range.start..=range.end],
                range.start,
                def,
                nulls,
            ),
            Offsets::Large(o) => self.lists_of(
                links,
                b,
                d,
                &o[range.start..=range.end],
                range.start,
                def,
                nulls,
            ),
            Offsets::None => {}
        }
    }

    /// [`Self::lists`] for the lists whose offsets are `offsets`, the
    /// first of them list `from` of the node's array.
    #[allow(clippy::too_many_arguments)]
    fn lists_of<O: OffsetSizeTrait>(
        &mut self,
        links: &[Link<'_>],
        b: u32,
        d: usize,
        offsets: &[O],
        from: usize,
        def: u8,
        nulls: Option<&NullBuffer>,
    ) {
        let node = &self.path.nodes[d];
        let rep = node.rep;
        let here = def + u8::from(node.nullable);
        let first = offsets[0].as_usize();
        let last = offsets[offsets.len() - 1].as_usize();
        let lists = offsets.len() - 1;
        // The validity bits as bytes and the bit of list `from`: one load
        // and shift per empty or null list.
        let (bits, bit0) = match nulls {
            Some(n) => (n.validity(), n.offset() + from),
            None => (&[][..], 0),
        };
        if links[d].dense_below {
            // One present leaf value per entry, at the deepest level: the
            // levels are written in place, the values are one run.
            let leaf = self.path.max_def;
            if last > first {
                self.run(b, first, last);
            }
            let at = self.def.len();
            // 16 bytes of slack for the fixed-size stores of short lists.
            let bound = at + (last - first) + lists + 16;
            self.def.resize(bound, 0);
            self.rep.resize(bound, 0);
            let (d_out, r_out) = (&mut self.def[at..], &mut self.rep[at..]);
            let levels = Levels {
                null: def,
                empty: here,
                leaf,
                rep,
            };
            let p = at
                + if bits.is_empty() {
                    dense_levels::<O, false>(d_out, r_out, offsets, bits, bit0, levels)
                } else {
                    dense_levels::<O, true>(d_out, r_out, offsets, bits, bit0, levels)
                };
            self.def.truncate(p);
            self.rep.truncate(p);
            return;
        }
        // The entries' levels, then the lists' levels put between them.
        let at = self.def.len();
        if last > first {
            self.visit(links, b, d + 1, first..last, here + 1);
        }
        let (cdef, crep, starts) = &mut *self.scratch;
        cdef.clear();
        crep.clear();
        cdef.extend_from_slice(&self.def[at..]);
        crep.extend_from_slice(&self.rep[at..]);
        starts.clear();
        if node.repeated_below {
            // Entries take one level or more, each starting at a
            // repetition of 0: where each starts, and its repetitions
            // below this list kept (0 becomes this list's level).
            starts.resize(last - first + 1, 0);
            let mut k = 0;
            for (i, r) in crep.iter_mut().enumerate() {
                starts[k.min(last - first)] = i as u32;
                k += usize::from(*r == 0);
                *r = (*r).max(rep);
            }
            starts[last - first] = crep.len() as u32;
        } else {
            crep.iter_mut().for_each(|r| *r = rep);
        }
        // At most one level per list besides the entries', and 16 bytes of
        // slack for the fixed-size copies of short lists.
        let bound = at + crep.len() + lists + 16;
        self.def.resize(bound, 0);
        self.rep.resize(bound, 0);
        let merge = Merge {
            def: &mut self.def[at..],
            rep: &mut self.rep[at..],
            cdef,
            crep,
            starts,
        };
        let levels = Levels {
            null: def,
            empty: here,
            leaf: 0,
            rep,
        };
        let p = at
            + match (bits.is_empty(), node.repeated_below) {
                (true, false) => merge.run::<O, false, false>(offsets, bits, bit0, levels),
                (true, true) => merge.run::<O, false, true>(offsets, bits, bit0, levels),
                (false, false) => merge.run::<O, true, false>(offsets, bits, bit0, levels),
                (false, true) => merge.run::<O, true, true>(offsets, bits, bit0, levels),
            };
        self.def.truncate(p);
        self.rep.truncate(p);
    }
}

/// A run of lists' levels being put together: their entries' levels
/// (`cdef`, `crep`, the repetitions already at the list's level), where
/// each entry's start (`starts`, when entries take several levels), and
/// the output (16 bytes of slack past the last level).
struct Merge<'a> {
    def: &'a mut [u8],
    rep: &'a mut [u8],
    cdef: &'a [u8],
    crep: &'a [u8],
    starts: &'a [u32],
}

impl Merge<'_> {
    /// Writes the levels of the lists of `offsets`: a null list (its bit
    /// at `bit0 + j` of `bits` unset, when `NULLS`) at `l.null`, an empty
    /// one at `l.empty`, a list with entries as its entries' levels, the
    /// first repeating at 0. Returns the number of levels.
    #[inline(always)]
    fn run<O: OffsetSizeTrait, const NULLS: bool, const REPEATED: bool>(
        self,
        offsets: &[O],
        bits: &[u8],
        bit0: usize,
        l: Levels,
    ) -> usize {
        let first = offsets[0].as_usize();
        let at = |e: usize| {
            if REPEATED {
                self.starts[e - first] as usize
            } else {
                e - first
            }
        };
        let lists = offsets.len() - 1;
        let mut p = 0;
        let mut j = 0;
        let mut prev = first;
        while j < lists {
            if NULLS {
                // A run of null lists (they span no entry): one level each.
                let z = null_run(bits, bit0 + j, lists - j);
                if z > 0 {
                    fill16(self.def, p, z, l.null);
                    fill16(self.rep, p, z, 0);
                    p += z;
                    j += z;
                    continue;
                }
            }
            let next = offsets[j + 1].as_usize();
            j += 1;
            if next == prev {
                self.def[p] = l.empty;
                self.rep[p] = 0;
                p += 1;
                continue;
            }
            let (s, e) = (at(prev), at(next));
            let n = e - s;
            prev = next;
            if n <= 16 && s + 16 <= self.cdef.len() {
                self.def[p..p + 16].copy_from_slice(&self.cdef[s..s + 16]);
                self.rep[p..p + 16].copy_from_slice(&self.crep[s..s + 16]);
            } else {
                self.def[p..p + n].copy_from_slice(&self.cdef[s..e]);
                self.rep[p..p + n].copy_from_slice(&self.crep[s..e]);
            }
            self.rep[p] = 0;
            p += n;
        }
        p
    }
}

/// The levels a run of lists writes below which every entry reaches the
/// leaf, present: a null list ends at `null`, an empty one at `empty`,
/// each entry at `leaf`, repeating at `rep` but for each list's first.
#[derive(Clone, Copy)]
struct Levels {
    null: u8,
    empty: u8,
    leaf: u8,
    rep: u8,
}

/// Writes the levels of the lists of `offsets` into `def` and `rep`
/// (16 bytes of slack past the last level), list `j`'s validity bit at
/// `bit0 + j` of `bits` when `NULLS`; returns the number of levels.
#[inline(always)]
fn dense_levels<O: OffsetSizeTrait, const NULLS: bool>(
    def: &mut [u8],
    rep: &mut [u8],
    offsets: &[O],
    bits: &[u8],
    bit0: usize,
    l: Levels,
) -> usize {
    let lists = offsets.len() - 1;
    let mut p = 0;
    let mut j = 0;
    let mut prev = offsets[0].as_usize();
    while j < lists {
        if NULLS {
            // A run of null lists (they span no entry): one level each.
            let z = null_run(bits, bit0 + j, lists - j);
            if z > 0 {
                fill16(def, p, z, l.null);
                fill16(rep, p, z, 0);
                p += z;
                j += z;
                continue;
            }
        }
        let next = offsets[j + 1].as_usize();
        let n = next - prev;
        prev = next;
        j += 1;
        if n == 0 {
            def[p] = l.empty;
            rep[p] = 0;
            p += 1;
        } else if n <= 16 {
            def[p..p + 16].copy_from_slice(&[l.leaf; 16]);
            rep[p..p + 16].copy_from_slice(&[l.rep; 16]);
            rep[p] = 0;
            p += n;
        } else {
            def[p..p + n].fill(l.leaf);
            rep[p..p + n].fill(l.rep);
            rep[p] = 0;
            p += n;
        }
    }
    p
}

/// The runs of set bits of `nulls` among `range`, relative to its start:
/// read in place (slicing the buffer would clone its handle, an atomic
/// count each time, on every run of a parent's present values).
#[inline]
fn valid_runs(
    nulls: &NullBuffer,
    range: std::ops::Range<usize>,
) -> arrow_buffer::bit_iterator::BitSliceIterator<'_> {
    arrow_buffer::bit_iterator::BitSliceIterator::new(
        nulls.validity(),
        nulls.offset() + range.start,
        range.len(),
    )
}

/// How many of the (at most `left`) bits from bit `i` of `bits` are unset
/// in a row: the null lists from list `i` on, up to 57 at a time (one
/// word load; a longer run takes several calls).
#[inline(always)]
fn null_run(bits: &[u8], i: usize, left: usize) -> usize {
    let (byte, shift) = (i / 8, i % 8);
    let mut w = [0u8; 8];
    match bits.get(byte..byte + 8) {
        Some(b) => w.copy_from_slice(b),
        None => {
            let b = bits.get(byte..).unwrap_or(&[]);
            w[..b.len()].copy_from_slice(b);
        }
    }
    let run = (u64::from_le_bytes(w) >> shift).trailing_zeros() as usize;
    run.min(64 - shift).min(left)
}

/// Sets `buf[p..p + n]` to `x` by 16-byte stores (`buf` has room for
/// them: 16 bytes of slack past `p + n`).
#[inline(always)]
fn fill16(buf: &mut [u8], p: usize, n: usize, x: u8) {
    let mut k = 0;
    while k < n {
        buf[p + k..p + k + 16].copy_from_slice(&[x; 16]);
        k += 16;
    }
}

/// Appends `n` copies of `x`. Most runs of levels are short: up to 16
/// are written as 16 (a fixed-size store) and cut back, instead of a call
/// to `memset` each.
#[inline(always)]
fn repeat(v: &mut Vec<u8>, x: u8, n: usize) {
    if n <= 16 {
        let len = v.len();
        v.extend_from_slice(&[x; 16]);
        v.truncate(len + n);
    } else {
        v.extend(std::iter::repeat_n(x, n));
    }
}

/// Dictionary keys of any integer width.
#[derive(Clone, Copy)]
pub(super) enum Keys<'a> {
    I8(&'a [i8]),
    I16(&'a [i16]),
    I32(&'a [i32]),
    I64(&'a [i64]),
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
    U64(&'a [u64]),
}

impl Keys<'_> {
    /// Appends keys `rows` mapped through `map` (a key past it maps to
    /// 0) as 4-byte numbers to `out`, setting `seen[k]` to 1 for each:
    /// one dispatch on the key type per run, the room made once.
    #[inline]
    fn put_mapped(
        &self,
        rows: std::ops::Range<usize>,
        map: &[u32],
        out: &mut Vec<u8>,
        seen: &mut [u8],
    ) {
        #[inline(always)]
        fn put<K: Copy>(
            keys: &[K],
            index: impl Fn(K) -> usize,
            map: &[u32],
            out: &mut Vec<u8>,
            seen: &mut [u8],
        ) {
            let at = out.len();
            out.resize(at + 4 * keys.len(), 0);
            for (o, &k) in out[at..].chunks_exact_mut(4).zip(keys) {
                let k = map.get(index(k)).copied().unwrap_or_default();
                o.copy_from_slice(&k.to_le_bytes());
                if let Some(x) = seen.get_mut(k as usize) {
                    *x = 1;
                }
            }
        }
        match self {
            Keys::I8(k) => put(&k[rows], |k| k as usize, map, out, seen),
            Keys::I16(k) => put(&k[rows], |k| k as usize, map, out, seen),
            Keys::I32(k) => put(&k[rows], |k| k as usize, map, out, seen),
            Keys::I64(k) => put(&k[rows], |k| k as usize, map, out, seen),
            Keys::U8(k) => put(&k[rows], usize::from, map, out, seen),
            Keys::U16(k) => put(&k[rows], usize::from, map, out, seen),
            Keys::U32(k) => put(&k[rows], |k| k as usize, map, out, seen),
            Keys::U64(k) => put(&k[rows], |k| k as usize, map, out, seen),
        }
    }
}

/// The keys and the values (as byte strings) of a dictionary array.
pub(super) fn dictionary_parts(leaf: &dyn Array) -> Result<(Keys<'_>, Vec<&[u8]>), Error> {
    let bad = || unsupported("a dictionary of strings or bytes");
    let DataType::Dictionary(k, _) = leaf.data_type() else {
        return Err(bad());
    };
    macro_rules! keys {
        ($t:ty, $v:ident) => {{
            let d = leaf.as_dictionary::<$t>();
            (Keys::$v(d.keys().values()), d.values())
        }};
    }
    let (keys, values) = match **k {
        DataType::Int8 => keys!(Int8Type, I8),
        DataType::Int16 => keys!(Int16Type, I16),
        DataType::Int32 => keys!(Int32Type, I32),
        DataType::Int64 => keys!(Int64Type, I64),
        DataType::UInt8 => keys!(UInt8Type, U8),
        DataType::UInt16 => keys!(UInt16Type, U16),
        DataType::UInt32 => keys!(UInt32Type, U32),
        DataType::UInt64 => keys!(UInt64Type, U64),
        _ => return Err(bad()),
    };
    let strings: Vec<&[u8]> = match values.data_type() {
        DataType::Utf8 => values.as_string::<i32>().iter().map(bytes_of).collect(),
        DataType::LargeUtf8 => values.as_string::<i64>().iter().map(bytes_of).collect(),
        DataType::Binary => values
            .as_binary::<i32>()
            .iter()
            .map(|v| v.unwrap_or_default())
            .collect(),
        DataType::LargeBinary => values
            .as_binary::<i64>()
            .iter()
            .map(|v| v.unwrap_or_default())
            .collect(),
        _ => return Err(bad()),
    };
    Ok((keys, strings))
}

fn bytes_of(v: Option<&str>) -> &[u8] {
    v.unwrap_or_default().as_bytes()
}

/// A batch's leaf values, ready to append to a page.
pub(super) enum Values<'a> {
    Bool(&'a BooleanBuffer),
    Fixed(&'a [u8], Source),
    Bytes(&'a [i32], &'a [u8]),
    LargeBytes(&'a [i64], &'a [u8]),
    /// Keys, and each key's entry in the chunk's dictionary.
    Dict(Keys<'a>, Vec<u32>),
}

impl<'a> Values<'a> {
    /// The values of `leaf` (read as `source`); `map` turns a dictionary
    /// leaf's keys into chunk dictionary entries.
    pub fn new(leaf: &'a dyn Array, source: Source, map: Vec<u32>) -> Result<Self, Error> {
        let fixed = |width: usize| -> Result<&'a [u8], Error> {
            leaf_buffer(leaf)
                .filter(|b| b.len() == leaf.len() * width)
                .ok_or_else(|| unsupported("a primitive array"))
        };
        Ok(match source {
            Source::Bool => Values::Bool(
                leaf.as_boolean_opt()
                    .ok_or_else(|| unsupported("a boolean array"))?
                    .values(),
            ),
            Source::Copy(w) => Values::Fixed(fixed(w)?, source),
            Source::FixedBytes(w) => Values::Fixed(
                leaf.as_fixed_size_binary_opt()
                    .map(|a| a.value_data())
                    .filter(|b| b.len() == leaf.len() * w)
                    .ok_or_else(|| unsupported("a fixed-size binary array"))?,
                source,
            ),
            Source::I8 | Source::U8 => Values::Fixed(fixed(1)?, source),
            Source::I16 | Source::U16 => Values::Fixed(fixed(2)?, source),
            Source::Bytes => match leaf.data_type() {
                DataType::Utf8 => {
                    let s = leaf.as_string::<i32>();
                    Values::Bytes(s.value_offsets(), s.value_data())
                }
                _ => {
                    let s = leaf
                        .as_binary_opt::<i32>()
                        .ok_or_else(|| unsupported("a binary array"))?;
                    Values::Bytes(s.value_offsets(), s.value_data())
                }
            },
            Source::LargeBytes => match leaf.data_type() {
                DataType::LargeUtf8 => {
                    let s = leaf.as_string::<i64>();
                    Values::LargeBytes(s.value_offsets(), s.value_data())
                }
                _ => {
                    let s = leaf
                        .as_binary_opt::<i64>()
                        .ok_or_else(|| unsupported("a large binary array"))?;
                    Values::LargeBytes(s.value_offsets(), s.value_data())
                }
            },
            Source::Dict => Values::Dict(dictionary_parts(leaf)?.0, map),
            Source::Decimal32 | Source::Decimal64 | Source::DecimalFixed(_) => {
                Values::Fixed(fixed(16)?, source)
            }
            Source::Decimal256(_) => Values::Fixed(fixed(32)?, source),
        })
    }

    /// Appends the keys of byte strings `s..e` in `dict` to `keys` (new
    /// values added) and returns their `PLAIN` size (a 4-byte length and
    /// the bytes each); `None` for values that are not byte strings.
    #[inline]
    pub fn intern(
        &self,
        s: usize,
        e: usize,
        dict: &mut super::dict::Dictionary,
        keys: &mut Vec<u32>,
    ) -> Option<usize> {
        fn run<O: OffsetSizeTrait>(
            o: &[O],
            data: &[u8],
            dict: &mut super::dict::Dictionary,
            keys: &mut Vec<u32>,
        ) -> usize {
            dict.intern_run(o, data, keys);
            plain_size(o)
        }
        match self {
            Values::Bytes(offsets, data) => Some(run(&offsets[s..=e], data, dict, keys)),
            Values::LargeBytes(offsets, data) => Some(run(&offsets[s..=e], data, dict, keys)),
            _ => None,
        }
    }

    /// Appends byte strings `s..e` as `DELTA_LENGTH_BYTE_ARRAY` keeps
    /// them until the page closes: their bytes to `out` (one copy), their
    /// lengths to `lengths` (4 bytes each, little-endian). Other values go
    /// to `out` as [`Self::put`] writes them.
    #[inline]
    pub fn put_split(&self, s: usize, e: usize, out: &mut Vec<u8>, lengths: &mut Vec<u8>) {
        match self {
            Values::Bytes(offsets, data) => put_split(&offsets[s..=e], data, out, lengths),
            Values::LargeBytes(offsets, data) => put_split(&offsets[s..=e], data, out, lengths),
            _ => self.put(s, e, out, &mut []),
        }
    }

    /// Appends values `s..e` to `out` as the page stores them before
    /// encoding: booleans one byte each, integers and floats little-endian
    /// (8 and 16 bits widened to 32), decimals as their `INT32` or `INT64`
    /// (the low bytes, little-endian) or as big-endian bytes of the fixed
    /// length, byte strings `PLAIN` (a 4-byte length, the bytes),
    /// dictionary entries as 4-byte numbers (`seen[k]` set to 1 for each).
    #[inline]
    pub fn put(&self, s: usize, e: usize, out: &mut Vec<u8>, seen: &mut [u8]) {
        match self {
            Values::Bool(b) => out.extend((s..e).map(|i| u8::from(b.value(i)))),
            Values::Fixed(data, source) => match source {
                Source::Copy(w) | Source::FixedBytes(w) => {
                    out.extend_from_slice(&data[s * w..e * w])
                }
                Source::I8 => {
                    for &v in &data[s..e] {
                        out.extend_from_slice(&i32::from(v as i8).to_le_bytes());
                    }
                }
                Source::U8 => {
                    for &v in &data[s..e] {
                        out.extend_from_slice(&i32::from(v).to_le_bytes());
                    }
                }
                Source::I16 => {
                    for v in data[s * 2..e * 2].chunks_exact(2) {
                        let v = i16::from_le_bytes([v[0], v[1]]);
                        out.extend_from_slice(&i32::from(v).to_le_bytes());
                    }
                }
                Source::U16 => {
                    for v in data[s * 2..e * 2].chunks_exact(2) {
                        let v = u16::from_le_bytes([v[0], v[1]]);
                        out.extend_from_slice(&i32::from(v).to_le_bytes());
                    }
                }
                // Little-endian: the low 4 or 8 bytes are the truncated
                // value (parquet's writer casts `v as i32` / `v as i64`).
                Source::Decimal32 => {
                    for v in data[s * 16..e * 16].chunks_exact(16) {
                        out.extend_from_slice(&v[..4]);
                    }
                }
                Source::Decimal64 => {
                    for v in data[s * 16..e * 16].chunks_exact(16) {
                        out.extend_from_slice(&v[..8]);
                    }
                }
                // Big-endian, the last `n` bytes of the 16 (32 for
                // `Decimal256`).
                Source::DecimalFixed(n) | Source::Decimal256(n) => {
                    let w = if let Source::Decimal256(_) = source {
                        32
                    } else {
                        16
                    };
                    for v in data[s * w..e * w].chunks_exact(w) {
                        out.extend(v[..*n].iter().rev());
                    }
                }
                _ => {}
            },
            Values::Bytes(offsets, data) => put_strings(offsets, data, s..e, out),
            Values::LargeBytes(offsets, data) => put_strings(offsets, data, s..e, out),
            Values::Dict(keys, map) => keys.put_mapped(s..e, map, out, seen),
        }
    }
}

/// The `PLAIN` size (a 4-byte length and the bytes each) of the byte
/// strings between `offsets`.
#[inline(always)]
fn plain_size<O: OffsetSizeTrait>(offsets: &[O]) -> usize {
    (offsets[offsets.len() - 1] - offsets[0]).as_usize() + 4 * (offsets.len() - 1)
}

/// Appends the byte strings between `offsets` to `out` (one copy) and
/// their lengths to `lengths`.
#[inline(always)]
fn put_split<O: OffsetSizeTrait>(
    offsets: &[O],
    data: &[u8],
    out: &mut Vec<u8>,
    lengths: &mut Vec<u8>,
) {
    let (s, e) = (offsets[0].as_usize(), offsets[offsets.len() - 1].as_usize());
    out.extend_from_slice(&data[s..e]);
    push_lengths(offsets, lengths);
}

/// Appends byte strings `rows` to `out` as `PLAIN` (a 4-byte length, the
/// bytes).
#[inline(always)]
fn put_strings<O: OffsetSizeTrait>(
    offsets: &[O],
    data: &[u8],
    rows: std::ops::Range<usize>,
    out: &mut Vec<u8>,
) {
    out.reserve(plain_size(&offsets[rows.start..=rows.end]));
    for i in rows {
        let v = &data[offsets[i].as_usize()..offsets[i + 1].as_usize()];
        out.extend_from_slice(&(v.len() as u32).to_le_bytes());
        out.extend_from_slice(v);
    }
}

/// The values of a primitive array as bytes (already sliced to the
/// array's rows).
fn leaf_buffer(leaf: &dyn Array) -> Option<&[u8]> {
    leaf_values(leaf).map(|b| b.as_slice())
}

/// The values buffer of a primitive array, sliced to the array's rows (a
/// reference-counted handle, for pages that share it).
pub(super) fn values_buffer(leaf: &dyn Array) -> Option<arrow_buffer::Buffer> {
    leaf_values(leaf).cloned()
}

fn leaf_values(leaf: &dyn Array) -> Option<&arrow_buffer::Buffer> {
    macro_rules! raw {
        ($t:ty) => {
            leaf.as_primitive_opt::<$t>().map(|a| a.values().inner())
        };
    }
    match leaf.data_type() {
        DataType::Int8 => raw!(Int8Type),
        DataType::Int16 => raw!(Int16Type),
        DataType::Int32 => raw!(Int32Type),
        DataType::Int64 => raw!(Int64Type),
        DataType::UInt8 => raw!(UInt8Type),
        DataType::UInt16 => raw!(UInt16Type),
        DataType::UInt32 => raw!(UInt32Type),
        DataType::UInt64 => raw!(UInt64Type),
        DataType::Float32 => raw!(Float32Type),
        DataType::Float64 => raw!(Float64Type),
        DataType::Date32 => raw!(Date32Type),
        DataType::Decimal128(..) => raw!(Decimal128Type),
        DataType::Decimal256(..) => raw!(Decimal256Type),
        DataType::Time32(arrow_schema::TimeUnit::Second) => raw!(Time32SecondType),
        DataType::Time32(_) => raw!(Time32MillisecondType),
        DataType::Time64(arrow_schema::TimeUnit::Microsecond) => raw!(Time64MicrosecondType),
        DataType::Time64(_) => raw!(Time64NanosecondType),
        DataType::Timestamp(arrow_schema::TimeUnit::Second, _) => raw!(TimestampSecondType),
        DataType::Timestamp(arrow_schema::TimeUnit::Millisecond, _) => {
            raw!(TimestampMillisecondType)
        }
        DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, _) => {
            raw!(TimestampMicrosecondType)
        }
        DataType::Timestamp(_, _) => raw!(TimestampNanosecondType),
        DataType::Duration(arrow_schema::TimeUnit::Second) => raw!(DurationSecondType),
        DataType::Duration(arrow_schema::TimeUnit::Millisecond) => raw!(DurationMillisecondType),
        DataType::Duration(arrow_schema::TimeUnit::Microsecond) => raw!(DurationMicrosecondType),
        DataType::Duration(_) => raw!(DurationNanosecondType),
        _ => None,
    }
}

/// Appends the lengths between consecutive `offsets` (4 bytes each,
/// little-endian).
#[inline]
fn push_lengths<O: arrow_array::OffsetSizeTrait>(offsets: &[O], out: &mut Vec<u8>) {
    let at = out.len();
    out.resize(at + 4 * offsets.len().saturating_sub(1), 0);
    for (l, (s, e)) in out[at..]
        .chunks_exact_mut(4)
        .zip(offsets.iter().zip(&offsets[1..]))
    {
        l.copy_from_slice(&((*e - *s).as_usize() as u32).to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int32Array, ListArray, StructArray};
    use arrow_buffer::{OffsetBuffer, ScalarBuffer};

    /// A list of two rows, the second null, whose offsets are `offsets`.
    fn list(offsets: [i32; 3]) -> ListArray {
        let item = Arc::new(Field::new("item", DataType::Int32, true));
        ListArray::new(
            item,
            OffsetBuffer::new(ScalarBuffer::from(offsets.to_vec())),
            Arc::new(Int32Array::from(vec![1, 2, 3, 4])),
            Some(NullBuffer::from(vec![true, false])),
        )
    }

    #[test]
    fn spans_memo_answers_each_list_of_a_column_apart() {
        // `a`'s null list spans entries 2..4, `b`'s spans none.
        let (a, b) = (list([0, 2, 4]), list([0, 2, 2]));
        let column: ArrayRef = Arc::new(StructArray::from(vec![
            (
                Arc::new(Field::new("a", a.data_type().clone(), true)),
                Arc::new(a.clone()) as ArrayRef,
            ),
            (
                Arc::new(Field::new("b", b.data_type().clone(), true)),
                Arc::new(b.clone()) as ArrayRef,
            ),
        ]));
        let s = column.as_struct();
        let (a, b) = (s.column(0).as_list::<i32>(), s.column(1).as_list::<i32>());
        let mut memo = SpansMemo::default();
        for _ in 0..2 {
            for (l, want) in [(a, true), (b, false)] {
                let (nulls, offsets) = (l.nulls().unwrap(), Offsets::Small(l.value_offsets()));
                assert_eq!(spans_under_nulls(nulls, offsets), want);
                assert_eq!(memo.get(&column, nulls, offsets), want);
            }
        }
        assert_eq!(memo.known.len(), 2);
        // Another column starts over.
        let other: ArrayRef = Arc::new(list([0, 2, 4]));
        let l = other.as_list::<i32>();
        assert!(memo.get(
            &other,
            l.nulls().unwrap(),
            Offsets::Small(l.value_offsets())
        ));
        assert_eq!(memo.known.len(), 1);
    }
}
