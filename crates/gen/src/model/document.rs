//! The spec document: what a spec file holds, key by key, as serde types,
//! and the JSON Schema of spec files derived from them
//! ([`json_schema()`]).
//!
//! These types say which keys a spec may give and what each holds; the
//! doc comments of their fields are the schema's descriptions. A spec is
//! read into them by serde (`parse` deserializes the TOML text into a
//! [`Document`]), through the wrappers of [`At`], [`Loose`], [`Tab`] and
//! [`Items`]: every value keeps its place in the text, and a value of the
//! wrong kind is kept as written, so that `parse`'s checks name it in the
//! spec's terms at its line. Keys a table does not take are passed over
//! here and refused by `parse` (the schema refuses them too). `parse`
//! then checks what a schema cannot see: values against field types,
//! distribution parameters, names of siblings and tables.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, generate::SchemaSettings, json_schema};
use serde::Deserialize;
use serde_json::Value as Json;

use super::CalendarPart;
pub use super::leaf::{At, Items, ItemsShape, Loose, Raw, Shape, Tab};

/// Every generator key, in the order errors list them.
pub const GENERATOR_KEYS: &[&str] = &[
    "constant",
    "sequence",
    "uniform",
    "normal",
    "lognormal",
    "quantiles",
    "zipf",
    "weighted",
    "probability",
    "template",
    "words",
    "chars",
    "text",
    "ref",
    "parent",
    "position",
    "uuid",
    "values_by_row",
    "calendar",
    "expr",
    "aggregate",
];

/// The spellings of the Arrow types a field may name without parameters.
const TYPE_NAMES: &[&str] = &[
    "boolean",
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float",
    "float64",
    "double",
    "utf8",
    "string",
    "large_utf8",
    "large_string",
    "binary",
    "date32",
    "date",
    "dictionary",
    "struct",
    "list",
    "map",
];

/// The integer types a dictionary's keys may have.
const KEY_TYPES: &[&str] = &[
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
];

/// A file or table name: letters, digits, `.`, `_` and `-`.
const FILE_NAME: &str = "^[A-Za-z0-9._-]+$";

/// A plain name (a draw's).
const PLAIN_NAME: &str = "^[A-Za-z_][A-Za-z0-9_]*$";

/// The JSON Schema of spec files (the TOML document read as JSON), as
/// `strata spec schema` prints it: pretty JSON and a final newline.
pub fn json_schema() -> String {
    let settings = SchemaSettings::draft2020_12();
    let schema = settings.into_generator().into_root_schema_for::<Document>();
    let mut value = schema.to_value();
    tidy(&mut value);
    if let Some(Json::Object(defs)) = value.get_mut("$defs") {
        let named = std::mem::take(defs);
        defs.extend(named.into_iter().map(|(k, v)| (snake_case(&k), v)));
    }
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    text
}

/// `CalendarPart` as `calendar_part`: the schema's names of types are
/// spelled as the spec's keys are.
fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// What TOML cannot say and doc comments wrap: no value of a spec is
/// null (so no `null` alternatives for optional keys), a description's
/// lines are joined by spaces as rustdoc joins them, Rust's number
/// formats (`uint64`) are left out, and types are named in snake case.
fn tidy(v: &mut Json) {
    match v {
        Json::Object(o) => {
            if let Some(Json::Array(alts)) = o.get_mut("anyOf") {
                alts.retain(|a| a.get("type").is_none_or(|t| t != "null"));
                if let [one] = alts.as_slice() {
                    let Json::Object(one) = one.clone() else {
                        return;
                    };
                    o.remove("anyOf");
                    for (k, v) in one {
                        o.entry(k).or_insert(v);
                    }
                }
            }
            o.remove("format");
            if let Some(Json::Array(values)) = o.get_mut("enum") {
                values.retain(|v| !v.is_null());
            }
            if let Some(Json::String(d)) = o.get_mut("description") {
                *d = d
                    .split("\n\n")
                    .map(|p| p.replace('\n', " "))
                    .collect::<Vec<_>>()
                    .join("\n\n");
            }
            if let Some(Json::Array(types)) = o.get_mut("type") {
                types.retain(|t| t != "null");
                if let [one] = types.as_slice() {
                    let one = one.clone();
                    o.insert("type".into(), one);
                }
            }
            if let Some(Json::String(r)) = o.get_mut("$ref")
                && let Some(name) = r.strip_prefix("#/$defs/")
            {
                *r = format!("#/$defs/{}", snake_case(name));
            }
            for v in o.values_mut() {
                tidy(v);
            }
        }
        Json::Array(a) => a.iter_mut().for_each(tidy),
        _ => {}
    }
}

/// Adds to an object's schema that it holds at most one generator key.
fn one_generator(schema: &mut Schema) {
    let Some(Json::Object(props)) = schema.get("properties") else {
        return;
    };
    let keys: Vec<&str> = GENERATOR_KEYS
        .iter()
        .copied()
        .filter(|k| props.contains_key(*k))
        .collect();
    let mut pairs = Vec::new();
    for (i, a) in keys.iter().enumerate() {
        for b in &keys[i + 1..] {
            pairs.push(serde_json::json!({ "required": [a, b] }));
        }
    }
    schema.insert("not".into(), serde_json::json!({ "anyOf": pairs }));
}

/// A value of a field's type (the schema's `value`). Read as a
/// [`Raw`](super::leaf::Raw) and checked against the field's type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {}

impl JsonSchema for Scalar {
    fn schema_name() -> Cow<'static, str> {
        "value".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": ["string", "number", "integer", "boolean"],
            "description": "A value of the field's type. Dates and timestamps also take TOML dates and date-times (as strings once read as JSON). Decimals take numbers or strings such as \"12.50\", with at most S digits after the point. For an integer, float or decimal field, any other string in a bound, start, step or constant is SQL computed once per run from literals, scale() and rows('table') (\"1000 * scale()\")."
        })
    }
}

/// An Arrow type as a spec names it (`int64`, `decimal(12, 2)`,
/// `timestamp(ms, UTC)`).
#[derive(Debug, Clone, PartialEq)]
pub struct TypeName(pub String);

impl JsonSchema for TypeName {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "type".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "anyOf": [
                { "enum": TYPE_NAMES },
                {
                    "type": "string",
                    "pattern": "^timestamp\\((s|ms|us|ns)(, *[^)]+)?\\)$",
                    "description": "timestamp(UNIT[, TZ]): TZ an IANA time zone name (Europe/Paris, UTC) or a fixed offset (+05:30); an unknown zone is refused."
                },
                {
                    "type": "string",
                    "pattern": "^decimal(128|256)? *\\( *[0-9]+ *, *[0-9]+ *\\)$",
                    "description": "decimal(P, S): Arrow's Decimal128 (Decimal256 past 38 digits), P digits (1 to 76) of which S (0 to P) follow the point."
                },
                {
                    "type": "string",
                    "pattern": "^(time32\\((s|ms)\\)|time64\\((us|ns)\\)|duration\\((s|ms|us|ns)\\))$",
                    "description": "time32(s|ms), time64(us|ns): a time of day; duration(UNIT): a signed length of time."
                },
                {
                    "type": "string",
                    "pattern": "^fixed_size_binary\\( *[0-9]+ *\\)$",
                    "description": "fixed_size_binary(N): byte strings of exactly N bytes (1 to 65536)."
                }
            ]
        })
    }
}

/// The integer type of a dictionary's keys.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyType(pub String);

impl JsonSchema for KeyType {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "key_type".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "enum": KEY_TYPES })
    }
}

/// Declares a document struct: its own keys, then the generator keys
/// named after `+` (each with its one type and description, the same
/// wherever it is allowed).
macro_rules! with_generators {
    ($(#[$m:meta])* pub struct $name:ident { $($body:tt)* } + [$($key:ident),* $(,)?]) => {
        with_generators!(@munch [$(#[$m])*] $name { $($body)* } [$($key),*]);
    };
    (@munch [$($m:tt)*] $name:ident { $($acc:tt)* } []) => {
        $($m)* pub struct $name { $($acc)* }
    };
    (@munch $m:tt $name:ident { $($acc:tt)* } [constant $(, $rest:ident)*]) => {
        with_generators!(@munch $m $name { $($acc)*
            /// Always this value.
            pub constant: Option<Loose<Scalar>>,
        } [$($rest),*]);
    };
    (@munch $m:tt $name:ident { $($acc:tt)* } [sequence $(, $rest:ident)*]) => {
        with_generators!(@munch $m $name { $($acc)*
            /// start + step * index (the row, or parent_index * max_length
            /// + position inside lists and maps).
            pub sequence: Option<Tab<RowSequence, Sequence>>,
        } [$($rest),*]);
    };
    (@munch $m:tt $name:ident { $($acc:tt)* } [sequence_per_parent $(, $rest:ident)*]) => {
        with_generators!(@munch $m $name { $($acc)*
            /// start + step * index (the row, or parent_index * max_length
            /// + position inside lists and maps); with `per_parent = true`,
            /// in a child table, the row's number among its parent's
            /// children.
            pub sequence: Option<Tab<RowSequence>>,
        } [$($rest),*]);
    };
    (@munch $m:tt $name:ident { $($acc:tt)* } [uniform $(, $rest:ident)*]) => {
        with_generators!(@munch $m $name { $($acc)*
            /// Uniform between min and max (inclusive for integers, dates
            /// and timestamps; [min, max) for floats).
            pub uniform: Option<Tab<Uniform>>,
        } [$($rest),*]);
    };
    (@munch $m:tt $name:ident { $($acc:tt)* } [normal $(, $rest:ident)*]) => {
        with_generators!(@munch $m $name { $($acc)*
            /// Normal, clamped to [min, max] when given, rounded for
            /// integers.
            pub normal: Option<Tab<Normal>>,
        } [$($rest),*]);
    };
    (@munch $m:tt $name:ident { $($acc:tt)* } [lognormal $(, $rest:ident)*]) => {
        with_generators!(@munch $m $name { $($acc)*
            /// exp(mu + sigma * Z) for a standard normal Z (its median
            /// exp(mu)), clamped to [min, max] when given, rounded for
            /// integers and to the scale for decimals.
            pub lognormal: Option<Tab<Lognormal>>,
        } [$($rest),*]);
    };
    (@munch $m:tt $name:ident { $($acc:tt)* } [quantiles $(, $rest:ident)*]) => {
        with_generators!(@munch $m $name { $($acc)*
            /// An empirical distribution: values q0..qn (non-decreasing, at
            /// least 2) at the quantiles 0, 1/n, ..., 1, linear between
            /// them (integers, dates, timestamps and times rounded,
            /// decimals to the scale); `{ values, weekdays }` moves dates
            /// and timestamps to a weekday drawn with 7 weights, Monday
            /// first.
            pub quantiles: Option<Tab<QuantileTable, Quantiles>>,
        } [$($rest),*]);
    };
    (@munch $m:tt $name:ident { $($acc:tt)* } [zipf $(, $rest:ident)*]) => {
        with_generators!(@munch $m $name { $($acc)*
            /// Zipf over ranks 1..=n, P(k) proportional to k^-s:
            /// values[k-1], or start + k - 1 for numbers.
            pub zipf: Option<Tab<Zipf>>,
        } [$($rest),*]);
    };
    (@munch $m:tt $name:ident { $($acc:tt)* } [weighted $(, $rest:ident)*]) => {
        with_generators!(@munch $m $name { $($acc)*
            /// One of values, with probability proportional to its weight
            /// (all equal when weights are left out).
            pub weighted: Option<Tab<Weighted>>,
        } [$($rest),*]);
    };
    (@munch $m:tt $name:ident { $($acc:tt)* } [probability $(, $rest:ident)*]) => {
        with_generators!(@munch $m $name { $($acc)*
            /// Booleans: true with this probability.
            #[schemars(range(min = 0, max = 1))]
            pub probability: Option<Loose<f64>>,
        } [$($rest),*]);
    };
    (@munch $m:tt $name:ident { $($acc:tt)* } [template $(, $rest:ident)*]) => {
        with_generators!(@munch $m $name { $($acc)*
            /// Strings: literal text with `{seq[:0W]}`, `{first_name}`,
            /// `{last_name}`, `{word}`, `{uniform(A,B)[:0W]}`,
            /// `{zipf(S,N)[:0W]}`, `{hex(N)}`, `{digits(N)}`,
            /// `{upper(N)}`, `{lower(N)}`; `{{` and `}}` are braces.
            pub template: Option<Loose<String>>,
        } [$($rest),*]);
    };
    (@munch $m:tt $name:ident { $($acc:tt)* } [words $(, $rest:ident)*]) => {
        with_generators!(@munch $m $name { $($acc)*
            /// Strings: min..=max words from a built-in list, joined by
            /// spaces.
            pub words: Option<Tab<Words>>,
        } [$($rest),*]);
    };
    (@munch $m:tt $name:ident { $($acc:tt)* } [text $(, $rest:ident)*]) => {
        with_generators!(@munch $m $name { $($acc)*
            /// Strings: windows of min..=max characters at random places
            /// of one pseudo-text of `size` characters made of words
            /// (TPC-H's comments).
            pub text: Option<Tab<Text>>,
        } [$($rest),*]);
    };
    (@munch $m:tt $name:ident { $($acc:tt)* } [chars $(, $rest:ident)*]) => {
        with_generators!(@munch $m $name { $($acc)*
            /// Strings: min..=max characters, each drawn from an alphabet
            /// (TPC-H's addresses and other random text).
            pub chars: Option<Tab<Chars>>,
        } [$($rest),*]);
    };
}

/// A spec file: one table's `fields`, or a dataset's `tables`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
#[schemars(
    title = "strata dataset spec",
    description = "A dataset spec for `strata generate --spec`: this JSON document, or the same document in TOML. `strata spec check FILE` checks what a schema cannot: value types against field types, distribution parameters, sibling references.",
    extend(
        "$id" = "https://strata.invalid/spec.schema.json",
        "oneOf" = [{ "required": ["fields"] }, { "required": ["tables"] }]
    )
)]
pub struct Document {
    /// Dataset name: file stem and Parquet metadata.
    #[schemars(regex(pattern = FILE_NAME))]
    #[schemars(required)]
    pub name: Option<Loose<String>>,
    /// Free text.
    pub description: Option<Loose<String>>,
    /// The fields of a single-table spec.
    #[schemars(length(min = 1))]
    pub fields: Option<Items<Field>>,
    /// The tables of a multi-table dataset (instead of `fields`).
    #[schemars(length(min = 1))]
    pub tables: Option<Items<Table>>,
    /// Word lists of the spec's own, by name, for any `words` or `text`
    /// generator of it to read as `list = "NAME"` (each word once).
    pub lists: Option<Tab<std::collections::BTreeMap<String, Tab<WordFile, WordSource>>>>,
    /// Parquet settings of every leaf of a single-table spec (its fields'
    /// own `parquet` win).
    pub parquet: Option<Tab<ParquetColumn>>,
    /// How a single-table spec's files are laid out.
    pub layout: Option<Tab<Layout>>,
    /// The field that identifies a row of a single-table spec (unique
    /// values: a sequence or a uuid).
    pub primary_key: Option<Loose<String>>,
    /// A single-table spec's history of changes over versions.
    pub changes: Option<Tab<Changes>>,
}

/// How a table's files are laid out: Hive-style partition directories,
/// the rows' order, and the sizes of files, row groups and pages. The
/// command line's `--partition-by`, `--sort-by`, `--target-file-size` and
/// `--row-group-size` win over these.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Layout {
    /// Partition fields, outermost first: a column (`l_returnflag`), or
    /// one of Iceberg's transforms of one: `year(c)`, `month(c)`,
    /// `day(c)`, `hour(c)`, `bucket(N, c)`, `truncate(W, c)`.
    #[schemars(with = "Option<Names>")]
    pub partition_by: Option<Loose<Vec<String>>>,
    /// Sort keys, most significant first: `COLUMN[:asc|:desc]
    /// [:nulls_first|:nulls_last]`, a nested field by its dotted path.
    #[schemars(with = "Option<Names>")]
    pub sort_by: Option<Loose<Vec<String>>>,
    /// Compressed bytes at which a file is closed and the next begun:
    /// bytes, or text with a unit (`"512MiB"`).
    #[schemars(with = "Option<Size>")]
    pub target_file_size: Option<Loose<u64>>,
    /// When a row group is closed: a row count (`1000000`), or bytes with
    /// a unit (`"128MiB"`).
    #[schemars(with = "Option<Size>")]
    pub row_group_size: Option<Loose<u64>>,
    /// Bytes at which a data page is closed (default 1 MiB).
    #[schemars(with = "Option<Size>")]
    pub page_size: Option<Loose<u64>>,
    /// Whether an identity partition's column is also written in the
    /// files (`keep`) or only in the directory names (`drop`, the
    /// default, as Hive, Spark and DuckDB write them).
    #[schemars(with = "Option<PartitionColumns>")]
    pub partition_columns: Option<Loose<String>>,
}

/// A table's history: version 0 is the table as generated; each of the
/// `versions` after it inserts, updates and deletes shares of the rows
/// alive before it. A row's history depends only on the seed, its key
/// and the version.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Changes {
    /// Versions after version 0.
    #[schemars(range(min = 1))]
    #[schemars(required)]
    pub versions: Option<Loose<u64>>,
    /// Rows inserted per version, as a share of the rows alive before it
    /// (default 0).
    #[schemars(range(min = 0, max = 1))]
    pub insert: Option<Loose<f64>>,
    /// Share of the rows alive before a version that it updates (default
    /// 0).
    #[schemars(range(min = 0, max = 1))]
    pub update: Option<Loose<f64>>,
    /// Share of the rows alive before a version that it deletes (default
    /// 0; with `update`, at most 1).
    #[schemars(range(min = 0, max = 1))]
    pub delete: Option<Loose<f64>>,
    /// Which rows change: `{ zipf = S }` makes a few keys hot (the
    /// hottest spread over the table); uniform without it.
    pub keys: Option<Tab<ChangeKeys>>,
    /// The top-level fields an update draws again (default: every field
    /// drawn at random, not the key).
    #[schemars(with = "Option<Names>")]
    pub update_fields: Option<Loose<Vec<String>>>,
    /// What a deleted row's children (rows of tables `children_of` it)
    /// do: `cascade` (deleted with it, the default), `orphan` (kept), or
    /// `keep_parent` (a row with children is never deleted).
    #[schemars(with = "Option<OnDelete>")]
    pub on_delete: Option<Loose<String>>,
}

/// Which rows a history changes.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ChangeKeys {
    /// Zipf exponent of the rows' heat: row of rank k changes with
    /// probability proportional to k^-s.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub zipf: Option<Loose<f64>>,
}

/// What a deleted row's children do (schema only).
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum OnDelete {
    /// Deleted with it.
    Cascade,
    /// Kept, their parent gone.
    Orphan,
    /// A row with children is never deleted.
    KeepParent,
}

/// Names: one, or a list (schema only).
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum Names {
    /// One.
    One(String),
    /// Several, in order.
    Many(Vec<String>),
}

/// A size (schema only).
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum Size {
    /// A plain number.
    Plain(u64),
    /// A number with a unit: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB.
    Unit(#[schemars(regex(pattern = r"^\s*[0-9]+(\.[0-9]+)?\s*[A-Za-z]*\s*$"))] String),
}

/// Where identity partition columns are written (schema only).
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum PartitionColumns {
    /// In the files and in the directory names.
    Keep,
    /// In the directory names only.
    Drop,
}

/// Parquet settings of a column (`parquet = { ... }`): on a table for all
/// its leaves, on a field for the leaves under it. Each key left out keeps
/// the setting strata picks for the column.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ParquetColumn {
    /// The codec (default: the run's `--compression`).
    #[schemars(with = "Option<ParquetCodecName>")]
    pub compression: Option<Loose<String>>,
    /// zstd's level, 1 to 22 (with `compression = "zstd"`; default 1).
    #[schemars(range(min = 1, max = 22))]
    pub level: Option<Loose<i64>>,
    /// The pages' encoding where no dictionary is used (the dictionary
    /// off, or after its fall-back).
    #[schemars(with = "Option<ParquetEncodingName>")]
    pub encoding: Option<Loose<String>>,
    /// Dictionary encoding on or off (default: on for values from a known
    /// set of at most 100,000).
    pub dictionary: Option<Loose<bool>>,
    /// Statistics kept (default `page`: the chunk's and each page's, the
    /// column index).
    #[schemars(with = "Option<ParquetStatisticsName>")]
    pub statistics: Option<Loose<String>>,
    /// A split-block Bloom filter per column chunk (default none).
    pub bloom_filter: Option<Tab<BloomFilter>>,
    /// Whether the column index (page statistics) is written; `false`
    /// keeps the chunk's statistics alone.
    pub page_index: Option<Loose<bool>>,
    /// Data pages of version 1 (`DATA_PAGE`, the default) or 2
    /// (`DATA_PAGE_V2`: levels apart from the values, uncompressed, and
    /// the page's null and row counts in its header). A whole file's: on
    /// a spec, dataset or table only.
    #[schemars(range(min = 1, max = 2))]
    pub data_page_version: Option<Loose<i64>>,
}

/// A Bloom filter's size: for `ndv` distinct values at false-positive rate
/// `fpp` (folded smaller when a chunk has fewer).
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct BloomFilter {
    /// Distinct values per chunk it is sized for (default 1,000,000).
    #[schemars(range(min = 1))]
    pub ndv: Option<Loose<u64>>,
    /// The false-positive rate, above 0 and below 1 (default 0.05).
    #[schemars(extend("exclusiveMinimum" = 0, "exclusiveMaximum" = 1))]
    pub fpp: Option<Loose<f64>>,
}

/// Parquet codecs (schema only).
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum ParquetCodecName {
    /// Uncompressed.
    None,
    /// Snappy.
    Snappy,
    /// `LZ4_RAW`.
    Lz4,
    /// Zstandard.
    Zstd,
}

/// Parquet value encodings (schema only).
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum ParquetEncodingName {
    /// Values as they are.
    Plain,
    /// Integer deltas bit-packed (integers, dates, times, timestamps,
    /// decimals of up to 18 digits).
    DeltaBinaryPacked,
    /// Each byte significance of the values together (floats, and
    /// integer-like leaves).
    ByteStreamSplit,
    /// Lengths delta-encoded, then the bytes (strings and binary).
    DeltaLengthByteArray,
    /// Prefixes shared with the value before, then the rest (strings and
    /// binary).
    DeltaByteArray,
}

/// Parquet statistics levels (schema only).
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum ParquetStatisticsName {
    /// None.
    None,
    /// The chunk's min, max and null count.
    Chunk,
    /// The chunk's, and each page's in the column index.
    Page,
}

/// A word list of the spec's own: its words, or a text file of them.
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[serde(untagged)]
pub enum WordSource {
    /// The words, each once.
    Words(Vec<String>),
    /// A file of them.
    File(WordFile),
}

/// `{ file = "colours.txt" }`: a UTF-8 text file of one word (or phrase)
/// per line, blank lines and lines starting with `#` skipped; its path
/// is relative to the spec file's directory.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct WordFile {
    /// The file's path.
    #[schemars(required)]
    pub file: Option<Loose<String>>,
}

/// A table of a multi-table dataset (`[[tables]]`).
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
#[schemars(
    rename = "table",
    extend(
        "oneOf" = [
            { "required": ["rows"] },
            { "required": ["rows_per_scale"] },
            { "required": ["children_of", "count"] },
            { "required": ["calendar"] }
        ],
        "not" = { "anyOf": [
            { "required": ["children_of", "rows"] },
            { "required": ["children_of", "rows_per_scale"] },
            { "required": ["rows", "rows_per_scale"] },
            { "required": ["calendar", "rows"] },
            { "required": ["calendar", "rows_per_scale"] },
            { "required": ["calendar", "children_of"] },
            { "required": ["children_of", "stratified"], "properties": { "stratified": { "const": true } } }
        ] },
        "anyOf" = [{ "required": ["fields"] }, { "required": ["calendar"] }]
    )
)]
pub struct Table {
    /// Table name: its directory and file stem.
    #[schemars(regex(pattern = FILE_NAME))]
    #[schemars(required)]
    pub name: Option<Loose<String>>,
    /// Free text.
    pub description: Option<Loose<String>>,
    /// A fixed row count (a dimension such as regions), or SQL computing
    /// it once per run from literals, `scale()` and `rows('table')`
    /// (rounded to the nearest integer).
    #[schemars(with = "Option<RowCount>")]
    pub rows: Option<Loose<u64>>,
    /// Rows per unit of `--scale` (a number, or SQL computing it once per
    /// run as `rows` takes it), rounded to the nearest integer once
    /// multiplied by the scale.
    #[schemars(with = "Option<RowsPerScale>")]
    pub rows_per_scale: Option<Loose<f64>>,
    /// Stratified draws (a table with rows of its own): each top-level
    /// field's `uniform`, `normal`, `lognormal`, `quantiles`, `weighted` and
    /// `probability` values take one draw from each of the table's N
    /// equal-probability strata (N its rows at the run's scale: row i's
    /// uniform number is (s(i) + v) / N, s(i) = (i * m + o) mod N for m
    /// coprime with N and o drawn per field and seed, v the row's own),
    /// so their distribution matches the generator's within 1/N. Other
    /// generators, `when` cases with generators of their own, nested
    /// fields and nulls draw as before; false: the default.
    pub stratified: Option<Loose<bool>>,
    /// The table's fields.
    #[schemars(length(min = 1))]
    pub fields: Option<Items<Field>>,
    /// The parent table: this table holds `count` rows per row of it (line
    /// items of orders).
    pub children_of: Option<Loose<String>>,
    /// Rows per parent row of a child table: an integer, or an integer
    /// generator table; the table may add `when`, cases that draw the count
    /// another way where an SQL `condition` on the parent row's top-level
    /// fields holds (the first true one wins).
    pub count: Option<Tab<CountDraw, Count>>,
    /// A calendar table (a date dimension): one row per day from `start`
    /// to `end` (dates, both included); its fields may read parts of the
    /// day with `calendar = PART`, and without `fields` it has one field
    /// per part.
    pub calendar: Option<Tab<CalendarDays>>,
    /// Parquet settings of every leaf of the table (its fields' own
    /// `parquet` win).
    pub parquet: Option<Tab<ParquetColumn>>,
    /// How the table's files are laid out.
    pub layout: Option<Tab<Layout>>,
    /// The field that identifies a row of the table (unique values: a
    /// sequence or a uuid); a `ref` to it is a foreign key.
    pub primary_key: Option<Loose<String>>,
    /// The table's history of changes over versions (a table with a
    /// `primary_key` and rows of its own).
    pub changes: Option<Tab<Changes>>,
}

/// The days of a calendar table.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CalendarDays {
    /// The first day.
    #[schemars(with = "Scalar")]
    pub start: Option<Loose<Scalar>>,
    /// The last day.
    #[schemars(with = "Scalar")]
    pub end: Option<Loose<Scalar>>,
}

/// A table's row count (schema only).
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum RowCount {
    /// This many rows.
    Fixed(u64),
    /// SQL over literals, `scale()` and `rows('table')`, computed once per
    /// run (`"greatest(5, round(25 * scale()))"`).
    Computed(String),
}

/// A table's rows per unit of `--scale` (schema only).
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum RowsPerScale {
    /// This many.
    Fixed(#[schemars(extend("exclusiveMinimum" = 0))] f64),
    /// SQL over literals, `scale()` and `rows('table')`, computed once per
    /// run.
    Computed(String),
}

/// A child table's rows per parent row.
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[serde(untagged)]
pub enum Count {
    /// Always this many.
    Fixed(u64),
    /// SQL over literals, `scale()` and `rows('table')`, computed once per
    /// run (`"round(4 * scale())"`).
    Computed(String),
    /// Drawn by a generator, or by the first of its cases that holds.
    Drawn(Box<CountDraw>),
}

with_generators! {
    /// A child table's count drawn by a generator, with cases.
    #[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
    #[schemars(deny_unknown_fields)]
    #[schemars(transform = one_generator)]
    pub struct CountDraw {
        /// Cases that draw the count another way where an SQL `condition`
        /// on the parent row's top-level fields holds (the first true one
        /// wins).
        pub when: Option<Items<CountCase>>,
    } + [constant, uniform, normal, zipf, weighted]
}

with_generators! {
    /// A case of a child table's count.
    #[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
    #[schemars(deny_unknown_fields)]
    #[schemars(transform = one_generator)]
    pub struct CountCase {
        /// An SQL test of the parent row's top-level fields (DuckDB's
        /// dialect, as `expr`).
        #[schemars(required)]
        pub condition: Option<Loose<String>>,
    } + [constant, uniform, normal, zipf, weighted]
}

with_generators! {
    /// A field of a table: its name, Arrow type, generator, nulls and cases.
    #[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
    #[schemars(deny_unknown_fields)]
    #[schemars(rename = "field", transform = one_generator)]
    pub struct Field {
        /// The Arrow field name (unique among siblings).
        #[schemars(length(min = 1))]
        #[schemars(required)]
        pub name: Option<Loose<String>>,
        /// The Arrow type.
        #[serde(rename = "type")]
        #[schemars(required)]
        pub ty: Option<Loose<TypeName>>,
        /// Share of nulls (default 0).
        #[schemars(range(min = 0, max = 1))]
        pub null_rate: Option<Loose<f64>>,
        /// Make the Arrow field nullable even without nulls (it is whenever
        /// a null can occur).
        pub nullable: Option<Loose<bool>>,
        /// Parquet dictionary encoding for this leaf (default: on when the
        /// field has at most 100,000 distinct values); the same as
        /// `parquet = { dictionary = ... }`.
        pub parquet_dictionary: Option<Loose<bool>>,
        /// Parquet settings of the field's leaves (every leaf under a
        /// struct, list or map), over the table's.
        pub parquet: Option<Tab<ParquetColumn>>,
        /// Free text.
        pub description: Option<Loose<String>>,
        /// Computed for the table's expressions, conditions, references and
        /// aggregates to read, but not written (top-level fields only;
        /// default false).
        pub hidden: Option<Loose<bool>>,
        /// Cases that change the null rate or generator when a sibling has
        /// a value, or where an SQL `condition` on the siblings holds; the
        /// first match wins.
        pub when: Option<Items<When>>,
        /// Dictionary key type (default: the narrowest unsigned type that
        /// fits).
        pub key_type: Option<Loose<KeyType>>,
        /// Struct children.
        #[schemars(length(min = 1))]
        pub fields: Option<Items<Field>>,
        /// List element field (named item unless given a name).
        pub item: Option<Tab<Box<Field>, Box<Child>>>,
        /// Elements per list or map.
        pub length: Option<Tab<Draw, Length>>,
        /// Lists drawn empty are null instead.
        pub empty_as_null: Option<Loose<bool>>,
        /// Map key field: never null; distinct within a map.
        pub key: Option<Tab<Box<Field>, Box<Child>>>,
        /// Map value field.
        pub value: Option<Tab<Box<Field>, Box<Child>>>,
        /// A copy of a top-level field of a row of another table of the
        /// dataset (only in a file of `[[tables]]`): a foreign key when
        /// that field is the table's key. The field's type must equal the
        /// referenced field's.
        #[serde(rename = "ref")]
        pub reference: Option<Tab<Reference>>,
        /// In a child table (`children_of`): a top-level field of the
        /// row's own parent row, copied; a field name, or
        /// `{ field, offset }`.
        pub parent: Option<Tab<ParentOffset, Parent>>,
        /// In a child table: the row's position among its parent's
        /// children, plus this start (1 gives 1, 2, 3, ...).
        pub position: Option<Loose<i64>>,
        /// Random version 4 UUIDs: the 36-character text for strings, 16
        /// bytes for binary and fixed_size_binary(16).
        #[schemars(extend("const" = true))]
        pub uuid: Option<Loose<bool>>,
        /// Row i gets value i (a dimension's members, each once): a list,
        /// or `{ values, cycle }`; without `cycle = true` a table longer
        /// than the list is an error. Top-level fields of tables with rows
        /// of their own.
        pub values_by_row: Option<Tab<CyclingValues, ValuesByRow>>,
        /// In a calendar table: this part of the row's day (date: date32;
        /// date_key (yyyymmdd), year, quarter, month, day_of_month,
        /// day_of_year, day_of_week (ISO, Monday 1), week_of_year (ISO):
        /// integers; day_name, month_name: strings or dictionaries;
        /// weekend: boolean).
        pub calendar: Option<Loose<CalendarPart>>,
        /// An SQL expression (DuckDB's dialect) over the sibling fields:
        /// + - * / // %, comparisons, AND/OR/NOT, IS NULL, BETWEEN, IN,
        /// CASE, COALESCE, LEAST, GREATEST, || and concat, lpad, substring,
        /// round,
        /// CAST, DATE '...' and INTERVAL n DAY literals, uniform(min, max)
        /// (a random integer from the field's own stream), scale() and
        /// rows('table'). Division by zero gives null.
        #[schemars(length(min = 1))]
        pub expr: Option<Loose<String>>,
        /// In a table with a child table: sum, min, max, count, all or any
        /// of a top-level field of the row's children (count = "*": the
        /// children; the child's own aggregates too). Integer sums are
        /// exact, into an integer or decimal field. No children: count 0,
        /// the others null.
        pub aggregate: Option<Tab<Aggregate>>,
    } + [constant, sequence_per_parent, uniform, normal, lognormal, quantiles, zipf, weighted, probability, template, words, chars, text]
}

/// A list's element or a map's key or value: a field whose name may be
/// left out, without the keys that only a table's own fields take. Its
/// schema is [`Field`]'s, less those; it is read as a `Field`, and
/// `parse` checks what such a field may hold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Child;

/// The keys of [`Field`] that only a table's own fields take.
const TABLE_FIELD_KEYS: &[&str] = &[
    "hidden",
    "ref",
    "parent",
    "position",
    "uuid",
    "values_by_row",
    "calendar",
    "expr",
    "aggregate",
];

impl JsonSchema for Child {
    fn schema_name() -> Cow<'static, str> {
        "child".into()
    }

    /// `Field`'s schema without the name required, the keys of table
    /// fields, and `sequence`'s `per_parent`.
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut schema = Field::json_schema(generator);
        // A case's `sequence`: the plain one.
        let plain = When::json_schema(generator)
            .get("properties")
            .and_then(|p| p.get("sequence"))
            .cloned();
        if let Some(Json::Object(props)) = schema.get_mut("properties") {
            props.retain(|k, _| !TABLE_FIELD_KEYS.contains(&k.as_str()));
            if let Some(plain) = plain {
                props.insert("sequence".into(), plain);
            }
        }
        if let Some(Json::Array(required)) = schema.get_mut("required") {
            required.retain(|k| k != "name");
        }
        schema.insert(
            "description".into(),
            "A list's element or a map's key or value: a field whose name may be left out.".into(),
        );
        one_generator(&mut schema);
        schema
    }
}

with_generators! {
    /// A case of a field: where a sibling holds a value (`field` with `is`
    /// or `is_null`) or where an SQL `condition` holds, a null rate or
    /// generator of its own.
    #[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
    #[schemars(deny_unknown_fields)]
    #[schemars(
        rename = "when",
        transform = one_generator,
        extend("oneOf" = [
            {
                "required": ["field"],
                "not": { "required": ["condition"] },
                "oneOf": [{ "required": ["is"] }, { "required": ["is_null"] }]
            },
            {
                "required": ["condition"],
                "not": { "anyOf": [
                    { "required": ["field"] },
                    { "required": ["is"] },
                    { "required": ["is_null"] }
                ] }
            }
        ])
    )]
    pub struct When {
        /// A sibling field's name.
        pub field: Option<Loose<String>>,
        /// An SQL test of the sibling fields (DuckDB's dialect, as `expr`):
        /// `ship < DATE '1995-03-15'`, `price BETWEEN 10 AND 20`; the case
        /// applies where it is true (null is false).
        pub condition: Option<Loose<String>>,
        /// The sibling holds this value (or one of these).
        pub is: Option<Loose<OneOrMany>>,
        /// The sibling is null (or, when false, is not).
        pub is_null: Option<Loose<bool>>,
        /// Read so that `parse` can say a case takes no such generator.
        #[serde(rename = "ref")]
        #[schemars(skip)]
        pub reference: Option<Tab<Reference>>,
        /// As `reference`.
        #[schemars(skip)]
        pub parent: Option<Tab<ParentOffset, Parent>>,
        /// As `reference`.
        #[schemars(skip)]
        pub position: Option<Loose<i64>>,
        /// As `reference`.
        #[schemars(skip)]
        pub uuid: Option<Loose<bool>>,
        /// As `reference`.
        #[schemars(skip)]
        pub values_by_row: Option<Tab<CyclingValues, ValuesByRow>>,
        /// As `reference`.
        #[schemars(skip)]
        pub calendar: Option<Loose<CalendarPart>>,
        /// As `reference`.
        #[schemars(skip)]
        pub expr: Option<Loose<String>>,
        /// As `reference`.
        #[schemars(skip)]
        pub aggregate: Option<Tab<Aggregate>>,
        /// The share of nulls in this case.
        #[schemars(range(min = 0, max = 1))]
        pub null_rate: Option<Loose<f64>>,
    } + [constant, sequence, uniform, normal, lognormal, quantiles, zipf, weighted, probability, template, words, chars, text]
}

/// A value, or a list of them.
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    /// One value.
    One(Scalar),
    /// Any of these values.
    Many(#[schemars(length(min = 1))] Vec<Scalar>),
}

/// Elements per list or map: an integer, or a table with one of
/// constant, uniform, normal, zipf, weighted.
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[serde(untagged)]
#[schemars(rename = "length")]
pub enum Length {
    /// Always this many.
    Fixed(#[schemars(range(min = 0, max = 1_048_576))] u64),
    /// Drawn by a generator.
    Drawn(Box<Draw>),
}

/// Added to a copy (integers, dates in days, timestamps and decimals in
/// their units): an integer, or an integer generator table.
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[serde(untagged)]
pub enum Offset {
    /// Always this much.
    Fixed(i64),
    /// Drawn by a generator.
    Drawn(Box<Draw>),
}

with_generators! {
    /// An integer drawn by one generator.
    #[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
    #[schemars(deny_unknown_fields)]
    #[schemars(extend("minProperties" = 1, "maxProperties" = 1))]
    pub struct Draw {
    } + [constant, uniform, normal, zipf, weighted]
}

/// `sequence` of a list's or a case's values.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Sequence {
    /// The first value (default 0).
    pub start: Option<Loose<Scalar>>,
    /// The step between values (default 1).
    pub step: Option<Loose<Scalar>>,
}

/// `sequence` of a field of a table.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RowSequence {
    /// The first value (default 0).
    pub start: Option<Loose<Scalar>>,
    /// The step between values (default 1).
    pub step: Option<Loose<Scalar>>,
    /// In a child table: number the rows within each parent row (start,
    /// start + 1, ...), as `position` does; `step` is then not allowed.
    pub per_parent: Option<Loose<bool>>,
}

/// `uniform`'s bounds.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Uniform {
    /// The least value.
    #[schemars(with = "Scalar")]
    pub min: Option<Loose<Scalar>>,
    /// The greatest value (or, for floats, the bound above).
    #[schemars(with = "Scalar")]
    pub max: Option<Loose<Scalar>>,
}

/// `normal`'s parameters.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Normal {
    /// The mean.
    #[schemars(required)]
    pub mean: Option<Loose<f64>>,
    /// The standard deviation.
    #[schemars(extend("exclusiveMinimum" = 0))]
    #[schemars(required)]
    pub std: Option<Loose<f64>>,
    /// Values below are clamped to this.
    pub min: Option<Loose<f64>>,
    /// Values above are clamped to this.
    pub max: Option<Loose<f64>>,
}

/// `lognormal`'s parameters: the mean and standard deviation of the
/// value's natural logarithm.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Lognormal {
    /// The mean of the logarithm (the median is exp(mu)).
    #[schemars(required)]
    pub mu: Option<Loose<f64>>,
    /// The standard deviation of the logarithm.
    #[schemars(extend("exclusiveMinimum" = 0))]
    #[schemars(required)]
    pub sigma: Option<Loose<f64>>,
    /// Values below are clamped to this.
    pub min: Option<Loose<f64>>,
    /// Values above are clamped to this.
    pub max: Option<Loose<f64>>,
}

/// `quantiles`: the values, or a table of them and weekday weights.
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[serde(untagged)]
pub enum Quantiles {
    /// q0..qn at the quantiles 0, 1/n, ..., 1 (values of the field's
    /// type, non-decreasing).
    List(#[schemars(length(min = 2))] Vec<Scalar>),
    /// The values, and the weekdays of dates and timestamps.
    Table(QuantileTable),
}

/// `quantiles = { values, weekdays }`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct QuantileTable {
    /// q0..qn at the quantiles 0, 1/n, ..., 1 (values of the field's
    /// type, non-decreasing).
    #[schemars(length(min = 2))]
    #[schemars(required)]
    pub values: Option<Loose<Vec<Scalar>>>,
    /// Dates and timestamps: weights of Monday to Sunday. A drawn value
    /// moves within its ISO week (Monday to Sunday of its UTC day,
    /// keeping the time of day) to a weekday drawn with these weights,
    /// then is clamped to [q0, qn].
    #[schemars(length(min = 7, max = 7), inner(range(min = 0)))]
    pub weekdays: Option<Loose<Vec<f64>>>,
}

/// `zipf`'s parameters: `n` ranks, or `values`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
#[schemars(extend("anyOf" = [{ "required": ["n"] }, { "required": ["values"] }]))]
pub struct Zipf {
    /// The exponent.
    #[schemars(extend("exclusiveMinimum" = 0))]
    #[schemars(required)]
    pub s: Option<Loose<f64>>,
    /// The number of ranks (else the number of values).
    #[schemars(range(min = 1))]
    pub n: Option<Loose<u64>>,
    /// The value of each rank, most frequent first.
    #[schemars(length(min = 1))]
    pub values: Option<Loose<Vec<Scalar>>>,
    /// The number of rank 1 (default 1).
    pub start: Option<Loose<i64>>,
}

/// `weighted`'s values and weights.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Weighted {
    /// The values.
    #[schemars(length(min = 1))]
    #[schemars(required)]
    pub values: Option<Loose<Vec<Scalar>>>,
    /// A weight per value.
    #[schemars(length(min = 1), inner(range(min = 0)))]
    pub weights: Option<Loose<Vec<f64>>>,
}

/// `words`' list and count.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Words {
    /// A built-in list (`words`, the default; `first_names`,
    /// `last_names`) or one of the spec's `lists`.
    pub list: Option<Loose<ListName>>,
    /// Your own words instead of a built-in list (each once).
    #[schemars(length(min = 1))]
    pub values: Option<Loose<Vec<String>>>,
    /// No word twice in one value (at most as many words as the list
    /// has).
    pub distinct: Option<Loose<bool>>,
    /// The fewest words.
    pub min: Option<Loose<u64>>,
    /// The most words.
    #[schemars(range(max = 1000))]
    pub max: Option<Loose<u64>>,
}

/// The name of a word list: a built-in one or one of the spec's `lists`.
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[schemars(extend("examples" = ["words", "first_names", "last_names"]))]
pub struct ListName(pub String);

/// `text`'s words, the size of its pseudo-text and the windows' lengths.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Text {
    /// The list the pseudo-text is made of: a built-in one (`words`, the
    /// default; `first_names`, `last_names`) or one of the spec's `lists`.
    pub list: Option<Loose<ListName>>,
    /// Your own words instead of a built-in list (ASCII, each once).
    #[schemars(length(min = 1))]
    pub values: Option<Loose<Vec<String>>>,
    /// The pseudo-text's length in characters (default 1,048,576): the
    /// same text for every seed and part; the windows differ.
    #[schemars(range(min = 1, max = 268_435_456))]
    pub size: Option<Loose<u64>>,
    /// The shortest window (default 1).
    pub min: Option<Loose<u64>>,
    /// The longest window (default `min`, at most `size`).
    pub max: Option<Loose<u64>>,
}

/// `chars`' alphabet and lengths.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Chars {
    /// The characters drawn from, each equally likely (each once).
    #[schemars(required, length(min = 1))]
    pub alphabet: Option<Loose<String>>,
    /// The fewest characters (default 1).
    pub min: Option<Loose<u64>>,
    /// The most characters (default `min`).
    #[schemars(range(max = 65536))]
    pub max: Option<Loose<u64>>,
}

/// `ref`: the table and field copied, and how rows are drawn.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
#[schemars(extend("not" = { "anyOf": [
    { "required": ["zipf", "weight"] },
    { "required": ["via", "zipf"] },
    { "required": ["via", "weight"] },
    { "required": ["via", "draw"] },
    { "required": ["balanced", "zipf"], "properties": { "balanced": { "const": true } } },
    { "required": ["balanced", "weight"], "properties": { "balanced": { "const": true } } },
    { "required": ["balanced", "via"], "properties": { "balanced": { "const": true } } }
] }))]
pub struct Reference {
    /// The referenced table.
    #[schemars(required)]
    pub table: Option<Loose<String>>,
    /// A top-level scalar field of that table.
    #[schemars(required)]
    pub field: Option<Loose<String>>,
    /// Rows drawn by Zipf with exponent s, the hottest spread over the
    /// table (default: uniform).
    pub zipf: Option<Tab<RowZipf>>,
    /// A sibling field holding a reference to the same table: read the
    /// row it drew (to copy several fields of one parent row).
    pub via: Option<Loose<String>>,
    /// A name for the row this reference draws: sibling references with
    /// the same draw (to the same table) read that one row, and
    /// expressions read its fields as DRAW.FIELD.
    #[schemars(regex(pattern = PLAIN_NAME), extend("not" = { "const": "parent" }))]
    pub draw: Option<Loose<String>>,
    /// Added to the copy (integers, dates in days, timestamps and decimals
    /// in their units): an integer, or an integer generator table.
    pub offset: Option<Tab<Draw, Offset>>,
    /// A numeric top-level field of the referenced table: rows drawn with
    /// probability proportional to it (nulls weigh nothing; tables of at
    /// most 16,777,216 rows).
    pub weight: Option<Loose<String>>,
    /// Every row of the referenced table referenced equally often, within
    /// one: row i takes row ((i mod P) * m + o) mod P of its P rows, for a
    /// multiplier m coprime with P and an offset o drawn per field and
    /// seed; between tables with rows of their own, one value per row.
    /// Not with zipf, weight or via; with draw, on the draw's first field;
    /// false: the uniform default.
    pub balanced: Option<Loose<bool>>,
}

/// A reference's Zipf draw of rows.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RowZipf {
    /// The exponent.
    #[schemars(extend("exclusiveMinimum" = 0))]
    #[schemars(required)]
    pub s: Option<Loose<f64>>,
}

/// `parent`: a field of the parent row.
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[serde(untagged)]
pub enum Parent {
    /// The parent's field, copied.
    Field(String),
    /// The parent's field, with an offset added.
    Offset(Box<ParentOffset>),
}

/// `parent = { field, offset }`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ParentOffset {
    /// The parent's field.
    #[schemars(required)]
    pub field: Option<Loose<String>>,
    /// Added to the copy (integers, dates in days, timestamps and decimals
    /// in their units): an integer, or an integer generator table.
    pub offset: Option<Tab<Draw, Offset>>,
}

/// `values_by_row`: a list, or a list that may cycle.
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[serde(untagged)]
pub enum ValuesByRow {
    /// Row i gets value i.
    List(#[schemars(length(min = 1))] Vec<Scalar>),
    /// Row i gets value i, cycling when `cycle` is true.
    Table(CyclingValues),
}

/// `values_by_row = { values, cycle }`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CyclingValues {
    /// The values.
    #[schemars(length(min = 1))]
    #[schemars(required)]
    pub values: Option<Loose<Vec<Scalar>>>,
    /// Start again from the first value after the last.
    pub cycle: Option<Loose<bool>>,
}

/// `aggregate`: a child table and one operation on one of its fields, or
/// on an SQL expression over its top-level fields
/// (`sum = "l_price * (1 - l_discount)"`).
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
#[schemars(extend("minProperties" = 2, "maxProperties" = 2))]
pub struct Aggregate {
    /// A child table of this field's table (its `children_of` names this
    /// table).
    #[schemars(required)]
    pub table: Option<Loose<String>>,
    /// The sum of this child field.
    pub sum: Option<Loose<String>>,
    /// The least value of this child field.
    pub min: Option<Loose<String>>,
    /// The greatest value of this child field.
    pub max: Option<Loose<String>>,
    /// A child field (its non-null values are counted), or `*` (the
    /// rows).
    pub count: Option<Loose<String>>,
    /// Whether this boolean child field is true in every child.
    pub all: Option<Loose<String>>,
    /// Whether this boolean child field is true in some child.
    pub any: Option<Loose<String>>,
}
