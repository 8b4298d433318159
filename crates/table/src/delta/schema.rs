//! An Arrow schema as a Delta table's schema: each type as Delta names
//! it, nested structs, arrays and maps included, every field nullable as
//! the Arrow field says and with empty metadata; and what the table's
//! protocol must be for its types.

use std::collections::BTreeMap;

use arrow_schema::{DataType, Field, Schema, TimeUnit};
use serde::{Serialize, Serializer, ser::SerializeMap};

use crate::Error;

/// The largest precision of a Delta decimal.
pub const MAX_DECIMAL_PRECISION: u8 = 38;

/// A Delta primitive type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Primitive {
    /// `byte` (8-bit signed).
    Byte,
    /// `short` (16-bit signed).
    Short,
    /// `integer` (32-bit signed).
    Integer,
    /// `long` (64-bit signed).
    Long,
    /// `float`.
    Float,
    /// `double`.
    Double,
    /// `boolean`.
    Boolean,
    /// `string` (UTF-8).
    String,
    /// `binary`.
    Binary,
    /// `date` (days from the epoch).
    Date,
    /// `timestamp`: microseconds from the epoch, UTC.
    Timestamp,
    /// `timestamp_ntz`: microseconds, no zone (the `timestampNtz` table
    /// feature).
    TimestampNtz,
    /// `decimal(P,S)`.
    Decimal(u8, u8),
}

impl Primitive {
    /// The type's name in Delta's schema JSON.
    pub fn name(self) -> String {
        match self {
            Primitive::Byte => "byte".into(),
            Primitive::Short => "short".into(),
            Primitive::Integer => "integer".into(),
            Primitive::Long => "long".into(),
            Primitive::Float => "float".into(),
            Primitive::Double => "double".into(),
            Primitive::Boolean => "boolean".into(),
            Primitive::String => "string".into(),
            Primitive::Binary => "binary".into(),
            Primitive::Date => "date".into(),
            Primitive::Timestamp => "timestamp".into(),
            Primitive::TimestampNtz => "timestamp_ntz".into(),
            Primitive::Decimal(p, s) => format!("decimal({p},{s})"),
        }
    }

    /// The Delta type of an Arrow leaf type (unsigned integers as the
    /// next wider signed type, as Spark reads Parquet's unsigned
    /// integers); `column` names it in errors.
    fn of(t: &DataType, column: &str) -> Result<Primitive, Error> {
        Ok(match t {
            DataType::Boolean => Primitive::Boolean,
            DataType::Int8 => Primitive::Byte,
            DataType::Int16 | DataType::UInt8 => Primitive::Short,
            DataType::Int32 | DataType::UInt16 => Primitive::Integer,
            DataType::Int64 | DataType::UInt32 => Primitive::Long,
            DataType::Float32 => Primitive::Float,
            DataType::Float64 => Primitive::Double,
            DataType::Decimal128(p, s)
                if *p <= MAX_DECIMAL_PRECISION && *s >= 0 && s.unsigned_abs() <= *p =>
            {
                Primitive::Decimal(*p, s.unsigned_abs())
            }
            DataType::Date32 => Primitive::Date,
            DataType::Timestamp(TimeUnit::Microsecond, None) => Primitive::TimestampNtz,
            DataType::Timestamp(TimeUnit::Microsecond, Some(_)) => Primitive::Timestamp,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Primitive::String,
            DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
            | DataType::FixedSizeBinary(_) => Primitive::Binary,
            DataType::Dictionary(_, v) => Primitive::of(v, column)?,
            other => {
                let hint = match other {
                    DataType::Timestamp(..) => {
                        " (Delta keeps timestamps in microseconds: use the `us` unit)"
                    }
                    DataType::UInt64 => " (Delta has no unsigned 64-bit integer)",
                    DataType::Time32(_) | DataType::Time64(_) => " (Delta has no time-of-day type)",
                    DataType::Decimal128(..) | DataType::Decimal256(..) => {
                        " (Delta's decimals have a precision up to 38 and a scale from 0 to the precision)"
                    }
                    _ => "",
                };
                return Err(Error::Unsupported(format!(
                    "column `{column}`: Delta Lake has no type for {other}{hint}"
                )));
            }
        })
    }
}

impl Serialize for Primitive {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

/// A Delta column type.
#[derive(Debug, Clone, PartialEq)]
pub enum DeltaType {
    /// A primitive, written as its name (`"long"`).
    Primitive(Primitive),
    /// `{"type": "struct", "fields": [...]}`.
    Struct(Vec<StructField>),
    /// `{"type": "array", "elementType": ..., "containsNull": ...}`.
    Array {
        /// The elements' type.
        element: Box<DeltaType>,
        /// Whether an element may be null.
        contains_null: bool,
    },
    /// `{"type": "map", "keyType": ..., "valueType": ...,
    /// "valueContainsNull": ...}`.
    Map {
        /// The keys' type.
        key: Box<DeltaType>,
        /// The values' type.
        value: Box<DeltaType>,
        /// Whether a value may be null.
        value_contains_null: bool,
    },
}

impl Serialize for DeltaType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            DeltaType::Primitive(p) => p.serialize(s),
            DeltaType::Struct(fields) => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("type", "struct")?;
                m.serialize_entry("fields", fields)?;
                m.end()
            }
            DeltaType::Array {
                element,
                contains_null,
            } => {
                let mut m = s.serialize_map(Some(3))?;
                m.serialize_entry("type", "array")?;
                m.serialize_entry("elementType", element)?;
                m.serialize_entry("containsNull", contains_null)?;
                m.end()
            }
            DeltaType::Map {
                key,
                value,
                value_contains_null,
            } => {
                let mut m = s.serialize_map(Some(4))?;
                m.serialize_entry("type", "map")?;
                m.serialize_entry("keyType", key)?;
                m.serialize_entry("valueType", value)?;
                m.serialize_entry("valueContainsNull", value_contains_null)?;
                m.end()
            }
        }
    }
}

/// One field of a struct (or of the table).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StructField {
    /// Its name.
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub data_type: DeltaType,
    /// Whether it may be null.
    pub nullable: bool,
    /// Its metadata (none is written: no column mapping, no invariants).
    pub metadata: BTreeMap<String, String>,
}

/// A table's schema in Delta's terms: its top-level fields.
#[derive(Debug, Clone, PartialEq)]
pub struct TableSchema {
    /// The top-level fields, in the Arrow schema's order.
    pub fields: Vec<StructField>,
}

impl TableSchema {
    /// Converts `schema`'s fields and types.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for a type Delta cannot hold, naming the
    /// column by its dotted path.
    pub fn new(schema: &Schema) -> Result<TableSchema, Error> {
        let fields = schema
            .fields()
            .iter()
            .map(|f| field(f, f.name()))
            .collect::<Result<_, _>>()?;
        Ok(TableSchema { fields })
    }

    /// The schema as Delta's `schemaString` holds it: `{"type":
    /// "struct", "fields": [...]}` on one line.
    pub fn json(&self) -> String {
        // A tree of maps, strings and booleans always serializes.
        serde_json::to_string(&StructRef(&self.fields)).unwrap_or_default()
    }

    /// The top-level field named `name`.
    pub fn field(&self, name: &str) -> Option<&StructField> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The primitive type of the leaf at `path` (a Parquet leaf column's
    /// path of names) when every field above it is a struct; `None` for
    /// a leaf inside an array or a map, or a path the schema lacks.
    pub fn leaf(&self, path: &[String]) -> Option<Primitive> {
        let (last, parents) = path.split_last()?;
        let mut fields = &self.fields;
        for name in parents {
            match &fields.iter().find(|f| &f.name == name)?.data_type {
                DeltaType::Struct(children) => fields = children,
                _ => return None,
            }
        }
        match fields.iter().find(|f| &f.name == last)?.data_type {
            DeltaType::Primitive(p) => Some(p),
            _ => None,
        }
    }

    /// Each of the partition `columns` with its type.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for a column the schema lacks or one that
    /// is not of a primitive type.
    pub fn partition_types(&self, columns: &[String]) -> Result<Vec<(String, Primitive)>, Error> {
        columns
            .iter()
            .map(|column| match self.field(column).map(|f| &f.data_type) {
                Some(DeltaType::Primitive(p)) => Ok((column.clone(), *p)),
                Some(_) => Err(Error::Unsupported(format!(
                    "partition column `{column}` is not of a primitive type"
                ))),
                None => Err(Error::Unsupported(format!(
                    "partition column `{column}`: the schema has no such column"
                ))),
            })
            .collect()
    }

    /// The table features its types need (`timestampNtz` for a
    /// `timestamp_ntz` at any depth); none for a table that protocol
    /// versions 1 and 2 hold.
    pub fn features(&self) -> Vec<&'static str> {
        if self.fields.iter().any(|f| has_ntz(&f.data_type)) {
            vec!["timestampNtz"]
        } else {
            Vec::new()
        }
    }
}

/// A type as Delta's schema JSON writes it, for reading it back.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum TypeJson {
    /// A primitive's name.
    Name(String),
    /// A struct, array or map.
    Nested(NestedJson),
}

/// A nested type of the schema JSON.
#[derive(serde::Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum NestedJson {
    Struct {
        fields: Vec<FieldJson>,
    },
    Array {
        #[serde(rename = "elementType")]
        element: Box<TypeJson>,
        #[serde(rename = "containsNull")]
        contains_null: bool,
    },
    Map {
        #[serde(rename = "keyType")]
        key: Box<TypeJson>,
        #[serde(rename = "valueType")]
        value: Box<TypeJson>,
        #[serde(rename = "valueContainsNull")]
        value_contains_null: bool,
    },
}

/// A field of the schema JSON.
#[derive(serde::Deserialize)]
struct FieldJson {
    name: String,
    #[serde(rename = "type")]
    data_type: TypeJson,
    nullable: bool,
    #[serde(default)]
    metadata: BTreeMap<String, serde_json::Value>,
}

impl Primitive {
    /// The primitive Delta names `name` (`long`, `decimal(10,2)`).
    fn from_name(name: &str) -> Option<Primitive> {
        Some(match name {
            "byte" => Primitive::Byte,
            "short" => Primitive::Short,
            "integer" => Primitive::Integer,
            "long" => Primitive::Long,
            "float" => Primitive::Float,
            "double" => Primitive::Double,
            "boolean" => Primitive::Boolean,
            "string" => Primitive::String,
            "binary" => Primitive::Binary,
            "date" => Primitive::Date,
            "timestamp" => Primitive::Timestamp,
            "timestamp_ntz" => Primitive::TimestampNtz,
            other => {
                let (p, sc) = other
                    .strip_prefix("decimal(")?
                    .strip_suffix(')')?
                    .split_once(',')?;
                let (p, sc): (u8, u8) = (p.trim().parse().ok()?, sc.trim().parse().ok()?);
                (p <= MAX_DECIMAL_PRECISION && sc <= p).then_some(Primitive::Decimal(p, sc))?
            }
        })
    }
}

impl TypeJson {
    fn into_type(self) -> Result<DeltaType, String> {
        Ok(match self {
            TypeJson::Name(n) => DeltaType::Primitive(
                Primitive::from_name(&n).ok_or_else(|| format!("unknown type `{n}`"))?,
            ),
            TypeJson::Nested(NestedJson::Struct { fields }) => DeltaType::Struct(
                fields
                    .into_iter()
                    .map(FieldJson::into_field)
                    .collect::<Result<_, _>>()?,
            ),
            TypeJson::Nested(NestedJson::Array {
                element,
                contains_null,
            }) => DeltaType::Array {
                element: Box::new(element.into_type()?),
                contains_null,
            },
            TypeJson::Nested(NestedJson::Map {
                key,
                value,
                value_contains_null,
            }) => DeltaType::Map {
                key: Box::new(key.into_type()?),
                value: Box::new(value.into_type()?),
                value_contains_null,
            },
        })
    }
}

impl FieldJson {
    fn into_field(self) -> Result<StructField, String> {
        Ok(StructField {
            data_type: self
                .data_type
                .into_type()
                .map_err(|e| format!("field `{}`: {e}", self.name))?,
            name: self.name,
            nullable: self.nullable,
            metadata: self
                .metadata
                .into_iter()
                .map(|(k, v)| (k, v.as_str().map_or_else(|| v.to_string(), str::to_string)))
                .collect(),
        })
    }
}

impl TableSchema {
    /// The schema a `schemaString` holds (what [`TableSchema::json`]
    /// writes).
    ///
    /// # Errors
    /// [`Error::Unsupported`] for JSON that is not a struct of fields of
    /// Delta's types.
    pub fn from_json(text: &str) -> Result<TableSchema, Error> {
        let bad = |e: String| Error::Unsupported(format!("not a Delta schema: {e}"));
        match serde_json::from_str::<TypeJson>(text).map_err(|e| bad(e.to_string()))? {
            TypeJson::Nested(NestedJson::Struct { fields }) => Ok(TableSchema {
                fields: fields
                    .into_iter()
                    .map(FieldJson::into_field)
                    .collect::<Result<_, _>>()
                    .map_err(bad)?,
            }),
            _ => Err(bad("the top level is not a struct".into())),
        }
    }
}

/// The top-level struct of a schema, for its JSON.
struct StructRef<'a>(&'a [StructField]);

impl Serialize for StructRef<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("type", "struct")?;
        m.serialize_entry("fields", self.0)?;
        m.end()
    }
}

/// Whether `t` is or holds a `timestamp_ntz`.
fn has_ntz(t: &DeltaType) -> bool {
    match t {
        DeltaType::Primitive(p) => *p == Primitive::TimestampNtz,
        DeltaType::Struct(fields) => fields.iter().any(|f| has_ntz(&f.data_type)),
        DeltaType::Array { element, .. } => has_ntz(element),
        DeltaType::Map { key, value, .. } => has_ntz(key) || has_ntz(value),
    }
}

/// The Delta field of an Arrow field at dotted path `path`.
fn field(f: &Field, path: &str) -> Result<StructField, Error> {
    Ok(StructField {
        name: f.name().clone(),
        data_type: delta_type(f.data_type(), path)?,
        nullable: f.is_nullable(),
        metadata: BTreeMap::new(),
    })
}

/// The Delta type of an Arrow type at dotted path `path`.
fn delta_type(t: &DataType, path: &str) -> Result<DeltaType, Error> {
    Ok(match t {
        DataType::Struct(children) => DeltaType::Struct(
            children
                .iter()
                .map(|c| field(c, &format!("{path}.{}", c.name())))
                .collect::<Result<_, _>>()?,
        ),
        DataType::List(item) | DataType::LargeList(item) => DeltaType::Array {
            element: Box::new(delta_type(item.data_type(), &format!("{path}.element"))?),
            contains_null: item.is_nullable(),
        },
        DataType::Map(entries, _) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Err(Error::Unsupported(format!(
                    "column `{path}`: a map whose entries are not a struct of key and value"
                )));
            };
            let [key, value] = kv.iter().collect::<Vec<_>>()[..] else {
                return Err(Error::Unsupported(format!(
                    "column `{path}`: a map whose entries are not a struct of key and value"
                )));
            };
            DeltaType::Map {
                key: Box::new(delta_type(key.data_type(), &format!("{path}.key"))?),
                value: Box::new(delta_type(value.data_type(), &format!("{path}.value"))?),
                value_contains_null: value.is_nullable(),
            }
        }
        other => DeltaType::Primitive(Primitive::of(other, path)?),
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit};

    use super::*;

    #[test]
    fn every_type_is_written_as_delta_names_it() {
        let entries = Field::new(
            "entries",
            DataType::Struct(Fields::from(vec![
                Field::new("key", DataType::Utf8, false),
                Field::new("value", DataType::Int32, true),
            ])),
            false,
        );
        let schema = Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("i", DataType::Int32, true),
            Field::new("s16", DataType::Int16, true),
            Field::new("b8", DataType::Int8, true),
            Field::new("u8", DataType::UInt8, true),
            Field::new("flag", DataType::Boolean, true),
            Field::new("f", DataType::Float32, true),
            Field::new("d", DataType::Float64, true),
            Field::new("name", DataType::Utf8, true),
            Field::new("raw", DataType::Binary, true),
            Field::new("day", DataType::Date32, true),
            Field::new(
                "at",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                true,
            ),
            Field::new(
                "local",
                DataType::Timestamp(TimeUnit::Microsecond, None),
                true,
            ),
            Field::new("price", DataType::Decimal128(15, 2), true),
            Field::new(
                "cat",
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                true,
            ),
            Field::new(
                "address",
                DataType::Struct(Fields::from(vec![
                    Field::new("city", DataType::Utf8, true),
                    Field::new(
                        "tags",
                        DataType::List(Arc::new(Field::new("item", DataType::Utf8, false))),
                        true,
                    ),
                ])),
                true,
            ),
            Field::new("attrs", DataType::Map(Arc::new(entries), false), true),
        ]);
        let t = TableSchema::new(&schema).unwrap();
        let f = |name: &str, ty: &str, nullable: bool| {
            format!(r#"{{"name":"{name}","type":{ty},"nullable":{nullable},"metadata":{{}}}}"#)
        };
        let expected = format!(
            r#"{{"type":"struct","fields":[{}]}}"#,
            [
                f("id", r#""long""#, false),
                f("i", r#""integer""#, true),
                f("s16", r#""short""#, true),
                f("b8", r#""byte""#, true),
                f("u8", r#""short""#, true),
                f("flag", r#""boolean""#, true),
                f("f", r#""float""#, true),
                f("d", r#""double""#, true),
                f("name", r#""string""#, true),
                f("raw", r#""binary""#, true),
                f("day", r#""date""#, true),
                f("at", r#""timestamp""#, true),
                f("local", r#""timestamp_ntz""#, true),
                f("price", r#""decimal(15,2)""#, true),
                f("cat", r#""string""#, true),
                f(
                    "address",
                    &format!(
                        r#"{{"type":"struct","fields":[{},{}]}}"#,
                        f("city", r#""string""#, true),
                        f(
                            "tags",
                            r#"{"type":"array","elementType":"string","containsNull":false}"#,
                            true
                        )
                    ),
                    true
                ),
                f(
                    "attrs",
                    r#"{"type":"map","keyType":"string","valueType":"integer","valueContainsNull":true}"#,
                    true
                ),
            ]
            .join(",")
        );
        assert_eq!(t.json(), expected);
        assert_eq!(t.features(), ["timestampNtz"]);
        let s = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(t.leaf(&s(&["address", "city"])), Some(Primitive::String));
        assert_eq!(t.leaf(&s(&["address", "tags", "list", "element"])), None);
        assert_eq!(t.leaf(&s(&["attrs", "key_value", "key"])), None);
        assert_eq!(t.leaf(&s(&["price"])), Some(Primitive::Decimal(15, 2)));
        assert_eq!(t.leaf(&s(&["nope"])), None);
        // The JSON reads back as the same schema; other JSON is refused.
        assert_eq!(TableSchema::from_json(&t.json()).unwrap(), t);
        for bad in [
            r#"{"type":"array","elementType":"long","containsNull":true}"#,
            r#"{"type":"struct","fields":[{"name":"a","type":"varchar","nullable":true}]}"#,
            r#"{"type":"struct","fields":[{"name":"a","type":"decimal(3,4)","nullable":true}]}"#,
            "[]",
        ] {
            let e = TableSchema::from_json(bad).unwrap_err().to_string();
            assert!(e.contains("not a Delta schema"), "{bad}: {e}");
        }
    }

    #[test]
    fn plain_tables_need_no_feature() {
        let t = TableSchema::new(&Schema::new(vec![Field::new(
            "at",
            DataType::Timestamp(TimeUnit::Microsecond, Some("+02:00".into())),
            false,
        )]))
        .unwrap();
        assert!(t.features().is_empty());
    }

    #[test]
    fn types_delta_lacks_are_refused_with_the_column() {
        let refused = |t: DataType| {
            let schema = Schema::new(vec![Field::new(
                "s",
                DataType::Struct(Fields::from(vec![Field::new("x", t, true)])),
                true,
            )]);
            TableSchema::new(&schema).unwrap_err().to_string()
        };
        let e = refused(DataType::UInt64);
        assert!(e.contains("column `s.x`") && e.contains("unsigned"), "{e}");
        let e = refused(DataType::Timestamp(TimeUnit::Nanosecond, None));
        assert!(e.contains("`us` unit"), "{e}");
        let e = refused(DataType::Time64(TimeUnit::Microsecond));
        assert!(e.contains("time-of-day"), "{e}");
        let e = refused(DataType::Decimal128(38, -2));
        assert!(e.contains("precision up to 38"), "{e}");
        let e = refused(DataType::Float16);
        assert!(e.contains("no type for"), "{e}");
    }
}
