//! Differential tests of the direct encoder against parquet's writer.
//!
//! Random dataset specs (every type of the spec format, decimals stored
//! as `INT32`, `INT64` and fixed-length bytes among them, structs, lists and
//! maps nested up to four deep, null rates 0, 0.3 and 1, empty and null
//! lists, long and multi-byte strings around the statistics cut) are
//! generated from fixed seeds; each one's rows are written twice, by
//! strata's direct encoder and by parquet's `ArrowWriter`, with the same
//! properties (a random codec, small row groups and pages). parquet-rs must
//! read both files as the same rows (and the rows generated), with the same
//! chunk statistics (min, max, exactness, null and NaN counts), and the
//! direct file's page indexes must cover every page.
//!
//! `STRATA_DIFFERENTIAL_SPECS` sets the number of specs (default 500).
//! With `STRATA_DIFFERENTIAL_DIR` set, every pair of files is also written
//! there (`N.direct.parquet`, `N.arrow.parquet`) for the pyarrow half of
//! the test in `tests/interop/test_differential.py`, which
//! `scripts/test` runs.

use std::{fmt::Write as _, path::PathBuf};

use arrow_array::RecordBatch;
use arrow_schema::DataType;
use bytes::Bytes;
use parquet::{
    arrow::{ArrowWriter, arrow_reader::ParquetRecordBatchReaderBuilder},
    basic::{Compression, Encoding, Type as Physical, ZstdLevel},
    file::{
        properties::{EnabledStatistics, WriterProperties, WriterVersion},
        reader::FileReader,
        serialized_reader::{ReadOptionsBuilder, SerializedFileReader},
    },
};
use strata_gen::{BatchGenerator, Spec};
use strata_parquet::writer::ParquetWriter;
use strata_testkit::readback::rows_as_text;

/// SplitMix64: the test's own small random source.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const NULL_RATES: [&str; 3] = ["0.0", "0.3", "1.0"];

/// A generator for a scalar type, as TOML inline-table keys.
fn scalar(rng: &mut Rng, ty: &str) -> String {
    let long = "x".repeat(70);
    // Multi-byte characters straddling the 64-byte statistics cut.
    let wide = format!("{}é€😀", "y".repeat(61));
    match ty {
        "boolean" => format!("probability = 0.{}", 1 + rng.below(8)),
        "int8" => "uniform = { min = -128, max = 127 }".into(),
        "int16" => "uniform = { min = -300, max = 300 }".into(),
        "int32" => rng
            .pick(&[
                "uniform = { min = -2147483648, max = 2147483647 }",
                "sequence = { start = -5, step = 3 }",
                "zipf = { s = 1.2, n = 100 }",
                "uniform = { min = -3, max = 3 }",
            ])
            .into(),
        "int64" => rng
            .pick(&[
                "uniform = { min = -9223372036854775808, max = 9223372036854775807 }",
                "sequence = { start = 1 }",
                "normal = { mean = 0.0, std = 1000.0 }",
                "weighted = { values = [-7, 0, 9223372036854775807, -9223372036854775808] }",
            ])
            .into(),
        "uint8" => "uniform = { min = 0, max = 255 }".into(),
        "uint16" => "uniform = { min = 0, max = 65535 }".into(),
        "uint32" => "uniform = { min = 0, max = 4294967295 }".into(),
        "uint64" => rng
            .pick(&[
                "uniform = { min = 0, max = 18446744073709551615 }",
                "uniform = { min = 9223372036854775000, max = 9223372036854776000 }",
                "weighted = { values = [0, 9223372036854775808, 18446744073709551615] }",
            ])
            .into(),
        "float32" | "float64" => rng
            .pick(&[
                "uniform = { min = -100.0, max = 100.0 }",
                "normal = { mean = 5.0, std = 2.0 }",
                "weighted = { values = [-0.0, 0.0, 2.5, -1.0] }",
                "weighted = { values = [0.0, -0.0] }",
            ])
            .into(),
        "utf8" | "large_utf8" => match rng.below(4) {
            0 => "template = \"s-{uniform(0,999)}\"".into(),
            1 => "words = { min = 1, max = 3 }".into(),
            2 => format!("weighted = {{ values = [\"\", \"a\", \"{long}\", \"{wide}\", \"zz\"] }}"),
            _ => format!("weighted = {{ values = [\"{wide}\", \"{long}b\"] }}"),
        },
        "binary" => format!("weighted = {{ values = [\"\", \"b\", \"{long}\", \"\\u00ff\"] }}"),
        "dictionary" => {
            // Past 256 and 65,536 entries the keys need 16 and 32 bits.
            let n = [3, 3, 3, 300, 300, 70_000][rng.below(6) as usize];
            let key = match n {
                3 => rng.pick(&["", "key_type = \"int8\", ", "key_type = \"uint32\", "]),
                300 => rng.pick(&["", "key_type = \"int16\", "]),
                _ => "",
            };
            let values: Vec<String> = (0..n).map(|i| format!("\"v{i}\"")).collect();
            format!("{key}weighted = {{ values = [{}] }}", values.join(", "))
        }
        "date32" => "uniform = { min = 1960-01-01, max = 2030-12-31 }".into(),
        // Negative and positive units near each storage's limits (the
        // spec keeps units within i64, so decimal(38, _) reaches 2^63 - 1).
        "decimal(4, 0)" => "uniform = { min = -9999, max = 9999 }".into(),
        "decimal(9, 2)" => rng
            .pick(&[
                "uniform = { min = -9999999.99, max = 9999999.99 }",
                "weighted = { values = [\"0.01\", -0.01, 0, 12.5] }",
            ])
            .into(),
        "decimal(15, 2)" => rng
            .pick(&[
                "uniform = { min = 1.00, max = 104949.50 }",
                "normal = { mean = 0.0, std = 1000.0 }",
                "sequence = { start = -3.5, step = 0.25 }",
            ])
            .into(),
        "decimal(18, 6)" => {
            "uniform = { min = \"-999999999999.999999\", max = \"999999999999.999999\" }".into()
        }
        "decimal(20, 0)" => {
            "uniform = { min = -9223372036854775807, max = 9223372036854775807 }".into()
        }
        "decimal(38, 10)" => rng
            .pick(&[
                "uniform = { min = -922337203.6854775807, max = 922337203.6854775807 }",
                "weighted = { values = [-1, 0, \"0.0000000001\", 3] }",
            ])
            .into(),
        // Decimal256: units within i64 at 50 digits, 5 after the point.
        "decimal(50, 5)" => rng
            .pick(&[
                "uniform = { min = -92233720368547.75807, max = 92233720368547.75807 }",
                "weighted = { values = [-1, 0, \"0.00001\", 3] }",
            ])
            .into(),
        "time32(ms)" => "uniform = { min = 00:00:00, max = 23:59:59.999 }".into(),
        "time64(ns)" => rng
            .pick(&[
                "uniform = { min = 0, max = 86399999999999 }",
                "sequence = { start = 1, step = 1000 }",
            ])
            .into(),
        "duration(us)" => rng
            .pick(&[
                "uniform = { min = -1000000, max = 1000000 }",
                "sequence = { start = -5, step = 7 }",
            ])
            .into(),
        "fixed_size_binary(16)" => "uuid = true".into(),
        // Bytes past 0x7f order above ASCII (unsigned), and all zeros.
        "fixed_size_binary(3)" => {
            "weighted = { values = [\"abc\", \"xyz\", \"\\u00ffa\", \"\\u0000\\u0000\\u0000\"] }"
                .into()
        }
        // Past the 64-byte statistics cut.
        "fixed_size_binary(70)" => format!(
            "weighted = {{ values = [\"{}\", \"{}z\", \"{}\"] }}",
            "x".repeat(70),
            "y".repeat(69),
            "\\u00ff".repeat(35)
        ),
        _ => "uniform = { min = 1969-12-31T00:00:00Z, max = 2030-01-01T00:00:00Z }".into(),
    }
}

const SCALARS: [&str; 33] = [
    "boolean",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "utf8",
    "large_utf8",
    "binary",
    "dictionary",
    "date32",
    "decimal(4, 0)",
    "decimal(9, 2)",
    "decimal(15, 2)",
    "decimal(18, 6)",
    "decimal(20, 0)",
    "decimal(38, 10)",
    "decimal(50, 5)",
    "timestamp(s)",
    "timestamp(ms, +01:00)",
    "timestamp(us, +00:00)",
    "timestamp(ns)",
    "time32(ms)",
    "time64(ns)",
    "duration(us)",
    "fixed_size_binary(16)",
    "fixed_size_binary(3)",
    "fixed_size_binary(70)",
];

/// One field (an inline table) of nesting at most `depth` more levels.
fn field(rng: &mut Rng, name: &str, depth: u32, out: &mut String) {
    let null_rate = rng.pick(&NULL_RATES);
    let kind = if depth == 0 { 0 } else { rng.below(6) };
    write!(out, "{{ name = \"{name}\", null_rate = {null_rate}, ").unwrap();
    match kind {
        3 => {
            out.push_str("type = \"struct\", fields = [");
            for c in 0..1 + rng.below(3) {
                if c > 0 {
                    out.push_str(", ");
                }
                field(rng, &format!("{name}_{c}"), depth - 1, out);
            }
            out.push_str("] }");
        }
        4 => {
            let length = rng.pick(&[
                "{ uniform = { min = 0, max = 3 } }",
                "{ weighted = { values = [0, 1, 5], weights = [3, 3, 1] } }",
                "0",
            ]);
            let empty_as_null = rng.pick(&["", "empty_as_null = true, "]);
            write!(
                out,
                "type = \"list\", {empty_as_null}length = {length}, item = "
            )
            .unwrap();
            item(rng, &format!("{name}_item"), depth - 1, out);
            out.push_str(" }");
        }
        5 => {
            write!(
                out,
                "type = \"map\", length = {{ uniform = {{ min = 0, max = 3 }} }}, \
                 key = {{ type = \"utf8\", weighted = {{ values = [\"a\", \"b\", \"c\", \"d\"] }} }}, value = "
            )
            .unwrap();
            item(rng, &format!("{name}_value"), depth - 1, out);
            out.push_str(" }");
        }
        _ => {
            let ty = rng.pick(&SCALARS);
            let generator = scalar(rng, ty);
            write!(out, "type = \"{ty}\", {generator} }}").unwrap();
        }
    }
}

/// A list item or map value: a field without a name.
fn item(rng: &mut Rng, name: &str, depth: u32, out: &mut String) {
    let mut inner = String::new();
    field(rng, name, depth, &mut inner);
    // Drop the `name = "...", ` key: items are unnamed.
    let cut = inner.find(", ").map_or(0, |i| i + 2);
    out.push_str("{ ");
    out.push_str(&inner[cut..]);
}

/// A random spec of 1 to 4 top-level fields.
fn random_spec(seed: u64) -> String {
    let mut rng = Rng(seed);
    let mut out = format!("name = \"random{seed}\"\nfields = [\n");
    for f in 0..1 + rng.below(4) {
        out.push_str("  ");
        let depth = rng.below(5) as u32;
        field(&mut rng, &format!("f{f}"), depth, &mut out);
        out.push_str(",\n");
    }
    out.push_str("]\n");
    out
}

fn properties(rng: &mut Rng) -> WriterProperties {
    let codec = match rng.below(4) {
        0 => Compression::UNCOMPRESSED,
        1 => Compression::SNAPPY,
        2 => Compression::LZ4_RAW,
        _ => Compression::ZSTD(ZstdLevel::try_new(1 + rng.below(3) as i32).unwrap()),
    };
    WriterProperties::builder()
        .set_compression(codec)
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_max_row_group_row_count(Some(20 + rng.below(400) as usize))
        .set_data_page_row_count_limit(5 + rng.below(200) as usize)
        // Dictionaries off, on, and on with limits small enough that a
        // chunk falls back to `PLAIN` part way.
        .set_dictionary_enabled(rng.below(4) != 0)
        .set_dictionary_page_size_limit([64, 1024, 1 << 20][rng.below(3) as usize])
        // Bloom filters in one file of three, of several sizes and rates;
        // kept or not for chunks of dictionary pages alone.
        .set_bloom_filter_enabled(rng.below(3) == 0)
        .set_bloom_filter_max_ndv([10, 1000, 100_000][rng.below(3) as usize])
        .set_bloom_filter_fpp([0.01, 0.05, 0.3][rng.below(3) as usize])
        .set_bloom_filter_for_dictionary_encoded_chunks(rng.below(4) != 0)
        // Data pages v2 in one file of three. (The writer version also
        // changes parquet's writer's encodings where none is set, to the
        // `DELTA_` ones: set to `PLAIN`, as the direct encoder keeps them.)
        .set_writer_version(if rng.below(3) == 0 {
            WriterVersion::PARQUET_2_0
        } else {
            WriterVersion::PARQUET_1_0
        })
        .set_encoding(Encoding::PLAIN)
        .build()
}

/// Each column chunk's Bloom filter, header and bits, in file order
/// (`None` where a chunk has none).
fn bloom_filters(file: &Bytes) -> Vec<Option<Vec<u8>>> {
    use parquet::file::properties::ReaderProperties;
    let options = ReadOptionsBuilder::new()
        .with_reader_properties(
            ReaderProperties::builder()
                .set_read_bloom_filter(true)
                .build(),
        )
        .build();
    let reader = SerializedFileReader::new_with_options(file.clone(), options).unwrap();
    let mut out = Vec::new();
    for g in 0..reader.num_row_groups() {
        let rg = reader.get_row_group(g).unwrap();
        for c in 0..rg.num_columns() {
            out.push(rg.get_column_bloom_filter(c).map(|b| {
                let mut bytes = Vec::new();
                b.write(&mut bytes).unwrap();
                bytes
            }));
        }
    }
    out
}

/// One column in four with a codec of its own; one integer leaf in three `DELTA_BINARY_PACKED`, one float leaf in
/// three `BYTE_STREAM_SPLIT` and one byte-string leaf in three
/// (`DELTA_BYTE_ARRAY` half the time, else)
/// `DELTA_LENGTH_BYTE_ARRAY` (their dictionaries off; one leaf in six more
/// with the dictionary left as it is, the encoding for after a fall-back).
fn with_delta(
    props: WriterProperties,
    schema: &arrow_schema::Schema,
    rng: &mut Rng,
) -> WriterProperties {
    let parquet = parquet::arrow::ArrowSchemaConverter::new()
        .convert(schema)
        .unwrap();
    let mut leaves = Vec::new();
    for f in schema.fields() {
        leaf_types(f.data_type(), &mut leaves);
    }
    assert_eq!(leaves.len(), parquet.num_columns());
    let mut b = props.into_builder();
    // One column in four with a codec of its own; one in five with
    // statistics of the chunk alone, or none.
    for col in parquet.columns() {
        match rng.below(10) {
            0 => b = b.set_column_statistics_enabled(col.path().clone(), EnabledStatistics::Chunk),
            1 => b = b.set_column_statistics_enabled(col.path().clone(), EnabledStatistics::None),
            _ => {}
        }
        if rng.below(4) == 0 {
            let codec = match rng.below(4) {
                0 => Compression::UNCOMPRESSED,
                1 => Compression::SNAPPY,
                2 => Compression::LZ4_RAW,
                _ => Compression::ZSTD(ZstdLevel::try_new(1 + rng.below(5) as i32).unwrap()),
            };
            b = b.set_column_compression(col.path().clone(), codec);
        }
    }
    for (col, leaf) in parquet.columns().iter().zip(leaves) {
        let encoding = match col.physical_type() {
            // Integers `BYTE_STREAM_SPLIT` one time in four.
            Physical::INT32 | Physical::INT64 if rng.below(4) == 0 => Encoding::BYTE_STREAM_SPLIT,
            Physical::INT32 | Physical::INT64 => Encoding::DELTA_BINARY_PACKED,
            // Not fixed-length byte arrays: DuckDB refuses to read those
            // split ("only supported for FLOAT, DOUBLE, INT32 or INT64").
            Physical::FLOAT | Physical::DOUBLE => Encoding::BYTE_STREAM_SPLIT,
            // Not for dictionary types: pyarrow cannot read their values
            // back as a dictionary from such pages, and the direct
            // encoder writes them `RLE_DICTIONARY` whatever the settings.
            Physical::BYTE_ARRAY if !matches!(leaf, DataType::Dictionary(..)) => {
                if rng.below(2) == 0 {
                    Encoding::DELTA_LENGTH_BYTE_ARRAY
                } else {
                    Encoding::DELTA_BYTE_ARRAY
                }
            }
            _ => continue,
        };
        match rng.below(6) {
            0 | 1 => {
                b = b
                    .set_column_dictionary_enabled(col.path().clone(), false)
                    .set_column_encoding(col.path().clone(), encoding);
            }
            // The dictionary as the rest of the file has it: the pages
            // after a fall-back take the encoding.
            2 => {
                b = b.set_column_encoding(col.path().clone(), encoding);
            }
            _ => {}
        }
    }
    b.build()
}

/// The Arrow types of the leaves of `t`, in the order of their Parquet
/// columns.
fn leaf_types(t: &DataType, out: &mut Vec<DataType>) {
    match t {
        DataType::Struct(fields) => fields.iter().for_each(|f| leaf_types(f.data_type(), out)),
        DataType::List(f) | DataType::LargeList(f) | DataType::Map(f, _) => {
            leaf_types(f.data_type(), out)
        }
        t => out.push(t.clone()),
    }
}

/// Each column chunk's statistics, as text. `fallbacks` says for each
/// chunk (in file order) whether its listed encodings include
/// `DELTA_BINARY_PACKED`, `BYTE_STREAM_SPLIT` and `DELTA_LENGTH_BYTE_ARRAY`
/// where the direct encoder's do.
fn statistics(file: &Bytes, fallbacks: &[bool]) -> Vec<String> {
    let reader = SerializedFileReader::new(file.clone()).unwrap();
    let mut out = Vec::new();
    for (g, rg) in reader.metadata().row_groups().iter().enumerate() {
        for (c, col) in rg.columns().iter().enumerate() {
            let s = col.statistics();
            out.push(format!(
                "group {g} column {c} ({}, {:?}): {:?}",
                col.column_path(),
                // The value encodings chosen by properties (the level and
                // dictionary ones listed can differ for a chunk of nulls).
                col.encodings()
                    .filter(|e| match e {
                        Encoding::DELTA_BINARY_PACKED
                        | Encoding::BYTE_STREAM_SPLIT
                        | Encoding::DELTA_LENGTH_BYTE_ARRAY
                        | Encoding::DELTA_BYTE_ARRAY => {
                            fallbacks.get(out.len()).copied().unwrap_or(true)
                        }
                        _ => false,
                    })
                    .collect::<Vec<_>>(),
                s.map(|s| (
                    s.min_bytes_opt(),
                    s.max_bytes_opt(),
                    s.min_is_exact(),
                    s.max_is_exact(),
                    s.null_count_opt(),
                    s.nan_count_opt(),
                    s.distinct_count_opt(),
                ))
            ));
        }
    }
    out
}

/// Checks the direct file's page indexes: every chunk has an offset index
/// whose pages cover the row group's rows, and a column index exactly
/// where `props` keep page statistics.
fn check_page_indexes(file: &Bytes, props: &WriterProperties, what: &str) {
    let options = ReadOptionsBuilder::new().with_page_index().build();
    let reader = SerializedFileReader::new_with_options(file.clone(), options).unwrap();
    let md = reader.metadata();
    for (g, rg) in md.row_groups().iter().enumerate() {
        let index = md.page_index_for_row_group(g);
        for c in 0..rg.num_columns() {
            let pages = index
                .offset_index(c)
                .unwrap_or_else(|| panic!("{what}: no offset index for group {g} column {c}"))
                .page_locations();
            let mut rows = 0i64;
            for (p, loc) in pages.iter().enumerate() {
                let end = pages
                    .get(p + 1)
                    .map_or(rg.num_rows(), |n| n.first_row_index);
                assert!(end > loc.first_row_index, "{what}: empty page");
                rows += end - loc.first_row_index;
            }
            assert_eq!(rows, rg.num_rows(), "{what}: group {g} column {c}");
            let path = rg.column(c).column_path();
            assert_eq!(
                index.column_index(c).is_some(),
                props.statistics_enabled(path) == EnabledStatistics::Page,
                "{what}: the column index of group {g} column {c}"
            );
        }
    }
}

fn read(file: &Bytes) -> Vec<RecordBatch> {
    ParquetRecordBatchReaderBuilder::try_new(file.clone())
        .unwrap()
        .build()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// `props` with no length limit on statistics and page-index values.
fn uncut(props: WriterProperties) -> WriterProperties {
    props
        .into_builder()
        .set_statistics_truncate_length(None)
        .set_column_index_truncate_length(None)
        .build()
}

fn created_by(file: &Bytes) -> String {
    let reader = SerializedFileReader::new(file.clone()).unwrap();
    reader
        .metadata()
        .file_metadata()
        .created_by()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn random_specs_agree_with_parquets_writer() {
    let count: u64 = std::env::var("STRATA_DIFFERENTIAL_SPECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let dir = std::env::var_os("STRATA_DIFFERENTIAL_DIR").map(PathBuf::from);
    if let Some(d) = &dir {
        std::fs::create_dir_all(d).unwrap();
    }
    let mut levels_seen = [0usize; 5];
    // Decimal leaves stored as INT32, INT64 and fixed-length bytes.
    let mut decimals_seen = [0usize; 3];
    let mut split_seen = 0usize;
    let mut lengths_seen = 0usize;
    let mut bloom_seen = 0usize;
    let mut v2_pages_seen = 0usize;
    let mut prefixes_seen = 0usize;
    for seed in 0..count {
        let text = random_spec(seed);
        let spec = Spec::parse(&text, "random.toml")
            .unwrap_or_else(|e| panic!("spec {seed} does not parse: {e}\n{text}"));
        let generator = spec.generator(seed).unwrap();
        let mut rng = Rng(seed ^ 0xD1FF);
        let rows = rng.below(700);
        let step = 1 + rng.below(250);
        let mut batches = Vec::new();
        let mut scratch = Default::default();
        let mut at = 0;
        while at < rows {
            let n = step.min(rows - at) as usize;
            batches.push(generator.generate(at, n, &mut scratch).unwrap());
            at += n as u64;
        }
        let schema = generator.schema();
        let mut props = with_delta(properties(&mut rng), &schema, &mut rng);
        if text.contains("fixed_size_binary(70)") {
            // Fixed-length statistics stay whole in strata's files (parquet's
            // writer cuts those past the limit to fewer bytes than the type
            // has, which pyarrow cannot read): compare with it not cutting.
            props = uncut(props);
        }

        let mut direct = ParquetWriter::try_new(Vec::new(), schema.clone(), props.clone()).unwrap();
        assert!(direct.is_direct(), "spec {seed} is not direct:\n{text}");
        let mut reference =
            ArrowWriter::try_new(Vec::new(), schema.clone(), Some(props.clone())).unwrap();
        for b in &batches {
            direct.write(b).unwrap();
            reference.write(b).unwrap();
        }
        let direct = Bytes::from(direct.finish().unwrap());
        let reference = Bytes::from(reference.into_inner().unwrap());

        // Kept before the checks, so that a failing pair can be looked at.
        if let Some(d) = &dir {
            std::fs::write(d.join(format!("{seed}.direct.parquet")), &direct).unwrap();
            std::fs::write(d.join(format!("{seed}.arrow.parquet")), &reference).unwrap();
        }
        let what = format!("spec {seed}:\n{text}");
        let want = rows_as_text(&batches).unwrap();
        assert_eq!(rows_as_text(&read(&direct)).unwrap(), want, "{what}");
        assert_eq!(rows_as_text(&read(&reference)).unwrap(), want, "{what}");
        // Whether a chunk falls back to the properties' encoding lies with
        // the writer when its dictionary is on (parquet's writer falls back
        // after a write batch or when its dictionary outgrows its limit;
        // the direct encoder at a page's end, and also when a first page
        // of numbers would not shrink), and
        // dictionary-typed leaves stay `RLE_DICTIONARY` in the direct
        // encoder: compared where the dictionary is off and the direct
        // chunk has no dictionary page.
        let descr = SerializedFileReader::new(direct.clone()).unwrap();
        let fallbacks: Vec<bool> = descr
            .metadata()
            .row_groups()
            .iter()
            .flat_map(|rg| {
                rg.columns().iter().map(|c| {
                    c.dictionary_page_offset().is_none()
                        && !props.dictionary_enabled(c.column_path())
                })
            })
            .collect();
        let (a, b) = (
            statistics(&direct, &fallbacks),
            statistics(&reference, &fallbacks),
        );
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x, y, "{what}");
        }
        assert_eq!(a.len(), b.len(), "{what}");
        check_page_indexes(&direct, &props, &what);
        // The same values in each chunk make the same filter bits. A chunk
        // of dictionary pages alone may go without one
        // (`bloom_filter_for_dictionary_encoded_chunks` off), and which
        // chunks fall back from their dictionary lies with the writer
        // (above): then the filters both writers kept are compared.
        let filters = bloom_filters(&direct);
        bloom_seen += filters.iter().flatten().count();
        let theirs = bloom_filters(&reference);
        assert_eq!(filters.len(), theirs.len(), "{what}");
        for (c, (a, b)) in filters.iter().zip(&theirs).enumerate() {
            if props.bloom_filter_for_dictionary_encoded_chunks() || (a.is_some() && b.is_some()) {
                assert_eq!(a, b, "chunk {c} of {what}");
            }
        }
        assert!(created_by(&direct).starts_with("strata version "), "{what}");

        for rg in descr.metadata().row_groups() {
            for col in rg.columns() {
                split_seen +=
                    usize::from(col.encodings().any(|e| e == Encoding::BYTE_STREAM_SPLIT));
                lengths_seen += usize::from(
                    col.encodings()
                        .any(|e| e == Encoding::DELTA_LENGTH_BYTE_ARRAY),
                );
                prefixes_seen +=
                    usize::from(col.encodings().any(|e| e == Encoding::DELTA_BYTE_ARRAY));
            }
        }
        // Every data page is of the version the properties ask for.
        let v2 = props.writer_version() == WriterVersion::PARQUET_2_0;
        for g in 0..descr.num_row_groups() {
            let rg = descr.get_row_group(g).unwrap();
            for c in 0..rg.num_columns() {
                for page in rg.get_column_page_reader(c).unwrap() {
                    match page.unwrap() {
                        parquet::column::page::Page::DataPage { .. } => {
                            assert!(!v2, "a v1 data page in a v2 file: {what}")
                        }
                        parquet::column::page::Page::DataPageV2 { .. } => {
                            assert!(v2, "a v2 data page in a v1 file: {what}");
                            v2_pages_seen += 1;
                        }
                        parquet::column::page::Page::DictionaryPage { .. } => {}
                    }
                }
            }
        }
        for c in descr.metadata().file_metadata().schema_descr().columns() {
            levels_seen[(c.max_rep_level() as usize).min(4)] += 1;
            if matches!(
                c.logical_type_ref(),
                Some(parquet::basic::LogicalType::Decimal { .. })
            ) {
                decimals_seen[match c.physical_type() {
                    Physical::INT32 => 0,
                    Physical::INT64 => 1,
                    _ => 2,
                }] += 1;
            }
        }
    }
    // The specs reach leaves under several lists, not only flat ones.
    if count >= 100 {
        assert!(
            levels_seen[0] > 0 && levels_seen[1] > 0 && levels_seen[2] > 0,
            "{levels_seen:?}"
        );
        assert!(decimals_seen.iter().all(|&n| n > 0), "{decimals_seen:?}");
        assert!(split_seen > 0, "no BYTE_STREAM_SPLIT chunk");
        assert!(lengths_seen > 0, "no DELTA_LENGTH_BYTE_ARRAY chunk");
        assert!(bloom_seen > 0, "no Bloom filter");
        assert!(prefixes_seen > 0, "no DELTA_BYTE_ARRAY chunk");
        assert!(v2_pages_seen > 0, "no data page v2");
    }
}

/// `FixedSizeBinary` wider than the statistics limit keeps whole
/// statistics and page-index values (the type's length) with the default
/// properties, where parquet's writer cuts them to 64 bytes.
#[test]
fn wide_fixed_size_binary_statistics_stay_whole() {
    let text = format!(
        "name = \"w\"\n[[fields]]\nname = \"f\"\ntype = \"fixed_size_binary(70)\"\nweighted = {{ values = [\"{}\", \"{}\"] }}\n",
        "a".repeat(70),
        "b".repeat(70)
    );
    let spec = Spec::parse(&text, "w.toml").unwrap();
    let g = spec.generator(1).unwrap();
    let batch = g.generate(0, 100, &mut Default::default()).unwrap();
    let props = WriterProperties::builder().build();
    let mut direct = ParquetWriter::try_new(Vec::new(), g.schema(), props).unwrap();
    assert!(direct.is_direct());
    direct.write(&batch).unwrap();
    let file = Bytes::from(direct.finish().unwrap());
    let reader = SerializedFileReader::new(file).unwrap();
    let stats = reader
        .metadata()
        .row_group(0)
        .column(0)
        .statistics()
        .unwrap();
    assert_eq!(stats.min_bytes_opt().unwrap(), "a".repeat(70).as_bytes());
    assert_eq!(stats.max_bytes_opt().unwrap(), "b".repeat(70).as_bytes());
    assert!(stats.min_is_exact() && stats.max_is_exact());
}

/// The direct encoder's Bloom filters hold every value written, and let
/// through absent values at the rate their size gives, which is at most
/// the rate asked for: 100,000 absent longs and strings probed against
/// filters for the 20,000 values each of their chunks holds.
#[test]
fn bloom_filters_find_every_value_and_about_fpp_of_the_absent() {
    use arrow_array::{ArrayRef, Int64Array, StringArray};
    use parquet::file::properties::ReaderProperties;
    use std::sync::Arc;
    let n = 20_000i64;
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..n));
    let names: ArrayRef = Arc::new(StringArray::from_iter_values(
        (0..n).map(|i| format!("name-{i}")),
    ));
    let batch = RecordBatch::try_from_iter([("id", ids), ("name", names)]).unwrap();
    for fpp in [0.01, 0.05, 0.2] {
        let props = WriterProperties::builder()
            .set_dictionary_enabled(false)
            .set_bloom_filter_enabled(true)
            .set_bloom_filter_max_ndv(n as u64)
            .set_bloom_filter_fpp(fpp)
            .build();
        let mut w = ParquetWriter::try_new(Vec::new(), batch.schema(), props).unwrap();
        assert!(w.is_direct());
        w.write(&batch).unwrap();
        let file = Bytes::from(w.finish().unwrap());
        let options = ReadOptionsBuilder::new()
            .with_reader_properties(
                ReaderProperties::builder()
                    .set_read_bloom_filter(true)
                    .build(),
            )
            .build();
        let reader = SerializedFileReader::new_with_options(file, options).unwrap();
        let rg = reader.get_row_group(0).unwrap();
        let (ids, names) = (
            rg.get_column_bloom_filter(0).unwrap(),
            rg.get_column_bloom_filter(1).unwrap(),
        );
        for i in 0..n {
            assert!(ids.check(&i), "id {i} is missing");
            assert!(
                names.check(&format!("name-{i}").as_str()),
                "name-{i} is missing"
            );
        }
        // The bitset: the largest power of two in the filter's bytes (the
        // rest is its small header).
        let mut bytes = Vec::new();
        ids.write(&mut bytes).unwrap();
        let bitset = 1usize << (usize::BITS - 1 - bytes.len().leading_zeros());
        // A split-block filter sets 8 bits, one per 32-bit word, of one
        // 256-bit block per value: with j values in a block, an absent
        // value passes with probability (1 - (31/32)^j)^8; j is Poisson.
        let blocks = (bitset / 32) as f64;
        let lambda = n as f64 / blocks;
        let (mut p_j, mut expected) = ((-lambda).exp(), 0.0);
        for j in 0..2000 {
            if j > 0 {
                p_j *= lambda / j as f64;
            }
            expected += p_j * (1.0 - (31.0f64 / 32.0).powi(j)).powi(8);
        }
        assert!(
            expected <= fpp,
            "a filter of {bitset} bytes gives {expected}, over {fpp}"
        );
        let absent = 100_000i64;
        let id_hits = (n..n + absent).filter(|i| ids.check(i)).count() as f64 / absent as f64;
        let name_hits = (n..n + absent)
            .filter(|i| names.check(&format!("name-{i}").as_str()))
            .count() as f64
            / absent as f64;
        for (what, rate) in [("id", id_hits), ("name", name_hits)] {
            assert!(
                (rate - expected).abs() <= 0.25 * expected,
                "{what}: {rate} of absent values pass a filter of {bitset} bytes (expected \
                 {expected}, asked for at most {fpp})"
            );
        }
    }
}
