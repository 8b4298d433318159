//! A table's partition spec and sort order from a layout's partition
//! fields and sort keys, in Iceberg's JSON, and the check that an
//! existing table is partitioned the same way.

use std::path::Path;

use arrow_schema::DataType;
use serde_json::{Value, json};
use strata_layout::PartitionField;

use super::{avro::SpecField, model::SortField, schema::TableSchema};
use crate::Error;

/// The partition spec and sort order of a commit.
pub(crate) struct TableLayout {
    /// The spec's fields, as the manifests write them.
    pub(crate) fields: Vec<SpecField>,
    /// Each field's source column id and Arrow type.
    pub(crate) sources: Vec<(i32, DataType)>,
    /// The spec's fields in Iceberg's JSON.
    pub(crate) spec_json: Value,
    /// The sort order's fields in Iceberg's JSON (empty: unsorted).
    pub(crate) sort_json: Vec<Value>,
}

impl TableLayout {
    /// The spec of `partition` and the order of `sort` over `schema`.
    pub(crate) fn new(
        schema: &TableSchema,
        partition: &[PartitionField],
        sort: &[SortField],
        at: &Path,
    ) -> Result<TableLayout, Error> {
        let mut fields = Vec::with_capacity(partition.len());
        let mut sources = Vec::with_capacity(partition.len());
        let mut spec_json = Vec::with_capacity(partition.len());
        for (i, f) in partition.iter().enumerate() {
            let source_id = schema.id_of(&f.source).ok_or_else(|| {
                Error::Unsupported(format!(
                    "{}: partition field `{}`: no column `{}`",
                    at.display(),
                    f.text,
                    f.source
                ))
            })?;
            let source = *schema.primitives.get(&source_id).ok_or_else(|| {
                Error::Unsupported(format!(
                    "partition field `{}`: `{}` is not a primitive column",
                    f.text, f.source
                ))
            })?;
            let field_id = 1000 + i32::try_from(i).unwrap_or(0);
            spec_json.push(json!({
                "name": f.name,
                "transform": f.transform.iceberg_name(),
                "source-id": source_id,
                "field-id": field_id,
            }));
            fields.push(SpecField {
                name: f.name.clone(),
                field_id,
                transform: f.transform,
                source,
            });
            let arrow_type = schema
                .arrow
                .field_with_name(&f.source)
                .map(|a| a.data_type().clone())
                .unwrap_or(DataType::Null);
            sources.push((source_id, arrow_type));
        }
        let mut sort_json = Vec::with_capacity(sort.len());
        for k in sort {
            let source_id = schema.id_of(&k.column).ok_or_else(|| {
                Error::Unsupported(format!("sort key `{}`: no such column", k.column))
            })?;
            sort_json.push(json!({
                "transform": "identity",
                "source-id": source_id,
                "direction": if k.descending { "desc" } else { "asc" },
                "null-order": if k.nulls_first { "nulls-first" } else { "nulls-last" },
            }));
        }
        Ok(TableLayout {
            fields,
            sources,
            spec_json: Value::Array(spec_json),
            sort_json,
        })
    }

    /// The spec's fields as (name, transform, source id), the part two
    /// specs must share.
    fn spec_key(fields: &Value) -> Vec<(String, String, i64)> {
        fields
            .as_array()
            .map(|f| {
                f.iter()
                    .map(|x| {
                        (
                            x["name"].as_str().unwrap_or_default().to_string(),
                            x["transform"].as_str().unwrap_or_default().to_string(),
                            x["source-id"].as_i64().unwrap_or(-1),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Checks that the table whose metadata is `metadata` has this spec
    /// as its default.
    pub(crate) fn check_spec(&self, metadata: &Value, at: &Path) -> Result<(), Error> {
        let default = metadata["default-spec-id"].as_i64().unwrap_or(0);
        let spec = metadata["partition-specs"]
            .as_array()
            .and_then(|s| s.iter().find(|s| s["spec-id"].as_i64() == Some(default)))
            .map(|s| s["fields"].clone())
            .unwrap_or(Value::Array(Vec::new()));
        let (have, want) = (Self::spec_key(&spec), Self::spec_key(&self.spec_json));
        if have != want {
            let show = |k: &[(String, String, i64)]| {
                if k.is_empty() {
                    "nothing".to_string()
                } else {
                    k.iter()
                        .map(|(n, t, _)| format!("{n} ({t})"))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            };
            return Err(Error::Unsupported(format!(
                "{}: the table is partitioned by {}; this run is partitioned by {}",
                at.display(),
                show(&have),
                show(&want)
            )));
        }
        Ok(())
    }

    /// The id of the sort order in `metadata` equal to this one's, if
    /// any (0, unsorted, when there are no sort keys).
    pub(crate) fn sort_order_id(&self, metadata: Option<&Value>) -> Option<i64> {
        if self.sort_json.is_empty() {
            return Some(0);
        }
        let Some(m) = metadata else {
            return Some(1);
        };
        m["sort-orders"].as_array()?.iter().find_map(|o| {
            (o["fields"].as_array() == Some(&self.sort_json)).then(|| o["order-id"].as_i64())?
        })
    }
}
