//! Rows at a version, and the change stream of a version, as Arrow
//! batches: each row's image made by the table's generator (version 0's
//! draws) or by a generator whose updated fields draw from streams of
//! the update's version ([`strata_gen::SpecGenerator::salted`]).

use std::{
    collections::{BTreeMap, HashMap},
    sync::{Arc, Mutex},
};

use arrow_array::{
    Array, ArrayRef, Int64Array, RecordBatch, StringArray, StructArray, UInt64Array,
};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef};
use strata_gen::{SpecGenerator, SpecScratch};

use super::{
    error::Error,
    history::{History, Op, State},
};

/// Milliseconds from the epoch of version 0 (2024-01-01T00:00:00Z).
pub const EPOCH_MS: i64 = 1_704_067_200_000;
/// Milliseconds between versions (an hour): version `v`'s changes have
/// `ts_ms` in `EPOCH_MS + v * VERSION_MS ..` the next.
pub const VERSION_MS: i64 = 3_600_000;

/// What makes a row's image of a version.
pub type MakeGenerator =
    dyn Fn(Option<u64>) -> Result<SpecGenerator, strata_gen::Error> + Send + Sync;

/// A table's rows at any version: its generator, and one per update
/// version (made when first asked).
pub struct Images {
    base: Arc<SpecGenerator>,
    make: Box<MakeGenerator>,
    salted: Mutex<HashMap<u64, Arc<SpecGenerator>>>,
    key: usize,
}

impl std::fmt::Debug for Images {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Images({})", self.base.name())
    }
}

use strata_gen::BatchGenerator as _;

impl Images {
    /// The images `make` gives: `make(None)` the table's generator,
    /// `make(Some(v))` the one of update version `v`; `key` is the
    /// primary key's name.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] when the schema has no column `key`; the
    /// generator's errors.
    pub fn new(make: Box<MakeGenerator>, key: &str) -> Result<Images, Error> {
        let base = Arc::new(make(None)?);
        let key = base.schema().index_of(key).map_err(|_| {
            Error::InvalidConfig(format!(
                "table `{}` writes no column `{key}` (its primary key)",
                base.name()
            ))
        })?;
        Ok(Images {
            base,
            make,
            salted: Mutex::new(HashMap::new()),
            key,
        })
    }

    /// The table's schema.
    pub fn schema(&self) -> SchemaRef {
        self.base.schema()
    }

    fn generator(&self, image: u64) -> Result<Arc<SpecGenerator>, Error> {
        if image == 0 {
            return Ok(self.base.clone());
        }
        let mut cache = self
            .salted
            .lock()
            .map_err(|_| Error::InvalidConfig("a generator cache was poisoned".into()))?;
        if let Some(g) = cache.get(&image) {
            return Ok(g.clone());
        }
        let g = Arc::new((self.make)(Some(image))?);
        cache.insert(image, g.clone());
        Ok(g)
    }

    /// The primary key of the rows `ids`, in that order, as a batch of
    /// that one column (a key is never updated, so every image holds the
    /// same).
    ///
    /// # Errors
    /// The generator's errors.
    pub fn keys(&self, ids: &[u64]) -> Result<RecordBatch, Error> {
        let mut s = SpecScratch::default();
        let rows = self.base.generate_ids(ids, &mut s)?;
        Ok(rows.project(&[self.key])?)
    }

    /// The rows `ids`, row `i` in image `images[i]`, in that order.
    ///
    /// # Errors
    /// The generator's errors.
    pub fn rows(&self, ids: &[u64], images: &[u64]) -> Result<RecordBatch, Error> {
        let mut groups: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
        for (i, &img) in images.iter().enumerate() {
            groups.entry(img).or_default().push(i);
        }
        let mut s = SpecScratch::default();
        if groups.len() <= 1 {
            let img = groups.keys().next().copied().unwrap_or(0);
            return Ok(self.generator(img)?.generate_ids(ids, &mut s)?);
        }
        let mut batches = Vec::with_capacity(groups.len());
        let mut at = vec![(0usize, 0usize); ids.len()];
        for (b, (img, rows)) in groups.iter().enumerate() {
            let want: Vec<u64> = rows.iter().map(|&i| ids[i]).collect();
            batches.push(self.generator(*img)?.generate_ids(&want, &mut s)?);
            for (k, &i) in rows.iter().enumerate() {
                at[i] = (b, k);
            }
        }
        let columns = (0..self.schema().fields().len())
            .map(|c| {
                let arrays: Vec<&dyn Array> =
                    batches.iter().map(|b| b.column(c).as_ref()).collect();
                arrow_select::interleave::interleave(&arrays, &at)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(RecordBatch::try_new(self.schema(), columns)?)
    }

    /// The rows of ids `ids` alive at version `v`, each as it is then, in
    /// id order.
    ///
    /// # Errors
    /// The generator's errors.
    pub fn at_version(
        &self,
        h: &History,
        v: u64,
        ids: std::ops::Range<u64>,
    ) -> Result<RecordBatch, Error> {
        let (mut keep, mut images) = (Vec::new(), Vec::new());
        for id in ids.start..ids.end.min(h.ids_at(v)) {
            if let State::Alive { image } = h.state(id, v) {
                keep.push(id);
                images.push(image);
            }
        }
        self.rows(&keep, &images)
    }

    /// The schema of a change stream of this table: `op` (`c`, `u`, `d`),
    /// `version`, `ts_ms`, the key, and the row `before` and `after`.
    pub fn stream_schema(&self) -> SchemaRef {
        envelope_schema(&self.schema(), Some(self.key))
    }

    /// The change stream of version `v` (from 1) over ids `ids`: one row
    /// per row it inserts, updates or deletes, in id order.
    ///
    /// # Errors
    /// The generator's errors.
    pub fn changes(
        &self,
        h: &History,
        v: u64,
        ids: std::ops::Range<u64>,
    ) -> Result<RecordBatch, Error> {
        let mut rows = Vec::new();
        for id in ids.start..ids.end.min(h.ids_at(v)) {
            if let Some((op, before, after)) = h.change(id, v) {
                rows.push((id, op, before, after));
            }
        }
        let ids: Vec<u64> = rows.iter().map(|r| r.0).collect();
        // Absent images are filled with the other one, then masked.
        let before: Vec<u64> = rows.iter().map(|r| r.2.or(r.3).unwrap_or(0)).collect();
        let after: Vec<u64> = rows.iter().map(|r| r.3.or(r.2).unwrap_or(0)).collect();
        let b = self.rows(&ids, &before)?;
        let a = self.rows(&ids, &after)?;
        let fields = Fields::from(self.schema().fields().to_vec());
        let masked = |batch: &RecordBatch, valid: Vec<bool>| -> Result<ArrayRef, Error> {
            Ok(Arc::new(StructArray::try_new(
                fields.clone(),
                batch.columns().to_vec(),
                Some(valid.into()),
            )?))
        };
        let ts: Vec<i64> = rows
            .iter()
            .map(|r| {
                let within = strata_gen::rng::StreamKey::new(v, r.0).first(0) % VERSION_MS as u64;
                EPOCH_MS + v as i64 * VERSION_MS + within as i64
            })
            .collect();
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| r.1.letter()),
            )),
            Arc::new(UInt64Array::from(vec![v; rows.len()])),
            Arc::new(Int64Array::from(ts)),
            a.column(self.key).clone(),
            masked(&b, rows.iter().map(|r| r.2.is_some()).collect())?,
            masked(&a, rows.iter().map(|r| r.3.is_some()).collect())?,
        ];
        Ok(RecordBatch::try_new(self.stream_schema(), columns)?)
    }
}

impl Images {
    /// The schema of the table's slowly changing dimension (type 2): its
    /// columns, then `valid_from` and `valid_to` (the starts of the
    /// versions from which and until which a row's image held; `valid_to`
    /// null while it holds) and `is_current`.
    pub fn scd2_schema(&self) -> SchemaRef {
        scd2_schema(&self.schema())
    }

    /// The slowly changing dimension rows of ids `ids`: one per image
    /// each row held over the history, in id then version order.
    ///
    /// # Errors
    /// The generator's errors.
    pub fn scd2(&self, h: &History, ids: std::ops::Range<u64>) -> Result<RecordBatch, Error> {
        let (mut rows, mut imgs, mut from, mut to) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for id in ids.start..ids.end.min(h.ids_at(h.versions())) {
            for (image, a, b) in h.segments(id) {
                rows.push(id);
                imgs.push(image);
                from.push(EPOCH_MS + a as i64 * VERSION_MS);
                to.push(b.map(|b| EPOCH_MS + b as i64 * VERSION_MS));
            }
        }
        let batch = self.rows(&rows, &imgs)?;
        let current: Vec<bool> = to.iter().map(Option::is_none).collect();
        let mut columns = batch.columns().to_vec();
        columns.push(Arc::new(
            arrow_array::TimestampMillisecondArray::from(from).with_timezone("UTC"),
        ));
        columns.push(Arc::new(
            arrow_array::TimestampMillisecondArray::from(to).with_timezone("UTC"),
        ));
        columns.push(Arc::new(arrow_array::BooleanArray::from(current)));
        Ok(RecordBatch::try_new(self.scd2_schema(), columns)?)
    }
}

/// The schema of a change stream of rows of `schema`: `op`, `version`,
/// `ts_ms`, the key (column `key` of `schema`, when there is one), and
/// the row `before` and `after`.
pub(crate) fn envelope_schema(schema: &SchemaRef, key: Option<usize>) -> SchemaRef {
    let row = DataType::Struct(Fields::from(schema.fields().to_vec()));
    let mut fields = vec![
        Field::new("op", DataType::Utf8, false),
        Field::new("version", DataType::UInt64, false),
        Field::new("ts_ms", DataType::Int64, false),
    ];
    if let Some(k) = key {
        fields.push(schema.field(k).as_ref().clone().with_nullable(false));
    }
    fields.push(Field::new("before", row.clone(), true));
    fields.push(Field::new("after", row, true));
    Arc::new(Schema::new(fields))
}

/// The schema of a slowly changing dimension of rows of `schema`: its
/// columns, `valid_from`, `valid_to` and `is_current`.
pub(crate) fn scd2_schema(schema: &SchemaRef) -> SchemaRef {
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    let ts = DataType::Timestamp(arrow_schema::TimeUnit::Millisecond, Some("UTC".into()));
    fields.push(Field::new("valid_from", ts.clone(), false));
    fields.push(Field::new("valid_to", ts, true));
    fields.push(Field::new("is_current", DataType::Boolean, false));
    Arc::new(Schema::new(fields))
}

/// Counts of a version's operations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpCounts {
    /// Rows inserted.
    pub inserts: u64,
    /// Rows updated.
    pub updates: u64,
    /// Rows deleted.
    pub deletes: u64,
    /// Rows alive before the version.
    pub alive_before: u64,
    /// Of the rows updated or deleted, those among the hottest 1% of the
    /// history's rows ([`History::is_hot`]).
    pub hot: u64,
}

impl std::ops::AddAssign for OpCounts {
    fn add_assign(&mut self, o: OpCounts) {
        self.inserts += o.inserts;
        self.updates += o.updates;
        self.deletes += o.deletes;
        self.alive_before += o.alive_before;
        self.hot += o.hot;
    }
}

/// The counts of version `v`'s operations over ids `ids`.
pub fn op_counts(h: &History, v: u64, ids: std::ops::Range<u64>) -> OpCounts {
    let mut c = OpCounts::default();
    for id in ids.start..ids.end.min(h.ids_at(v)) {
        if v > 0 && matches!(h.state(id, v - 1), State::Alive { .. }) {
            c.alive_before += 1;
        }
        let op = h.change(id, v).map(|x| x.0);
        match op {
            Some(Op::Insert) => c.inserts += 1,
            Some(Op::Update) => c.updates += 1,
            Some(Op::Delete) => c.deletes += 1,
            None => {}
        }
        if matches!(op, Some(Op::Update | Op::Delete)) && h.is_hot(id, 0.01) {
            c.hot += 1;
        }
    }
    c
}
