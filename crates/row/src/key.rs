//! Sort keys named by column: the one place that resolves key column
//! names against a schema, builds the [`RowEncoder`] for them and encodes
//! the key columns of record batches. Sorting and merging both use it, so
//! a file sorted by one and merged by the other agrees byte for byte.

use std::fmt;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{Schema, SortOptions};

use crate::{Error, RowEncoder, Rows, SortField};

/// The key columns of a schema and the row encoder for them.
pub struct KeyColumns {
    encoder: RowEncoder,
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
    /// against the top-level columns of `schema` and builds the encoder.
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
        let mut columns = Vec::with_capacity(keys.len());
        let mut fields = Vec::with_capacity(keys.len());
        for (name, options) in keys {
            let name = name.as_ref();
            let i = schema.index_of(name).map_err(|_| Error::UnknownColumn {
                name: name.to_string(),
                available: schema.fields().iter().map(|f| f.name().clone()).collect(),
            })?;
            columns.push(i);
            fields.push(SortField::new(schema.field(i).data_type().clone()).with_options(*options));
        }
        match RowEncoder::new(fields.clone()) {
            Ok(encoder) => Ok(KeyColumns { encoder, columns }),
            Err(e) => {
                for (field, &i) in fields.into_iter().zip(&columns) {
                    if let Err(source) = RowEncoder::new(vec![field]) {
                        let f = schema.field(i);
                        return Err(Error::UnsupportedKey {
                            column: f.name().clone(),
                            data_type: f.data_type().clone(),
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
        if let Some(&i) = self.columns.iter().find(|&&i| i >= batch.num_columns()) {
            return Err(Error::InvalidArgument(format!(
                "the batch has {} columns, key column {i} is missing",
                batch.num_columns()
            )));
        }
        let keys: Vec<ArrayRef> = self
            .columns
            .iter()
            .map(|&i| batch.column(i).clone())
            .collect();
        self.encoder.encode(&keys)
    }

    /// The positions of the key columns in the schema, most significant
    /// first.
    pub fn columns(&self) -> &[usize] {
        &self.columns
    }

    /// The row encoder of the key columns.
    pub fn encoder(&self) -> &RowEncoder {
        &self.encoder
    }
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
