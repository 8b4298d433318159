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
    names::{NameTable, SLOT, first_names, last_names},
    rng::{StreamKey, below, hi, lo, split},
};

/// Entries a row can hold at most.
pub const MAX_PHONES: u64 = 5;

/// The `phone_type` dictionary, in key order.
pub const PHONE_TYPES: [&str; 3] = ["Mobile", "Work", "Home"];

/// Stream ids, one per field path (see [`crate::rng`]).
const STREAM_NAME: u64 = 1;
const STREAM_PHONES: u64 = 2;
const STREAM_ENTRY: u64 = 3;

/// Bytes the number writer may touch: `+91-99-` and a 20-digit id is 27
/// long, and it stores a whole 32-byte block.
const MAX_NUMBER_BYTES: usize = 32;
/// Free bytes kept past the number cursor: room for a row of five numbers.
const NUMBER_SLACK: usize = MAX_NUMBER_BYTES * MAX_PHONES as usize;
/// Largest batch: 2 name slots plus 5 numbers per row stay below 2^31 bytes.
const MAX_BATCH_ROWS: usize = 1 << 24;
/// Entries for each phone-count bucket; bucket 3 adds a uniform 0..=2.
const COUNT_OF_BUCKET: [usize; 4] = [0, 1, 2, 3];

/// The `contacts` generator for one seed.
#[derive(Debug)]
pub struct Contacts {
    name_key: StreamKey,
    phones_key: StreamKey,
    entry_key: StreamKey,
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
    entry_ids: Vec<u32>,
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
            entry_key: StreamKey::new(seed, STREAM_ENTRY),
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

const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Writes the 8 decimal digits of `v < 10^8`, zero-padded.
#[inline(always)]
fn eight_digits(out: &mut [u8], mut v: u32) {
    for k in (0..4).rev() {
        let p = (v % 100) as usize * 2;
        v /= 100;
        out[2 * k] = PAIRS[p];
        out[2 * k + 1] = PAIRS[p + 1];
    }
}

/// Writes `+91-99-{id:08}` at the start of `out` (at least
/// [`MAX_NUMBER_BYTES`] long) and returns its length.
#[inline(always)]
fn write_phone_number(out: &mut [u8], id: u64) -> usize {
    const PREFIX: &[u8; 7] = b"+91-99-";
    let mut d = [0u8; 32];
    d[..7].copy_from_slice(PREFIX);
    let len = if id < 100_000_000 {
        eight_digits(&mut d[7..15], id as u32);
        15
    } else {
        // 9 to 20 digits: up to three groups of eight, leading zeros of
        // the top group dropped.
        let low = (id % 100_000_000) as u32;
        let rest = id / 100_000_000;
        let mid = (rest % 100_000_000) as u32;
        let top = (rest / 100_000_000) as u32;
        let mut groups = [0u8; 24];
        eight_digits(&mut groups[0..8], top);
        eight_digits(&mut groups[8..16], mid);
        eight_digits(&mut groups[16..24], low);
        let skip = groups.iter().take(23).take_while(|&&c| c == b'0').count();
        let n = 24 - skip;
        d[7..7 + n].copy_from_slice(&groups[skip..]);
        7 + n
    };
    out[..32].copy_from_slice(&d);
    len
}

/// The data of an array, with the array's own reference released so that
/// the buffers are not shared and their vectors can be reclaimed.
fn owned(array: ArrayRef) -> arrow_data::ArrayData {
    let data = array.to_data();
    drop(array);
    data
}

/// A `Utf8` array from vectors this module filled.
///
/// Built without re-validation: `new_unchecked` saves the UTF-8 and
/// offset checks of `try_new`, about 10% of generation time (`cargo bench
/// -p strata-gen`).
fn string_array(
    offsets: Vec<i32>,
    values: Vec<u8>,
    nulls: Option<arrow_buffer::NullBuffer>,
) -> StringArray {
    debug_assert!(offsets.windows(2).all(|w| w[0] <= w[1]));
    debug_assert_eq!(offsets.last().map(|&o| o as usize), Some(values.len()));
    debug_assert!(std::str::from_utf8(&values).is_ok());
    // SAFETY: the offsets start at 0, never decrease (each is the write
    // cursor after a value) and end at `values.len()`, and they number one
    // more than the validity bits. Every value is whole strings copied from
    // `NameTable` slots (valid UTF-8: `&str` lines cut on character
    // boundaries) or ASCII phone numbers, so each value and the buffer are
    // valid UTF-8. The debug assertions above check all of this in tests.
    unsafe {
        StringArray::new_unchecked(
            OffsetBuffer::new_unchecked(ScalarBuffer::from(offsets)),
            Buffer::from_vec(values),
            nulls,
        )
    }
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
        // Worst case per row: a full name slot pair, five numbers of up to
        // 27 bytes; all offsets then fit in i32 and the casts below are exact.
        if len > MAX_BATCH_ROWS {
            return Err(Error::BatchTooLarge);
        }
        let [b0, b1, b2, b3] = std::mem::take(&mut s.recycled_bits);
        // The buffers are moved into locals for the loop: the optimiser then
        // keeps their lengths and cursors in registers.
        let mut name_offsets = std::mem::take(&mut s.name_offsets);
        let mut name_values = std::mem::take(&mut s.name_values);
        let mut name_valid = std::mem::take(&mut s.name_valid);
        let mut list_offsets = std::mem::take(&mut s.list_offsets);
        let mut list_valid = std::mem::take(&mut s.list_valid);
        let mut number_offsets = std::mem::take(&mut s.number_offsets);
        let mut number_values = std::mem::take(&mut s.number_values);
        let mut number_valid = std::mem::take(&mut s.number_valid);
        let mut type_keys = std::mem::take(&mut s.type_keys);
        let mut type_valid = std::mem::take(&mut s.type_valid);
        name_offsets.clear();
        name_offsets.reserve(len + 1);
        name_offsets.push(0);
        // Names are written as whole 16-byte slots and the cursor advances
        // by the real length, so the buffer is sized for two slots per row.
        name_values.clear();
        name_values.resize(len * 2 * SLOT, 0);
        name_valid.reset(b0, len);
        list_offsets.clear();
        list_offsets.reserve(len + 1);
        list_offsets.push(0);
        list_valid.reset(b1, len);
        number_offsets.clear();
        number_offsets.reserve(len + len / 4 + 1);
        number_offsets.push(0);
        number_values.clear();
        number_valid.reset(b2, len);
        type_keys.clear();
        type_keys.reserve(len + len / 4);
        type_valid.reset(b3, len);

        let (nf, nl) = (self.first.len() as u32, self.last.len() as u32);

        // Pass 1, `name`: one draw per row. High half: presence; low half:
        // first and last name as two digits (see `rng::split`). The slots
        // are copied whole and a null name simply does not advance the
        // cursor: no branch depends on random data.
        let mut name_pos = 0usize;
        for i in 0..len as u64 {
            let d = self.name_key.first(first_row + i);
            let present = self.name_presence.sample(hi(d)) == 1;
            let (fi, rest) = split(lo(d), nf);
            let (li, _) = split(rest, nl);
            let (f, flen) = self.first.slot(fi as usize);
            let (l, llen) = self.last.slot(li as usize);
            name_values[name_pos..name_pos + SLOT].copy_from_slice(f);
            name_pos += flen * usize::from(present);
            name_values[name_pos..name_pos + SLOT].copy_from_slice(l);
            name_pos += llen * usize::from(present);
            name_offsets.push(name_pos as i32);
            name_valid.push(present);
        }

        // Pass 2, `phones` lists: one draw per row picks the entry count
        // (high half) and the 3..=5 spread (low half). The batch-local ids
        // of all five possible entries are stored and the cursor advances
        // by the count, so the entries come out flat, in row order.
        let mut entry_ids = std::mem::take(&mut s.entry_ids);
        entry_ids.clear();
        entry_ids.resize(len * MAX_PHONES as usize + MAX_PHONES as usize, 0);
        let mut entries = 0usize;
        for i in 0..len {
            let d = self.phones_key.first(first_row + i as u64);
            let bucket = self.phone_count.sample(hi(d));
            let count = COUNT_OF_BUCKET[bucket as usize]
                + usize::from(bucket == 3) * below(lo(d), 3) as usize;
            let base = (i * MAX_PHONES as usize) as u32;
            entry_ids[entries..entries + 5].copy_from_slice(&[
                base,
                base + 1,
                base + 2,
                base + 3,
                base + 4,
            ]);
            entries += count;
            list_offsets.push(entries as i32);
            list_valid.push(bucket != 0);
        }

        // Pass 3, the entries: one draw per entry, keyed by its global id
        // `5 * row + j`. High half: which fields are present; low half:
        // the phone type.
        let id_base = first_row * MAX_PHONES;
        number_values.resize(entries * 15 + NUMBER_SLACK, 0);
        let mut number_pos = 0usize;
        for &local in &entry_ids[..entries] {
            let id = id_base + u64::from(local);
            let d = self.entry_key.first(id);
            // 0: number and type, 1: number only, 2: type only, 3: neither.
            let t = self.template.sample(hi(d));
            let has_number = t <= 1;
            let has_type = t == 0 || t == 2;
            if number_values.len() - number_pos < MAX_NUMBER_BYTES {
                let grow = number_values.len() / 2 + NUMBER_SLACK;
                number_values.resize(number_values.len() + grow, 0);
            }
            let written = write_phone_number(
                &mut number_values[number_pos..number_pos + MAX_NUMBER_BYTES],
                id,
            );
            number_pos += written * usize::from(has_number);
            number_offsets.push(number_pos as i32);
            number_valid.push(has_number);
            type_keys.push(self.phone_type.sample(lo(d)) * u8::from(has_type));
            type_valid.push(has_type);
        }
        s.entry_ids = entry_ids;
        name_values.truncate(name_pos);
        number_values.truncate(number_pos);

        let name = string_array(name_offsets, name_values, name_valid.finish());
        let number = string_array(number_offsets, number_values, number_valid.finish());
        let keys = UInt8Array::new(ScalarBuffer::from(type_keys), type_valid.finish());
        let phones_valid = list_valid.finish();
        // The emptied builders keep their reclaimed bitmaps for reuse.
        s.name_valid = name_valid;
        s.list_valid = list_valid;
        s.number_valid = number_valid;
        s.type_valid = type_valid;
        let phone_type =
            DictionaryArray::<UInt8Type>::try_new(keys, self.phone_type_values.clone())?;
        let entry = StructArray::try_new(
            self.entry_fields.clone(),
            vec![Arc::new(number), Arc::new(phone_type)],
            None,
        )?;
        let phones = ListArray::try_new(
            self.item.clone(),
            OffsetBuffer::new(ScalarBuffer::from(list_offsets)),
            Arc::new(entry),
            phones_valid,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phone_numbers_match_format() {
        for id in [
            0u64,
            7,
            99_999_999,
            100_000_000,
            123_456_789_012,
            u64::MAX / 5,
        ] {
            let mut out = [0u8; MAX_NUMBER_BYTES];
            let n = write_phone_number(&mut out, id);
            assert_eq!(
                std::str::from_utf8(&out[..n]).unwrap(),
                format!("+91-99-{id:08}")
            );
        }
    }
}
