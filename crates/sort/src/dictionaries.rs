//! One dictionary per dictionary column across the batches of a sort's
//! input, so gathering rows from many batches copies keys only.
//!
//! A Parquet reader gives each row group's batches that row group's
//! dictionary, so an in-memory input or a run holds tens to hundreds of
//! different dictionaries per column. `interleave` over arrays whose
//! dictionaries differ merges them for every chunk it gathers: a mask and
//! a scan of the chunk's picks per source batch, then a merge of the value
//! lists (with `UInt8` keys as soon as the batches together hold more
//! than 255 values, whatever the values). Gathering 8M `events` rows from
//! 977 batches spent over a quarter of the sort's CPU time there.
//! [`share`] rewrites the batches once, before gathering: the distinct
//! values of each dictionary (top-level or inside structs, lists and
//! maps) become one values array that every batch's keys point into.
//! Where those values would not fit the key type, or their type is not
//! one this module hashes (primitives and byte arrays), the column is left
//! as it is.

use std::{collections::HashMap, sync::Arc};

use arrow_array::{
    Array, ArrayRef, DictionaryArray, FixedSizeListArray, GenericListArray, MapArray,
    OffsetSizeTrait, PrimitiveArray, RecordBatch, StructArray,
    cast::AsArray,
    types::{
        ArrowDictionaryKeyType, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type,
        UInt32Type, UInt64Type,
    },
};
use arrow_buffer::ArrowNativeType;
use arrow_schema::DataType;

use crate::error::Error;

/// Whether `data_type` has a dictionary anywhere in it.
fn has_dictionary(data_type: &DataType) -> bool {
    match data_type {
        DataType::Dictionary(..) => true,
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => has_dictionary(f.data_type()),
        DataType::Struct(fs) => fs.iter().any(|f| has_dictionary(f.data_type())),
        _ => false,
    }
}

/// `batches` with every dictionary of a column shared by all of them,
/// where the values fit the key type (see the module docs). The rows and
/// values are unchanged.
pub(crate) fn share(batches: Vec<RecordBatch>) -> Result<Vec<RecordBatch>, Error> {
    let Some(first) = batches.first() else {
        return Ok(batches);
    };
    let schema = first.schema();
    if batches.len() < 2
        || !schema
            .fields()
            .iter()
            .any(|f| has_dictionary(f.data_type()))
    {
        return Ok(batches);
    }
    let mut columns: Vec<Vec<ArrayRef>> = vec![Vec::with_capacity(batches.len()); batches.len()];
    for (c, field) in schema.fields().iter().enumerate() {
        let arrays: Vec<ArrayRef> = batches.iter().map(|b| b.column(c).clone()).collect();
        let arrays = if has_dictionary(field.data_type()) {
            unify(arrays)?
        } else {
            arrays
        };
        for (b, a) in arrays.into_iter().enumerate() {
            columns[b].push(a);
        }
    }
    batches
        .iter()
        .zip(columns)
        .map(|(b, cols)| {
            let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(b.num_rows()));
            Ok(RecordBatch::try_new_with_options(
                b.schema(),
                cols,
                &options,
            )?)
        })
        .collect()
}

/// `arrays` (one per batch, of one type) with their dictionaries shared.
fn unify(arrays: Vec<ArrayRef>) -> Result<Vec<ArrayRef>, Error> {
    let data_type = arrays[0].data_type().clone();
    if !has_dictionary(&data_type) {
        return Ok(arrays);
    }
    match &data_type {
        DataType::Dictionary(key, _) => match key.as_ref() {
            DataType::Int8 => unify_keys::<Int8Type>(arrays),
            DataType::Int16 => unify_keys::<Int16Type>(arrays),
            DataType::Int32 => unify_keys::<Int32Type>(arrays),
            DataType::Int64 => unify_keys::<Int64Type>(arrays),
            DataType::UInt8 => unify_keys::<UInt8Type>(arrays),
            DataType::UInt16 => unify_keys::<UInt16Type>(arrays),
            DataType::UInt32 => unify_keys::<UInt32Type>(arrays),
            DataType::UInt64 => unify_keys::<UInt64Type>(arrays),
            _ => Ok(arrays),
        },
        DataType::Struct(fields) => {
            let children = (0..fields.len())
                .map(|i| {
                    unify(
                        arrays
                            .iter()
                            .map(|a| a.as_struct().column(i).clone())
                            .collect(),
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            arrays
                .iter()
                .enumerate()
                .map(|(b, a)| {
                    let s = a.as_struct();
                    let cols = children.iter().map(|c| c[b].clone()).collect();
                    Ok(Arc::new(StructArray::try_new_with_length(
                        fields.clone(),
                        cols,
                        s.nulls().cloned(),
                        s.len(),
                    )?) as ArrayRef)
                })
                .collect()
        }
        DataType::List(_) => unify_list::<i32>(arrays),
        DataType::LargeList(_) => unify_list::<i64>(arrays),
        DataType::FixedSizeList(field, size) => with_child(
            &arrays,
            |a| a.as_fixed_size_list().values().clone(),
            |a, v| {
                let l = FixedSizeListArray::try_new(field.clone(), *size, v, a.nulls().cloned())?;
                Ok(Arc::new(l))
            },
        ),
        DataType::Map(field, sorted) => with_child(
            &arrays,
            |a| Arc::new(a.as_map().entries().clone()),
            |a, e| {
                let m = a.as_map();
                let (offsets, nulls) = (m.offsets().clone(), m.nulls().cloned());
                let e = e.as_struct().clone();
                Ok(Arc::new(MapArray::try_new(
                    field.clone(),
                    offsets,
                    e,
                    nulls,
                    *sorted,
                )?))
            },
        ),
        _ => Ok(arrays),
    }
}

/// Arrays of a type with one child array (list values, map entries):
/// the children of all of them shared ([`unify`]), each array rebuilt
/// around its own by `rebuild`.
fn with_child(
    arrays: &[ArrayRef],
    child: impl Fn(&ArrayRef) -> ArrayRef,
    rebuild: impl Fn(&ArrayRef, ArrayRef) -> Result<ArrayRef, arrow_schema::ArrowError>,
) -> Result<Vec<ArrayRef>, Error> {
    let children = unify(arrays.iter().map(child).collect())?;
    arrays
        .iter()
        .zip(children)
        .map(|(a, c)| Ok(rebuild(a, c)?))
        .collect()
}

/// List arrays with the dictionaries of their values shared.
fn unify_list<O: OffsetSizeTrait>(arrays: Vec<ArrayRef>) -> Result<Vec<ArrayRef>, Error> {
    let (DataType::List(field) | DataType::LargeList(field)) = arrays[0].data_type().clone() else {
        return Ok(arrays);
    };
    with_child(
        &arrays,
        |a| a.as_list::<O>().values().clone(),
        |a, v| {
            let l = a.as_list::<O>();
            let (offsets, nulls) = (l.offsets().clone(), l.nulls().cloned());
            Ok(Arc::new(GenericListArray::<O>::try_new(
                field.clone(),
                offsets,
                v,
                nulls,
            )?))
        },
    )
}

/// Reads the bytes that identify each value of a dictionary's values, for
/// the value types this module hashes (primitives and byte arrays).
enum ValueBytes<'a> {
    Bytes(&'a dyn Array),
    Fixed {
        values: &'a dyn Array,
        buffer: arrow_buffer::Buffer,
        offset: usize,
        width: usize,
    },
}

impl<'a> ValueBytes<'a> {
    fn new(values: &'a dyn Array) -> Option<ValueBytes<'a>> {
        match values.data_type() {
            DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::Utf8View
            | DataType::BinaryView => Some(ValueBytes::Bytes(values)),
            DataType::Boolean => None,
            t => {
                let width = t.primitive_width()?;
                let data = values.to_data();
                Some(ValueBytes::Fixed {
                    values,
                    buffer: data.buffers().first()?.clone(),
                    offset: data.offset(),
                    width,
                })
            }
        }
    }

    /// Value `i`'s bytes, `None` for a null.
    fn get(&self, i: usize) -> Option<&[u8]> {
        match self {
            ValueBytes::Bytes(values) => {
                if values.is_null(i) {
                    return None;
                }
                Some(match values.data_type() {
                    DataType::Utf8 => values.as_string::<i32>().value(i).as_bytes(),
                    DataType::LargeUtf8 => values.as_string::<i64>().value(i).as_bytes(),
                    DataType::Binary => values.as_binary::<i32>().value(i),
                    DataType::LargeBinary => values.as_binary::<i64>().value(i),
                    DataType::Utf8View => values.as_string_view().value(i).as_bytes(),
                    _ => values.as_binary_view().value(i),
                })
            }
            ValueBytes::Fixed {
                values,
                buffer,
                offset,
                width,
            } => {
                if values.is_null(i) {
                    return None;
                }
                let start = (offset + i) * width;
                buffer.as_slice().get(start..start + width)
            }
        }
    }
}

/// Dictionary arrays with one values array shared by all of them: the
/// distinct values of their dictionaries, in order of first appearance.
/// Unchanged when those do not fit the key type or are of a type
/// [`ValueBytes`] does not read.
fn unify_keys<K: ArrowDictionaryKeyType>(arrays: Vec<ArrayRef>) -> Result<Vec<ArrayRef>, Error> {
    let dicts: Vec<&DictionaryArray<K>> = arrays.iter().map(|a| a.as_dictionary::<K>()).collect();
    // The distinct values arrays (batches of one Parquet row group share
    // one), and which of them each array uses.
    let mut distinct: Vec<&ArrayRef> = Vec::new();
    let mut uses: Vec<usize> = Vec::with_capacity(dicts.len());
    for d in &dicts {
        let values = d.values();
        let found = distinct
            .iter()
            .position(|v| Arc::ptr_eq(v, values) || v.to_data().ptr_eq(&values.to_data()));
        uses.push(found.unwrap_or_else(|| {
            distinct.push(values);
            distinct.len() - 1
        }));
    }
    if distinct.len() < 2 {
        return Ok(arrays);
    }
    let readers: Option<Vec<ValueBytes<'_>>> = distinct
        .iter()
        .map(|v| ValueBytes::new(v.as_ref()))
        .collect();
    let Some(readers) = readers else {
        return Ok(arrays);
    };
    // Per distinct values array: its values' new keys; and the (array,
    // value) of each new value.
    let mut index: HashMap<Option<&[u8]>, usize> = HashMap::new();
    let mut picks: Vec<(usize, usize)> = Vec::new();
    let mut mappings: Vec<Vec<usize>> = Vec::with_capacity(readers.len());
    for (a, reader) in readers.iter().enumerate() {
        let n = distinct[a].len();
        let mut mapping = Vec::with_capacity(n);
        for i in 0..n {
            let next = picks.len();
            let key = *index.entry(reader.get(i)).or_insert(next);
            if key == next {
                picks.push((a, i));
            }
            mapping.push(key);
        }
        mappings.push(mapping);
    }
    // Keys index values 0..len: the largest key must fit.
    if picks.len() > 1 && K::Native::from_usize(picks.len() - 1).is_none() {
        return Ok(arrays);
    }
    let sources: Vec<&dyn Array> = distinct.iter().map(|v| v.as_ref()).collect();
    let values = arrow_select::interleave::interleave(&sources, &picks)?;
    dicts
        .iter()
        .zip(&uses)
        .map(|(d, &u)| {
            let mapping = &mappings[u];
            let keys: PrimitiveArray<K> = d.keys().unary_opt(|k| {
                mapping
                    .get(k.as_usize())
                    .and_then(|&m| K::Native::from_usize(m))
            });
            // A key the old dictionary did not hold is an error, as it was.
            if keys.null_count() != d.keys().null_count() {
                return Err(Error::Invalid(
                    "a dictionary key points past its values".into(),
                ));
            }
            Ok(Arc::new(DictionaryArray::<K>::try_new(keys, values.clone())?) as ArrayRef)
        })
        .collect()
}

/// Whether every array in `arrays` (dictionaries) shares one values array.
fn one_values<K: ArrowDictionaryKeyType>(arrays: &[&dyn Array]) -> bool {
    let first = arrays[0].as_dictionary::<K>().values();
    arrays[1..]
        .iter()
        .all(|a| Arc::ptr_eq(a.as_dictionary::<K>().values(), first))
}

/// Dictionary arrays' rows at `pairs` (array, row): with one shared values
/// array, only the keys are gathered; else `interleave`'s own way.
fn gather_keys<K: ArrowDictionaryKeyType>(
    arrays: &[&dyn Array],
    pairs: &[(usize, usize)],
) -> Result<ArrayRef, Error> {
    if !one_values::<K>(arrays) {
        return Ok(arrow_select::interleave::interleave(arrays, pairs)?);
    }
    let keys: Vec<&dyn Array> = arrays
        .iter()
        .map(|a| a.as_dictionary::<K>().keys() as &dyn Array)
        .collect();
    let keys = arrow_select::interleave::interleave(&keys, pairs)?;
    let values = arrays[0].as_dictionary::<K>().values().clone();
    Ok(Arc::new(DictionaryArray::<K>::try_new(
        keys.as_primitive::<K>().clone(),
        values,
    )?))
}

/// The rows at `pairs` (array, row) of `arrays` (of one type), as
/// `interleave` gathers them, but copying only keys for the dictionaries
/// [`share`] left shared, at the top level or in structs (`interleave`
/// concatenates or merges every source's dictionary for every call).
pub(crate) fn interleave(
    arrays: &[&dyn Array],
    pairs: &[(usize, usize)],
) -> Result<ArrayRef, Error> {
    let data_type = arrays[0].data_type();
    if pairs.is_empty() || !has_dictionary(data_type) {
        return Ok(arrow_select::interleave::interleave(arrays, pairs)?);
    }
    match data_type {
        DataType::Dictionary(key, _) => match key.as_ref() {
            DataType::Int8 => gather_keys::<Int8Type>(arrays, pairs),
            DataType::Int16 => gather_keys::<Int16Type>(arrays, pairs),
            DataType::Int32 => gather_keys::<Int32Type>(arrays, pairs),
            DataType::Int64 => gather_keys::<Int64Type>(arrays, pairs),
            DataType::UInt8 => gather_keys::<UInt8Type>(arrays, pairs),
            DataType::UInt16 => gather_keys::<UInt16Type>(arrays, pairs),
            DataType::UInt32 => gather_keys::<UInt32Type>(arrays, pairs),
            DataType::UInt64 => gather_keys::<UInt64Type>(arrays, pairs),
            _ => Ok(arrow_select::interleave::interleave(arrays, pairs)?),
        },
        DataType::Struct(fields) => {
            let structs: Vec<&StructArray> = arrays.iter().map(|a| a.as_struct()).collect();
            let children = (0..fields.len())
                .map(|i| {
                    let parts: Vec<&dyn Array> =
                        structs.iter().map(|s| s.column(i).as_ref()).collect();
                    interleave(&parts, pairs)
                })
                .collect::<Result<Vec<_>, _>>()?;
            let nulls = if structs.iter().any(|s| s.nulls().is_some()) {
                Some(arrow_buffer::NullBuffer::from_iter(
                    pairs.iter().map(|&(a, r)| structs[a].is_valid(r)),
                ))
            } else {
                None
            };
            Ok(Arc::new(StructArray::try_new_with_length(
                fields.clone(),
                children,
                nulls,
                pairs.len(),
            )?))
        }
        _ => Ok(arrow_select::interleave::interleave(arrays, pairs)?),
    }
}

#[cfg(test)]
mod tests {
    use arrow_array::{
        Int32Array, Int64Array, ListArray, StringArray,
        types::{Int16Type, UInt16Type},
    };
    use arrow_buffer::{NullBuffer, OffsetBuffer};
    use arrow_schema::{Field, Fields};
    use strata_testkit::readback::rows_as_text;

    use super::*;

    const WORDS: [&str; 20] = [
        "ant", "bee", "cat", "dog", "eel", "fox", "gnu", "hen", "ibis", "jay", "kiwi", "lark",
        "mole", "newt", "owl", "pig", "quail", "rat", "seal", "toad",
    ];

    /// A dictionary of `n` rows over a batch's own values: words from
    /// `first` on, every fifth key null, and a null value when `null_value`.
    fn words<K: ArrowDictionaryKeyType>(
        r: &mut strata_gen::rng::RowRng,
        n: usize,
        first: usize,
        null_value: bool,
    ) -> DictionaryArray<K> {
        let mut values: Vec<Option<&str>> = (0..6).map(|i| Some(WORDS[(first + i) % 20])).collect();
        if null_value {
            values[5] = None;
        }
        let keys: PrimitiveArray<K> = (0..n)
            .map(|_| {
                (r.next_below(5) != 0)
                    .then(|| K::Native::from_usize(r.next_below(6) as usize).unwrap())
            })
            .collect();
        DictionaryArray::try_new(keys, Arc::new(StringArray::from(values))).unwrap()
    }

    /// Batch `b` of a test input: every column has a dictionary of its
    /// own (top level, in a struct with nulls, in a list, with integer
    /// values, and one whose values together overflow `UInt8` keys).
    fn batch(b: usize, n: usize) -> RecordBatch {
        let mut r = strata_gen::rng::RowRng::seeded(b as u64);
        let d: ArrayRef = Arc::new(words::<UInt8Type>(&mut r, n, b, b.is_multiple_of(3)));
        let os: ArrayRef = Arc::new(words::<Int16Type>(&mut r, n, b * 7, false));
        let num: ArrayRef = Arc::new(Int32Array::from_iter_values(0..n as i32));
        let fields = Fields::from(vec![
            Field::new("os", os.data_type().clone(), true),
            Field::new("n", DataType::Int32, false),
        ]);
        let valid = NullBuffer::from_iter((0..n).map(|i| i % 7 != 3));
        let s: ArrayRef =
            Arc::new(StructArray::try_new(fields, vec![os, num], Some(valid)).unwrap());
        let items = words::<UInt8Type>(&mut r, 2 * n, b + 3, false);
        let item = Arc::new(Field::new("item", items.data_type().clone(), true));
        let lengths = (0..n).map(|i| [0, 1, 3][i % 3]);
        let l: ArrayRef = Arc::new(ListArray::new(
            item,
            OffsetBuffer::from_lengths(lengths),
            Arc::new(items.slice(0, (0..n).map(|i| [0, 1, 3][i % 3]).sum())),
            None,
        ));
        let ints: PrimitiveArray<UInt16Type> = (0..n).map(|i| Some((i % 4) as u16)).collect();
        let p: ArrayRef = Arc::new(
            DictionaryArray::<UInt16Type>::try_new(
                ints,
                Arc::new(Int64Array::from_iter_values(
                    (0..4).map(|v| v * 10 + b as i64),
                )),
            )
            .unwrap(),
        );
        // 40 batches of 10 values each: 400 distinct values.
        let many: Vec<String> = (0..10).map(|v| format!("v{b}-{v}")).collect();
        let keys: PrimitiveArray<UInt8Type> = (0..n).map(|i| Some((i % 10) as u8)).collect();
        let o: ArrayRef = Arc::new(
            DictionaryArray::<UInt8Type>::try_new(keys, Arc::new(StringArray::from(many))).unwrap(),
        );
        // Pairs in a fixed-size list, and a map whose values are words.
        let pairs = words::<UInt8Type>(&mut r, 2 * n, b + 5, false);
        let pair = Arc::new(Field::new("item", pairs.data_type().clone(), true));
        let f: ArrayRef =
            Arc::new(FixedSizeListArray::try_new(pair, 2, Arc::new(pairs), None).unwrap());
        let keys: ArrayRef = Arc::new(StringArray::from_iter_values(
            (0..n).map(|i| format!("k{}", i % 3)),
        ));
        let vals: ArrayRef = Arc::new(words::<UInt8Type>(&mut r, n, b + 9, false));
        let entry_fields = Fields::from(vec![
            Field::new("key", DataType::Utf8, false),
            Field::new("value", vals.data_type().clone(), true),
        ]);
        let entries = StructArray::try_new(entry_fields.clone(), vec![keys, vals], None).unwrap();
        let entry = Arc::new(Field::new("entries", DataType::Struct(entry_fields), false));
        let m: ArrayRef = Arc::new(
            MapArray::try_new(
                entry,
                // Every other row holds two entries: all n are used.
                OffsetBuffer::from_lengths((0..n).map(|i| if i % 2 == 0 { 2 } else { 0 })),
                entries,
                None,
                false,
            )
            .unwrap(),
        );
        RecordBatch::try_from_iter([
            ("d", d),
            ("s", s),
            ("l", l),
            ("p", p),
            ("o", o),
            ("f", f),
            ("m", m),
        ])
        .unwrap()
    }

    fn input() -> Vec<RecordBatch> {
        (0..40)
            .map(|b| {
                let whole = batch(b, 60);
                // Some batches are slices, so their arrays have offsets.
                if b % 4 == 1 {
                    whole.slice(3, 50)
                } else {
                    whole
                }
            })
            .collect()
    }

    /// The values array of the dictionary at `column` (the `os` child of
    /// `s`), as a pointer.
    fn values_ptr(batch: &RecordBatch, column: &str) -> *const u8 {
        let a = match column {
            "os" => batch
                .column_by_name("s")
                .unwrap()
                .as_struct()
                .column(0)
                .clone(),
            "l" => batch
                .column_by_name("l")
                .unwrap()
                .as_list::<i32>()
                .values()
                .clone(),
            "f" => batch
                .column_by_name("f")
                .unwrap()
                .as_fixed_size_list()
                .values()
                .clone(),
            "m" => batch
                .column_by_name("m")
                .unwrap()
                .as_map()
                .entries()
                .column(1)
                .clone(),
            c => batch.column_by_name(c).unwrap().clone(),
        };
        let values = match a.data_type() {
            DataType::Dictionary(k, _) if k.as_ref() == &DataType::Int16 => {
                a.as_dictionary::<Int16Type>().values().clone()
            }
            DataType::Dictionary(k, _) if k.as_ref() == &DataType::UInt16 => {
                a.as_dictionary::<UInt16Type>().values().clone()
            }
            _ => a.as_dictionary::<UInt8Type>().values().clone(),
        };
        Arc::as_ptr(&values) as *const u8
    }

    #[test]
    fn shared_dictionaries_keep_every_row() {
        let before = input();
        let after = share(before.clone()).unwrap();
        assert_eq!(
            rows_as_text(&after).unwrap(),
            rows_as_text(&before).unwrap()
        );
        for column in ["d", "os", "l", "p", "f", "m"] {
            let first = values_ptr(&after[0], column);
            assert!(
                after.iter().all(|b| values_ptr(b, column) == first),
                "{column} is not shared"
            );
        }
        // 400 values do not fit UInt8 keys: that column is left alone.
        assert_ne!(values_ptr(&after[0], "o"), values_ptr(&after[1], "o"));
        assert_eq!(values_ptr(&after[1], "o"), values_ptr(&before[1], "o"));
        // A shared dictionary holds each value once: the 20 words and a null.
        let d = after[0].column_by_name("d").unwrap();
        assert_eq!(d.as_dictionary::<UInt8Type>().values().len(), 21);
    }

    #[test]
    fn gathering_shared_dictionaries_equals_interleave() {
        let batches = share(input()).unwrap();
        let mut r = strata_gen::rng::RowRng::seeded(7);
        for picks in [0, 1, 3_000] {
            let pairs: Vec<(usize, usize)> = (0..picks)
                .map(|_| {
                    let b = r.next_below(batches.len() as u64) as usize;
                    (b, r.next_below(batches[b].num_rows() as u64) as usize)
                })
                .collect();
            for c in 0..batches[0].num_columns() {
                let parts: Vec<&dyn Array> = batches.iter().map(|b| b.column(c).as_ref()).collect();
                let ours = interleave(&parts, &pairs);
                let theirs = arrow_select::interleave::interleave(&parts, &pairs);
                if c == 4 && picks > 255 {
                    // Column `o`: the picks hold more values than UInt8
                    // keys can index, which no dictionary of this type
                    // holds; both refuse.
                    assert!(ours.is_err() && theirs.is_err());
                    continue;
                }
                let (ours, theirs) = (ours.unwrap(), theirs.unwrap());
                assert_eq!(ours.data_type(), theirs.data_type());
                let text = |a: ArrayRef| {
                    let b = RecordBatch::try_from_iter([("x", a)]).unwrap();
                    rows_as_text(&[b]).unwrap()
                };
                assert_eq!(
                    text(ours.clone()),
                    text(theirs),
                    "column {c}, {picks} picks"
                );
                if c == 0 && picks > 0 {
                    // Only the keys were gathered: the values are the shared ones.
                    let shared = batches[0].column(0).as_dictionary::<UInt8Type>().values();
                    assert!(Arc::ptr_eq(
                        ours.as_dictionary::<UInt8Type>().values(),
                        shared
                    ));
                }
            }
        }
    }
}
