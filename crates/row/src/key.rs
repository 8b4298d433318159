//! Sort keys named by column: the one place that resolves key column
//! names against a schema, builds the [`RowEncoder`] for them and encodes
//! the key columns of record batches. Sorting and merging both use it, so
//! a file sorted by one and merged by the other agrees byte for byte.

use std::fmt;

use arrow_array::{Array, ArrayRef, RecordBatch, cast::AsArray, make_array};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, Schema, SortOptions};

use crate::{Error, RowEncoder, Rows, SortField};

/// The key columns of a schema and the row encoder for them.
pub struct KeyColumns {
    encoder: RowEncoder,
    /// Each key column's path: its top-level column, then the child of
    /// each struct down to it.
    paths: Vec<Vec<usize>>,
    /// Each key column's top-level column.
    columns: Vec<usize>,
}

impl fmt::Debug for KeyColumns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyColumns")
            .field("columns", &self.columns)
            .finish_non_exhaustive()
    }
}

impl KeyColumns {
    /// Resolves `keys` (column name and order, most significant first)
    /// against `schema` and builds the encoder. A name is a top-level
    /// column, or else a field inside structs by its dotted path
    /// (`address.city`); a row whose struct is null has a null key there.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for no key columns,
    /// [`Error::UnknownColumn`] for a name the schema lacks,
    /// [`Error::UnsupportedKey`] naming the first column whose type the
    /// encoder cannot order on its own, the encoder's error otherwise.
    pub fn new<S: AsRef<str>>(schema: &Schema, keys: &[(S, SortOptions)]) -> Result<Self, Error> {
        if keys.is_empty() {
            return Err(Error::InvalidArgument(
                "a key needs at least one column".into(),
            ));
        }
        let mut paths = Vec::with_capacity(keys.len());
        let mut fields = Vec::with_capacity(keys.len());
        let mut named = Vec::with_capacity(keys.len());
        for (name, options) in keys {
            let name = name.as_ref();
            let (path, field) = resolve(schema, name).ok_or_else(|| Error::UnknownColumn {
                name: name.to_string(),
                available: schema.fields().iter().map(|f| f.name().clone()).collect(),
            })?;
            paths.push(path);
            named.push((name.to_string(), field.data_type().clone()));
            fields.push(SortField::new(field.data_type().clone()).with_options(*options));
        }
        match RowEncoder::new(fields.clone()) {
            Ok(encoder) => Ok(KeyColumns {
                encoder,
                columns: paths.iter().map(|p| p[0]).collect(),
                paths,
            }),
            Err(e) => {
                for (field, (name, data_type)) in fields.into_iter().zip(named) {
                    if let Err(source) = RowEncoder::new(vec![field]) {
                        return Err(Error::UnsupportedKey {
                            column: name,
                            data_type,
                            source: Box::new(source),
                        });
                    }
                }
                Err(e)
            }
        }
    }

    /// Ascending keys with nulls first, by name.
    ///
    /// # Errors
    /// As [`KeyColumns::new`].
    pub fn ascending<S: AsRef<str>>(schema: &Schema, names: &[S]) -> Result<Self, Error> {
        let keys: Vec<(&str, SortOptions)> = names
            .iter()
            .map(|n| (n.as_ref(), SortOptions::default()))
            .collect();
        KeyColumns::new(schema, &keys)
    }

    /// Encodes the key columns of `batch`, which has the schema given to
    /// [`KeyColumns::new`] (or one with the key columns at the same
    /// positions and types).
    ///
    /// # Errors
    /// The encoder's error when a column does not match its field.
    pub fn encode(&self, batch: &RecordBatch) -> Result<Rows, Error> {
        self.encoder.encode(&self.arrays(batch)?)
    }

    /// The key columns of `batch` as arrays, most significant first (a
    /// field inside structs null wherever a struct on its path is).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `batch` lacks a key column or a
    /// path does not go through structs.
    pub fn arrays(&self, batch: &RecordBatch) -> Result<Vec<ArrayRef>, Error> {
        if let Some(&i) = self.columns.iter().find(|&&i| i >= batch.num_columns()) {
            return Err(Error::InvalidArgument(format!(
                "the batch has {} columns, key column {i} is missing",
                batch.num_columns()
            )));
        }
        self.paths
            .iter()
            .map(|p| child(batch.column(p[0]), &p[1..]))
            .collect()
    }

    /// The positions of the key columns' top-level columns in the schema,
    /// most significant first.
    pub fn columns(&self) -> &[usize] {
        &self.columns
    }

    /// The row encoder of the key columns.
    pub fn encoder(&self) -> &RowEncoder {
        &self.encoder
    }
}

/// The path of column `name` in `schema` (a top-level column, else a
/// dotted path through structs) and its field.
fn resolve<'a>(schema: &'a Schema, name: &str) -> Option<(Vec<usize>, &'a Field)> {
    if let Ok(i) = schema.index_of(name) {
        return Some((vec![i], schema.field(i)));
    }
    let mut parts = name.split('.');
    let first = parts.next()?;
    let i = schema.index_of(first).ok()?;
    let mut path = vec![i];
    let mut field = schema.field(i);
    for part in parts {
        let DataType::Struct(children) = field.data_type() else {
            return None;
        };
        let (j, f) = children.find(part)?;
        path.push(j);
        field = f;
    }
    Some((path, field))
}

/// The child of `array` down `path` through structs, null wherever a
/// struct on the way is.
fn child(array: &ArrayRef, path: &[usize]) -> Result<ArrayRef, Error> {
    let mut a = array.clone();
    for &j in path {
        let s = a.as_struct_opt().ok_or_else(|| {
            Error::InvalidArgument(format!(
                "key column path: {} is not a struct",
                a.data_type()
            ))
        })?;
        let c = s.column(j).clone();
        a = match NullBuffer::union(s.nulls(), c.logical_nulls().as_ref()) {
            Some(nulls) if c.null_count() != nulls.null_count() => {
                let data = c.to_data().into_builder().nulls(Some(nulls)).build()?;
                make_array(data)
            }
            _ => c,
        };
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int64Array, StringArray};
    use arrow_schema::{DataType, Field};

    use super::*;

    fn batch() -> RecordBatch {
        let schema = Schema::new(vec![
            Field::new("a", DataType::Utf8, true),
            Field::new("b", DataType::Int64, true),
        ]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(StringArray::from(vec![Some("x"), None, Some("a")])),
                Arc::new(Int64Array::from(vec![3, 1, 2])),
            ],
        )
        .unwrap()
    }

    #[test]
    fn encodes_the_named_columns_like_the_encoder() {
        let b = batch();
        let desc = SortOptions {
            descending: true,
            nulls_first: false,
        };
        let keys = KeyColumns::new(
            b.schema_ref(),
            &[("b", desc), ("a", SortOptions::default())],
        )
        .unwrap();
        assert_eq!(keys.columns(), &[1, 0]);
        let direct = RowEncoder::new(vec![
            SortField::new(DataType::Int64).with_options(desc),
            SortField::new(DataType::Utf8),
        ])
        .unwrap()
        .encode(&[b.column(1).clone(), b.column(0).clone()])
        .unwrap();
        let rows = keys.encode(&b).unwrap();
        for i in 0..3 {
            assert_eq!(rows.row(i).as_bytes(), direct.row(i).as_bytes());
        }
    }

    #[test]
    fn fields_inside_structs_are_keys_by_path_null_where_the_struct_is() {
        use arrow_array::{StructArray, types::Int64Type};
        let x: ArrayRef = Arc::new(Int64Array::from(vec![Some(5), Some(7), None, Some(1)]));
        let fields = vec![Field::new("x", DataType::Int64, true)];
        let s = StructArray::new(
            fields.into(),
            vec![x],
            Some(NullBuffer::from(vec![true, false, true, true])),
        );
        let b = RecordBatch::try_from_iter([("s", Arc::new(s) as ArrayRef)]).unwrap();
        let keys = KeyColumns::ascending(b.schema_ref(), &["s.x"]).unwrap();
        assert_eq!(keys.columns(), &[0]);
        let got = keys.arrays(&b).unwrap();
        let got = got[0].as_primitive::<Int64Type>();
        // The second row's struct is null: so is its key, whatever the child holds.
        assert_eq!(
            got.iter().collect::<Vec<_>>(),
            vec![Some(5), None, None, Some(1)]
        );
        let rows = keys.encode(&b).unwrap();
        assert!(rows.row(1) == rows.row(2), "two nulls encode alike");
        assert!(rows.row(1) < rows.row(3) && rows.row(3) < rows.row(0));
        match KeyColumns::ascending(b.schema_ref(), &["s.y"]) {
            Err(Error::UnknownColumn { name, .. }) => assert_eq!(name, "s.y"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_empty_key_is_an_error() {
        let b = batch();
        let none: [&str; 0] = [];
        match KeyColumns::ascending(b.schema_ref(), &none) {
            Err(Error::InvalidArgument(m)) => assert!(m.contains("at least one column"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unknown_and_unsupported_columns_are_named() {
        let b = batch();
        match KeyColumns::ascending(b.schema_ref(), &["nope"]) {
            Err(Error::UnknownColumn { name, available }) => {
                assert_eq!(name, "nope");
                assert_eq!(available, ["a", "b"]);
            }
            other => panic!("{other:?}"),
        }
        let map = DataType::Map(
            Arc::new(Field::new(
                "entries",
                DataType::Struct(
                    vec![
                        Field::new("k", DataType::Utf8, false),
                        Field::new("v", DataType::Int64, true),
                    ]
                    .into(),
                ),
                false,
            )),
            false,
        );
        if RowEncoder::new(vec![SortField::new(map.clone())]).is_err() {
            let schema = Schema::new(vec![
                Field::new("b", DataType::Int64, true),
                Field::new("m", map, true),
            ]);
            match KeyColumns::ascending(&schema, &["b", "m"]) {
                Err(Error::UnsupportedKey { column, .. }) => assert_eq!(column, "m"),
                other => panic!("{other:?}"),
            }
        }
        let narrow = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("a", DataType::Utf8, true)])),
            vec![b.column(0).clone()],
        )
        .unwrap();
        let keys = KeyColumns::ascending(b.schema_ref(), &["b"]).unwrap();
        assert!(matches!(
            keys.encode(&narrow),
            Err(Error::InvalidArgument(_))
        ));
    }
}
