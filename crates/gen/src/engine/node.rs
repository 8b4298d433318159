//! The compiled tree and its generation: a [`Node`] per field, a batch of
//! a field generated from element ids, a referenced table's fields
//! evaluated at the rows drawn, and child counts.

use std::sync::Arc;

use arrow_array::{ArrayRef, make_array};
use arrow_buffer::Buffer;
use arrow_data::ArrayData;
use arrow_schema::{DataType, FieldRef, Fields};

use super::aggregate::aggregate;
use super::arrays::{add_offsets, cast_int, ints_fast, strings_fast, with_nulls};
use super::lists::{Lengths, clamp_length, lengths};
use super::sample::{RefDraw, Sampler};
use super::scratch::{SpecScratch, fill, offsets_buffer, pack, pack_bytes};
use super::sequences::SeqLimit;
use super::strata::Strata;
use super::text::Writer;
use super::{MAX_BATCH_ELEMENTS, NULL_CODE};
use crate::Error;
use crate::facts::MAP_KEY_DRAWS;
use crate::model::AggOp;
use crate::model::expression::TNode;
use crate::rng::StreamKey;

/// One generation of children: `count` rows per parent element, child `k`
/// of element `id` having id `id * max + k`.
#[derive(Debug)]
pub(super) struct Expand {
    pub(super) counts: Counts,
}

/// How many children each row of a parent table has: one count sampler
/// per branch (case `i` is branch `i`, the table's own `count` the
/// last), drawn from `key`; child `k` of parent row `p` is `p * max + k`.
#[derive(Debug)]
pub(super) struct Counts {
    pub(super) samplers: Vec<Sampler>,
    pub(super) key: StreamKey,
    pub(super) max: u64,
    pub(super) cases: Option<CountTests>,
}

/// How a reference reaches a row of a child table: a row of the root
/// table (the ancestor with `rows`) drawn by the reference's pick, then
/// at each generation down a position below that row's count. A row
/// without children is drawn again, from a stream of its own per
/// attempt, at most [`CHILD_DRAWS`] times.
#[derive(Debug)]
pub(super) struct ChildRows {
    /// The root table's rows at this run's scale.
    pub(super) rows: u64,
    /// The counts of each generation, from the root's children down.
    pub(super) levels: Vec<Counts>,
    /// The child table's name, for errors.
    pub(super) table: String,
}

/// Most draws of a root row for one element of a reference to a child
/// table before it fails (all of them reaching rows without children).
pub(super) const CHILD_DRAWS: u64 = 64;

impl ChildRows {
    /// Turns `rows`, the root rows drawn for elements `ids` (element `i`
    /// drawn by `draw(i)`), into rows of the child table.
    pub(super) fn descend<'d>(
        &self,
        rows: &mut [u64],
        ids: &[u64],
        draw: impl Fn(usize) -> &'d RefDraw,
        s: &mut SpecScratch,
    ) -> Result<(), Error> {
        let mut todo: Vec<usize> = (0..ids.len()).collect();
        let mut at = Vec::with_capacity(ids.len());
        for attempt in 0..CHILD_DRAWS {
            if attempt > 0 {
                for &i in &todo {
                    rows[i] = draw(i).redraw(ids[i], self.rows, attempt);
                }
            }
            at.clear();
            at.extend(todo.iter().map(|&i| rows[i]));
            let mut empty = vec![false; todo.len()];
            for (l, level) in self.levels.iter().enumerate() {
                let lens = level.lens(&at, s)?;
                for (j, &i) in todo.iter().enumerate() {
                    if lens[j] == 0 {
                        empty[j] = true;
                    }
                    let key = draw(i).positions[l];
                    let k = super::draw::below(key.first(ids[i]), u128::from(lens[j]));
                    at[j] = at[j].wrapping_mul(level.max).wrapping_add(k);
                }
                s.put64(lens);
            }
            let mut left = Vec::new();
            for (j, &i) in todo.iter().enumerate() {
                if empty[j] {
                    left.push(i);
                } else {
                    rows[i] = at[j];
                }
            }
            if left.is_empty() {
                return Ok(());
            }
            todo = left;
        }
        Err(Error::InvalidDistribution(format!(
            "a reference to child table `{}`: {CHILD_DRAWS} draws of a row found none with children (give the rows it descends from counts above 0)",
            self.table
        )))
    }
}

/// The tests of a child table's `count` cases: SQL over the parent row's
/// top-level fields, evaluated at the parent rows.
#[derive(Debug)]
pub(super) struct CountTests {
    pub(super) parent: Arc<TableEval>,
    /// The parent's fields the tests read, by index.
    pub(super) fields: Vec<usize>,
    pub(super) tests: Vec<TNode>,
    pub(super) key: StreamKey,
}

#[derive(Debug)]
pub(super) struct Node {
    pub(super) field: FieldRef,
    /// The spec field's dotted path and line, for errors.
    pub(super) path: String,
    pub(super) line: usize,
    pub(super) null_key: StreamKey,
    /// Null threshold per branch (`rate * 2^64`); one entry without cases.
    pub(super) null_thresholds: Vec<u128>,
    /// Conditional cases: the sibling read and the branch of each code.
    pub(super) cases: Option<Cases>,
    pub(super) kind: NodeKind,
}

#[derive(Debug)]
pub(super) enum Cases {
    /// The branch of each code of one categorical sibling.
    Codes {
        sibling: usize,
        branch_of_code: Box<[u8; 256]>,
    },
    /// SQL tests of the siblings (`condition`): a row takes the first
    /// true one's branch; `uniform` terms are drawn from `key`.
    Tests { tests: Vec<TNode>, key: StreamKey },
}

#[derive(Debug)]
pub(super) enum NodeKind {
    Leaf(Leaf),
    Struct {
        children: Vec<Node>,
        order: Vec<usize>,
        needs_codes: Vec<bool>,
        fields: Fields,
    },
    List {
        item: Box<Node>,
        length: Sampler,
        length_key: StreamKey,
        max_len: u64,
        empty_as_null: bool,
    },
    Map {
        key: Box<Node>,
        value: Box<Node>,
        entries: FieldRef,
        fields: Fields,
        length: Sampler,
        length_key: StreamKey,
        max_len: u64,
    },
    /// A top-level field of another table, at rows drawn by `pick` from
    /// the stream `key`.
    Ref {
        table: Arc<TableEval>,
        field: usize,
        /// How rows are drawn: one way, or one per branch of the cases.
        draws: Vec<RefDraw>,
        /// For a child table, how a drawn row of its root table reaches
        /// one of its rows.
        children: Option<ChildRows>,
    },
    /// `start + id mod modulus`: a child row's place among its parent's.
    Position {
        modulus: u64,
        start: i64,
    },
    /// `op` of field `field` (`None`: the rows) of the row's children in
    /// table `child`, `count` of them per row (drawn as the child table's
    /// generator draws them).
    Aggregate {
        child: Arc<TableEval>,
        field: Option<usize>,
        op: AggOp,
        counts: Counts,
    },
    /// A field that cannot be evaluated here (an aggregate read through a
    /// reference), with the reason.
    Unreadable(String),
    /// An expression over the siblings (generated before it), its
    /// `uniform` terms drawn from `key`.
    Expr {
        tree: TNode,
        key: StreamKey,
        /// The fields of other rows it reads (`parent.x`, `ps.x`), as
        /// references; their columns follow the siblings'.
        reads: Vec<Node>,
    },
}

/// A table compiled so that its top-level fields can be evaluated at any
/// rows: what references read. A field's value at a row is the one the
/// table itself generates there (same seed, same streams).
#[derive(Debug)]
pub(super) struct TableEval {
    /// Unique among the tables compiled in this process.
    pub(super) id: u64,
    pub(super) name: String,
    pub(super) rows: u64,
    pub(super) roots: Vec<Node>,
    pub(super) order: Vec<usize>,
    pub(super) needs_codes: Vec<bool>,
    /// Per top-level field, the fields its evaluation needs: itself and
    /// the siblings its cases read, transitively.
    pub(super) closure: Vec<Vec<bool>>,
    /// The sequences that would wrap past some row, with the index of
    /// their top-level field.
    pub(super) seq_limits: Vec<(usize, SeqLimit)>,
}

impl TableEval {
    /// Field `field` at rows `rows`.
    pub(super) fn evaluate(
        &self,
        field: usize,
        rows: &[u64],
        s: &mut SpecScratch,
    ) -> Result<ArrayRef, Error> {
        let need = &self.closure[field];
        // The rows drawn are fewer than the table's, but a sequence of
        // the fields read may still wrap before the last of them.
        if let Some(&last) = rows.iter().max() {
            for (i, l) in &self.seq_limits {
                if need[*i] {
                    l.check(last + 1, 1)
                        .map_err(|e| e.in_table(&self.name, ""))?;
                }
            }
        }
        let mut memo = s.memo(self.id, self.roots.len(), rows);
        for &i in &self.order {
            if !need[i] || memo.arrays[i].is_some() {
                continue;
            }
            let g = self.roots[i]
                .generate(rows, &memo.codes, &memo.arrays, self.needs_codes[i], s)
                .map_err(|e| e.in_table(&self.name, ""))?;
            memo.arrays[i] = Some(g.array);
            memo.codes[i] = g.codes;
        }
        let out = memo.arrays.get(field).cloned().flatten();
        s.keep(memo);
        out.ok_or_else(|| {
            Error::InvalidDistribution(format!("table {}: no field {field}", self.name))
        })
    }
}

/// A new id for a compiled [`TableEval`] (the key of its kept
/// evaluations).
pub(super) fn table_eval_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

#[derive(Debug)]
pub(super) struct Leaf {
    pub(super) value_key: StreamKey,
    /// Sampler per branch.
    pub(super) samplers: Vec<Sampler>,
    pub(super) out: Out,
    pub(super) dictionary: Option<ArrayRef>,
    /// Whether every key any sampler can draw indexes `dictionary` and
    /// fits the key type (checked once here, so batches skip the check).
    pub(super) keys_in_range: bool,
}

/// How a leaf's draws become buffer entries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Out {
    Bool,
    W8,
    W16,
    W32,
    W64,
    /// Integer units widened to 128 bits (`Decimal128`).
    W128,
    /// Integer units widened to 256 bits (`Decimal256`).
    W256,
    F32,
    F64,
    Bytes,
    LargeBytes,
    /// Byte strings of exactly this many bytes (`FixedSizeBinary`).
    Fixed(usize),
}

/// What a node returns: its array, and its codes when a sibling reads them.
pub(super) struct Generated {
    pub(super) array: ArrayRef,
    pub(super) codes: Option<Vec<u8>>,
}

impl Node {
    /// Makes the calendar parts under this node read days from `start`.
    pub(super) fn set_calendar_start(&mut self, start: i32) {
        match &mut self.kind {
            NodeKind::Leaf(leaf) => {
                for s in &mut leaf.samplers {
                    if let Sampler::Cal { start: at, .. } = s {
                        *at = start;
                    }
                }
            }
            NodeKind::Struct { children, .. } => {
                for c in children {
                    c.set_calendar_start(start);
                }
            }
            _ => {}
        }
    }

    /// Makes a leaf's own generator (its last sampler: the one of rows
    /// that no `when` case draws another way) draw within `strata`, when
    /// it draws from one uniform number.
    pub(super) fn stratify(&mut self, strata: Strata) {
        if let NodeKind::Leaf(leaf) = &mut self.kind
            && let Some(own) = leaf.samplers.pop()
        {
            leaf.samplers.push(own.stratified(strata));
        }
    }

    /// Validity (0/1 per element) and branch per element.
    /// Each row's validity, and its branch when the field has cases.
    pub(super) fn validity(
        &self,
        ids: &[u64],
        sibling_codes: &[Option<Vec<u8>>],
        siblings: &[Option<ArrayRef>],
        s: &mut SpecScratch,
    ) -> Result<(Vec<u8>, Option<Vec<u8>>), Error> {
        let mut valid = s.v8(ids.len());
        let key = self.null_key;
        let branches = match &self.cases {
            None => {
                let t = self.null_thresholds[0];
                if t == 0 {
                    valid.resize(ids.len(), 1);
                } else {
                    valid.extend(
                        ids.iter()
                            .map(|&id| u8::from(u128::from(key.first(id)) >= t)),
                    );
                }
                return Ok((valid, None));
            }
            Some(Cases::Codes {
                sibling,
                branch_of_code,
            }) => {
                let codes = sibling_codes
                    .get(*sibling)
                    .and_then(|x| x.as_deref())
                    .unwrap_or(&[]);
                let mut branches = s.v8(ids.len());
                branches.extend(
                    (0..ids.len()).map(|i| branch_of_code[*codes.get(i).unwrap_or(&0) as usize]),
                );
                branches
            }
            Some(Cases::Tests { tests, key }) => {
                let inputs = crate::expr::Inputs {
                    columns: siblings,
                    ids,
                    key: *key,
                };
                let mut branches = s.v8(ids.len());
                branches.resize(ids.len(), tests.len() as u8);
                // The last test first, so that the first true one wins.
                for (b, t) in tests.iter().enumerate().rev() {
                    let hit = crate::expr::test(t, &inputs).map_err(|e| match e {
                        Error::InvalidDistribution(m) => {
                            Error::InvalidDistribution(format!("`when` condition: {m}"))
                        }
                        e => e,
                    })?;
                    for i in hit.set_indices() {
                        branches[i] = b as u8;
                    }
                }
                branches
            }
        };
        let t = &self.null_thresholds;
        valid.extend(
            ids.iter()
                .zip(&branches)
                .map(|(&id, &b)| u8::from(u128::from(key.first(id)) >= t[b as usize])),
        );
        Ok((valid, Some(branches)))
    }

    /// The field's values at `ids`; an error names the field (the
    /// innermost one that failed).
    pub(super) fn generate(
        &self,
        ids: &[u64],
        sibling_codes: &[Option<Vec<u8>>],
        siblings: &[Option<ArrayRef>],
        want_codes: bool,
        s: &mut SpecScratch,
    ) -> Result<Generated, Error> {
        self.values(ids, sibling_codes, siblings, want_codes, s)
            .map_err(|e| e.in_field(&self.path, self.line))
    }

    pub(super) fn values(
        &self,
        ids: &[u64],
        sibling_codes: &[Option<Vec<u8>>],
        siblings: &[Option<ArrayRef>],
        want_codes: bool,
        s: &mut SpecScratch,
    ) -> Result<Generated, Error> {
        let (valid, branches) = self.validity(ids, sibling_codes, siblings, s)?;
        let n = ids.len();
        let result = match &self.kind {
            NodeKind::Leaf(leaf) => {
                self.leaf(leaf, ids, &valid, branches.as_deref(), None, want_codes, s)?
            }
            NodeKind::Struct {
                children,
                order,
                needs_codes,
                fields,
            } => {
                let arrays = generate_siblings(children, order, needs_codes, ids, s)?;
                let nulls = pack(&valid, s);
                let array = arrow_array::StructArray::try_new(fields.clone(), arrays, nulls)?;
                Generated {
                    array: Arc::new(array),
                    codes: None,
                }
            }
            NodeKind::List {
                item,
                length,
                length_key,
                max_len,
                empty_as_null,
            } => {
                let (offsets, child_ids, valid2) = lengths(
                    ids,
                    &valid,
                    length,
                    *length_key,
                    *max_len,
                    *empty_as_null,
                    s,
                )?;
                let child = item.generate(&child_ids, &[], &[], false, s)?;
                s.put64(child_ids);
                let nulls = pack(&valid2, s);
                // A list drawn empty under `empty_as_null` is null to
                // siblings' `is_null` cases too.
                let list_codes = want_codes.then(|| {
                    let mut codes = s.v8(n);
                    codes.extend(valid2.iter().map(|&v| if v == 1 { 0 } else { NULL_CODE }));
                    codes
                });
                s.put8(valid2);
                let offsets = offsets_buffer(offsets);
                let array = arrow_array::ListArray::try_new(
                    item.field.clone(),
                    offsets,
                    child.array,
                    nulls,
                )?;
                Generated {
                    array: Arc::new(array),
                    codes: list_codes,
                }
            }
            NodeKind::Map {
                key,
                value,
                entries,
                fields,
                length,
                length_key,
                max_len,
            } => {
                let (offsets, child_ids, valid2) =
                    lengths(ids, &valid, length, *length_key, *max_len, false, s)?;
                let keys = key.distinct_keys(&child_ids, &offsets, s)?;
                let values = value.generate(&child_ids, &[], &[], false, s)?.array;
                s.put64(child_ids);
                let nulls = pack(&valid2, s);
                s.put8(valid2);
                let offsets = offsets_buffer(offsets);
                let entries_array =
                    arrow_array::StructArray::try_new(fields.clone(), vec![keys, values], None)?;
                let array = arrow_array::MapArray::try_new(
                    entries.clone(),
                    offsets,
                    entries_array,
                    nulls,
                    false,
                )?;
                Generated {
                    array: Arc::new(array),
                    codes: None,
                }
            }
            NodeKind::Ref {
                table,
                field,
                draws,
                children,
            } => {
                let mut rows = s.v64(n);
                // The branch of each element picks its way of drawing.
                let branch = |i: usize| match &branches {
                    Some(b) => (b[i] as usize).min(draws.len() - 1),
                    None => draws.len() - 1,
                };
                let root_rows = children.as_ref().map_or(table.rows, |c| c.rows);
                rows.extend(
                    ids.iter()
                        .enumerate()
                        .map(|(i, &id)| draws[branch(i)].row(id, root_rows)),
                );
                if let Some(c) = children {
                    c.descend(&mut rows, ids, |i| &draws[branch(i)], s)?;
                }
                let mut copied = table.evaluate(*field, &rows, s)?;
                s.put64(rows);
                if draws.iter().any(|d| d.offset.is_some()) {
                    let offsets: Vec<i64> = ids
                        .iter()
                        .enumerate()
                        .map(|(i, &id)| match &draws[branch(i)].offset {
                            Some((sampler, okey)) => sampler.int(*okey, id).0 as i64,
                            None => 0,
                        })
                        .collect();
                    copied = add_offsets(&copied, &offsets)?;
                }
                // Null where the parent's value is too.
                Generated {
                    array: with_nulls(copied, &valid, s)?,
                    codes: None,
                }
            }
            NodeKind::Unreadable(why) => return Err(Error::InvalidDistribution(why.clone())),
            NodeKind::Aggregate {
                child,
                field,
                op,
                counts,
            } => {
                let all = vec![1u8; n];
                let (offsets, child_ids, valid2) = counts.children(ids, &all, s)?;
                s.put8(valid2);
                let values = match field {
                    Some(fi) => Some(child.evaluate(*fi, &child_ids, s)?),
                    None => None,
                };
                s.put64(child_ids);
                let array = aggregate(*op, values.as_ref(), &offsets, self.field.data_type());
                s.put32(offsets);
                Generated {
                    array: with_nulls(array?, &valid, s)?,
                    codes: None,
                }
            }
            NodeKind::Expr { tree, key, reads } => {
                let mut columns = std::borrow::Cow::Borrowed(siblings);
                if !reads.is_empty() {
                    let columns = columns.to_mut();
                    for r in reads {
                        let g = r.generate(ids, sibling_codes, siblings, false, s)?;
                        columns.push(Some(g.array));
                    }
                }
                let inputs = crate::expr::Inputs {
                    columns: &columns,
                    ids,
                    key: *key,
                };
                let array = crate::expr::evaluate(tree, &inputs, self.field.data_type())?;
                Generated {
                    array: with_nulls(array, &valid, s)?,
                    codes: None,
                }
            }
            NodeKind::Position { modulus, start } => {
                let values: Vec<i64> = ids
                    .iter()
                    .map(|&id| start.wrapping_add((id % modulus) as i64))
                    .collect();
                let wide: ArrayRef = Arc::new(arrow_array::Int64Array::from(values));
                let array = cast_int(&wide, self.field.data_type())?;
                Generated {
                    array: with_nulls(array, &valid, s)?,
                    codes: None,
                }
            }
        };
        debug_assert_eq!(result.array.len(), n);
        // Codes of a non-leaf (for `is_null` cases): validity only.
        let result = if want_codes && result.codes.is_none() {
            let mut codes = s.v8(n);
            codes.extend(valid.iter().map(|&v| if v == 1 { 0 } else { NULL_CODE }));
            Generated {
                array: result.array,
                codes: Some(codes),
            }
        } else {
            result
        };
        s.put8(valid);
        if let Some(b) = branches {
            s.put8(b);
        }
        Ok(result)
    }

    /// Map keys: drawn from the key's categories without repetition
    /// within each map (the parser makes sure there are enough), or by the
    /// key's generator when it is a sequence (unique by construction).
    pub(super) fn distinct_keys(
        &self,
        ids: &[u64],
        offsets: &[u32],
        s: &mut SpecScratch,
    ) -> Result<ArrayRef, Error> {
        let NodeKind::Leaf(leaf) = &self.kind else {
            return Err(Error::InvalidDistribution(
                "map keys must be scalars".into(),
            ));
        };
        let mut valid = s.v8(ids.len());
        valid.resize(ids.len(), 1);
        let sampler = &leaf.samplers[0];
        let result = if sampler.categories() == 0 {
            self.leaf(leaf, ids, &valid, None, None, false, s)
        } else {
            let mut cats = s.v32(ids.len());
            cats.reserve(ids.len());
            let k = sampler.categories();
            for w in offsets.windows(2) {
                let first = cats.len();
                for &id in &ids[w[0] as usize..w[1] as usize] {
                    let mut r = leaf.value_key.row(id);
                    let mut c = sampler.category(&mut r);
                    let mut tries = 0;
                    while cats[first..].contains(&c) {
                        tries += 1;
                        c = if tries < MAP_KEY_DRAWS {
                            sampler.category(&mut r)
                        } else {
                            // Past MAP_KEY_DRAWS collisions (tiny weights): the first
                            // unused category that can occur.
                            (0..k as u32)
                                .find(|x| !cats[first..].contains(x) && sampler.possible(*x))
                                .unwrap_or(c)
                        };
                        if tries > MAP_KEY_DRAWS {
                            break;
                        }
                    }
                    cats.push(c);
                }
            }
            let r = self.leaf(leaf, ids, &valid, None, Some(&cats), false, s);
            s.put32(cats);
            r
        };
        s.put8(valid);
        Ok(result?.array)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn leaf(
        &self,
        leaf: &Leaf,
        ids: &[u64],
        valid: &[u8],
        branches: Option<&[u8]>,
        forced: Option<&[u32]>,
        want_codes: bool,
        s: &mut SpecScratch,
    ) -> Result<Generated, Error> {
        let n = ids.len();
        let key = leaf.value_key;
        let sampler = |i: usize| -> &Sampler {
            match branches {
                Some(b) if leaf.samplers.len() > 1 => &leaf.samplers[b[i] as usize],
                _ => &leaf.samplers[0],
            }
        };
        let draw_int = |i: usize, id: u64| match forced {
            Some(f) => (leaf.samplers[0].int_of(f[i]), f[i].min(254) as u8),
            None => sampler(i).int(key, id),
        };
        let draw_float = |i: usize, id: u64| match forced {
            Some(f) => (leaf.samplers[0].float_of(f[i]), f[i].min(254) as u8),
            None => sampler(i).float(key, id),
        };
        let draw_string = |i: usize, id: u64, out: &mut Writer| match forced {
            Some(f) => {
                leaf.samplers[0].string_of(f[i], out);
                f[i].min(254) as u8
            }
            None => sampler(i).string(key, id, out),
        };
        let mut codes = want_codes.then(|| {
            let mut c = s.v8(n);
            c.reserve(n);
            c
        });
        let data_type = self.field.data_type().clone();
        let nulls = pack(valid, s);
        #[inline(always)]
        fn record(codes: &mut Option<Vec<u8>>, valid: &[u8], c: u8, i: usize) {
            if let Some(codes) = codes.as_mut() {
                codes.push(if valid[i] == 1 { c } else { NULL_CODE });
            }
        }
        let fast = forced.is_none() && leaf.samplers.len() == 1;
        let fast_strings = fast && !want_codes;
        let data = match leaf.out {
            Out::Bool => {
                let mut bits = s.v8(n);
                bits.reserve(n);
                for (i, &id) in ids.iter().enumerate() {
                    let (v, c) = draw_int(i, id);
                    record(&mut codes, valid, c, i);
                    bits.push((v & 1) as u8);
                }
                let packed = Buffer::from_vec(pack_bytes(&bits, s));
                s.put8(bits);
                ArrayData::builder(DataType::Boolean)
                    .len(n)
                    .add_buffer(packed)
                    .nulls(nulls)
                    .build()?
            }
            Out::W8 | Out::W16 | Out::W32 | Out::W64 | Out::W128 | Out::W256 => {
                // One column of integers of the output's width: the fast
                // loops for a single sampler, else per-element dispatch.
                macro_rules! int_column {
                    ($v:expr, $t:ty) => {
                        int_column!($v, $t, |x: u64| x as $t)
                    };
                    ($v:expr, $t:ty, $conv:expr) => {{
                        let mut v = $v;
                        let conv = $conv;
                        if fast {
                            let codes = codes.as_mut();
                            ints_fast(&leaf.samplers[0], key, ids, valid, &mut v, codes, conv);
                        } else {
                            fill(&mut v, ids, |i, id| {
                                if valid[i] == 0 {
                                    record(&mut codes, valid, 0, i);
                                    return conv(0);
                                }
                                let (x, c) = draw_int(i, id);
                                record(&mut codes, valid, c, i);
                                conv(x)
                            });
                        }
                        Buffer::from_vec(v)
                    }};
                }
                let buffer = match leaf.out {
                    Out::W8 => int_column!(s.v8(n), u8),
                    Out::W16 => int_column!(s.v16(n), u16),
                    Out::W32 => int_column!(s.v32(n), u32),
                    // Decimal units are drawn as 64-bit integers (the spec
                    // keeps decimal values within `i64`), sign-extended.
                    Out::W128 => int_column!(Vec::<i128>::with_capacity(n), i128, |x: u64| {
                        i128::from(x as i64)
                    }),
                    Out::W256 => int_column!(
                        Vec::<arrow_buffer::i256>::with_capacity(n),
                        arrow_buffer::i256,
                        |x: u64| arrow_buffer::i256::from_i128(i128::from(x as i64))
                    ),
                    _ => int_column!(s.v64(n), u64),
                };
                match (&data_type, &leaf.dictionary) {
                    (DataType::Dictionary(k, _), Some(values)) => {
                        let builder = ArrayData::builder(data_type.clone())
                            .len(n)
                            .add_buffer(buffer)
                            .nulls(nulls)
                            .child_data(vec![values.to_data()]);
                        if leaf.keys_in_range && !cfg!(debug_assertions) {
                            // SAFETY: every key is a value of one of the
                            // leaf's samplers, all of which were checked at
                            // compile time to index `values` and to fit the
                            // key type (`keys_in_range`); the buffer holds
                            // `n` keys of the key type's width (`Out` is
                            // chosen from it) and the bitmap `n` bits. The
                            // bounds scan it skips was 2.6% of `contacts`
                            // generation (callgrind, `examples/gen_loop`);
                            // debug builds validate.
                            unsafe { builder.build_unchecked() }
                        } else {
                            builder.build().map_err(|_| {
                                // Only a key type narrower than the values
                                // can fail; report it plainly.
                                Error::InvalidDistribution(format!(
                                    "dictionary keys of type {k} cannot index {} values",
                                    values.len()
                                ))
                            })?
                        }
                    }
                    _ => ArrayData::builder(data_type.clone())
                        .len(n)
                        .add_buffer(buffer)
                        .nulls(nulls)
                        .build()?,
                }
            }
            Out::F32 | Out::F64 => {
                // The value of element `i` (none when it is null), stored
                // below at the field's width (a null holds zero bits).
                let mut draw = |i: usize, id: u64| {
                    if valid[i] == 0 {
                        record(&mut codes, valid, 0, i);
                        return None;
                    }
                    let (x, c) = draw_float(i, id);
                    record(&mut codes, valid, c, i);
                    Some(x)
                };
                let buffer = if leaf.out == Out::F32 {
                    let mut v = s.v32(n);
                    fill(&mut v, ids, |i, id| {
                        draw(i, id).map_or(0, |x| (x as f32).to_bits())
                    });
                    Buffer::from_vec(v)
                } else {
                    let mut v = s.v64(n);
                    fill(&mut v, ids, |i, id| draw(i, id).map_or(0, f64::to_bits));
                    Buffer::from_vec(v)
                };
                ArrayData::builder(data_type.clone())
                    .len(n)
                    .add_buffer(buffer)
                    .nulls(nulls)
                    .build()?
            }
            Out::Fixed(width) => {
                // Each value is drawn as a byte string and must have the
                // type's width (the parser checks listed values; templates
                // are checked here); a null holds zeros.
                let most = leaf
                    .samplers
                    .iter()
                    .map(Sampler::max_bytes)
                    .max()
                    .unwrap_or(0)
                    .max(width);
                let mut w = Writer {
                    buf: Vec::new(),
                    pos: 0,
                };
                w.room(n.saturating_mul(width));
                for (i, &id) in ids.iter().enumerate() {
                    w.room(most);
                    let at = w.pos;
                    if valid[i] == 1 {
                        let c = draw_string(i, id, &mut w);
                        record(&mut codes, valid, c, i);
                        if w.pos - at != width {
                            return Err(Error::InvalidDistribution(format!(
                                "field {}: a value of {} bytes for fixed_size_binary({width})",
                                self.field.name(),
                                w.pos - at
                            )));
                        }
                    } else {
                        record(&mut codes, valid, 0, i);
                        w.buf[at..at + width].fill(0);
                        w.pos += width;
                    }
                }
                let mut values = w.buf;
                values.truncate(w.pos);
                ArrayData::builder(data_type.clone())
                    .len(n)
                    .add_buffer(Buffer::from_vec(values))
                    .nulls(nulls)
                    .build()?
            }
            Out::Bytes | Out::LargeBytes => {
                // The pooled vector keeps its old (initialised) length: it is
                // written through a cursor and cut to size at the end.
                let mut w = Writer {
                    buf: s.largest8(),
                    pos: 0,
                };
                let most = leaf
                    .samplers
                    .iter()
                    .map(Sampler::max_bytes)
                    .max()
                    .unwrap_or(0);
                w.room(n.saturating_mul(8).min(1 << 26));
                let large = leaf.out == Out::LargeBytes;
                let mut off32 = if large { Vec::new() } else { s.v32(n + 1) };
                let mut off64 = if large { s.v64(n + 1) } else { Vec::new() };
                if large {
                    off64.resize(n + 1, 0);
                } else {
                    off32.resize(n + 1, 0);
                }
                if !large && fast_strings {
                    w = strings_fast(&leaf.samplers[0], key, ids, valid, w, most, &mut off32);
                } else {
                    for (i, &id) in ids.iter().enumerate() {
                        if valid[i] == 1 {
                            w.room(most);
                            let c = draw_string(i, id, &mut w);
                            record(&mut codes, valid, c, i);
                        } else {
                            record(&mut codes, valid, 0, i);
                        }
                        if large {
                            off64[i + 1] = w.pos as u64;
                        } else {
                            off32[i + 1] = w.pos as u32;
                        }
                    }
                }
                if w.pos > i32::MAX as usize && !large {
                    return Err(Error::BatchTooLarge);
                }
                let mut values = w.buf;
                values.truncate(w.pos);
                let offsets = if large {
                    s.put32(off32);
                    Buffer::from_vec(off64)
                } else {
                    s.put64(off64);
                    Buffer::from_vec(off32)
                };
                let builder = ArrayData::builder(data_type.clone())
                    .len(n)
                    .add_buffer(offsets)
                    .add_buffer(Buffer::from_vec(values))
                    .nulls(nulls);
                // SAFETY: the offsets start at 0, never decrease (each is the
                // length of `values` after an element) and end at its
                // length, checked against i32 above; there is one more
                // offset than elements, and the validity bitmap has one bit
                // per element. Every byte written is a whole UTF-8 string:
                // spec strings (Rust `String`s), template literals (cut at
                // placeholder braces, which are ASCII), built-in word lists
                // (ASCII, checked by a unit test) and ASCII digits. Skipping
                // the UTF-8 scan of `build` saves ~10% of string generation
                // (`cargo bench -p strata-gen`); debug builds validate.
                #[cfg(debug_assertions)]
                let data = builder.build()?;
                #[cfg(not(debug_assertions))]
                let data = unsafe { builder.build_unchecked() };
                data
            }
        };
        Ok(Generated {
            array: make_array(data),
            codes,
        })
    }
}

pub(super) fn generate_siblings(
    nodes: &[Node],
    order: &[usize],
    needs_codes: &[bool],
    ids: &[u64],
    s: &mut SpecScratch,
) -> Result<Vec<ArrayRef>, Error> {
    let mut arrays: Vec<Option<ArrayRef>> = vec![None; nodes.len()];
    let mut codes: Vec<Option<Vec<u8>>> = vec![None; nodes.len()];
    for &i in order {
        let g = nodes[i].generate(ids, &codes, &arrays, needs_codes[i], s)?;
        arrays[i] = Some(g.array);
        codes[i] = g.codes;
    }
    for c in codes.into_iter().flatten() {
        s.put8(c);
    }
    Ok(arrays
        .into_iter()
        .map(|a| a.expect("every field generated"))
        .collect())
}

impl Counts {
    /// The branch of each parent row of `ids` (the first true `count`
    /// case's, else the table's own count); `None` without cases.
    fn branches(&self, ids: &[u64], s: &mut SpecScratch) -> Result<Option<Vec<u8>>, Error> {
        let Some(t) = &self.cases else {
            return Ok(None);
        };
        let mut columns: Vec<Option<ArrayRef>> = vec![None; t.parent.roots.len()];
        for &fi in &t.fields {
            columns[fi] = Some(t.parent.evaluate(fi, ids, s)?);
        }
        let inputs = crate::expr::Inputs {
            columns: &columns,
            ids,
            key: t.key,
        };
        // The last test set first, so that the first true one wins.
        let mut branch = s.v8(ids.len());
        branch.resize(ids.len(), t.tests.len() as u8);
        for (b, test) in t.tests.iter().enumerate().rev() {
            let hit = crate::expr::test(test, &inputs).map_err(|e| match e {
                Error::InvalidDistribution(m) => {
                    Error::InvalidDistribution(format!("`count` condition: {m}"))
                }
                e => e,
            })?;
            for i in hit.set_indices() {
                branch[i] = b as u8;
            }
        }
        Ok(Some(branch))
    }

    /// How many children each parent row of `ids` has.
    pub(super) fn lens(&self, ids: &[u64], s: &mut SpecScratch) -> Result<Vec<u64>, Error> {
        let branch = self.branches(ids, s)?;
        let mut out = s.v64(ids.len());
        out.extend(ids.iter().enumerate().map(|(i, &id)| {
            let b = branch.as_ref().map_or(0, |b| b[i] as usize);
            clamp_length(self.samplers[b].int(self.key, id).0, self.max) as u64
        }));
        if let Some(b) = branch {
            s.put8(b);
        }
        Ok(out)
    }

    /// The children of parent rows `ids` (those whose `valid` byte is 1):
    /// offsets, child ids and validity, as [`lengths`] gives them.
    pub(super) fn children(
        &self,
        ids: &[u64],
        valid: &[u8],
        s: &mut SpecScratch,
    ) -> Result<Lengths, Error> {
        let Some(branch) = self.branches(ids, s)? else {
            return lengths(ids, valid, &self.samplers[0], self.key, self.max, false, s);
        };
        let n = ids.len();
        let mut offsets = s.v32(n + 1);
        offsets.push(0);
        let mut valid2 = s.v8(n);
        let mut child_ids = s.v64(n * 2);
        for i in 0..n {
            let len = if valid[i] == 1 {
                let sampler = &self.samplers[branch[i] as usize];
                clamp_length(sampler.int(self.key, ids[i]).0, self.max)
            } else {
                0
            };
            let base = ids[i].wrapping_mul(self.max);
            child_ids.extend((0..len as u64).map(|j| base.wrapping_add(j)));
            offsets.push(child_ids.len() as u32);
            valid2.push(u8::from(valid[i] == 1));
        }
        s.put8(branch);
        if child_ids.len() as u64 > MAX_BATCH_ELEMENTS {
            return Err(Error::BatchTooLarge);
        }
        Ok((offsets, child_ids, valid2))
    }
}
