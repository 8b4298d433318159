//! The spec engine: a [`Spec`] compiled to column generators.
//!
//! A batch is generated column by column, field by field, like a hand
//! written generator would: for each field, one pass decides validity, one
//! pass draws values into the vector that becomes the Arrow buffer. Every
//! element has an id, its global row for top-level fields and
//! `parent_id * max_length + position` inside lists and maps, and every
//! draw comes from the field's own streams keyed by that id, so an
//! element's content depends only on `(spec, seed, id)`.
//!
//! Vectors come back through [`BatchGenerator::recycle`] into a pool and
//! are reused, so a steady stream of batches barely allocates.

use std::mem::MaybeUninit;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, StringArray, make_array};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer};
use arrow_data::ArrayData;
use arrow_schema::{DataType, Field as ArrowField, FieldRef, Fields, Schema, SchemaRef};

use crate::dist::{Alias, Zipf, normal, unit};
use crate::facts::{DAY_NAMES, MAP_KEY_DRAWS, MAX_LENGTH, MONTH_NAMES};
use crate::model::class::Class;
use crate::model::expression::TNode;
use crate::model::query::{
    categories, category_values, depends_on, distinct_values, max_length, sequence_ids,
};
use crate::model::{
    AggOp, Calendar, CalendarPart, Condition, Dataset, Field, Generator, Kind, Pick, Reference,
    Rows, Spec, Value, WordList,
};
use crate::names::{NameTable, first_names, last_names, words};
use crate::rng::{RowRng, StreamKey};
use crate::template::{Part, Placeholder};
use crate::{BatchGenerator, Error};

/// Fields whose estimated distinct values pass this are written without a
/// Parquet dictionary (it would overflow its page and be thrown away).
const DICTIONARY_LIMIT: u64 = 100_000;
/// Largest batch, so that offsets of modest strings stay in `i32`.
const MAX_BATCH_ROWS: usize = 1 << 24;
/// Most list or map elements one batch may hold at one level: past this a
/// batch is refused (use smaller batches) before its ids are allocated.
const MAX_BATCH_ELEMENTS: u64 = 1 << 26;
/// The code of a null element (categories are `0..255`).
const NULL_CODE: u8 = 255;

/// A compiled spec: a [`BatchGenerator`] for one seed.
#[derive(Debug)]
pub struct SpecGenerator {
    name: String,
    schema: SchemaRef,
    roots: Vec<Node>,
    /// Generation order of the top-level fields.
    order: Vec<usize>,
    /// Top-level fields whose codes a sibling reads.
    needs_codes: Vec<bool>,
    hints: Hints,
    /// For a child table, the expansions from its root ancestor's rows to
    /// its own, outermost first: a batch's rows are the children of the
    /// root's rows it is asked for.
    expand: Vec<Expand>,
    /// The most rows it can give, and the field that sets that limit (a
    /// `values_by_row` field without `cycle`).
    row_limit: Option<(u64, String)>,
    /// The sequences that would leave their type's range (or whose index
    /// would pass 2^64) past some row.
    seq_limits: Vec<SeqLimit>,
    /// The spec's file or preset name, for errors.
    origin: String,
}

/// A leaf whose values stop being right past some element: a sequence
/// that would pass its type's greatest (or least) value, or a sequence or
/// `{seq}` template whose element index would pass 2^64.
#[derive(Debug)]
struct SeqLimit {
    /// Elements `0..ids` are right.
    ids: u128,
    /// Elements per row of the table: the product of the most lengths of
    /// the lists and maps above the leaf.
    per_row: u128,
    path: String,
    line: usize,
    /// What would happen: `the sequence from 100 by 1 would pass 127,
    /// the greatest Int8,`.
    what: String,
    /// What to do about it.
    advice: &'static str,
}

impl SeqLimit {
    /// Checks rows `0..rows` of its table, each `per_root` rows of the
    /// table the rows count (more than 1 for a child table's rows, which
    /// are the children of its root's).
    fn check(&self, rows: u64, per_root: u128) -> Result<(), Error> {
        let per_row = self.per_row.saturating_mul(per_root);
        // Row `r`'s elements are `r * per_row ..`: rows past `ids /
        // per_row` may reach element `ids`.
        let fits = self.ids / per_row;
        if u128::from(rows) <= fits {
            return Ok(());
        }
        let at = if per_root > 1 {
            format!("at the children of root row {fits}")
        } else {
            format!("at row {fits}")
        };
        Err(Error::field(
            &self.path,
            self.line,
            format!(
                "{} {at} of the {rows} asked for; {}",
                self.what, self.advice
            ),
        ))
    }
}

/// The element index space: ids are `u64`.
const ID_SPACE: u128 = 1 << 64;

/// The [`SeqLimit`]s of `fields`, each of whose elements is `per_row` of
/// a row.
fn sequence_limits(fields: &[Field], per_row: u128, out: &mut Vec<SeqLimit>) {
    for f in fields {
        match &f.kind {
            Kind::Struct(children) => sequence_limits(children, per_row, out),
            Kind::List { item, length, .. } => {
                let per = per_row.saturating_mul(u128::from(max_length(length).max(1)));
                sequence_limits(std::slice::from_ref(&**item), per, out);
            }
            Kind::Map { key, value, length } => {
                let per = per_row.saturating_mul(u128::from(max_length(length).max(1)));
                sequence_limits(std::slice::from_ref(&**key), per, out);
                sequence_limits(std::slice::from_ref(&**value), per, out);
            }
            Kind::Scalar {
                data_type,
                generator,
            } => {
                let gens = std::iter::once(generator)
                    .chain(f.when.iter().filter_map(|w| w.generator.as_ref()));
                for g in gens {
                    if let Some((ids, what)) = leaf_limit(g, data_type) {
                        out.push(SeqLimit {
                            ids,
                            per_row,
                            path: f.path.clone(),
                            line: f.line,
                            advice: if ids < ID_SPACE {
                                "use a wider type, or another start or step"
                            } else {
                                "ask for fewer rows, or give the lists around it fewer elements"
                            },
                            what,
                        });
                    }
                }
            }
        }
    }
}

/// The elements whose values generator `g` of a leaf of type `dt` gets
/// right, and what goes wrong past them; `None` when nothing does.
fn leaf_limit(g: &Generator, dt: &DataType) -> Option<(u128, String)> {
    let index = || {
        Some((
            ID_SPACE,
            "its element index (the row times the most lengths of the lists around it) would pass 2^64"
                .to_string(),
        ))
    };
    match g {
        Generator::Sequence {
            start: start_value @ Value::Int(start),
            step: Value::Int(step),
        } => {
            let Some((lo, hi)) = Class::of(dt).int_range() else {
                return index();
            };
            match sequence_ids(*start, *step, (lo, hi)) {
                Some(n) if n < ID_SPACE => {
                    let (which, bound) = if *step > 0 {
                        ("greatest", hi)
                    } else {
                        ("least", lo)
                    };
                    Some((
                        n,
                        format!(
                            "the sequence from {} by {step} would pass {}, the {which} {dt},",
                            start_value.display_as(dt),
                            Value::Int(bound).display_as(dt)
                        ),
                    ))
                }
                _ => index(),
            }
        }
        Generator::Sequence { .. } => index(),
        Generator::Template(t)
            if t.parts().iter().any(|p| {
                matches!(
                    p,
                    Part::Slot {
                        placeholder: Placeholder::Seq,
                        ..
                    }
                )
            }) =>
        {
            index()
        }
        _ => None,
    }
}

/// One generation of children: `count` rows per parent element, child `k`
/// of element `id` having id `id * max + k`.
#[derive(Debug)]
struct Expand {
    counts: Counts,
}

/// How many children each row of a parent table has: one count sampler
/// per branch (case `i` is branch `i`, the table's own `count` the
/// last), drawn from `key`; child `k` of parent row `p` is `p * max + k`.
#[derive(Debug)]
struct Counts {
    samplers: Vec<Sampler>,
    key: StreamKey,
    max: u64,
    cases: Option<CountTests>,
}

/// The tests of a child table's `count` cases: SQL over the parent row's
/// top-level fields, evaluated at the parent rows.
#[derive(Debug)]
struct CountTests {
    parent: Arc<TableEval>,
    /// The parent's fields the tests read, by index.
    fields: Vec<usize>,
    tests: Vec<TNode>,
    key: StreamKey,
}

impl Counts {
    /// The counts of child table `child` of `dataset` (its parent
    /// compiled by `parents` when its cases test the parent's fields).
    fn new(
        dataset: &Dataset,
        child: usize,
        seed: u64,
        parents: &Parents<'_>,
    ) -> Result<Counts, Error> {
        let t = &dataset.tables[child];
        let name = &t.spec.name;
        let c = t.children_of.as_ref().ok_or_else(|| {
            Error::InvalidDistribution(format!("table {name} is not a child table"))
        })?;
        let class = Class::Int {
            min: 0,
            max: MAX_LENGTH,
        };
        let mut samplers = c
            .count_when
            .iter()
            .map(|w| length_sampler(&w.count, class))
            .collect::<Result<Vec<_>, _>>()?;
        samplers.push(length_sampler(&c.count, class)?);
        let key = StreamKey::new(table_seed(seed, name), stream_id(name, "count"));
        let mut cases = None;
        if !c.count_when.is_empty() {
            let pi = dataset
                .table(&c.parent)
                .ok_or_else(|| Error::InvalidDistribution(format!("no table {}", c.parent)))?;
            let parent_fields = &dataset.tables[pi].spec.fields;
            let mut fields = Vec::new();
            let mut tests = Vec::new();
            for w in &c.count_when {
                tests.push(w.condition.tree.clone().ok_or_else(|| {
                    Error::InvalidDistribution(format!(
                        "table {name}: the `count` condition {:?} was not checked against its parent's fields (parse the dataset)",
                        w.condition.source
                    ))
                })?);
                for input in &w.condition.inputs {
                    let fi = parent_fields
                        .iter()
                        .position(|f| &f.name == input)
                        .ok_or_else(|| {
                            Error::InvalidDistribution(format!("no field {}.{input}", c.parent))
                        })?;
                    if !fields.contains(&fi) {
                        fields.push(fi);
                    }
                }
            }
            cases = Some(CountTests {
                parent: parents.table(pi, name)?,
                fields,
                tests,
                key: StreamKey::new(table_seed(seed, name), stream_id(name, "count when")),
            });
        }
        Ok(Counts {
            samplers,
            key,
            max: c.max_count(),
            cases,
        })
    }

    /// The children of parent rows `ids` (those whose `valid` byte is 1):
    /// offsets, child ids and validity, as [`lengths`] gives them.
    fn children(&self, ids: &[u64], valid: &[u8], s: &mut SpecScratch) -> Result<Lengths, Error> {
        let Some(t) = &self.cases else {
            return lengths(ids, valid, &self.samplers[0], self.key, self.max, false, s);
        };
        let n = ids.len();
        let mut columns: Vec<Option<ArrayRef>> = vec![None; t.parent.roots.len()];
        for &fi in &t.fields {
            columns[fi] = Some(t.parent.evaluate(fi, ids, s)?);
        }
        let inputs = crate::expr::Inputs {
            columns: &columns,
            ids,
            key: t.key,
        };
        // Each row's branch: the first true test's (the last test set
        // first), else the table's own count.
        let mut branch = s.v8(n);
        branch.resize(n, t.tests.len() as u8);
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

/// What the spec tells the Parquet writer about its leaves (paths as
/// Parquet spells them).
#[derive(Debug, Default)]
struct Hints {
    /// Leaves of (nearly) all distinct values: no dictionary.
    unfriendly: Vec<Vec<String>>,
    /// Integer-like leaves drawn as sequences: `DELTA_BINARY_PACKED`.
    delta: Vec<Vec<String>>,
}

/// Reusable vectors of one producer of spec batches.
#[derive(Debug, Default)]
pub struct SpecScratch {
    p8: Vec<Vec<u8>>,
    p16: Vec<Vec<u16>>,
    p32: Vec<Vec<u32>>,
    p64: Vec<Vec<u64>>,
}

const POOL_MAX: usize = 256;

/// An empty vector from `pool` with room for `cap`: the smallest that has
/// it, so that big buffers are not handed to small uses and then regrown
/// (copied) for big ones; else a new one, the pool's largest given up for
/// it (growing that would copy its whole old allocation, though it holds
/// nothing: on `events` 10.6M of 776M instructions).
fn take<T>(pool: &mut Vec<Vec<T>>, cap: usize) -> Vec<T> {
    let fit = (0..pool.len())
        .filter(|&i| pool[i].capacity() >= cap)
        .min_by_key(|&i| pool[i].capacity());
    match fit {
        Some(i) => {
            let mut v = pool.swap_remove(i);
            v.clear();
            v
        }
        None => {
            if let Some(i) = (0..pool.len()).max_by_key(|&i| pool[i].capacity()) {
                pool.swap_remove(i);
            }
            Vec::with_capacity(cap)
        }
    }
}

impl SpecScratch {
    fn v8(&mut self, cap: usize) -> Vec<u8> {
        take(&mut self.p8, cap)
    }
    fn v16(&mut self, cap: usize) -> Vec<u16> {
        take(&mut self.p16, cap)
    }
    fn v32(&mut self, cap: usize) -> Vec<u32> {
        take(&mut self.p32, cap)
    }
    fn v64(&mut self, cap: usize) -> Vec<u64> {
        take(&mut self.p64, cap)
    }
    /// The pooled byte vector with the most room, its length kept (its
    /// bytes are initialised; the string writer overwrites them).
    fn largest8(&mut self) -> Vec<u8> {
        match (0..self.p8.len()).max_by_key(|&i| self.p8[i].capacity()) {
            Some(i) => self.p8.swap_remove(i),
            None => Vec::new(),
        }
    }
    fn put8(&mut self, v: Vec<u8>) {
        if self.p8.len() < POOL_MAX && v.capacity() > 0 {
            self.p8.push(v);
        }
    }
    fn put64(&mut self, v: Vec<u64>) {
        if self.p64.len() < POOL_MAX && v.capacity() > 0 {
            self.p64.push(v);
        }
    }
    fn put32(&mut self, v: Vec<u32>) {
        if self.p32.len() < POOL_MAX && v.capacity() > 0 {
            self.p32.push(v);
        }
    }
    fn reclaim(&mut self, buf: Buffer) {
        let buf = match buf.into_vec::<u64>() {
            Ok(v) => return self.put64(v),
            Err(b) => b,
        };
        let buf = match buf.into_vec::<u32>() {
            Ok(v) => return self.put32(v),
            Err(b) => b,
        };
        let buf = match buf.into_vec::<u16>() {
            Ok(v) => {
                if self.p16.len() < POOL_MAX {
                    self.p16.push(v);
                }
                return;
            }
            Err(b) => b,
        };
        if let Ok(v) = buf.into_vec::<u8>() {
            self.put8(v);
        }
    }
    fn reclaim_data(&mut self, data: ArrayData) {
        let (_, _, nulls, _, buffers, children) = data.into_parts();
        if let Some(n) = nulls {
            self.reclaim(n.into_inner().into_inner());
        }
        for b in buffers {
            self.reclaim(b);
        }
        for c in children {
            self.reclaim_data(c);
        }
    }
}

#[derive(Debug)]
struct Node {
    field: FieldRef,
    /// The spec field's dotted path and line, for errors.
    path: String,
    line: usize,
    null_key: StreamKey,
    /// Null threshold per branch (`rate * 2^64`); one entry without cases.
    null_thresholds: Vec<u128>,
    /// Conditional cases: the sibling read and the branch of each code.
    cases: Option<Cases>,
    kind: NodeKind,
}

#[derive(Debug)]
enum Cases {
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
enum NodeKind {
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

/// How a reference draws its parent rows.
#[derive(Debug)]
enum RefPick {
    /// The element's own parent row: `id / max`.
    Parent {
        max: u64,
    },
    Uniform,
    /// Rank `k` is row `((k - 1) * step + offset) mod rows`.
    Zipf {
        zipf: Zipf,
        step: u64,
        offset: u64,
    },
    /// Rows by the weights of a parent field.
    Alias(Arc<Alias>),
}

/// A multiplier coprime with `n` near `n` times the golden ratio's
/// fraction, so that consecutive ranks land far apart.
fn coprime_step(n: u64) -> u64 {
    if n <= 2 {
        return 1;
    }
    fn gcd(mut a: u64, mut b: u64) -> u64 {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    }
    let mut m = ((n as f64) * 0.618_033_988_749_895) as u64 % n;
    while gcd(m.max(1), n) != 1 {
        m = (m + 1) % n;
    }
    m.max(1)
}

/// A table compiled so that its top-level fields can be evaluated at any
/// rows: what references read. A field's value at a row is the one the
/// table itself generates there (same seed, same streams).
#[derive(Debug)]
struct TableEval {
    name: String,
    rows: u64,
    roots: Vec<Node>,
    order: Vec<usize>,
    needs_codes: Vec<bool>,
    /// Per top-level field, the fields its evaluation needs: itself and
    /// the siblings its cases read, transitively.
    closure: Vec<Vec<bool>>,
    /// The sequences that would wrap past some row, with the index of
    /// their top-level field.
    seq_limits: Vec<(usize, SeqLimit)>,
}

impl TableEval {
    /// Field `field` at rows `rows`.
    fn evaluate(&self, field: usize, rows: &[u64], s: &mut SpecScratch) -> Result<ArrayRef, Error> {
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
        let mut codes: Vec<Option<Vec<u8>>> = vec![None; self.roots.len()];
        let mut arrays: Vec<Option<ArrayRef>> = vec![None; self.roots.len()];
        for &i in &self.order {
            if !need[i] {
                continue;
            }
            let g = self.roots[i]
                .generate(rows, &codes, &arrays, self.needs_codes[i], s)
                .map_err(|e| e.in_table(&self.name, ""))?;
            arrays[i] = Some(g.array);
            codes[i] = g.codes;
        }
        let out = arrays[field].take();
        for c in codes.into_iter().flatten() {
            s.put8(c);
        }
        out.ok_or_else(|| {
            Error::InvalidDistribution(format!("table {}: no field {field}", self.name))
        })
    }
}

/// The tables references may read: none for a single spec; for a dataset,
/// each compiled once, on first use.
struct Parents<'a> {
    dataset: Option<(&'a Dataset, u64, f64)>,
    /// The table being compiled (for `parent` and `position`).
    current: Option<usize>,
    built: Shared<String, Arc<TableEval>>,
    /// Alias tables of weighted references, by table and weight field.
    weights: Shared<(String, String), Arc<Alias>>,
    /// Compiling a table that a reference reads (its own aggregates are
    /// then not compiled: they could read back). A table an aggregate
    /// reads compiles its aggregates: they read further down the tree of
    /// child tables, never back.
    in_reference: bool,
}

/// A map shared by the [`Parents`] of one compilation.
type Shared<K, V> = std::rc::Rc<std::cell::RefCell<std::collections::HashMap<K, V>>>;

impl<'a> Parents<'a> {
    fn none() -> Self {
        Parents {
            dataset: None,
            current: None,
            built: Default::default(),
            weights: Default::default(),
            in_reference: false,
        }
    }

    /// The same dataset and compiled tables, compiling table `t`.
    fn for_table(&self, t: usize) -> Self {
        Parents {
            dataset: self.dataset,
            current: Some(t),
            built: self.built.clone(),
            weights: self.weights.clone(),
            in_reference: true,
        }
    }

    /// The same dataset and compiled tables, compiling child table `t` of
    /// the current one for an aggregate: its own aggregates (of its
    /// children, further down) are compiled too.
    fn for_child(&self, t: usize) -> Self {
        Parents {
            dataset: self.dataset,
            current: Some(t),
            built: self.built.clone(),
            weights: self.weights.clone(),
            in_reference: self.in_reference,
        }
    }

    /// The node of aggregate `a` of field `path`.
    fn aggregate(&self, a: &crate::model::Aggregate, path: &str) -> Result<NodeKind, Error> {
        if self.in_reference {
            return Ok(NodeKind::Unreadable(format!(
                "field {path} aggregates table {}; a reference cannot read it",
                a.table
            )));
        }
        let bad = || {
            Error::InvalidDistribution(format!(
                "field {path}: `aggregate` over {}, which is not a child table of this one in the dataset",
                a.table
            ))
        };
        let (dataset, seed, scale) = self.dataset.ok_or_else(bad)?;
        let ci = dataset.table(&a.table).ok_or_else(bad)?;
        let c = dataset.tables[ci].children_of.as_ref().ok_or_else(bad)?;
        // Nested aggregates descend the tree of child tables, so they end
        // (a dataset built in code may skip the parser's cycle check).
        let current = self.current.map(|t| &dataset.tables[t].spec.name);
        let mut at = ci;
        for _ in 0..=dataset.tables.len() {
            match dataset.tables[at].children_of.as_ref() {
                Some(up) => at = dataset.table(&up.parent).ok_or_else(bad)?,
                None => break,
            }
        }
        if current != Some(&c.parent) || dataset.tables[at].children_of.is_some() {
            return Err(bad());
        }
        let child = Arc::new(table_eval(dataset, ci, seed, scale, &self.for_child(ci))?);
        let field = match &a.field {
            None => None,
            Some(name) => Some(
                dataset.tables[ci]
                    .spec
                    .fields
                    .iter()
                    .position(|f| &f.name == name)
                    .ok_or_else(bad)?,
            ),
        };
        Ok(NodeKind::Aggregate {
            child,
            field,
            op: a.op,
            counts: Counts::new(dataset, ci, seed, self)?,
        })
    }

    /// The alias table of `table`'s rows weighted by its field `weight`
    /// (named `name`.`weight`), made once per run: the field is evaluated
    /// at every row (nulls weigh nothing).
    fn weights(&self, table: &TableEval, name: &str, weight: &str) -> Result<Arc<Alias>, Error> {
        let key = (name.to_string(), weight.to_string());
        if let Some(a) = self.weights.borrow().get(&key) {
            return Ok(a.clone());
        }
        let bad = |m: String| Error::InvalidDistribution(format!("weights {name}.{weight}: {m}"));
        if table.rows > MAX_WEIGHTED_ROWS {
            return Err(bad(format!(
                "the table has {} rows; a weighted reference draws from at most {MAX_WEIGHTED_ROWS}",
                table.rows
            )));
        }
        let field = table
            .roots
            .iter()
            .position(|n| n.field.name() == weight)
            .ok_or_else(|| bad("no such field".into()))?;
        let mut values = Vec::with_capacity(table.rows as usize);
        let mut s = SpecScratch::default();
        let mut at = 0;
        while at < table.rows {
            let n = (table.rows - at).min(1 << 16);
            let ids: Vec<u64> = (at..at + n).collect();
            let a = table.evaluate(field, &ids, &mut s)?;
            numbers(&a, &mut values).map_err(bad)?;
            at += n;
        }
        if let Some(i) = values.iter().position(|w| !(*w >= 0.0 && w.is_finite())) {
            return Err(bad(format!(
                "row {i} weighs {}; weights are non-negative numbers",
                values[i]
            )));
        }
        let alias = Arc::new(Alias::new(&values).map_err(|e| bad(e.to_string()))?);
        self.weights.borrow_mut().insert(key, alias.clone());
        Ok(alias)
    }

    /// The most rows per parent row of the table being compiled, a child
    /// table (its rows' indexes are `parent * max + k`).
    fn max_children(&self, path: &str) -> Result<u64, Error> {
        self.dataset
            .zip(self.current)
            .and_then(|((d, _, _), t)| d.tables[t].children_of.as_ref())
            .map(|c| c.max_count())
            .ok_or_else(|| {
                Error::InvalidDistribution(format!(
                    "field {path}: `parent` and `position` need a child table"
                ))
            })
    }

    /// The compiled parent of `r` (read by field `path`) and the index of
    /// its field.
    fn resolve(&self, r: &Reference, path: &str) -> Result<(Arc<TableEval>, usize), Error> {
        let missing = || {
            Error::InvalidDistribution(format!(
                "field {path}: `ref` to {}.{} outside a dataset that has that table and field",
                r.table, r.field
            ))
        };
        let Some((dataset, _, scale)) = self.dataset else {
            return Err(missing());
        };
        let Some(ti) = dataset.tables.iter().position(|t| t.spec.name == r.table) else {
            return Err(missing());
        };
        let table = dataset.tables[ti]
            .spec
            .fields
            .iter()
            .position(|f| f.name == r.field);
        let Some(field) = table else {
            return Err(missing());
        };
        let t = self.table(ti, path)?;
        if t.rows == 0 && dataset.tables[ti].children_of.is_none() {
            let message = format!(
                "references table `{}`, which has no rows at scale {scale}; use a larger --scale",
                r.table
            );
            // The field's place, when it is one of the table being
            // compiled.
            let place = self.current.and_then(|c| {
                let table = &dataset.tables[c].spec;
                let f = table.walk().into_iter().find(|(f, _)| f.path == path)?.0;
                Some((table.name.as_str(), f.line))
            });
            return Err(match place {
                Some((table, line)) => {
                    Error::field(path, line, message).in_table(table, &dataset.origin)
                }
                None => Error::InvalidDistribution(format!("field {path} {message}")),
            });
        }
        Ok((t, field))
    }

    /// Table `ti` compiled to be read at any row (once per run), for
    /// `path` (a field or table, in messages).
    fn table(&self, ti: usize, path: &str) -> Result<Arc<TableEval>, Error> {
        let Some((dataset, seed, scale)) = self.dataset else {
            return Err(Error::InvalidDistribution(format!(
                "{path} reads another table outside a dataset"
            )));
        };
        let name = &dataset.tables[ti].spec.name;
        if let Some(t) = self.built.borrow().get(name) {
            return Ok(t.clone());
        }
        let t = Arc::new(table_eval(dataset, ti, seed, scale, &self.for_table(ti))?);
        self.built.borrow_mut().insert(name.clone(), t.clone());
        Ok(t)
    }
}

/// `a` with its elements also null where `valid` is 0 (the field's own
/// null rate over a copied or computed array).
fn with_nulls(a: ArrayRef, valid: &[u8], s: &mut SpecScratch) -> Result<ArrayRef, Error> {
    Ok(match pack(valid, s) {
        None => a,
        Some(own) => {
            let nulls = NullBuffer::union(a.nulls(), Some(&own));
            make_array(a.to_data().into_builder().nulls(nulls).build()?)
        }
    })
}

/// `a` plus `offsets` (one per element), in the type's units, wrapping at
/// its bounds; nulls stay null.
fn add_offsets(a: &ArrayRef, offsets: &[i64]) -> Result<ArrayRef, Error> {
    use arrow_array::{Array, ArrowNativeTypeOp, ArrowPrimitiveType, PrimitiveArray, types::*};
    fn add<T: ArrowPrimitiveType>(
        a: &ArrayRef,
        offsets: &[i64],
        of: impl Fn(i64) -> T::Native,
    ) -> ArrayRef {
        let p = a
            .as_any()
            .downcast_ref::<PrimitiveArray<T>>()
            .expect("the array of its data type");
        let values: Vec<T::Native> = p
            .values()
            .iter()
            .zip(offsets)
            .map(|(v, &o)| v.add_wrapping(of(o)))
            .collect();
        Arc::new(
            PrimitiveArray::<T>::new(values.into(), p.nulls().cloned())
                .with_data_type(a.data_type().clone()),
        )
    }
    use arrow_schema::TimeUnit as U;
    Ok(match a.data_type() {
        DataType::Int8 => add::<Int8Type>(a, offsets, |o| o as i8),
        DataType::Int16 => add::<Int16Type>(a, offsets, |o| o as i16),
        DataType::Int32 => add::<Int32Type>(a, offsets, |o| o as i32),
        DataType::Int64 => add::<Int64Type>(a, offsets, |o| o),
        DataType::UInt8 => add::<UInt8Type>(a, offsets, |o| o as u8),
        DataType::UInt16 => add::<UInt16Type>(a, offsets, |o| o as u16),
        DataType::UInt32 => add::<UInt32Type>(a, offsets, |o| o as u32),
        DataType::UInt64 => add::<UInt64Type>(a, offsets, |o| o as u64),
        DataType::Date32 => add::<Date32Type>(a, offsets, |o| o as i32),
        DataType::Timestamp(U::Second, _) => add::<TimestampSecondType>(a, offsets, |o| o),
        DataType::Timestamp(U::Millisecond, _) => {
            add::<TimestampMillisecondType>(a, offsets, |o| o)
        }
        DataType::Timestamp(U::Microsecond, _) => {
            add::<TimestampMicrosecondType>(a, offsets, |o| o)
        }
        DataType::Timestamp(U::Nanosecond, _) => add::<TimestampNanosecondType>(a, offsets, |o| o),
        DataType::Decimal128(..) => add::<Decimal128Type>(a, offsets, i128::from),
        DataType::Decimal256(..) => {
            add::<Decimal256Type>(a, offsets, |o| arrow_buffer::i256::from_i128(i128::from(o)))
        }
        other => {
            return Err(Error::InvalidDistribution(format!(
                "an offset cannot be added to {other}"
            )));
        }
    })
}

/// `a` (Int64) as the integer type `to`, wrapping.
fn cast_int(a: &ArrayRef, to: &DataType) -> Result<ArrayRef, Error> {
    use arrow_array::{Int64Array, PrimitiveArray, types::*};
    let v = a
        .as_any()
        .downcast_ref::<Int64Array>()
        .expect("positions are Int64");
    macro_rules! to {
        ($t:ty, $n:ty) => {
            Arc::new(PrimitiveArray::<$t>::from_iter_values(
                v.values().iter().map(|&x| x as $n),
            )) as ArrayRef
        };
    }
    Ok(match to {
        DataType::Int8 => to!(Int8Type, i8),
        DataType::Int16 => to!(Int16Type, i16),
        DataType::Int32 => to!(Int32Type, i32),
        DataType::Int64 => a.clone(),
        DataType::UInt8 => to!(UInt8Type, u8),
        DataType::UInt16 => to!(UInt16Type, u16),
        DataType::UInt32 => to!(UInt32Type, u32),
        DataType::UInt64 => to!(UInt64Type, u64),
        other => {
            return Err(Error::InvalidDistribution(format!(
                "a position is an integer, not {other}"
            )));
        }
    })
}

/// The values of numeric array `a` as `f64` (decimals in units), nulls as
/// 0, appended to `out`.
fn numbers(a: &ArrayRef, out: &mut Vec<f64>) -> Result<(), String> {
    use arrow_array::{Array, ArrowPrimitiveType, PrimitiveArray, types::*};
    fn push<T: ArrowPrimitiveType>(a: &ArrayRef, out: &mut Vec<f64>, f: impl Fn(T::Native) -> f64) {
        let p = a
            .as_any()
            .downcast_ref::<PrimitiveArray<T>>()
            .expect("the array of its data type");
        out.extend(p.iter().map(|v| v.map_or(0.0, &f)));
    }
    match a.data_type() {
        DataType::Int8 => push::<Int8Type>(a, out, f64::from),
        DataType::Int16 => push::<Int16Type>(a, out, f64::from),
        DataType::Int32 => push::<Int32Type>(a, out, f64::from),
        DataType::Int64 => push::<Int64Type>(a, out, |v| v as f64),
        DataType::UInt8 => push::<UInt8Type>(a, out, f64::from),
        DataType::UInt16 => push::<UInt16Type>(a, out, f64::from),
        DataType::UInt32 => push::<UInt32Type>(a, out, f64::from),
        DataType::UInt64 => push::<UInt64Type>(a, out, |v| v as f64),
        DataType::Float32 => push::<Float32Type>(a, out, f64::from),
        DataType::Float64 => push::<Float64Type>(a, out, |v| v),
        DataType::Decimal128(..) => push::<Decimal128Type>(a, out, |v| v as f64),
        DataType::Decimal256(..) => {
            push::<Decimal256Type>(a, out, |v| v.to_i128().map_or(f64::NAN, |x| x as f64))
        }
        other => return Err(format!("{other} is not a number")),
    }
    Ok(())
}

/// One way a reference draws its parent rows: how, from which stream,
/// and the offset added to the copy.
#[derive(Debug)]
struct RefDraw {
    pick: RefPick,
    key: StreamKey,
    offset: Option<(Sampler, StreamKey)>,
}

impl RefDraw {
    /// The parent row of element `id` (of a table of `rows` rows).
    #[inline]
    fn row(&self, id: u64, rows: u64) -> u64 {
        let key = self.key;
        match &self.pick {
            RefPick::Parent { max } => id / max,
            RefPick::Uniform => below(key.first(id), u128::from(rows)),
            // Below 2^31 rows the product fits 64 bits (a 128-bit
            // remainder is a call).
            RefPick::Zipf { zipf, step, offset } if rows <= 1 << 31 => {
                let rank = zipf.sample(&mut key.row(id)) - 1;
                (rank * step + offset) % rows
            }
            RefPick::Zipf { zipf, step, offset } => {
                let rank = zipf.sample(&mut key.row(id)) - 1;
                ((u128::from(rank) * u128::from(*step) + u128::from(*offset)) % u128::from(rows))
                    as u64
            }
            RefPick::Alias(alias) => u64::from(alias.sample(key.first(id))),
        }
    }
}

/// Most rows of a table that a `weight`ed reference draws from: its
/// weights are read once, into an alias table of 16 bytes a row (256 MiB
/// at most).
const MAX_WEIGHTED_ROWS: u64 = 1 << 24;

/// How reference `r` of field `f` (among `siblings`) draws rows of
/// `table`: its own pick, or its `via` sibling's with that sibling's
/// stream.
fn ref_draw(
    r: &Reference,
    f: &Field,
    siblings: &[Field],
    table: &Arc<TableEval>,
    seed: u64,
    parents: &Parents<'_>,
) -> Result<RefDraw, Error> {
    let (pick, drawer) = match &r.via {
        None => (&r.pick, f.path.as_str()),
        Some(v) => match siblings.iter().find(|s| &s.name == v) {
            Some(Field {
                kind:
                    Kind::Scalar {
                        generator: Generator::Reference(sr),
                        ..
                    },
                path,
                ..
            }) => (&sr.pick, path.as_str()),
            _ => {
                return Err(Error::InvalidDistribution(format!(
                    "field {}: `via` {v} is not a sibling reference",
                    f.path
                )));
            }
        },
    };
    let pick = match pick {
        Pick::Parent => RefPick::Parent {
            max: parents.max_children(&f.path)?,
        },
        Pick::Uniform => RefPick::Uniform,
        Pick::Zipf { s } => RefPick::Zipf {
            zipf: Zipf::new(*s, table.rows)?,
            step: coprime_step(table.rows),
            // Where rank 1 lands: a row of its own per field and seed,
            // not always the table's first.
            offset: below(
                StreamKey::new(seed, stream_id(drawer, "ref offset")).first(0),
                u128::from(table.rows),
            ),
        },
        Pick::Weighted { field: w } => RefPick::Alias(parents.weights(table, &r.table, w)?),
    };
    let offset = match &r.offset {
        Some(g) => Some((
            compile_sampler(
                g,
                Class::Int {
                    min: i64::MIN.into(),
                    max: i64::MAX.into(),
                },
            )?,
            StreamKey::new(seed, stream_id(&f.path, "offset")),
        )),
        None => None,
    };
    Ok(RefDraw {
        pick,
        key: StreamKey::new(seed, stream_id(drawer, "ref")),
        offset,
    })
}

/// The seed of table `name` of a multi-table dataset: tables draw from
/// streams of their own, so that fields of one name in two tables differ.
fn table_seed(seed: u64, name: &str) -> u64 {
    crate::rng::mix64(seed ^ stream_id(name, "table"))
}

/// Compiles table `ti` of `dataset` for evaluation at any rows.
fn table_eval(
    dataset: &Dataset,
    ti: usize,
    seed: u64,
    scale: f64,
    parents: &Parents<'_>,
) -> Result<TableEval, Error> {
    let table = &dataset.tables[ti];
    let fields = &table.spec.fields;
    let g = SpecGenerator::build(
        &table.spec,
        table_seed(seed, &table.spec.name),
        parents,
        table.calendar,
    )?;
    let closure = (0..fields.len())
        .map(|i| {
            let mut need = vec![false; fields.len()];
            let mut todo = vec![i];
            while let Some(j) = todo.pop() {
                if std::mem::replace(&mut need[j], true) {
                    continue;
                }
                for dep in depends_on(&fields[j]) {
                    if let Some(k) = fields.iter().position(|x| x.name == dep) {
                        todo.push(k);
                    }
                }
            }
            need
        })
        .collect();
    let seq_limits = g
        .seq_limits
        .into_iter()
        .filter_map(|l| {
            let top = l.path.split('.').next().unwrap_or_default();
            fields.iter().position(|f| f.name == top).map(|i| (i, l))
        })
        .collect();
    Ok(TableEval {
        name: table.spec.name.clone(),
        rows: table.rows.map_or(0, |r| r.at(scale)),
        roots: g.roots,
        order: g.order,
        needs_codes: g.needs_codes,
        closure,
        seq_limits,
    })
}

#[derive(Debug)]
struct Leaf {
    value_key: StreamKey,
    /// Sampler per branch.
    samplers: Vec<Sampler>,
    out: Out,
    dictionary: Option<ArrayRef>,
    /// Whether every key any sampler can draw indexes `dictionary` and
    /// fits the key type (checked once here, so batches skip the check).
    keys_in_range: bool,
}

/// How a leaf's draws become buffer entries.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Out {
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

/// One value drawer. Integer-like values (integers, dates, timestamps,
/// dictionary keys, booleans) are two's-complement bits in a `u64`.
#[derive(Debug)]
enum Sampler {
    /// Random version 4 UUIDs, as text or as 16 bytes.
    SUuid {
        text: bool,
    },
    IntConst(u64),
    IntSeq {
        start: u64,
        step: u64,
    },
    IntUniform {
        min: u64,
        span: u128,
    },
    IntNormal {
        mean: f64,
        std: f64,
        lo: f64,
        hi: f64,
        signed: bool,
    },
    IntZipf {
        zipf: Zipf,
        start: u64,
    },
    IntTable {
        alias: Alias,
        values: Vec<u64>,
    },
    IntZipfTable {
        zipf: Zipf,
        values: Vec<u64>,
    },
    Bernoulli(u128),
    FConst(f64),
    FSeq {
        start: f64,
        step: f64,
    },
    FUniform {
        min: f64,
        width: f64,
    },
    FNormal {
        mean: f64,
        std: f64,
        lo: f64,
        hi: f64,
    },
    FZipf {
        zipf: Zipf,
        start: f64,
    },
    FTable {
        alias: Alias,
        values: Vec<f64>,
    },
    FZipfTable {
        zipf: Zipf,
        values: Vec<f64>,
    },
    SConst(Val),
    STable {
        alias: Alias,
        values: Vec<Val>,
    },
    SZipf {
        zipf: Zipf,
        values: Vec<Val>,
    },
    STemplate {
        parts: Vec<Step>,
        /// Whether any slot draws random bits (else no stream is read).
        random: bool,
    },
    SWords {
        table: &'static NameTable,
        min: u32,
        count: u32,
    },
    /// Row `id` gets `values[id]` (`id % len` when cycled); rows past the
    /// list are refused before generation, and clamped here.
    IntByRow {
        values: Vec<u64>,
        cycle: bool,
    },
    FByRow {
        values: Vec<f64>,
        cycle: bool,
    },
    SByRow {
        values: Vec<Val>,
        cycle: bool,
    },
    /// A part of day `start + id` (as an integer, a boolean, a dictionary
    /// key or a name).
    Cal {
        start: i32,
        part: CalendarPart,
    },
}

/// The index into a list of `len` values of row `id`.
#[inline(always)]
fn by_row(id: u64, len: usize, cycle: bool) -> usize {
    if cycle {
        (id % len as u64) as usize
    } else {
        id.min(len as u64 - 1) as usize
    }
}

/// Part `part` of day `day` (days since 1970-01-01) as an integer (the
/// day itself, a number, 0/1, or the index of its name), and its category
/// code.
fn calendar_int(day: i64, part: CalendarPart) -> (u64, u8) {
    use chrono::{Datelike, NaiveDate};
    // 1970-01-01 is day 719,163 of the common era.
    let Some(d) = i32::try_from(day + 719_163)
        .ok()
        .and_then(NaiveDate::from_num_days_from_ce_opt)
    else {
        return (0, 0);
    };
    let v: i64 = match part {
        CalendarPart::Date => day,
        CalendarPart::DateKey => {
            i64::from(d.year()) * 10_000 + i64::from(d.month()) * 100 + i64::from(d.day())
        }
        CalendarPart::Year => d.year().into(),
        CalendarPart::Quarter => ((d.month() - 1) / 3 + 1).into(),
        CalendarPart::Month => d.month().into(),
        CalendarPart::DayOfMonth => d.day().into(),
        CalendarPart::DayOfYear => d.ordinal().into(),
        CalendarPart::DayOfWeek => d.weekday().number_from_monday().into(),
        CalendarPart::WeekOfYear => d.iso_week().week().into(),
        CalendarPart::DayName => {
            let k = d.weekday().num_days_from_monday();
            return (k.into(), k as u8);
        }
        CalendarPart::MonthName => {
            let k = d.month0();
            return (k.into(), k as u8);
        }
        CalendarPart::Weekend => {
            let b = d.weekday().num_days_from_monday() >= 5;
            return (u64::from(b), u8::from(b));
        }
    };
    (v as u64, 0)
}

/// A string value: short ones as a 16-byte block (copied whole, the
/// cursor advancing by the length), long ones as bytes.
#[derive(Debug)]
enum Val {
    Small([u8; 16], usize),
    Big(Box<[u8]>),
}

impl Val {
    fn new(b: &[u8]) -> Val {
        if b.len() <= 16 {
            let mut block = [0u8; 16];
            block[..b.len()].copy_from_slice(b);
            Val::Small(block, b.len())
        } else {
            Val::Big(b.into())
        }
    }

    fn len(&self) -> usize {
        match self {
            Val::Small(_, n) => *n,
            Val::Big(b) => b.len(),
        }
    }

    #[inline(always)]
    fn write(&self, w: &mut Writer) {
        match self {
            Val::Small(b, n) => w.block(b, *n),
            Val::Big(b) => w.bytes(b),
        }
    }
}

#[derive(Debug)]
enum TPart {
    Lit(Val),
    Seq {
        width: usize,
        zero: bool,
    },
    Name(&'static NameTable),
    Uniform {
        min: i64,
        span: u128,
        width: usize,
        zero: bool,
    },
    Zipf {
        zipf: Zipf,
        width: usize,
        zero: bool,
    },
    Hex(u32),
}

/// One step of a compiled template: the literal text before a part (up to
/// 16 bytes, stored as one block and possibly empty), then the part. A
/// literal longer than 16 bytes, or one at the end, is a step of its own
/// (`TPart::Lit` with no prefix). Folding literals into the next part
/// halves the steps of common templates (`+91-99-{seq:08}` is one step).
#[derive(Debug)]
struct Step {
    prefix: [u8; 16],
    prefix_len: usize,
    part: TPart,
}

impl Step {
    fn new(prefix: &[u8], part: TPart) -> Step {
        let mut block = [0u8; 16];
        block[..prefix.len()].copy_from_slice(prefix);
        Step {
            prefix: block,
            prefix_len: prefix.len(),
            part,
        }
    }

    /// Steps of a template's parts, literals folded into the next part.
    fn compile(parts: Vec<TPart>) -> Vec<Step> {
        let mut steps = Vec::new();
        let mut text: Vec<u8> = Vec::new();
        for part in parts {
            match part {
                TPart::Lit(v) => match v {
                    Val::Small(b, n) => text.extend_from_slice(&b[..n]),
                    Val::Big(b) => text.extend_from_slice(&b),
                },
                part => {
                    if text.len() > 16 {
                        steps.push(Step::new(&[], TPart::Lit(Val::new(&text))));
                        text.clear();
                    }
                    steps.push(Step::new(&text, part));
                    text.clear();
                }
            }
        }
        if !text.is_empty() {
            steps.push(Step::new(&[], TPart::Lit(Val::new(&text))));
        }
        steps
    }

    /// The list of a name or word step.
    fn name(&self) -> Option<&'static NameTable> {
        match self.part {
            TPart::Name(t) => Some(t),
            _ => None,
        }
    }

    #[inline(always)]
    fn write<const INLINE_NUMBERS: bool>(&self, id: u64, d: &mut Draws, out: &mut Writer) {
        out.block(&self.prefix, self.prefix_len);
        write_part::<INLINE_NUMBERS>(&self.part, id, d, out);
    }
}

/// FNV-1a: the stream id of a field path, so that a field's data does not
/// change when other fields are added, removed or reordered.
fn stream_id(path: &str, role: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in path.bytes().chain([0u8]).chain(role.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn threshold(rate: f64) -> u128 {
    (rate.clamp(0.0, 1.0) * 18_446_744_073_709_551_616.0) as u128
}

fn int_bits(v: &Value) -> u64 {
    match v {
        Value::Int(i) => *i as u64,
        Value::Bool(b) => u64::from(*b),
        Value::Float(f) => *f as i64 as u64,
        Value::Str(_) => 0,
    }
}

fn float_of(v: &Value) -> f64 {
    match v {
        Value::Float(f) => *f,
        Value::Int(i) => *i as f64,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Str(_) => 0.0,
    }
}

fn bytes_of(v: &Value) -> Box<[u8]> {
    match v {
        Value::Str(s) => s.as_bytes().into(),
        other => other.to_string().into_bytes().into(),
    }
}

fn word_table(list: WordList) -> &'static NameTable {
    match list {
        WordList::Words => words(),
        WordList::FirstNames => first_names(),
        WordList::LastNames => last_names(),
    }
}

/// The (min, max) of an integer class as f64 clamps.
fn int_range(class: Class) -> (f64, f64, bool) {
    match class {
        Class::Int { min, max } => (min as f64, max as f64, min < 0),
        Class::Decimal { max, .. } => (-max as f64, max as f64, true),
        _ => (i64::MIN as f64, i64::MAX as f64, true),
    }
}

fn compile_sampler(g: &Generator, class: Class) -> Result<Sampler, Error> {
    let float = class == Class::Float;
    let string = matches!(class, Class::Str);
    let dict = class == Class::Dict;
    Ok(match g {
        Generator::Constant(v) => {
            if float {
                Sampler::FConst(float_of(v))
            } else if string {
                Sampler::SConst(Val::new(&bytes_of(v)))
            } else if dict {
                Sampler::IntConst(0)
            } else {
                Sampler::IntConst(int_bits(v))
            }
        }
        Generator::Sequence { start, step } => {
            if float {
                Sampler::FSeq {
                    start: float_of(start),
                    step: float_of(step),
                }
            } else {
                Sampler::IntSeq {
                    start: int_bits(start),
                    step: int_bits(step),
                }
            }
        }
        Generator::Uniform { min, max } => match (min, max) {
            (Value::Float(a), Value::Float(b)) => Sampler::FUniform {
                min: *a,
                width: b - a,
            },
            (Value::Int(a), Value::Int(b)) => Sampler::IntUniform {
                min: *a as u64,
                span: (b - a + 1) as u128,
            },
            _ => {
                return Err(Error::InvalidDistribution(
                    "uniform bounds of different kinds".into(),
                ));
            }
        },
        Generator::Normal {
            mean,
            std,
            min,
            max,
        } => {
            if float {
                Sampler::FNormal {
                    mean: *mean,
                    std: *std,
                    lo: min.unwrap_or(f64::NEG_INFINITY),
                    hi: max.unwrap_or(f64::INFINITY),
                }
            } else {
                // Decimals are drawn in units of their scale.
                let unit = class.unit();
                let (tlo, thi, signed) = int_range(class);
                Sampler::IntNormal {
                    mean: mean * unit,
                    std: std * unit,
                    lo: min.map_or(tlo, |m| (m * unit).max(tlo)),
                    hi: max.map_or(thi, |m| (m * unit).min(thi)),
                    signed,
                }
            }
        }
        Generator::Zipf {
            s,
            n,
            values,
            start,
        } => {
            let zipf = Zipf::new(*s, *n)?;
            match values {
                Some(vals) if float => Sampler::FZipfTable {
                    zipf,
                    values: vals.iter().map(float_of).collect(),
                },
                Some(vals) if string => Sampler::SZipf {
                    zipf,
                    values: vals.iter().map(|v| Val::new(&bytes_of(v))).collect(),
                },
                Some(vals) if dict => Sampler::IntZipfTable {
                    zipf,
                    values: (0..vals.len() as u64).collect(),
                },
                Some(vals) => Sampler::IntZipfTable {
                    zipf,
                    values: vals.iter().map(int_bits).collect(),
                },
                None if float => Sampler::FZipf {
                    zipf,
                    start: *start as f64,
                },
                None => Sampler::IntZipf {
                    zipf,
                    start: *start as u64,
                },
            }
        }
        Generator::Weighted { values, weights } => {
            let alias = Alias::new(weights)?;
            if float {
                Sampler::FTable {
                    alias,
                    values: values.iter().map(float_of).collect(),
                }
            } else if string {
                Sampler::STable {
                    alias,
                    values: values.iter().map(|v| Val::new(&bytes_of(v))).collect(),
                }
            } else if dict {
                Sampler::IntTable {
                    alias,
                    values: (0..values.len() as u64).collect(),
                }
            } else {
                Sampler::IntTable {
                    alias,
                    values: values.iter().map(int_bits).collect(),
                }
            }
        }
        Generator::Probability(p) => Sampler::Bernoulli(threshold(*p)),
        Generator::Template(t) => {
            let mut parts = Vec::new();
            for p in t.parts() {
                parts.push(match p {
                    Part::Literal(s) => TPart::Lit(Val::new(s.as_bytes())),
                    Part::Slot {
                        placeholder,
                        width,
                        zero,
                    } => {
                        let (width, zero) = (*width, *zero);
                        match placeholder {
                            Placeholder::Seq => TPart::Seq { width, zero },
                            Placeholder::FirstName => TPart::Name(first_names()),
                            Placeholder::LastName => TPart::Name(last_names()),
                            Placeholder::Word => TPart::Name(words()),
                            Placeholder::Uniform { min, max } => TPart::Uniform {
                                min: *min,
                                span: (*max as i128 - *min as i128 + 1) as u128,
                                width,
                                zero,
                            },
                            Placeholder::Zipf { s, n } => TPart::Zipf {
                                zipf: Zipf::new(*s, *n)?,
                                width,
                                zero,
                            },
                            Placeholder::Hex(n) => TPart::Hex(*n),
                        }
                    }
                });
            }
            let random = parts
                .iter()
                .any(|p| !matches!(p, TPart::Lit(_) | TPart::Seq { .. }));
            Sampler::STemplate {
                parts: Step::compile(parts),
                random,
            }
        }
        Generator::Words { list, min, max } => Sampler::SWords {
            table: word_table(*list),
            min: *min,
            count: max - min + 1,
        },
        Generator::Uuid => Sampler::SUuid { text: true },
        Generator::Reference(r) => {
            return Err(Error::InvalidDistribution(format!(
                "a reference to {}.{} draws no values of its own (only a field's generator can be one)",
                r.table, r.field
            )));
        }
        Generator::Position(_) => {
            return Err(Error::InvalidDistribution(
                "a position draws no values of its own (only a field's generator can be one)"
                    .into(),
            ));
        }
        Generator::Expr(e) => {
            return Err(Error::InvalidDistribution(format!(
                "the expression {:?} draws no values of its own (only a field's generator can be one)",
                e.source
            )));
        }
        Generator::Aggregate(a) => {
            return Err(Error::InvalidDistribution(format!(
                "an aggregate of {} draws no values of its own (only a field's generator can be one)",
                a.table
            )));
        }
        Generator::ByRow { values, .. } if values.is_empty() => {
            return Err(Error::InvalidDistribution(
                "values_by_row needs at least one value".into(),
            ));
        }
        Generator::ByRow { values, cycle } => {
            let cycle = *cycle;
            if float {
                Sampler::FByRow {
                    values: values.iter().map(float_of).collect(),
                    cycle,
                }
            } else if string {
                Sampler::SByRow {
                    values: values.iter().map(|v| Val::new(&bytes_of(v))).collect(),
                    cycle,
                }
            } else if dict {
                Sampler::IntByRow {
                    values: distinct_values(values)
                        .1
                        .into_iter()
                        .map(u64::from)
                        .collect(),
                    cycle,
                }
            } else {
                Sampler::IntByRow {
                    values: values.iter().map(int_bits).collect(),
                    cycle,
                }
            }
        }
        Generator::Calendar(part) => {
            // The day of row `id` is `start + id`: a calendar table's
            // leaves are compiled with its start (see `compile`).
            Sampler::Cal {
                start: 0,
                part: *part,
            }
        }
    })
}

/// A list or map length sampler; table values are clamped here to
/// `0..=max_length`, so that the per-row loops need not clamp them.
fn length_sampler(g: &Generator, class: Class) -> Result<Sampler, Error> {
    let mut sampler = compile_sampler(g, class)?;
    if let Sampler::IntTable { values, .. } = &mut sampler {
        let max = max_length(g).max(1);
        for v in values {
            *v = (*v as i64).clamp(0, max as i64) as u64;
        }
    }
    Ok(sampler)
}

/// Draws `0..span` (`span` up to 2^64) from 64 random bits.
#[inline(always)]
fn below(bits: u64, span: u128) -> u64 {
    if span > u64::MAX as u128 {
        bits
    } else {
        ((bits as u128 * span) >> 64) as u64
    }
}

impl Sampler {
    /// Categories of a table sampler (0 for others).
    fn categories(&self) -> usize {
        match self {
            Sampler::IntTable { values, .. } | Sampler::IntZipfTable { values, .. } => values.len(),
            Sampler::FTable { values, .. } | Sampler::FZipfTable { values, .. } => values.len(),
            Sampler::STable { values, .. } | Sampler::SZipf { values, .. } => values.len(),
            _ => 0,
        }
    }

    /// Whether category `c` has a positive probability.
    fn possible(&self, c: u32) -> bool {
        match self {
            Sampler::IntTable { alias, .. }
            | Sampler::FTable { alias, .. }
            | Sampler::STable { alias, .. } => alias.probability(c as usize) > 0.0,
            _ => true,
        }
    }

    /// A category of a table sampler, drawn from `r`.
    fn category(&self, r: &mut RowRng) -> u32 {
        match self {
            Sampler::IntTable { alias, .. }
            | Sampler::FTable { alias, .. }
            | Sampler::STable { alias, .. } => alias.sample(r.next_u64()),
            Sampler::IntZipfTable { zipf, .. }
            | Sampler::FZipfTable { zipf, .. }
            | Sampler::SZipf { zipf, .. } => (zipf.sample(r) - 1) as u32,
            _ => 0,
        }
    }

    fn int_of(&self, c: u32) -> u64 {
        match self {
            Sampler::IntTable { values, .. } | Sampler::IntZipfTable { values, .. } => {
                values[c as usize]
            }
            _ => 0,
        }
    }

    fn float_of(&self, c: u32) -> f64 {
        match self {
            Sampler::FTable { values, .. } | Sampler::FZipfTable { values, .. } => {
                values[c as usize]
            }
            _ => 0.0,
        }
    }

    fn string_of(&self, c: u32, out: &mut Writer) {
        if let Sampler::STable { values, .. } | Sampler::SZipf { values, .. } = self {
            values[c as usize].write(out);
        }
    }

    /// The most bytes one string value can take.
    fn max_bytes(&self) -> usize {
        match self {
            Sampler::SConst(v) => v.len(),
            Sampler::STable { values, .. } | Sampler::SZipf { values, .. } => {
                values.iter().map(Val::len).max().unwrap_or(0)
            }
            Sampler::STemplate { parts, .. } => parts
                .iter()
                .map(|step| {
                    step.prefix_len
                        + match &step.part {
                            TPart::Lit(v) => v.len(),
                            TPart::Seq { width, .. }
                            | TPart::Uniform { width, .. }
                            | TPart::Zipf { width, .. } => (*width).max(21),
                            TPart::Name(_) => crate::names::SLOT,
                            TPart::Hex(n) => *n as usize,
                        }
                })
                .sum(),
            Sampler::SWords { min, count, .. } => {
                (*min + *count) as usize * (crate::names::SLOT + 1)
            }
            Sampler::SUuid { text } => {
                if *text {
                    36
                } else {
                    16
                }
            }
            Sampler::SByRow { values, .. } => values.iter().map(Val::len).max().unwrap_or(0),
            Sampler::Cal { .. } => 9,
            _ => 0,
        }
    }

    /// An integer-like value and its category.
    #[inline(always)]
    fn int(&self, key: StreamKey, id: u64) -> (u64, u8) {
        match self {
            Sampler::IntConst(v) => (*v, 0),
            Sampler::IntSeq { start, step } => (start.wrapping_add(step.wrapping_mul(id)), 0),
            Sampler::IntUniform { min, span } => (min.wrapping_add(below(key.first(id), *span)), 0),
            Sampler::IntNormal {
                mean,
                std,
                lo,
                hi,
                signed,
            } => {
                let mut r = key.row(id);
                let x = (mean + std * normal(&mut r)).round().max(*lo).min(*hi);
                let v = if *signed { x as i64 as u64 } else { x as u64 };
                (v, 0)
            }
            Sampler::IntZipf { zipf, start } => {
                (start.wrapping_add(zipf.sample(&mut key.row(id)) - 1), 0)
            }
            Sampler::IntTable { alias, values } => {
                let c = alias.sample(key.first(id)) as usize;
                (values[c], c.min(254) as u8)
            }
            Sampler::IntZipfTable { zipf, values } => {
                let c = (zipf.sample(&mut key.row(id)) - 1) as usize;
                (values[c], c.min(254) as u8)
            }
            Sampler::Bernoulli(t) => {
                let b = u128::from(key.first(id)) < *t;
                (u64::from(b), u8::from(b))
            }
            Sampler::IntByRow { values, cycle } => {
                let v = values[by_row(id, values.len(), *cycle)];
                (v, v.min(254) as u8)
            }
            Sampler::Cal { start, part } => {
                calendar_int(i64::from(*start) + id.min(i32::MAX as u64) as i64, *part)
            }
            _ => (0, 0),
        }
    }

    #[inline(always)]
    fn float(&self, key: StreamKey, id: u64) -> (f64, u8) {
        match self {
            Sampler::FConst(v) => (*v, 0),
            Sampler::FSeq { start, step } => (start + step * id as f64, 0),
            Sampler::FUniform { min, width } => (min + unit(key.first(id)) * width, 0),
            Sampler::FNormal { mean, std, lo, hi } => {
                let mut r = key.row(id);
                ((mean + std * normal(&mut r)).max(*lo).min(*hi), 0)
            }
            Sampler::FZipf { zipf, start } => {
                (start + (zipf.sample(&mut key.row(id)) - 1) as f64, 0)
            }
            Sampler::FTable { alias, values } => {
                let c = alias.sample(key.first(id)) as usize;
                (values[c], c.min(254) as u8)
            }
            Sampler::FZipfTable { zipf, values } => {
                let c = (zipf.sample(&mut key.row(id)) - 1) as usize;
                (values[c], c.min(254) as u8)
            }
            Sampler::FByRow { values, cycle } => (values[by_row(id, values.len(), *cycle)], 0),
            _ => (0.0, 0),
        }
    }

    /// Writes the string of element `id` and returns its category.
    #[inline(always)]
    fn string(&self, key: StreamKey, id: u64, out: &mut Writer) -> u8 {
        match self {
            Sampler::SConst(v) => {
                v.write(out);
                0
            }
            Sampler::STable { alias, values } => {
                let c = alias.sample(key.first(id)) as usize;
                values[c].write(out);
                c.min(254) as u8
            }
            Sampler::SZipf { zipf, values } => {
                let c = (zipf.sample(&mut key.row(id)) - 1) as usize;
                values[c].write(out);
                c.min(254) as u8
            }
            Sampler::STemplate { parts, random } => {
                let mut d = Draws::new(key, id, *random);
                for step in parts {
                    step.write::<false>(id, &mut d, out);
                }
                0
            }
            Sampler::SWords { table, min, count } => {
                let mut d = Draws::new(key, id, true);
                let n = min + below32(d.u32(), *count);
                for w in 0..n {
                    if w > 0 {
                        out.block(b" ", 1);
                    }
                    let (slot, len) = table.slot(below32(d.u32(), table.len() as u32) as usize);
                    out.block(slot, len);
                }
                0
            }
            Sampler::SUuid { text } => {
                let mut r = key.row(id);
                let (hi, lo) = (r.next_u64(), r.next_u64());
                // Version 4 (random) in the high nibble of byte 6, the
                // RFC 4122 variant (binary 10) in the top bits of byte 8.
                let hi = (hi & !0xf000) | 0x4000;
                let lo = (lo & !(0xc000_0000_0000_0000)) | 0x8000_0000_0000_0000;
                let mut b = [0u8; 16];
                b[..8].copy_from_slice(&hi.to_be_bytes());
                b[8..].copy_from_slice(&lo.to_be_bytes());
                if *text {
                    let mut t = [0u8; 36];
                    let mut at = 0;
                    for (i, byte) in b.iter().enumerate() {
                        if matches!(i, 4 | 6 | 8 | 10) {
                            t[at] = b'-';
                            at += 1;
                        }
                        t[at] = HEX[usize::from(byte >> 4)];
                        t[at + 1] = HEX[usize::from(byte & 15)];
                        at += 2;
                    }
                    out.bytes(&t);
                } else {
                    out.bytes(&b);
                }
                0
            }
            Sampler::SByRow { values, cycle } => {
                values[by_row(id, values.len(), *cycle)].write(out);
                0
            }
            Sampler::Cal { start, part } => {
                let day = i64::from(*start) + id.min(i32::MAX as u64) as i64;
                let (k, c) = calendar_int(day, *part);
                let name = match part {
                    CalendarPart::MonthName => MONTH_NAMES.get(k as usize),
                    _ => DAY_NAMES.get(k as usize),
                };
                out.bytes(name.copied().unwrap_or("").as_bytes());
                c
            }
            _ => 0,
        }
    }
}

/// Lower-case hexadecimal digits.
const HEX: &[u8; 16] = b"0123456789abcdef";

/// Random words for one element, handed out 32 or 64 bits at a time; the
/// first word is the element's stream state itself (one mix).
struct Draws {
    r: RowRng,
    word: u64,
    halves: u8,
}

impl Draws {
    #[inline(always)]
    fn new(key: StreamKey, id: u64, random: bool) -> Draws {
        if !random {
            // Never read: a constant, not a mix per element.
            const UNUSED: RowRng = RowRng::seeded(0);
            return Draws {
                r: UNUSED,
                word: 0,
                halves: 0,
            };
        }
        let r = key.row(id);
        Draws {
            word: r.state(),
            r,
            halves: 2,
        }
    }

    #[inline(always)]
    fn u32(&mut self) -> u32 {
        if self.halves == 0 {
            self.word = self.r.next_u64();
            self.halves = 2;
        }
        self.halves -= 1;
        (self.word >> (32 * u32::from(self.halves))) as u32
    }

    #[inline(always)]
    fn u64(&mut self) -> u64 {
        if self.halves == 2 {
            self.halves = 0;
            self.word
        } else {
            self.r.next_u64()
        }
    }
}

/// `0..n` from 32 random bits (multiply-shift).
#[inline(always)]
fn below32(bits: u32, n: u32) -> u32 {
    ((u64::from(bits) * u64::from(n)) >> 32) as u32
}

/// A byte buffer written through a cursor: values are stored as whole
/// fixed-size blocks (one unaligned store, no call) and the cursor moves by
/// their real length; the buffer keeps enough slack for any block.
struct Writer {
    buf: Vec<u8>,
    pos: usize,
}

/// Slack kept past the cursor beyond one value's own bytes.
const SLACK: usize = 64;

impl Writer {
    /// Makes sure `n` bytes (plus the block slack) fit past the cursor.
    #[inline(always)]
    fn room(&mut self, n: usize) {
        if self.buf.len() - self.pos < n + SLACK {
            self.grow(n + SLACK);
        }
    }

    #[cold]
    fn grow(&mut self, n: usize) {
        let want = (self.buf.len() * 2).max(self.pos + n).max(4096);
        self.buf.resize(want, 0);
    }

    #[inline(always)]
    fn block<const N: usize>(&mut self, b: &[u8; N], len: usize) {
        self.buf[self.pos..self.pos + N].copy_from_slice(b);
        self.pos += len;
    }

    #[inline(always)]
    fn bytes(&mut self, b: &[u8]) {
        self.buf[self.pos..self.pos + b.len()].copy_from_slice(b);
        self.pos += b.len();
    }
}

/// Two ASCII digits per entry, first digit in the low byte.
static PAIR16: [u16; 100] = {
    let mut t = [0u16; 100];
    let mut i = 0;
    while i < 100 {
        t[i] = (b'0' as u16 + (i % 10) as u16) << 8 | (b'0' as u16 + (i / 10) as u16);
        i += 1;
    }
    t
};

/// The 8 ASCII digits of `v < 10^8`, zero-padded, first digit in the low
/// byte: four independent two-digit lookups, no loop.
#[inline(always)]
fn digits8(v: u32) -> u64 {
    let (a, r) = (v / 1_000_000, v % 1_000_000);
    let (b, r) = (r / 10_000, r % 10_000);
    let (c, d) = (r / 100, r % 100);
    u64::from(PAIR16[a as usize])
        | u64::from(PAIR16[b as usize]) << 16
        | u64::from(PAIR16[c as usize]) << 32
        | u64::from(PAIR16[d as usize]) << 48
}

/// `v` in decimal, padded to `width` with zeros or spaces (a minus sign
/// first when `negative`), as up to 16 characters in a register, first
/// character in the low byte, and their count; `None` past 16 characters
/// (see [`uint_text_long`]). Not inlined: inlined into a template's part
/// loop, its arithmetic on the element id was hoisted out of the loop and
/// run for every template, numbers or not.
#[inline(never)]
fn uint_text(v: u64, width: usize, zero: bool, negative: bool) -> Option<(u128, usize)> {
    uint_text_inline(v, width, zero, negative)
}

/// [`uint_text`], inlined.
#[inline(always)]
fn uint_text_inline(v: u64, width: usize, zero: bool, negative: bool) -> Option<(u128, usize)> {
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    if v < 100 && width <= 2 && !negative {
        // One or two digits (`{uniform(0,9)}`, hours, days): one lookup.
        let pair = u64::from(PAIR16[v as usize]);
        let total = width.max(1 + usize::from(v >= 10));
        let t = if total == 1 {
            pair >> 8
        } else if v < 10 && !zero {
            pair - 0x10
        } else {
            pair
        };
        return Some((u128::from(t), total));
    }
    if v < 100_000_000 && width <= 8 && !negative {
        // Up to 8 characters: the same steps on one 64-bit word.
        let text = digits8(v as u32);
        let leading = ((text ^ ZEROS).trailing_zeros() / 8) as usize;
        let digits = (8 - leading.min(8)).max(1);
        let total = width.max(digits);
        let pad = total - digits;
        let mut t = text >> (8 * (8 - total));
        if !zero {
            t -= 0x1010_1010_1010_1010 & ((1u64 << (8 * pad)) - 1);
        }
        return Some((u128::from(t), total));
    }
    if v >= 10_000_000_000_000_000 {
        return None;
    }
    // 16 zero-padded digits, first character in the low byte; the digit
    // count comes from the leading '0' characters (no logarithm).
    let (high, low) = if v < 100_000_000 {
        (ZEROS, digits8(v as u32))
    } else {
        (
            digits8((v / 100_000_000) as u32),
            digits8((v % 100_000_000) as u32),
        )
    };
    let text = u128::from(high) | u128::from(low) << 64;
    let leading =
        ((text ^ (u128::from(ZEROS) * ((1u128 << 64) + 1))).trailing_zeros() / 8) as usize;
    let digits = (16 - leading.min(16)).max(1);
    let total = width.max(digits + usize::from(negative));
    if total > 16 {
        return None;
    }
    let pad = total - digits;
    let at = if zero { 0 } else { pad.saturating_sub(1) };
    let mut t = text >> (8 * (16 - total));
    if !zero && pad > 0 {
        // Leading '0's of the padding become ' ' (0x30 - 0x10).
        t -= 0x1010_1010_1010_1010_1010_1010_1010_1010 & ((1u128 << (8 * pad)) - 1);
    }
    if negative {
        t = (t & !(0xffu128 << (8 * at))) | (u128::from(b'-') << (8 * at));
    }
    Some((t, total))
}

/// [`uint_text`] for more than 16 characters (widths up to 64).
#[cold]
fn uint_text_long(mut v: u64, width: usize, zero: bool, negative: bool) -> ([u8; 88], usize) {
    let mut digits = [0u8; 20];
    let mut at = 20;
    loop {
        at -= 1;
        digits[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let n = 20 - at;
    let pad = width.saturating_sub(n + usize::from(negative));
    let mut out = [0u8; 88];
    let mut len = 0;
    let mut push = |b: u8| {
        out[len] = b;
        len += 1;
    };
    if negative && zero {
        push(b'-');
    }
    for _ in 0..pad {
        push(if zero { b'0' } else { b' ' });
    }
    if negative && !zero {
        push(b'-');
    }
    for &d in &digits[at..] {
        push(d);
    }
    (out, len)
}

/// Writes `v` as [`uint_text`] formats it; `INLINE` inlines the
/// formatting instead of calling it.
#[inline(always)]
fn write_uint<const INLINE: bool>(
    out: &mut Writer,
    v: u64,
    width: usize,
    zero: bool,
    negative: bool,
) {
    let text = if INLINE {
        uint_text_inline(v, width, zero, negative)
    } else {
        uint_text(v, width, zero, negative)
    };
    match text {
        Some((t, len)) => out.block(&t.to_le_bytes(), len),
        None => {
            let (text, len) = uint_text_long(v, width, zero, negative);
            out.bytes(&text[..len]);
        }
    }
}

/// Writes one template part. `INLINE_NUMBERS` inlines number formatting
/// (for templates with number slots); without it, formatting is a call, so
/// that its arithmetic cannot be hoisted into templates that never use it.
#[inline(always)]
fn write_part<const INLINE_NUMBERS: bool>(p: &TPart, id: u64, d: &mut Draws, out: &mut Writer) {
    match p {
        TPart::Lit(v) => v.write(out),
        TPart::Seq { width, zero } => write_uint::<INLINE_NUMBERS>(out, id, *width, *zero, false),
        TPart::Name(t) => {
            let (slot, len) = t.slot(below32(d.u32(), t.len() as u32) as usize);
            out.block(slot, len);
        }
        TPart::Uniform {
            min,
            span,
            width,
            zero,
        } => {
            let off = if *span < 1 << 32 {
                u64::from(below32(d.u32(), *span as u32))
            } else {
                below(d.u64(), *span)
            };
            let v = min.wrapping_add(off as i64);
            write_uint::<INLINE_NUMBERS>(out, v.unsigned_abs(), *width, *zero, v < 0);
        }
        TPart::Zipf { zipf, width, zero } => {
            write_uint::<false>(out, zipf.sample(&mut d.r), *width, *zero, false)
        }
        TPart::Hex(n) => {
            // The low `n` digits (the parser keeps 1 <= n <= 16).
            let t = hex16(d.u64()) >> (8 * (16 - (*n as usize).min(16)));
            out.block(&t.to_le_bytes(), *n as usize);
        }
    }
}

/// The 16 lowercase hex digits of `v`, most significant first, the first
/// character in the low byte: the nibbles spread to bytes by shifts and
/// masks and turned into characters in one go (no table, no loop).
#[inline(always)]
fn hex16(v: u64) -> u128 {
    fn spread(x: u32) -> u64 {
        let mut x = u64::from(x);
        x = (x | x << 16) & 0x0000_ffff_0000_ffff;
        x = (x | x << 8) & 0x00ff_00ff_00ff_00ff;
        x = (x | x << 4) & 0x0f0f_0f0f_0f0f_0f0f;
        // Nibble j is byte j now; those above 9 become 'a'..'f'.
        let letters = ((x + 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101;
        (x + 0x3030_3030_3030_3030 + letters * 39).swap_bytes()
    }
    u128::from(spread((v >> 32) as u32)) | u128::from(spread(v as u32)) << 64
}

/// An estimate of a leaf's distinct values (`None`: unbounded).
fn cardinality(g: &Generator, class: Class) -> Option<u64> {
    match g {
        Generator::Constant(_) => Some(1),
        Generator::Sequence { .. } => None,
        Generator::Uniform { min, max } => match (min, max) {
            (Value::Int(a), Value::Int(b)) => u64::try_from(b - a + 1).ok(),
            _ => None,
        },
        Generator::Normal { std, min, max, .. } => {
            if class == Class::Float {
                return None;
            }
            let unit = class.unit();
            let width = 12.0 * std * unit;
            let clamp = match (min, max) {
                (Some(a), Some(b)) => (b - a) * unit + 1.0,
                _ => f64::INFINITY,
            };
            Some((width.min(clamp) as u64).saturating_add(1))
        }
        Generator::Zipf { n, .. } => Some(*n),
        Generator::Weighted { values, .. } => Some(values.len() as u64),
        Generator::Probability(_) => Some(2),
        Generator::Template(t) => t.cardinality(),
        Generator::Words { list, max, .. } => (word_table(*list).len() as u64).checked_pow(*max),
        Generator::Reference(_) | Generator::Position(_) | Generator::Uuid => None,
        Generator::ByRow { values, .. } => Some(distinct_values(values).0.len() as u64),
        Generator::Expr(_) | Generator::Aggregate(_) => None,
        Generator::Calendar(p) => match p {
            CalendarPart::Date | CalendarPart::DateKey => None,
            _ => Some(366),
        },
    }
}

impl SpecGenerator {
    /// Compiles `spec` for `seed`.
    ///
    /// # Errors
    /// [`Error::InvalidDistribution`] for parameters a checked spec never
    /// holds.
    pub fn new(spec: &Spec, seed: u64) -> Result<Self, Error> {
        Self::build(spec, seed, &Parents::none(), None)
    }

    /// Compiles table `table` of `dataset` for `seed` at `scale` (which
    /// sets the row counts its references draw from). A table of a
    /// multi-table dataset draws from streams of its own; the one table
    /// of a plain spec is [`SpecGenerator::new`] of that spec.
    ///
    /// # Errors
    /// As [`SpecGenerator::new`], and [`Error::InvalidDistribution`] when
    /// a referenced table has no rows at `scale`.
    pub fn for_table(
        dataset: &Dataset,
        table: usize,
        seed: u64,
        scale: f64,
    ) -> Result<Self, Error> {
        let t = dataset.tables.get(table).ok_or_else(|| {
            Error::InvalidDistribution(format!("the dataset has no table {table}"))
        })?;
        if !dataset.multi_table {
            let mut g = Self::new(&t.spec, seed)?;
            g.origin.clone_from(&dataset.origin);
            return Ok(g);
        }
        let parents = Parents {
            dataset: Some((dataset, seed, scale)),
            current: Some(table),
            built: Default::default(),
            weights: Default::default(),
            in_reference: false,
        };
        let mut g = Self::build(
            &t.spec,
            table_seed(seed, &t.spec.name),
            &parents,
            t.calendar,
        )?;
        g.origin.clone_from(&dataset.origin);
        if let (Some((n, field)), Some(rows)) = (&g.row_limit, t.rows) {
            let want = rows.at(scale);
            if want > *n {
                return Err(too_few_values(&t.spec.name, field, *n, want));
            }
        }
        // The chain of child tables from the root ancestor down to this
        // one (the parser rejects cycles; the bound guards tables built in
        // code).
        let mut at = table;
        while let Some(c) = &dataset.tables[at].children_of {
            g.expand.push(Expand {
                counts: Counts::new(dataset, at, seed, &parents)?,
            });
            at = dataset
                .table(&c.parent)
                .ok_or_else(|| Error::InvalidDistribution(format!("no table {}", c.parent)))?;
            if g.expand.len() > dataset.tables.len() {
                return Err(Error::InvalidDistribution(format!(
                    "table {} is its own ancestor",
                    t.spec.name
                )));
            }
        }
        g.expand.reverse();
        // Rows that do not depend on the scale are checked now (a
        // dimension's, a calendar's, and their child tables').
        if let Some(Rows::Fixed(n)) = dataset.tables[at].rows {
            g.check_rows(n)?;
        }
        Ok(g)
    }

    /// The rows [`BatchGenerator::generate`] gives for `first_row ..
    /// first_row + len`: `len`, or for a child table the number of their
    /// descendants, counted without generating a field (`len` is walked
    /// 65,536 rows at a time).
    ///
    /// # Errors
    /// [`Error::BatchTooLarge`] as `generate` would give it.
    pub fn rows_of(&self, first_row: u64, len: u64) -> Result<u64, Error> {
        if self.expand.is_empty() {
            return Ok(len);
        }
        let mut s = SpecScratch::default();
        let mut total = 0;
        let mut at = first_row;
        while at < first_row + len {
            let n = (first_row + len - at).min(1 << 16);
            let mut ids = s.v64(n as usize);
            ids.extend(at..at + n);
            let ids = self.expanded(ids, &mut s)?;
            total += ids.len() as u64;
            s.put64(ids);
            at += n;
        }
        Ok(total)
    }

    /// Checks that rows `0..rows` can be generated: a `values_by_row`
    /// field without `cycle` has values for so many rows only, and a
    /// sequence keeps within its type's range (and its element index
    /// within 2^64) for so many. [`BatchGenerator::generate`] checks each
    /// batch's rows so; a caller that knows the rows checks them before
    /// writing anything.
    ///
    /// # Errors
    /// [`Error::InvalidDistribution`] naming the `values_by_row` field and
    /// its count; [`Error::Field`] naming the sequence's spec line, table
    /// and field, and the row where it would wrap.
    pub fn check_rows(&self, rows: u64) -> Result<(), Error> {
        if let Some((n, field)) = &self.row_limit
            && rows > *n
        {
            return Err(too_few_values(&self.name, field, *n, rows));
        }
        // A child table's rows are `p * max + k` of its root's rows `p`.
        let per_root = self
            .expand
            .iter()
            .fold(1u128, |p, e| p.saturating_mul(u128::from(e.counts.max)));
        for l in &self.seq_limits {
            l.check(rows, per_root)
                .map_err(|e| e.in_table(&self.name, &self.origin))?;
        }
        Ok(())
    }

    /// The ids of the rows whose root rows are `ids`: `ids` itself, or
    /// for a child table its descendants, generation by generation.
    fn expanded(&self, mut ids: Vec<u64>, s: &mut SpecScratch) -> Result<Vec<u64>, Error> {
        for e in &self.expand {
            let mut all = s.v8(ids.len());
            all.resize(ids.len(), 1);
            let expanded = e.counts.children(&ids, &all, s);
            s.put8(all);
            let (offsets, children, valid) = match expanded {
                Ok(x) => x,
                Err(e) => {
                    s.put64(ids);
                    return Err(e);
                }
            };
            s.put8(valid);
            s.put32(offsets);
            s.put64(std::mem::replace(&mut ids, children));
        }
        Ok(ids)
    }

    fn build(
        spec: &Spec,
        seed: u64,
        parents: &Parents<'_>,
        calendar: Option<Calendar>,
    ) -> Result<Self, Error> {
        let mut hints = Hints::default();
        let mut roots: Vec<Node> = spec
            .fields
            .iter()
            .map(|f| compile(f, &spec.fields, seed, &[], &mut hints, parents))
            .collect::<Result<_, _>>()?;
        if let Some(c) = calendar {
            for n in &mut roots {
                n.set_calendar_start(c.start);
            }
        }
        // The fewest `values_by_row` of a field without `cycle`: no row
        // past them can be generated.
        fn limit(fields: &[Field], out: &mut Option<(u64, String)>) {
            for f in fields {
                match &f.kind {
                    Kind::Struct(children) => limit(children, out),
                    Kind::Scalar { generator, .. } => {
                        let gens = std::iter::once(generator)
                            .chain(f.when.iter().filter_map(|w| w.generator.as_ref()));
                        for g in gens {
                            if let Generator::ByRow {
                                values,
                                cycle: false,
                            } = g
                            {
                                let n = values.len() as u64;
                                if out.as_ref().is_none_or(|(m, _)| n < *m) {
                                    *out = Some((n, f.path.clone()));
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        let mut row_limit = None;
        limit(&spec.fields, &mut row_limit);
        let mut seq_limits = Vec::new();
        sequence_limits(&spec.fields, 1, &mut seq_limits);
        let schema = Arc::new(Schema::new(
            roots.iter().map(|n| n.field.clone()).collect::<Vec<_>>(),
        ));
        let (order, needs_codes) = order_of(&spec.fields);
        Ok(SpecGenerator {
            name: spec.name.clone(),
            schema,
            roots,
            order,
            needs_codes,
            hints,
            expand: Vec::new(),
            row_limit,
            seq_limits,
            origin: String::new(),
        })
    }
}

/// `op` of each parent's run of `values` (`offsets[i]..offsets[i + 1]`),
/// as Arrow type `to`; SQL's empty-set results (`count` 0, others null).
/// Integer sums are exact (in `i128`, as `decimal(38, 0)`), integer
/// minima and maxima keep the child's type (`uint64` above `i64::MAX`
/// included); a result that does not fit `to` is an error.
fn aggregate(
    op: AggOp,
    values: Option<&ArrayRef>,
    offsets: &[u32],
    to: &DataType,
) -> Result<ArrayRef, Error> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    let n = offsets.len() - 1;
    let runs = offsets.windows(2).map(|w| w[0] as usize..w[1] as usize);
    let bad = |m: &str| Error::InvalidDistribution(format!("aggregate: {m}"));
    let Some(v) = values else {
        // count(*)
        let counts: arrow_array::Int64Array = runs.map(|r| Some(r.len() as i64)).collect();
        return Ok(arrow_cast::cast(&counts, to)?);
    };
    let nulls = v.nulls();
    let valid = |i: usize| nulls.is_none_or(|b| b.is_valid(i));
    if op == AggOp::Count {
        let counts: arrow_array::Int64Array = runs
            .map(|r| Some(r.filter(|&i| valid(i)).count() as i64))
            .collect();
        return Ok(arrow_cast::cast(&counts, to)?);
    }
    let out: ArrayRef = match v.data_type() {
        DataType::Boolean => {
            let b = v.as_boolean();
            let r: arrow_array::BooleanArray = runs
                .map(|r| {
                    let mut seen = r
                        .clone()
                        .filter(|&i| valid(i))
                        .map(|i| b.value(i))
                        .peekable();
                    seen.peek()?;
                    Some(match op {
                        AggOp::All | AggOp::Min => seen.all(|x| x),
                        _ => seen.any(|x| x),
                    })
                })
                .collect();
            Arc::new(r)
        }
        DataType::Decimal128(p, sc) => {
            let d = v.as_primitive::<Decimal128Type>();
            let overflow = || bad("a decimal sum overflows decimal(38)");
            let r = fold_runs::<Decimal128Type>(offsets, op, nulls, |i| d.value(i));
            let r = r.ok_or_else(overflow)?;
            let p = if op == AggOp::Sum { 38 } else { *p };
            let r = r.with_precision_and_scale(p, *sc)?;
            if op == AggOp::Sum {
                // An `i128` sum may still have more than 38 digits.
                r.validate_decimal_precision(p).map_err(|_| overflow())?;
            }
            Arc::new(r)
        }
        DataType::Float32 | DataType::Float64 => {
            let f = arrow_cast::cast(v, &DataType::Float64)?;
            let f = f.as_primitive::<Float64Type>();
            let r = fold_runs::<Float64Type>(offsets, op, nulls, |i| f.value(i));
            Arc::new(r.ok_or_else(|| bad("a float sum overflows"))?)
        }
        DataType::Utf8 => {
            let st = v.as_string::<i32>();
            let r: arrow_array::StringArray = runs
                .map(|r| {
                    let it = r.filter(|&i| valid(i)).map(|i| st.value(i));
                    if op == AggOp::Min { it.min() } else { it.max() }
                })
                .collect();
            Arc::new(r)
        }
        DataType::Date32 if op != AggOp::Sum => {
            let d = v.as_primitive::<Date32Type>();
            let r = fold_runs::<Date32Type>(offsets, op, nulls, |i| d.value(i));
            // A least or greatest value cannot overflow.
            Arc::new(r.ok_or_else(|| bad("a date aggregate overflows"))?)
        }
        DataType::Int8 => integer_runs::<Int8Type>(v, op, offsets)?,
        DataType::Int16 => integer_runs::<Int16Type>(v, op, offsets)?,
        DataType::Int32 => integer_runs::<Int32Type>(v, op, offsets)?,
        DataType::Int64 => integer_runs::<Int64Type>(v, op, offsets)?,
        DataType::UInt8 => integer_runs::<UInt8Type>(v, op, offsets)?,
        DataType::UInt16 => integer_runs::<UInt16Type>(v, op, offsets)?,
        DataType::UInt32 => integer_runs::<UInt32Type>(v, op, offsets)?,
        DataType::UInt64 => integer_runs::<UInt64Type>(v, op, offsets)?,
        other => {
            return Err(bad(&format!("cannot take the {} of {other}", op.as_str())));
        }
    };
    debug_assert_eq!(out.len(), n);
    if out.data_type() == to {
        return Ok(out);
    }
    let options = arrow_cast::CastOptions {
        safe: false,
        ..Default::default()
    };
    arrow_cast::cast_with_options(&out, to, &options)
        .map_err(|e| bad(&format!("the result does not fit {to}: {e}")))
}

/// `op` (sum, min or max) of integer array `v` (of type `A`) per run of
/// [`aggregate`]: sums exact, in `i128`, as `decimal(38, 0)` (at most
/// `MAX_LENGTH` values below 2^64 each stay far below 10^38), minima and
/// maxima as `A`.
fn integer_runs<A: arrow_array::ArrowPrimitiveType>(
    v: &ArrayRef,
    op: AggOp,
    offsets: &[u32],
) -> Result<ArrayRef, Error>
where
    A::Native: Fold + Into<i128>,
{
    use arrow_array::{Array, cast::AsArray};
    let a = v.as_primitive::<A>();
    let overflow = || Error::InvalidDistribution("aggregate: an integer sum overflows".into());
    Ok(if op == AggOp::Sum {
        let r = fold_runs::<arrow_array::types::Decimal128Type>(offsets, op, a.nulls(), |i| {
            a.value(i).into()
        })
        .ok_or_else(overflow)?;
        Arc::new(r.with_precision_and_scale(38, 0)?)
    } else {
        Arc::new(fold_runs::<A>(offsets, op, a.nulls(), |i| a.value(i)).ok_or_else(overflow)?)
    })
}

/// A value [`fold_runs`] folds: integers add checked, floats as IEEE 754
/// does (and their least and greatest ignore NaN, as `f64::min` does).
trait Fold: Copy {
    /// `self + x`, `None` when it overflows.
    fn sum(self, x: Self) -> Option<Self>;
    fn least(self, x: Self) -> Self;
    fn greatest(self, x: Self) -> Self;
}

macro_rules! fold_integers {
    ($($t:ty)*) => {$(
        impl Fold for $t {
            #[inline(always)]
            fn sum(self, x: Self) -> Option<Self> {
                self.checked_add(x)
            }
            #[inline(always)]
            fn least(self, x: Self) -> Self {
                Ord::min(self, x)
            }
            #[inline(always)]
            fn greatest(self, x: Self) -> Self {
                Ord::max(self, x)
            }
        }
    )*};
}
fold_integers!(i8 i16 i32 i64 i128 u8 u16 u32 u64);

impl Fold for f64 {
    #[inline(always)]
    fn sum(self, x: Self) -> Option<Self> {
        Some(self + x)
    }
    #[inline(always)]
    fn least(self, x: Self) -> Self {
        self.min(x)
    }
    #[inline(always)]
    fn greatest(self, x: Self) -> Self {
        self.max(x)
    }
}

/// `op` (sum, min or max) of each parent's run of child rows
/// `offsets[i]..offsets[i + 1]`: of the rows `nulls` leaves valid, read by
/// `get`; null for a run without one. `None` when a sum overflows
/// `A::Native`. The operation is chosen once, outside the loop over rows.
#[inline]
fn fold_runs<A: arrow_array::ArrowPrimitiveType>(
    offsets: &[u32],
    op: AggOp,
    nulls: Option<&NullBuffer>,
    get: impl Fn(usize) -> A::Native,
) -> Option<arrow_array::PrimitiveArray<A>>
where
    A::Native: Fold,
{
    #[inline(always)]
    fn each<A: arrow_array::ArrowPrimitiveType>(
        offsets: &[u32],
        nulls: Option<&NullBuffer>,
        get: impl Fn(usize) -> A::Native,
        step: impl Fn(A::Native, A::Native) -> Option<A::Native>,
    ) -> Option<arrow_array::PrimitiveArray<A>> {
        let mut out = arrow_array::builder::PrimitiveBuilder::<A>::with_capacity(offsets.len() - 1);
        for w in offsets.windows(2) {
            let mut acc = None;
            for i in w[0] as usize..w[1] as usize {
                if nulls.is_some_and(|b| b.is_null(i)) {
                    continue;
                }
                let x = get(i);
                acc = Some(match acc {
                    None => x,
                    Some(a) => step(a, x)?,
                });
            }
            out.append_option(acc);
        }
        Some(out.finish())
    }
    match op {
        AggOp::Sum => each::<A>(offsets, nulls, get, Fold::sum),
        AggOp::Min => each::<A>(offsets, nulls, get, |a, x| Some(a.least(x))),
        _ => each::<A>(offsets, nulls, get, |a, x| Some(a.greatest(x))),
    }
}

/// The error for a table of `want` rows whose field `field` gives
/// values for only `n`.
fn too_few_values(table: &str, field: &str, n: u64, want: u64) -> Error {
    Error::InvalidDistribution(format!(
        "table `{table}`: field `{field}` has `values_by_row` for {n} rows, but {want} rows were asked for; generate at most {n} rows, or give the field `cycle = true`"
    ))
}

/// Generation order of siblings (a field after those its cases read) and
/// which siblings' codes are read.
fn order_of(fields: &[Field]) -> (Vec<usize>, Vec<bool>) {
    let n = fields.len();
    let index = |name: &str| fields.iter().position(|f| f.name == name);
    let mut needs = vec![false; n];
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    for f in fields {
        for w in &f.when {
            if let Some(j) = index(&w.field) {
                needs[j] = true;
            }
        }
    }
    let deps: Vec<Vec<&str>> = fields.iter().map(depends_on).collect();
    // The parser rejects cycles, so each round places at least one field.
    while order.len() < n {
        let before = order.len();
        for i in 0..n {
            if !done[i] && deps[i].iter().all(|d| index(d).is_none_or(|j| done[j])) {
                done[i] = true;
                order.push(i);
            }
        }
        if order.len() == before {
            // A cycle (only in fields built in code): schema order.
            order.extend((0..n).filter(|i| !done[*i]));
            break;
        }
    }
    (order, needs)
}

fn compile(
    f: &Field,
    siblings: &[Field],
    seed: u64,
    parquet_parent: &[String],
    hints: &mut Hints,
    parents: &Parents<'_>,
) -> Result<Node, Error> {
    let null_key = StreamKey::new(seed, stream_id(&f.path, "null"));
    let mut thresholds = vec![threshold(f.null_rate)];
    let mut cases = None;
    if !f.when.is_empty() {
        // Branch i is case i; the last branch is the field's own settings.
        thresholds = f
            .when
            .iter()
            .map(|w| threshold(w.null_rate.unwrap_or(f.null_rate)))
            .collect();
        thresholds.push(threshold(f.null_rate));
        let tests: Vec<_> = f
            .when
            .iter()
            .filter_map(|w| match &w.condition {
                Condition::Expr(e) => Some(e.tree.clone().ok_or_else(|| {
                    Error::InvalidDistribution(format!(
                        "field {}: the condition {:?} was not checked against its siblings (parse the spec)",
                        f.path, e.source
                    ))
                })),
                _ => None,
            })
            .collect::<Result<_, _>>()?;
        if !tests.is_empty() && tests.len() != f.when.len() {
            return Err(Error::InvalidDistribution(format!(
                "field {}: `when` cases are all conditions or all read one sibling",
                f.path
            )));
        }
        if !tests.is_empty() {
            cases = Some(Cases::Tests {
                tests,
                key: StreamKey::new(seed, stream_id(&f.path, "when")),
            });
        }
    }
    if !f.when.is_empty() && cases.is_none() {
        let default = f.when.len() as u8;
        let mut table = Box::new([default; 256]);
        let sibling = siblings
            .iter()
            .position(|s| s.name == f.when[0].field)
            .unwrap_or(0);
        for (b, w) in f.when.iter().enumerate().rev() {
            let sib = siblings
                .iter()
                .find(|s| s.name == w.field)
                .ok_or_else(|| Error::InvalidDistribution(format!("no sibling {}", w.field)))?;
            if siblings.iter().position(|s| s.name == w.field) != Some(sibling) {
                return Err(Error::InvalidDistribution(format!(
                    "field {}: all `when` cases must read the same sibling",
                    f.path
                )));
            }
            let cats = match &sib.kind {
                Kind::Scalar { generator, .. } => categories(generator).unwrap_or_default(),
                _ => Vec::new(),
            };
            for code in 0..=255u8 {
                let hit = match &w.condition {
                    Condition::IsNull(true) => code == NULL_CODE,
                    Condition::IsNull(false) => code != NULL_CODE,
                    Condition::Is(vals) => {
                        code != NULL_CODE
                            && cats.get(code as usize).is_some_and(|c| vals.contains(c))
                    }
                    Condition::Expr(_) => false,
                };
                if hit {
                    table[code as usize] = b as u8;
                }
            }
        }
        cases = Some(Cases::Codes {
            sibling,
            branch_of_code: table,
        });
    }
    let mut parquet_path = parquet_parent.to_vec();
    parquet_path.push(f.name.clone());
    let (data_type, kind) = match &f.kind {
        Kind::Scalar {
            data_type,
            generator: Generator::Reference(r),
        } => {
            let (table, field) = parents.resolve(r, &f.path)?;
            // One way of drawing the row per branch when cases give their
            // own `ref` (case i is branch i, the field's own the last).
            let mut draws = Vec::new();
            if f.when.iter().any(|w| w.generator.is_some()) {
                for w in &f.when {
                    let case = match &w.generator {
                        Some(Generator::Reference(c)) => c,
                        _ => r,
                    };
                    draws.push(ref_draw(case, f, siblings, &table, seed, parents)?);
                }
            }
            draws.push(ref_draw(r, f, siblings, &table, seed, parents)?);
            (
                data_type.clone(),
                NodeKind::Ref {
                    table,
                    field,
                    draws,
                },
            )
        }
        Kind::Scalar {
            data_type,
            generator: Generator::Aggregate(a),
        } => (data_type.clone(), parents.aggregate(a, &f.path)?),
        Kind::Scalar {
            data_type,
            generator: Generator::Expr(e),
        } => {
            let tree = e.tree.clone().ok_or_else(|| {
                Error::InvalidDistribution(format!(
                    "field {}: the expression {:?} was not checked against its siblings (parse the spec)",
                    f.path, e.source
                ))
            })?;
            let reads = e
                .reads
                .iter()
                .map(|q| {
                    let read = Field {
                        name: q.name.clone(),
                        path: format!("{}.{}", f.path, q.name),
                        line: f.line,
                        kind: Kind::Scalar {
                            data_type: q.data_type.clone(),
                            generator: Generator::Reference(q.reference.clone()),
                        },
                        null_rate: 0.0,
                        nullable: true,
                        parquet_dictionary: None,
                        when: Vec::new(),
                    };
                    // Not a column: its encoding hints are dropped.
                    let mut none = Hints::default();
                    compile(&read, siblings, seed, parquet_parent, &mut none, parents)
                })
                .collect::<Result<Vec<_>, _>>()?;
            (
                data_type.clone(),
                NodeKind::Expr {
                    tree,
                    key: StreamKey::new(seed, stream_id(&f.path, "expr")),
                    reads,
                },
            )
        }
        Kind::Scalar {
            data_type,
            generator: Generator::Position(start),
        } => (
            data_type.clone(),
            NodeKind::Position {
                modulus: parents.max_children(&f.path)?,
                start: *start as i64,
            },
        ),
        Kind::Scalar {
            data_type,
            generator,
        } => {
            let class = Class::of(data_type);
            // One sampler per branch when a case replaces the generator;
            // else the one sampler serves every branch (cases then change
            // only the null rate, and the fast loops apply).
            let mut samplers = vec![];
            if f.when.iter().any(|w| w.generator.is_some()) {
                for w in &f.when {
                    samplers.push(compile_sampler(
                        w.generator.as_ref().unwrap_or(generator),
                        class,
                    )?);
                }
            }
            samplers.push(compile_sampler(generator, class)?);
            // UUIDs are bytes in binary fields.
            if matches!(data_type, DataType::Binary | DataType::FixedSizeBinary(_)) {
                for s in &mut samplers {
                    if let Sampler::SUuid { text } = s {
                        *text = false;
                    }
                }
            }
            let out = match data_type {
                DataType::Boolean => Out::Bool,
                DataType::Int8 | DataType::UInt8 => Out::W8,
                DataType::Int16 | DataType::UInt16 => Out::W16,
                DataType::Int32 | DataType::UInt32 | DataType::Date32 | DataType::Time32(_) => {
                    Out::W32
                }
                DataType::FixedSizeBinary(w) => Out::Fixed(*w as usize),
                DataType::Float32 => Out::F32,
                DataType::Float64 => Out::F64,
                DataType::Utf8 | DataType::Binary => Out::Bytes,
                DataType::LargeUtf8 => Out::LargeBytes,
                DataType::Decimal128(..) => Out::W128,
                DataType::Decimal256(..) => Out::W256,
                DataType::Dictionary(k, _) => match k.primitive_width() {
                    Some(1) => Out::W8,
                    Some(2) => Out::W16,
                    Some(4) => Out::W32,
                    _ => Out::W64,
                },
                _ => Out::W64,
            };
            let dictionary = match (data_type, generator) {
                (DataType::Dictionary(..), g) => {
                    let vals: Vec<String> = category_values(g)
                        .unwrap_or_default()
                        .iter()
                        .map(|v| match v {
                            Value::Str(s) => s.clone(),
                            other => other.to_string(),
                        })
                        .collect();
                    Some(Arc::new(StringArray::from(vals)) as ArrayRef)
                }
                _ => None,
            };
            let keys_in_range = match (data_type, &dictionary) {
                (DataType::Dictionary(k, _), Some(d)) => {
                    let len = d.len() as u64;
                    let key_max = match (k.primitive_width(), k.is_signed_integer()) {
                        (Some(w), true) => (1u64 << (8 * w - 1)) - 1,
                        (Some(w), false) if w < 8 => (1u64 << (8 * w)) - 1,
                        _ => u64::MAX,
                    };
                    len > 0
                        && len - 1 <= key_max
                        && samplers.iter().all(|s| match s {
                            Sampler::IntTable { values, .. }
                            | Sampler::IntZipfTable { values, .. } => {
                                values.iter().all(|&v| v < len)
                            }
                            Sampler::IntConst(v) => *v < len,
                            Sampler::IntByRow { values, .. } => values.iter().all(|&v| v < len),
                            Sampler::Cal {
                                part: CalendarPart::DayName,
                                ..
                            } => len >= 7,
                            Sampler::Cal {
                                part: CalendarPart::MonthName,
                                ..
                            } => len >= 12,
                            _ => false,
                        })
                }
                _ => false,
            };
            let friendly = match f.parquet_dictionary {
                Some(b) => b,
                None => cardinality(generator, class).is_some_and(|c| c <= DICTIONARY_LIMIT),
            };
            if !friendly && dictionary.is_none() {
                hints.unfriendly.push(parquet_path.clone());
            }
            // Sequences step by a constant (lists' elements with gaps):
            // DELTA_BINARY_PACKED stores a few bits per value where PLAIN
            // stores 4 or 8 bytes (`benches/column_encodings.py`: `event_id`,
            // 1M rows, 8 MB to 0.02 MB, and with zstd 1.02 to 0.01 MB).
            let sequence = matches!(generator, Generator::Sequence { .. })
                && f.when.is_empty()
                && matches!(
                    class,
                    Class::Int { .. } | Class::Date | Class::Timestamp(_) | Class::Time(_)
                )
                && dictionary.is_none()
                && f.parquet_dictionary != Some(true);
            if sequence {
                hints.delta.push(parquet_path.clone());
            }
            (
                data_type.clone(),
                NodeKind::Leaf(Leaf {
                    value_key: StreamKey::new(seed, stream_id(&f.path, "value")),
                    samplers,
                    out,
                    dictionary,
                    keys_in_range,
                }),
            )
        }
        Kind::Struct(children) => {
            let nodes: Vec<Node> = children
                .iter()
                .map(|c| compile(c, children, seed, &parquet_path, hints, parents))
                .collect::<Result<_, _>>()?;
            let fields = Fields::from(nodes.iter().map(|n| n.field.clone()).collect::<Vec<_>>());
            let (order, needs_codes) = order_of(children);
            (
                DataType::Struct(fields.clone()),
                NodeKind::Struct {
                    children: nodes,
                    order,
                    needs_codes,
                    fields,
                },
            )
        }
        Kind::List {
            item,
            length,
            empty_as_null,
        } => {
            let mut p = parquet_path.clone();
            p.push("list".into());
            let item = compile(item, &[], seed, &p, hints, parents)?;
            let class = Class::Int {
                min: 0,
                max: MAX_LENGTH,
            };
            (
                DataType::List(item.field.clone()),
                NodeKind::List {
                    item: Box::new(item),
                    length: length_sampler(length, class)?,
                    length_key: StreamKey::new(seed, stream_id(&f.path, "length")),
                    max_len: max_length(length).max(1),
                    empty_as_null: *empty_as_null,
                },
            )
        }
        Kind::Map { key, value, length } => {
            let mut p = parquet_path.clone();
            p.push("entries".into());
            let k = compile(key, &[], seed, &p, hints, parents)?;
            let v = compile(value, &[], seed, &p, hints, parents)?;
            let fields = Fields::from(vec![k.field.clone(), v.field.clone()]);
            let entries = Arc::new(ArrowField::new(
                "entries",
                DataType::Struct(fields.clone()),
                false,
            ));
            let class = Class::Int {
                min: 0,
                max: MAX_LENGTH,
            };
            (
                DataType::Map(entries.clone(), false),
                NodeKind::Map {
                    key: Box::new(k),
                    value: Box::new(v),
                    entries,
                    fields,
                    length: length_sampler(length, class)?,
                    length_key: StreamKey::new(seed, stream_id(&f.path, "length")),
                    max_len: max_length(length).max(1),
                },
            )
        }
    };
    Ok(Node {
        field: Arc::new(ArrowField::new(&f.name, data_type, f.nullable)),
        path: f.path.clone(),
        line: f.line,
        null_key,
        null_thresholds: thresholds,
        cases,
        kind,
    })
}

/// Packs 8 bytes of 0/1 into one byte, element 0 in the lowest bit.
#[inline(always)]
fn pack8(c: &[u8]) -> u8 {
    let mut w = [0u8; 8];
    w[..c.len()].copy_from_slice(c);
    (u64::from_le_bytes(w).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8
}

/// Packs 0/1 bytes into an Arrow bitmap; `None` when all are 1.
fn pack(valid: &[u8], s: &mut SpecScratch) -> Option<NullBuffer> {
    let bytes = pack_bytes(valid, s);
    let nulls = NullBuffer::new(BooleanBuffer::new(Buffer::from_vec(bytes), 0, valid.len()));
    if nulls.null_count() == 0 {
        s.reclaim(nulls.into_inner().into_inner());
        return None;
    }
    Some(nulls)
}

/// What a node returns: its array, and its codes when a sibling reads them.
struct Generated {
    array: ArrayRef,
    codes: Option<Vec<u8>>,
}

impl Node {
    /// Makes the calendar parts under this node read days from `start`.
    fn set_calendar_start(&mut self, start: i32) {
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

    /// Validity (0/1 per element) and branch per element.
    /// Each row's validity, and its branch when the field has cases.
    fn validity(
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
    fn generate(
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

    fn values(
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
            } => {
                let mut rows = s.v64(n);
                // The branch of each element picks its way of drawing.
                let branch = |i: usize| match &branches {
                    Some(b) => (b[i] as usize).min(draws.len() - 1),
                    None => draws.len() - 1,
                };
                rows.extend(
                    ids.iter()
                        .enumerate()
                        .map(|(i, &id)| draws[branch(i)].row(id, table.rows)),
                );
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
    fn distinct_keys(
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
    fn leaf(
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
                let buffer = if leaf.out == Out::F32 {
                    let mut v = s.v32(n);
                    fill(&mut v, ids, |i, id| {
                        if valid[i] == 0 {
                            record(&mut codes, valid, 0, i);
                            return 0;
                        }
                        let (x, c) = draw_float(i, id);
                        record(&mut codes, valid, c, i);
                        (x as f32).to_bits()
                    });
                    Buffer::from_vec(v)
                } else {
                    let mut v = s.v64(n);
                    fill(&mut v, ids, |i, id| {
                        if valid[i] == 0 {
                            record(&mut codes, valid, 0, i);
                            return 0;
                        }
                        let (x, c) = draw_float(i, id);
                        record(&mut codes, valid, c, i);
                        x.to_bits()
                    });
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

/// The strings of one sampler, no cases, no codes: the loop the common
/// string field takes, with the writer's cursor in a register and one
/// loop per kind of sampler.
#[inline(never)]
fn strings_fast(
    sampler: &Sampler,
    key: StreamKey,
    ids: &[u64],
    valid: &[u8],
    w: Writer,
    most: usize,
    offsets: &mut [u32],
) -> Writer {
    #[inline(always)]
    fn run(
        ids: &[u64],
        valid: &[u8],
        mut w: Writer,
        most: usize,
        offsets: &mut [u32],
        mut f: impl FnMut(u64, &mut Writer),
    ) -> Writer {
        // A branch on validity, although nulls can be frequent enough to
        // mispredict it (20% of `contacts` names): writing every value and
        // then moving the cursor back over nulls, without a branch, was
        // ~12% slower (`examples/gen_loop contacts`, 28.8 vs 25.6 ns/row).
        let outs = offsets[1..].iter_mut();
        for ((&id, &ok), offset) in ids.iter().zip(valid).zip(outs) {
            if ok == 1 {
                w.room(most);
                f(id, &mut w);
            }
            *offset = w.pos as u32;
        }
        w
    }
    match sampler {
        Sampler::STemplate { parts, random } => {
            // Templates of one or two steps (most: `user-{seq}`,
            // `{first_name} {last_name}`) are unrolled; longer ones loop,
            // with numbers formatted by a call so that the optimiser does
            // not hoist every formatting path out of the step loop.
            match parts.as_slice() {
                // Two list entries (`{first_name} {last_name}`): both drawn
                // from the stream state itself, high half first, as
                // `Draws` hands them out, without its bookkeeping.
                [a, b] if a.name().is_some() && b.name().is_some() && *random => {
                    let (ta, tb) = (a.name().expect("name"), b.name().expect("name"));
                    let (na, nb) = (ta.len() as u32, tb.len() as u32);
                    run(ids, valid, w, most, offsets, |id, w| {
                        let state = key.first(id);
                        let (sa, la) = ta.slot(below32((state >> 32) as u32, na) as usize);
                        let (sb, lb) = tb.slot(below32(state as u32, nb) as usize);
                        w.block(&a.prefix, a.prefix_len);
                        w.block(sa, la);
                        w.block(&b.prefix, b.prefix_len);
                        w.block(sb, lb);
                    })
                }
                [a] => run(ids, valid, w, most, offsets, |id, w| {
                    let mut d = Draws::new(key, id, *random);
                    a.write::<true>(id, &mut d, w);
                }),
                [a, b] => run(ids, valid, w, most, offsets, |id, w| {
                    let mut d = Draws::new(key, id, *random);
                    a.write::<true>(id, &mut d, w);
                    b.write::<true>(id, &mut d, w);
                }),
                _ => run(ids, valid, w, most, offsets, |id, w| {
                    let mut d = Draws::new(key, id, *random);
                    for step in parts {
                        step.write::<false>(id, &mut d, w);
                    }
                }),
            }
        }
        Sampler::STable { alias, values } => run(ids, valid, w, most, offsets, |id, w| {
            values[alias.sample(key.first(id)) as usize].write(w)
        }),
        other => run(ids, valid, w, most, offsets, |id, w| {
            other.string(key, id, w);
        }),
    }
}

/// Integer-like values of one sampler (no cases): one loop per common
/// kind of sampler, codes only when a sibling reads them.
#[inline(never)]
fn ints_fast<T>(
    sampler: &Sampler,
    key: StreamKey,
    ids: &[u64],
    valid: &[u8],
    out: &mut Vec<T>,
    codes: Option<&mut Vec<u8>>,
    conv: impl Fn(u64) -> T + Copy,
) {
    out.reserve(ids.len());
    match (sampler, codes) {
        (Sampler::IntTable { alias, values }, Some(codes)) => {
            codes.resize(ids.len(), 0);
            let slots = ids.iter().zip(valid).zip(codes.iter_mut());
            out.extend(slots.map(|((&id, &ok), code)| {
                let c = alias.sample(key.first(id)) as usize;
                *code = if ok == 1 { c.min(254) as u8 } else { NULL_CODE };
                conv(values[c])
            }));
        }
        (Sampler::IntTable { alias, values }, None) => out.extend(
            ids.iter()
                .map(|&id| conv(values[alias.sample(key.first(id)) as usize])),
        ),
        (Sampler::IntUniform { min, span }, None) => out.extend(
            ids.iter()
                .map(|&id| conv(min.wrapping_add(below(key.first(id), *span)))),
        ),
        (Sampler::IntSeq { start, step }, None) => out.extend(
            ids.iter()
                .map(|&id| conv(start.wrapping_add(step.wrapping_mul(id)))),
        ),
        // The costly samplers (normal, Zipf, ...) draw nothing under a
        // null: its slot holds zero.
        (other, Some(codes)) => {
            codes.resize(ids.len(), 0);
            let slots = ids.iter().zip(valid).zip(codes.iter_mut());
            out.extend(slots.map(|((&id, &ok), code)| {
                if ok == 0 {
                    *code = NULL_CODE;
                    return conv(0);
                }
                let (x, c) = other.int(key, id);
                *code = c;
                conv(x)
            }));
        }
        (other, None) => out.extend(
            ids.iter()
                .zip(valid)
                .map(|(&id, &ok)| conv(if ok == 0 { 0 } else { other.int(key, id).0 })),
        ),
    }
}

/// Fills `v` with one value per id.
#[inline(always)]
fn fill<T>(v: &mut Vec<T>, ids: &[u64], mut f: impl FnMut(usize, u64) -> T) {
    v.reserve(ids.len());
    v.extend(ids.iter().enumerate().map(|(i, &id)| f(i, id)));
}

/// Packs 0/1 bytes into bitmap bytes.
fn pack_bytes(bits: &[u8], s: &mut SpecScratch) -> Vec<u8> {
    let mut bytes = s.v8(bits.len().div_ceil(8));
    let chunks = bits.chunks_exact(8);
    let rest = chunks.remainder();
    bytes.extend(chunks.map(pack8));
    if !rest.is_empty() {
        bytes.push(pack8(rest));
    }
    bytes
}

/// List or map offsets from [`lengths`]: cumulative sums of lengths,
/// starting at 0, at most [`MAX_BATCH_ELEMENTS`] (checked there).
fn offsets_buffer(offsets: Vec<u32>) -> arrow_buffer::OffsetBuffer<i32> {
    debug_assert!(offsets.first() == Some(&0));
    debug_assert!(offsets.windows(2).all(|w| w[0] <= w[1]));
    debug_assert!(
        offsets
            .last()
            .is_some_and(|&o| u64::from(o) <= MAX_BATCH_ELEMENTS)
    );
    let n = offsets.len();
    let scalar = arrow_buffer::ScalarBuffer::<i32>::new(Buffer::from_vec(offsets), 0, n);
    // SAFETY: `lengths` writes offset 0 and then each parent's cumulative
    // element count, so the offsets are non-empty, start at 0 and never
    // decrease; the last is at most `MAX_BATCH_ELEMENTS` (2^26, checked
    // there), so every one is a non-negative i32. Skipping the scan saves
    // ~1.5% of `contacts` generation (perf, `examples/gen_loop`); debug
    // builds assert all of this above.
    unsafe { arrow_buffer::OffsetBuffer::new_unchecked(scalar) }
}

/// List offsets, element ids and list validity.
type Lengths = (Vec<u32>, Vec<u64>, Vec<u8>);

/// List offsets, element ids and list validity for parents `ids`.
///
/// Lengths are drawn for every parent (a null one then gets 0), and for
/// short lists every possible child id is stored and the cursor advances by
/// the length: no branch depends on the random length.
#[allow(clippy::too_many_arguments)]
fn lengths(
    ids: &[u64],
    valid: &[u8],
    length: &Sampler,
    key: StreamKey,
    max_len: u64,
    empty_as_null: bool,
    s: &mut SpecScratch,
) -> Result<Lengths, Error> {
    let n = ids.len();
    let mut offsets = s.v32(n + 1);
    offsets.resize(n + 1, 0);
    let mut valid2 = s.v8(n);
    valid2.resize(n, 0);
    // Short lists (the common case) take a loop specialised for their
    // longest length and for an alias-table length, the usual one.
    macro_rules! short {
        ($($n:literal)*) => {
            match (max_len, length) {
                $(
                    // Table lengths are clamped at compile time.
                    ($n, Sampler::IntTable { alias, values }) => short_lists::<$n>(
                        ids, valid, |id| values[alias.sample(key.first(id)) as usize] as usize,
                        empty_as_null, &mut offsets, &mut valid2, s,
                    ),
                    ($n, other) => short_lists::<$n>(
                        ids, valid, |id| clamp_length(other.int(key, id).0, $n),
                        empty_as_null, &mut offsets, &mut valid2, s,
                    ),
                )*
                _ => long_lists(ids, valid, length, key, max_len, empty_as_null,
                                &mut offsets, &mut valid2, s)?,
            }
        };
    }
    let child_ids = short!(1 2 3 4 5 6 7 8);
    if child_ids.len() as u64 > MAX_BATCH_ELEMENTS {
        return Err(Error::BatchTooLarge);
    }
    Ok((offsets, child_ids, valid2))
}

/// Lists of at most `N` elements: every possible child id of a parent is
/// stored and the cursor advances by the drawn length, so no branch
/// depends on the random length.
#[inline(always)]
fn short_lists<const N: usize>(
    ids: &[u64],
    valid: &[u8],
    draw: impl Fn(u64) -> usize,
    empty_as_null: bool,
    offsets: &mut [u32],
    valid2: &mut [u8],
    s: &mut SpecScratch,
) -> Vec<u64> {
    let n = ids.len();
    // Capacity for every slot up front, written without zeroing first:
    // each parent's `N` candidate ids overwrite the unused ones before.
    let mut child_ids = s.v64(n * N + N);
    let spare = &mut child_ids.spare_capacity_mut()[..n * N + N];
    let mut total = 0usize;
    let outs = offsets[1..].iter_mut().zip(valid2.iter_mut());
    for ((&id, &ok), (offset, valid2)) in ids.iter().zip(valid).zip(outs) {
        // `draw` returns at most N already; the `min` (a conditional move)
        // and the 0/1 factor keep `len <= N`, so the `set_len` below is
        // sound whatever `draw` returns and whatever the validity bytes.
        let len = draw(id).min(N) * usize::from(ok == 1);
        let base = id.wrapping_mul(N as u64);
        let slots: &mut [MaybeUninit<u64>; N] =
            (&mut spare[total..total + N]).try_into().expect("N slots");
        for (j, slot) in slots.iter_mut().enumerate() {
            slot.write(base.wrapping_add(j as u64));
        }
        total += len;
        *offset = total as u32;
        *valid2 = u8::from(ok == 1) & !u8::from(empty_as_null && len == 0);
    }
    // SAFETY: the capacity is at least `n * N + N`, and every slot below
    // `total` was written: each step writes slots `total..total + N`
    // before `total` grows by at most `N`.
    unsafe { child_ids.set_len(total) };
    child_ids
}

/// A drawn length (two's-complement bits) clamped to `0..=max`.
#[inline(always)]
fn clamp_length(bits: u64, max: u64) -> usize {
    (bits as i64).clamp(0, max as i64) as usize
}

/// Lists longer than eight elements: ids written as drawn.
#[allow(clippy::too_many_arguments)]
fn long_lists(
    ids: &[u64],
    valid: &[u8],
    length: &Sampler,
    key: StreamKey,
    max_len: u64,
    empty_as_null: bool,
    offsets: &mut [u32],
    valid2: &mut [u8],
    s: &mut SpecScratch,
) -> Result<Vec<u64>, Error> {
    let mut child_ids = s.v64(ids.len() * 8);
    let mut total: u64 = 0;
    for (i, (&id, &ok)) in ids.iter().zip(valid).enumerate() {
        let len = clamp_length(length.int(key, id).0, max_len) as u64 * u64::from(ok);
        if total + len > MAX_BATCH_ELEMENTS {
            s.put64(child_ids);
            return Err(Error::BatchTooLarge);
        }
        let base = id.wrapping_mul(max_len);
        child_ids.extend((0..len).map(|j| base.wrapping_add(j)));
        total += len;
        offsets[i + 1] = total as u32;
        valid2[i] = u8::from(ok == 1 && !(empty_as_null && len == 0));
    }
    Ok(child_ids)
}

fn generate_siblings(
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

impl BatchGenerator for SpecGenerator {
    type Scratch = SpecScratch;

    fn name(&self) -> &str {
        &self.name
    }

    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn dictionary_unfriendly_leaves(&self) -> Vec<Vec<String>> {
        self.hints.unfriendly.clone()
    }

    fn delta_leaves(&self) -> Vec<Vec<String>> {
        self.hints.delta.clone()
    }

    fn generate(
        &self,
        first_row: u64,
        len: usize,
        s: &mut SpecScratch,
    ) -> Result<RecordBatch, Error> {
        if len > MAX_BATCH_ROWS {
            return Err(Error::BatchTooLarge);
        }
        self.check_rows(first_row.saturating_add(len as u64))?;
        self.batch(first_row, len, s)
            .map_err(|e| e.in_table(&self.name, &self.origin))
    }

    fn recycle(&self, batch: RecordBatch, s: &mut SpecScratch) {
        let (_, columns, _) = batch.into_parts();
        for c in columns {
            let data = c.to_data();
            drop(c);
            s.reclaim_data(data);
        }
    }
}

impl SpecGenerator {
    /// Rows `first_row..first_row + len` (checked by `generate`).
    fn batch(&self, first_row: u64, len: usize, s: &mut SpecScratch) -> Result<RecordBatch, Error> {
        let mut ids = s.v64(len);
        ids.extend(first_row..first_row + len as u64);
        let ids = self.expanded(ids, s)?;
        let rows = ids.len();
        if rows > MAX_BATCH_ROWS {
            s.put64(ids);
            return Err(Error::BatchTooLarge);
        }
        let arrays = generate_siblings(&self.roots, &self.order, &self.needs_codes, &ids, s);
        s.put64(ids);
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(rows));
        Ok(RecordBatch::try_new_with_options(
            self.schema.clone(),
            arrays?,
            &options,
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(v: u64, width: usize, zero: bool, negative: bool) -> String {
        let mut w = Writer {
            buf: Vec::new(),
            pos: 0,
        };
        w.room(100);
        write_uint::<false>(&mut w, v, width, zero, negative);
        String::from_utf8(w.buf[..w.pos].to_vec()).unwrap()
    }

    #[test]
    fn hex_digits_match_std_formatting() {
        for v in [
            0u64,
            9,
            10,
            0xabcdef,
            0x0123_4567_89ab_cdef,
            u64::MAX,
            0xf0f0_0f0f_a5a5_5a5a,
        ] {
            let text = hex16(v).to_le_bytes();
            assert_eq!(std::str::from_utf8(&text).unwrap(), format!("{v:016x}"));
        }
    }

    #[test]
    fn numbers_match_std_formatting() {
        let mut values: Vec<u64> = (0..=100).collect();
        values.extend([1234, 12_345_678, 99_999_999, 100_000_000]);
        values.extend([
            u64::MAX,
            u64::MAX / 7,
            10u64.pow(15),
            10u64.pow(16) - 1,
            10u64.pow(16),
        ]);
        let mut r = crate::rng::RowRng::seeded(3);
        values.extend((0..200).map(|i| r.next_u64() >> (i % 64)));
        for &v in &values {
            for width in [0usize, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 20, 25, 40] {
                assert_eq!(text(v, width, true, false), format!("{v:0width$}"));
                assert_eq!(text(v, width, false, false), format!("{v:width$}"));
                if v > 0 && v <= i64::MAX as u64 {
                    let n = -(v as i128);
                    assert_eq!(
                        text(v, width, true, true),
                        format!("{n:0width$}"),
                        "{n} {width}"
                    );
                    assert_eq!(
                        text(v, width, false, true),
                        format!("{n:width$}"),
                        "{n} {width}"
                    );
                }
            }
        }
    }
}
