//! An Arrow schema as an Iceberg schema: a field id for every field,
//! nested ones included (top-level fields first, 1..n, then each nested
//! level), each type as Iceberg names it, and the same ids on the Arrow
//! fields (`PARQUET:field_id`) so that the Parquet files record them.

use std::{collections::BTreeMap, sync::Arc};

use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use serde_json::{Value, json};

use crate::Error;

/// The metadata key under which Arrow fields carry their Parquet field id.
pub const FIELD_ID_KEY: &str = "PARQUET:field_id";

/// An Iceberg primitive type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Primitive {
    /// `boolean`.
    Boolean,
    /// `int` (32 bits).
    Int,
    /// `long` (64 bits).
    Long,
    /// `float`.
    Float,
    /// `double`.
    Double,
    /// `decimal(P, S)`.
    Decimal(u8, i8),
    /// `date` (days from the epoch).
    Date,
    /// `time` (microseconds from midnight).
    Time,
    /// `timestamp` (microseconds, no zone).
    Timestamp,
    /// `timestamptz` (microseconds, UTC).
    Timestamptz,
    /// `string`.
    String,
    /// `fixed[N]`.
    Fixed(i32),
    /// `binary`.
    Binary,
}

impl Primitive {
    /// The type's name in Iceberg's JSON.
    pub fn name(self) -> String {
        match self {
            Primitive::Boolean => "boolean".into(),
            Primitive::Int => "int".into(),
            Primitive::Long => "long".into(),
            Primitive::Float => "float".into(),
            Primitive::Double => "double".into(),
            Primitive::Decimal(p, s) => format!("decimal({p}, {s})"),
            Primitive::Date => "date".into(),
            Primitive::Time => "time".into(),
            Primitive::Timestamp => "timestamp".into(),
            Primitive::Timestamptz => "timestamptz".into(),
            Primitive::String => "string".into(),
            Primitive::Fixed(n) => format!("fixed[{n}]"),
            Primitive::Binary => "binary".into(),
        }
    }

    /// The Iceberg type of an Arrow leaf type.
    fn of(t: &DataType, column: &str) -> Result<Primitive, Error> {
        Ok(match t {
            DataType::Boolean => Primitive::Boolean,
            DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::UInt8
            | DataType::UInt16 => Primitive::Int,
            DataType::Int64 | DataType::UInt32 => Primitive::Long,
            DataType::Float32 => Primitive::Float,
            DataType::Float64 => Primitive::Double,
            DataType::Decimal128(p, s) if *s >= 0 => Primitive::Decimal(*p, *s),
            DataType::Date32 => Primitive::Date,
            DataType::Time64(TimeUnit::Microsecond) => Primitive::Time,
            DataType::Timestamp(TimeUnit::Microsecond, None) => Primitive::Timestamp,
            DataType::Timestamp(TimeUnit::Microsecond, Some(_)) => Primitive::Timestamptz,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Primitive::String,
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView => Primitive::Binary,
            DataType::FixedSizeBinary(n) => Primitive::Fixed(*n),
            DataType::Dictionary(_, v) => Primitive::of(v, column)?,
            other => {
                let hint = match other {
                    DataType::Timestamp(..) => {
                        " (Iceberg v2 keeps timestamps in microseconds: use the `us` unit)"
                    }
                    DataType::UInt64 => " (Iceberg has no unsigned 64-bit integer)",
                    _ => "",
                };
                return Err(Error::Unsupported(format!(
                    "column `{column}`: Iceberg v2 has no type for {other}{hint}"
                )));
            }
        })
    }
}

/// A table's schema in Iceberg's terms.
#[derive(Debug, Clone)]
pub struct TableSchema {
    /// The schema as Iceberg's JSON (`{"type": "struct", "schema-id": 0,
    /// "fields": [...]}`).
    pub json: Value,
    /// The Arrow schema with each field's id in its metadata.
    pub arrow: SchemaRef,
    /// The highest field id.
    pub last_column_id: i32,
    /// Each field's id by its path of names (`["l_shipdate"]`, a struct's
    /// `["address", "city"]`; a list's element is `element`, a map's
    /// `key` and `value`).
    pub ids: BTreeMap<Vec<String>, i32>,
    /// Each primitive field's type, by id.
    pub primitives: BTreeMap<i32, Primitive>,
}

impl TableSchema {
    /// Assigns field ids to `schema` and converts its types.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for a type Iceberg v2 cannot hold, naming
    /// the column.
    pub fn new(schema: &Schema) -> Result<TableSchema, Error> {
        let mut ids = Ids {
            next: 1,
            by_path: BTreeMap::new(),
            primitives: BTreeMap::new(),
        };
        let (json_fields, arrow_fields) = ids.fields(schema.fields(), &[])?;
        let arrow = Schema::new_with_metadata(arrow_fields, schema.metadata().clone());
        Ok(TableSchema {
            json: json!({"type": "struct", "schema-id": 0, "fields": json_fields}),
            arrow: Arc::new(arrow),
            last_column_id: ids.next - 1,
            ids: ids.by_path,
            primitives: ids.primitives,
        })
    }

    /// The id of the field at `path` (names joined by `.` as sort keys and
    /// partition sources name them).
    pub fn id_of(&self, dotted: &str) -> Option<i32> {
        let path: Vec<String> = dotted.split('.').map(str::to_string).collect();
        self.ids.get(&path).copied()
    }
}

impl TableSchema {
    /// The table's default name mapping (`schema.name-mapping.default`):
    /// each field's id by its names, so that readers find the columns of
    /// data files by name.
    pub fn name_mapping(&self) -> Value {
        Value::Array(
            self.json["fields"]
                .as_array()
                .map_or_else(Vec::new, |f| f.iter().map(mapping_of_field).collect()),
        )
    }

    /// The id of a Parquet leaf column by its path (`["tags", "list",
    /// "item"]` is the element of list `tags`; `["m", "key_value",
    /// "key"]` the key of map `m`).
    pub fn leaf_id(&self, path: &[String]) -> Option<i32> {
        let mut ty = &self.json;
        let mut id = None;
        let mut at = 0;
        while at < path.len() {
            match ty["type"].as_str() {
                Some("struct") => {
                    let f = ty["fields"]
                        .as_array()?
                        .iter()
                        .find(|f| f["name"].as_str() == Some(path[at].as_str()))?;
                    id = f["id"].as_i64();
                    ty = &f["type"];
                    at += 1;
                }
                Some("list") => {
                    // The repeated group, then the element.
                    at += 2;
                    id = ty["element-id"].as_i64();
                    ty = &ty["element"];
                }
                Some("map") => {
                    let name = path.get(at + 1)?;
                    at += 2;
                    if name == "key" || name == "keys" {
                        id = ty["key-id"].as_i64();
                        ty = &ty["key"];
                    } else {
                        id = ty["value-id"].as_i64();
                        ty = &ty["value"];
                    }
                }
                _ => return None,
            }
        }
        id.and_then(|i| i32::try_from(i).ok())
    }
}

impl TableSchema {
    /// The schema of Iceberg's JSON `json` (as [`TableSchema::json`]
    /// holds it), for a commit of files staged by other processes. Its
    /// Arrow schema has the top-level primitive fields alone (the
    /// partition sources), each of the Arrow type the Iceberg type reads
    /// as.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for JSON that is not an Iceberg schema.
    pub fn from_json(json: &Value) -> Result<TableSchema, Error> {
        let bad = |what: &str| Error::Unsupported(format!("not an Iceberg schema: {what}"));
        let fields = json["fields"].as_array().ok_or_else(|| bad("no fields"))?;
        let mut ids = BTreeMap::new();
        let mut primitives = BTreeMap::new();
        let mut last = 0i32;
        walk(json, &mut Vec::new(), &mut ids, &mut primitives, &mut last)
            .ok_or_else(|| bad("a field without an id, a name or a known type"))?;
        let mut arrow = Vec::new();
        for f in fields {
            let (Some(name), Some(id)) = (f["name"].as_str(), f["id"].as_i64()) else {
                return Err(bad("a field without a name or an id"));
            };
            let id = i32::try_from(id).map_err(|_| bad("an id past 32 bits"))?;
            if let Some(p) = primitives.get(&id) {
                arrow.push(Field::new(
                    name,
                    arrow_type(*p),
                    f["required"] != Value::Bool(true),
                ));
            }
        }
        Ok(TableSchema {
            json: json.clone(),
            arrow: Arc::new(Schema::new(arrow)),
            last_column_id: last,
            ids,
            primitives,
        })
    }
}

/// The Arrow type an Iceberg primitive reads as.
fn arrow_type(p: Primitive) -> DataType {
    match p {
        Primitive::Boolean => DataType::Boolean,
        Primitive::Int => DataType::Int32,
        Primitive::Long => DataType::Int64,
        Primitive::Float => DataType::Float32,
        Primitive::Double => DataType::Float64,
        Primitive::Decimal(p, s) => DataType::Decimal128(p, s),
        Primitive::Date => DataType::Date32,
        Primitive::Time => DataType::Time64(TimeUnit::Microsecond),
        Primitive::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, None),
        Primitive::Timestamptz => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        Primitive::String => DataType::Utf8,
        Primitive::Fixed(n) => DataType::FixedSizeBinary(n),
        Primitive::Binary => DataType::Binary,
    }
}

/// An Iceberg primitive by its JSON name.
fn primitive_named(name: &str) -> Option<Primitive> {
    Some(match name {
        "boolean" => Primitive::Boolean,
        "int" => Primitive::Int,
        "long" => Primitive::Long,
        "float" => Primitive::Float,
        "double" => Primitive::Double,
        "date" => Primitive::Date,
        "time" => Primitive::Time,
        "timestamp" => Primitive::Timestamp,
        "timestamptz" => Primitive::Timestamptz,
        "string" => Primitive::String,
        "binary" => Primitive::Binary,
        other => {
            if let Some(n) = other
                .strip_prefix("fixed[")
                .and_then(|r| r.strip_suffix(']'))
            {
                Primitive::Fixed(n.parse().ok()?)
            } else {
                let inner = other.strip_prefix("decimal(")?.strip_suffix(')')?;
                let (p, s) = inner.split_once(',')?;
                Primitive::Decimal(p.trim().parse().ok()?, s.trim().parse().ok()?)
            }
        }
    })
}

/// Records the ids and primitive types of the type `t` at `path`;
/// `None` for JSON that is not an Iceberg type.
fn walk(
    t: &Value,
    path: &mut Vec<String>,
    ids: &mut BTreeMap<Vec<String>, i32>,
    primitives: &mut BTreeMap<i32, Primitive>,
    last: &mut i32,
) -> Option<()> {
    let mut note = |path: Vec<String>, id: &Value, last: &mut i32| -> Option<i32> {
        let id = i32::try_from(id.as_i64()?).ok()?;
        *last = (*last).max(id);
        ids.insert(path, id);
        Some(id)
    };
    let mut child = |name: &str,
                     id: &Value,
                     ty: &Value,
                     path: &mut Vec<String>,
                     last: &mut i32|
     -> Option<()> {
        path.push(name.to_string());
        let id = note(path.clone(), id, last)?;
        if let Some(p) = ty.as_str().and_then(primitive_named) {
            primitives.insert(id, p);
        }
        path.pop();
        Some(())
    };
    match t {
        Value::String(_) => Some(()),
        _ => match t["type"].as_str()? {
            "struct" => {
                for f in t["fields"].as_array()? {
                    child(f["name"].as_str()?, &f["id"], &f["type"], path, last)?;
                }
                for f in t["fields"].as_array()? {
                    path.push(f["name"].as_str()?.to_string());
                    walk(&f["type"], path, ids, primitives, last)?;
                    path.pop();
                }
                Some(())
            }
            "list" => {
                child("element", &t["element-id"], &t["element"], path, last)?;
                path.push("element".into());
                walk(&t["element"], path, ids, primitives, last)?;
                path.pop();
                Some(())
            }
            "map" => {
                child("key", &t["key-id"], &t["key"], path, last)?;
                child("value", &t["value-id"], &t["value"], path, last)?;
                for k in ["key", "value"] {
                    path.push(k.into());
                    walk(&t[k], path, ids, primitives, last)?;
                    path.pop();
                }
                Some(())
            }
            _ => None,
        },
    }
}

/// Checks that the table whose metadata is `metadata` has `schema` as
/// its current schema (the same fields, ids, types and nullability).
///
/// # Errors
/// [`Error::Unsupported`] naming the first field that differs.
pub(crate) fn check_same(
    metadata: &Value,
    schema: &TableSchema,
    at: &std::path::Path,
) -> Result<(), Error> {
    let id = metadata["current-schema-id"].as_i64().unwrap_or(0);
    let current = metadata["schemas"]
        .as_array()
        .and_then(|s| {
            s.iter()
                .find(|s| s["schema-id"].as_i64().unwrap_or(0) == id)
        })
        .map(|s| s["fields"].clone())
        .unwrap_or(Value::Null);
    let ours = &schema.json["fields"];
    if &current == ours {
        return Ok(());
    }
    let describe = |f: &Value| {
        format!(
            "{} {}{}",
            f["name"].as_str().unwrap_or("?"),
            f["type"],
            if f["required"].as_bool() == Some(true) {
                " not null"
            } else {
                ""
            }
        )
    };
    let (have, want) = (
        current.as_array().cloned().unwrap_or_default(),
        ours.as_array().cloned().unwrap_or_default(),
    );
    let first = have
        .iter()
        .zip(&want)
        .find(|(a, b)| a != b)
        .map(|(a, b)| {
            format!(
                "the table has `{}` where this run has `{}`",
                describe(a),
                describe(b)
            )
        })
        .unwrap_or_else(|| {
            format!(
                "the table has {} columns where this run has {}",
                have.len(),
                want.len()
            )
        });
    Err(Error::Unsupported(format!(
        "{}: the schema differs from the table's: {first}",
        at.display()
    )))
}

/// A field's entry in a name mapping.
fn mapping_of_field(f: &Value) -> Value {
    let mut m = json!({"field-id": f["id"], "names": [f["name"]]});
    if let Some(children) = mapping_of_type(&f["type"]) {
        m["fields"] = children;
    }
    m
}

/// The nested entries of a type's name mapping (none for a primitive).
fn mapping_of_type(t: &Value) -> Option<Value> {
    let nested = |id: &Value, names: Value, inner: &Value| {
        let mut m = json!({"field-id": id, "names": names});
        if let Some(children) = mapping_of_type(inner) {
            m["fields"] = children;
        }
        m
    };
    match t["type"].as_str()? {
        "struct" => Some(Value::Array(
            t["fields"]
                .as_array()?
                .iter()
                .map(mapping_of_field)
                .collect(),
        )),
        "list" => Some(json!([nested(
            &t["element-id"],
            json!(["element", "item"]),
            &t["element"]
        )])),
        "map" => Some(json!([
            nested(&t["key-id"], json!(["key"]), &t["key"]),
            nested(&t["value-id"], json!(["value"]), &t["value"]),
        ])),
        _ => None,
    }
}

/// Field ids handed out level by level.
struct Ids {
    next: i32,
    by_path: BTreeMap<Vec<String>, i32>,
    primitives: BTreeMap<i32, Primitive>,
}

impl Ids {
    fn take(&mut self, path: Vec<String>) -> i32 {
        let id = self.next;
        self.next += 1;
        self.by_path.insert(path, id);
        id
    }

    /// A struct's fields: their ids first (all of this level), then each
    /// one's type (nested levels).
    fn fields(
        &mut self,
        fields: &Fields,
        at: &[String],
    ) -> Result<(Vec<Value>, Vec<Field>), Error> {
        let own: Vec<i32> = fields
            .iter()
            .map(|f| self.take(child(at, f.name())))
            .collect();
        let mut json_fields = Vec::with_capacity(fields.len());
        let mut arrow_fields = Vec::with_capacity(fields.len());
        for (f, id) in fields.iter().zip(own) {
            let path = child(at, f.name());
            let (ty, dt) = self.type_of(f.data_type(), &path, id)?;
            json_fields.push(json!({
                "id": id,
                "name": f.name(),
                "required": !f.is_nullable(),
                "type": ty,
            }));
            arrow_fields.push(with_id(f, dt, id));
        }
        Ok((json_fields, arrow_fields))
    }

    /// The Iceberg type of a field of Arrow type `t` at `path` (id `id`),
    /// and its Arrow type with ids on nested fields.
    fn type_of(
        &mut self,
        t: &DataType,
        path: &[String],
        id: i32,
    ) -> Result<(Value, DataType), Error> {
        let column = path.join(".");
        Ok(match t {
            DataType::Struct(fields) => {
                let (json_fields, arrow_fields) = self.fields(fields, path)?;
                (
                    json!({"type": "struct", "fields": json_fields}),
                    DataType::Struct(arrow_fields.into()),
                )
            }
            DataType::List(item) | DataType::LargeList(item) => {
                let ep = child(path, "element");
                let eid = self.take(ep.clone());
                let (ety, edt) = self.type_of(item.data_type(), &ep, eid)?;
                let item = Arc::new(with_id(item, edt, eid));
                let dt = match t {
                    DataType::List(_) => DataType::List(item.clone()),
                    _ => DataType::LargeList(item.clone()),
                };
                (
                    json!({
                        "type": "list",
                        "element-id": eid,
                        "element": ety,
                        "element-required": !item.is_nullable(),
                    }),
                    dt,
                )
            }
            DataType::Map(entries, sorted) => {
                let DataType::Struct(kv) = entries.data_type() else {
                    return Err(Error::Unsupported(format!(
                        "column `{column}`: a map whose entries are not a struct"
                    )));
                };
                let (Some(k), Some(v)) = (kv.first(), kv.get(1)) else {
                    return Err(Error::Unsupported(format!(
                        "column `{column}`: a map without a key and a value"
                    )));
                };
                let (kp, vp) = (child(path, "key"), child(path, "value"));
                let kid = self.take(kp.clone());
                let vid = self.take(vp.clone());
                let (kty, kdt) = self.type_of(k.data_type(), &kp, kid)?;
                let (vty, vdt) = self.type_of(v.data_type(), &vp, vid)?;
                let kv: Fields = vec![with_id(k, kdt, kid), with_id(v, vdt, vid)].into();
                let entries =
                    Field::new(entries.name(), DataType::Struct(kv), entries.is_nullable())
                        .with_metadata(entries.metadata().clone());
                (
                    json!({
                        "type": "map",
                        "key-id": kid,
                        "key": kty,
                        "value-id": vid,
                        "value": vty,
                        "value-required": !v.is_nullable(),
                    }),
                    DataType::Map(Arc::new(entries), *sorted),
                )
            }
            leaf => {
                let p = Primitive::of(leaf, &column)?;
                self.primitives.insert(id, p);
                (Value::String(p.name()), leaf.clone())
            }
        })
    }
}

fn child(at: &[String], name: &str) -> Vec<String> {
    let mut p = at.to_vec();
    p.push(name.to_string());
    p
}

/// `f` with type `dt` and id `id` in its metadata.
fn with_id(f: &Field, dt: DataType, id: i32) -> Field {
    let mut md = f.metadata().clone();
    md.insert(FIELD_ID_KEY.to_string(), id.to_string());
    Field::new(f.name(), dt, f.is_nullable()).with_metadata(md)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_schema::{DataType, Field, Fields, Schema};

    use super::TableSchema;

    /// A schema read back from its JSON has the same ids, paths and
    /// primitive types, nested fields included, and the top-level
    /// primitives as Arrow fields.
    #[test]
    fn a_schema_reads_back_from_its_json() {
        let item = Arc::new(Field::new(
            "item",
            DataType::Struct(Fields::from(vec![
                Field::new("number", DataType::Utf8, true),
                Field::new("kind", DataType::Int16, false),
            ])),
            true,
        ));
        let schema = Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("day", DataType::Date32, true),
            Field::new("price", DataType::Decimal128(15, 2), true),
            Field::new("phones", DataType::List(item), true),
        ]);
        let t = TableSchema::new(&schema).unwrap();
        let back = TableSchema::from_json(&t.json).unwrap();
        assert_eq!(back.ids, t.ids);
        assert_eq!(back.primitives, t.primitives);
        assert_eq!(back.last_column_id, t.last_column_id);
        let names: Vec<&str> = back
            .arrow
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        assert_eq!(names, ["id", "day", "price"]);
        assert_eq!(
            back.arrow.field(2).data_type(),
            &DataType::Decimal128(15, 2)
        );
        assert!(TableSchema::from_json(&serde_json::json!({"fields": [{"name": "x"}]})).is_err());
    }
}
