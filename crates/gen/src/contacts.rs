//! The `contacts` preset: people with an optional name and an optional list
//! of phone entries.
//!
//! | column | Arrow type | distribution |
//! |---|---|---|
//! | `name` | `Utf8`, nullable | null 20%, else `"{first} {last}"`, both uniform |
//! | `phones` | `List<Struct<number, phone_type>>`, nullable | entries per row: 0 (a null list) 40%, 1 45%, 2 10%, 3..=5 5% (uniform) |
//! | `phones.item.number` | `Utf8`, nullable | present in 95% of entries, `+91-99-{id:08}` |
//! | `phones.item.phone_type` | `Dictionary<UInt8, Utf8>`, nullable | present in 94%; Mobile 55%, Work 35%, Home 10% |
//!
//! Per entry, number and type are both present 90%, number only 5%, type
//! only 4%, neither 1%; the entry struct itself is never null.
//!
//! Phone number `id` is `5 * row + j` for the `j`-th entry of global row
//! `row`, so numbers are unique across any run of one seed (ids have gaps).
//!
//! Every column is written straight into the vectors that become the Arrow
//! buffers; the vectors come back through [`BatchGenerator::recycle`] and
//! are reused, so a steady stream of batches allocates nothing.

use std::sync::Arc;

use arrow_array::{
    ArrayRef, DictionaryArray, ListArray, RecordBatch, StringArray, StructArray, UInt8Array,
    types::UInt8Type,
};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, FieldRef, Fields, Schema, SchemaRef};

use crate::{
    BatchGenerator, Error,
    bits::{BitmapBuilder, reclaim, reclaim_nulls},
    dist::Categorical,
    names::{NameTable, first_names, last_names},
    rng::{StreamKey, below, hi, lo},
};

/// Entries a row can hold at most.
pub const MAX_PHONES: u64 = 5;

/// The `phone_type` dictionary, in key order.
pub const PHONE_TYPES: [&str; 3] = ["Mobile", "Work", "Home"];

/// Stream ids, one per field path (see [`crate::rng`]).
const STREAM_NAME: u64 = 1;
const STREAM_PHONES: u64 = 2;

/// Longest generated name: 15-byte first name slot, a space, 15-byte last.
const MAX_NAME_BYTES: usize = 31;
/// Longest phone number: `+91-99-` and a 20-digit id.
const MAX_NUMBER_BYTES: usize = 27;

/// The `contacts` generator for one seed.
#[derive(Debug)]
pub struct Contacts {
    name_key: StreamKey,
    phones_key: StreamKey,
    first: &'static NameTable,
    last: &'static NameTable,
    name_presence: Categorical,
    phone_count: Categorical,
    template: Categorical,
    phone_type: Categorical,
    schema: SchemaRef,
    item: FieldRef,
    entry_fields: Fields,
    phone_type_values: ArrayRef,
}

/// Reusable buffers of one producer of `contacts` batches.
#[derive(Debug, Default)]
pub struct ContactsScratch {
    name_offsets: Vec<i32>,
    name_values: Vec<u8>,
    name_valid: BitmapBuilder,
    list_offsets: Vec<i32>,
    list_valid: BitmapBuilder,
    number_offsets: Vec<i32>,
    number_values: Vec<u8>,
    number_valid: BitmapBuilder,
    type_keys: Vec<u8>,
    type_valid: BitmapBuilder,
    recycled_bits: [Option<Vec<u8>>; 4],
}

/// The Arrow schema of `contacts`.
pub fn contacts_schema() -> SchemaRef {
    let (schema, _, _) = schema_parts();
    schema
}

fn schema_parts() -> (SchemaRef, FieldRef, Fields) {
    let entry_fields = Fields::from(vec![
        Field::new("number", DataType::Utf8, true),
        Field::new(
            "phone_type",
            DataType::Dictionary(Box::new(DataType::UInt8), Box::new(DataType::Utf8)),
            true,
        ),
    ]);
    let item = Arc::new(Field::new(
        "item",
        DataType::Struct(entry_fields.clone()),
        true,
    ));
    let schema = Arc::new(Schema::new(vec![
        Field::new("name", DataType::Utf8, true),
        Field::new("phones", DataType::List(item.clone()), true),
    ]));
    (schema, item, entry_fields)
}

impl Contacts {
    /// The generator for `seed`.
    pub fn new(seed: u64) -> Self {
        let (schema, item, entry_fields) = schema_parts();
        // The weights are constants of the preset and valid by construction.
        let table = |w: &[u32]| Categorical::new(w).expect("preset weights are valid");
        Contacts {
            name_key: StreamKey::new(seed, STREAM_NAME),
            phones_key: StreamKey::new(seed, STREAM_PHONES),
            first: first_names(),
            last: last_names(),
            name_presence: table(&[20, 80]),
            phone_count: table(&[40, 45, 10, 5]),
            template: table(&[90, 5, 4, 1]),
            phone_type: table(&[55, 35, 10]),
            schema,
            item,
            entry_fields,
            phone_type_values: Arc::new(StringArray::from(PHONE_TYPES.to_vec())),
        }
    }

    /// Distinct full names this preset can produce.
    pub fn distinct_names(&self) -> u64 {
        self.first.len() as u64 * self.last.len() as u64
    }
}

#[inline(always)]
fn push_phone_number(out: &mut Vec<u8>, id: u64) {
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";
    out.extend_from_slice(b"+91-99-");
    if id < 100_000_000 {
        let mut d = [0u8; 8];
        let mut v = id as u32;
        for k in (0..4).rev() {
            let p = (v % 100) as usize * 2;
            v /= 100;
            d[2 * k] = PAIRS[p];
            d[2 * k + 1] = PAIRS[p + 1];
        }
        out.extend_from_slice(&d);
    } else {
        let mut d = [0u8; 20];
        let mut v = id;
        let mut i = d.len();
        while v > 0 {
            i -= 1;
            d[i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
        out.extend_from_slice(&d[i..]);
    }
}

/// The data of an array, with the array's own reference released so that
/// the buffers are not shared and their vectors can be reclaimed.
fn owned(array: ArrayRef) -> arrow_data::ArrayData {
    let data = array.to_data();
    drop(array);
    data
}

fn offset(len: usize) -> Result<i32, Error> {
    i32::try_from(len).map_err(|_| Error::BatchTooLarge)
}

fn string_array(
    offsets: Vec<i32>,
    values: Vec<u8>,
    nulls: Option<arrow_buffer::NullBuffer>,
) -> Result<StringArray, Error> {
    let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
    Ok(StringArray::try_new(
        offsets,
        Buffer::from_vec(values),
        nulls,
    )?)
}

impl BatchGenerator for Contacts {
    type Scratch = ContactsScratch;

    fn name(&self) -> &str {
        "contacts"
    }

    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn dictionary_unfriendly_leaves(&self) -> Vec<Vec<String>> {
        // Names have millions of combinations and numbers are unique: a
        // dictionary would overflow its page limit in every row group.
        vec![
            vec!["name".into()],
            vec![
                "phones".into(),
                "list".into(),
                "item".into(),
                "number".into(),
            ],
        ]
    }

    fn generate(
        &self,
        first_row: u64,
        len: usize,
        s: &mut ContactsScratch,
    ) -> Result<RecordBatch, Error> {
        let [b0, b1, b2, b3] = std::mem::take(&mut s.recycled_bits);
        // Expected entries per row are 0.85; size for one and grow rarely.
        s.name_offsets.clear();
        s.name_offsets.reserve(len + 1);
        s.name_offsets.push(0);
        s.name_values.clear();
        s.name_values.reserve(len * MAX_NAME_BYTES);
        s.name_valid.reset(b0, len);
        s.list_offsets.clear();
        s.list_offsets.reserve(len + 1);
        s.list_offsets.push(0);
        s.list_valid.reset(b1, len);
        s.number_offsets.clear();
        s.number_offsets.reserve(len + 1);
        s.number_offsets.push(0);
        s.number_values.clear();
        s.number_values.reserve(len * 16);
        s.number_valid.reset(b2, len);
        s.type_keys.clear();
        s.type_keys.reserve(len);
        s.type_valid.reset(b3, len);

        let (nf, nl) = (self.first.len() as u32, self.last.len() as u32);
        let mut entries = 0usize;
        for i in 0..len as u64 {
            let row = first_row + i;

            let mut r = self.name_key.row(row);
            let d = r.next_u64();
            let present = self.name_presence.sample(hi(d)) == 1;
            if present {
                let f = self.first.get(below(lo(d), nf) as usize);
                let l = self.last.get(below(hi(r.next_u64()), nl) as usize);
                s.name_values.extend_from_slice(f);
                s.name_values.extend_from_slice(l);
            }
            s.name_offsets.push(offset(s.name_values.len())?);
            s.name_valid.push(present);

            let mut r = self.phones_key.row(row);
            let d = r.next_u64();
            let count = match self.phone_count.sample(hi(d)) {
                0 => None,
                1 => Some(1),
                2 => Some(2),
                _ => Some(3 + below(lo(d), 3) as u64),
            };
            if let Some(count) = count {
                if s.number_values.capacity() - s.number_values.len()
                    < MAX_NUMBER_BYTES * count as usize
                {
                    s.number_values.reserve((len - i as usize) * 16 + 64);
                }
                for j in 0..count {
                    let e = r.next_u64();
                    // 0: number and type, 1: number only, 2: type only, 3: neither.
                    let t = self.template.sample(hi(e));
                    let has_number = t <= 1;
                    let has_type = t == 0 || t == 2;
                    if has_number {
                        push_phone_number(&mut s.number_values, row * MAX_PHONES + j);
                    }
                    s.number_offsets.push(offset(s.number_values.len())?);
                    s.number_valid.push(has_number);
                    s.type_keys.push(if has_type {
                        self.phone_type.sample(lo(e))
                    } else {
                        0
                    });
                    s.type_valid.push(has_type);
                }
                entries += count as usize;
            }
            s.list_offsets.push(offset(entries)?);
            s.list_valid.push(count.is_some());
        }

        let name = string_array(
            std::mem::take(&mut s.name_offsets),
            std::mem::take(&mut s.name_values),
            s.name_valid.finish(),
        )?;
        let number = string_array(
            std::mem::take(&mut s.number_offsets),
            std::mem::take(&mut s.number_values),
            s.number_valid.finish(),
        )?;
        let keys = UInt8Array::new(
            ScalarBuffer::from(std::mem::take(&mut s.type_keys)),
            s.type_valid.finish(),
        );
        let phone_type =
            DictionaryArray::<UInt8Type>::try_new(keys, self.phone_type_values.clone())?;
        let entry = StructArray::try_new(
            self.entry_fields.clone(),
            vec![Arc::new(number), Arc::new(phone_type)],
            None,
        )?;
        let phones = ListArray::try_new(
            self.item.clone(),
            OffsetBuffer::new(ScalarBuffer::from(std::mem::take(&mut s.list_offsets))),
            Arc::new(entry),
            s.list_valid.finish(),
        )?;
        Ok(RecordBatch::try_new(
            self.schema.clone(),
            vec![Arc::new(name), Arc::new(phones)],
        )?)
    }

    fn recycle(&self, batch: RecordBatch, s: &mut ContactsScratch) {
        let (_, columns, _) = batch.into_parts();
        let mut columns = columns.into_iter();
        let (Some(name), Some(phones)) = (columns.next(), columns.next()) else {
            return;
        };
        let name = StringArray::from(owned(name));
        let phones = ListArray::from(owned(phones));
        let (offsets, values, nulls) = name.into_parts();
        s.name_offsets = reclaim(offsets.into_inner().into_inner()).unwrap_or_default();
        s.name_values = reclaim(values).unwrap_or_default();
        s.recycled_bits[0] = reclaim_nulls(nulls);
        let (_, offsets, entries, nulls) = phones.into_parts();
        s.list_offsets = reclaim(offsets.into_inner().into_inner()).unwrap_or_default();
        s.recycled_bits[1] = reclaim_nulls(nulls);
        let entries = StructArray::from(owned(entries));
        let (_, fields, _) = entries.into_parts();
        let mut fields = fields.into_iter();
        if let (Some(number), Some(kind)) = (fields.next(), fields.next()) {
            let number = StringArray::from(owned(number));
            let (offsets, values, nulls) = number.into_parts();
            s.number_offsets = reclaim(offsets.into_inner().into_inner()).unwrap_or_default();
            s.number_values = reclaim(values).unwrap_or_default();
            s.recycled_bits[2] = reclaim_nulls(nulls);
            let kind = DictionaryArray::<UInt8Type>::from(owned(kind));
            let (keys, _) = kind.into_parts();
            let (_, keys, nulls) = keys.into_parts();
            s.type_keys = reclaim(keys.into_inner()).unwrap_or_default();
            s.recycled_bits[3] = reclaim_nulls(nulls);
        }
    }
}
