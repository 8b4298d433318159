//! `parquet = { ... }` on a dataset, a table and fields: handed down to
//! every leaf (a field's own over its parent's, over the table's, over the
//! dataset's), and bad settings refused with their line and field.

use strata_gen::{
    BatchGenerator, Dataset, Kind, ParquetCodec, ParquetColumn, ParquetEncoding, ParquetStatistics,
    Spec,
};

const DATASET: &str = r#"
name = "d"
parquet = { compression = "zstd", level = 5, statistics = "chunk" }

[[tables]]
name = "t"
rows = 10
parquet = { compression = "snappy", bloom_filter = { ndv = 500 } }
[[tables.fields]]
name = "k"
type = "int64"
sequence = { start = 1 }
[[tables.fields]]
name = "s"
type = "struct"
parquet = { page_index = true, dictionary = false }
fields = [
  { name = "x", type = "float64", uniform = { min = 0.0, max = 1.0 }, parquet = { encoding = "byte_stream_split" } },
  { name = "y", type = "utf8", words = { min = 1, max = 2 }, parquet_dictionary = true, parquet = { compression = "lz4" } },
]

[[tables]]
name = "u"
rows = 5
[[tables.fields]]
name = "v"
type = "int32"
constant = 1
"#;

#[test]
fn settings_are_handed_down_to_every_leaf() {
    let d = Dataset::parse(DATASET, "d.toml").unwrap();
    let t = &d.tables[0].spec;
    let table = ParquetColumn {
        compression: Some(ParquetCodec::Snappy),
        statistics: Some(ParquetStatistics::Chunk),
        bloom_filter: Some((500, 0.05)),
        ..Default::default()
    };
    assert_eq!(t.fields[0].parquet, table);
    let Kind::Struct(children) = &t.fields[1].kind else {
        panic!("a struct");
    };
    assert_eq!(
        children[0].parquet,
        ParquetColumn {
            encoding: Some(ParquetEncoding::ByteStreamSplit),
            dictionary: Some(false),
            statistics: Some(ParquetStatistics::Page),
            ..table.clone()
        }
    );
    assert_eq!(
        children[1].parquet,
        ParquetColumn {
            compression: Some(ParquetCodec::Lz4),
            dictionary: Some(true),
            statistics: Some(ParquetStatistics::Page),
            ..table
        }
    );
    // The other table takes the dataset's alone.
    assert_eq!(
        d.tables[1].spec.fields[0].parquet,
        ParquetColumn {
            compression: Some(ParquetCodec::Zstd(5)),
            statistics: Some(ParquetStatistics::Chunk),
            ..Default::default()
        }
    );
    // The generator names each leaf with its settings for the writer.
    let g = d.generator(0, 1, 1.0).unwrap();
    let leaves: Vec<Vec<String>> = g.parquet_columns().into_iter().map(|(l, _)| l).collect();
    assert_eq!(leaves, [vec!["k"], vec!["s", "x"], vec!["s", "y"]]);
    // A spec without settings leaves every leaf to the writer.
    let plain = Spec::parse(
        "name = \"p\"\n[[fields]]\nname = \"a\"\ntype = \"int64\"\nconstant = 1\n",
        "p.toml",
    )
    .unwrap();
    assert!(plain.fields[0].parquet.is_empty());
}

#[test]
fn bad_settings_are_refused_with_line_and_field() {
    let field = |settings: &str, ty: &str| {
        format!(
            "name = \"b\"\n[[fields]]\nname = \"a\"\ntype = \"{ty}\"\nconstant = 1\nparquet = {settings}\n"
        )
    };
    for (text, want) in [
        (
            field("{ compression = \"gzip\" }", "int64"),
            "b.toml:6: field `a`: `parquet.compression` = \"gzip\": expected one of none, snappy, lz4, zstd",
        ),
        (
            field("{ level = 3 }", "int64"),
            "`parquet.level` is zstd's; give `compression = \"zstd\"` with it",
        ),
        (
            field("{ compression = \"zstd\", level = 30 }", "int64"),
            "`parquet.level` = 30: zstd's levels are 1 to 22",
        ),
        (
            "name = \"b\"\n[[fields]]\nname = \"a\"\ntype = \"utf8\"\nconstant = \"x\"\nparquet = { encoding = \"byte_stream_split\" }\n".to_string(),
            "b.toml:2: field `a`: `parquet.encoding` = \"byte_stream_split\" takes floats, integers, dates, times, timestamps and decimals of up to 18 digits, not Utf8",
        ),
        (
            field("{ encoding = \"delta_binary_packed\" }", "float64"),
            "takes integers, dates, times, timestamps and decimals of up to 18 digits, not Float64",
        ),
        (
            field("{ bloom_filter = { fpp = 1.5 } }", "int64"),
            "`parquet.bloom_filter.fpp` = 1.5: a rate above 0 and below 1",
        ),
        (
            field("{ bloom_filter = { ndv = 0 } }", "int64"),
            "`parquet.bloom_filter.ndv` = 0",
        ),
        (
            field("{ statistics = \"chunk\", page_index = true }", "int64"),
            "`parquet.page_index = true` needs page statistics",
        ),
        (field("{ codec = \"zstd\" }", "int64"), "codec"),
        (
            field("{ data_page_version = 2 }", "int64"),
            "`parquet.data_page_version` is a whole file's",
        ),
        (
            "name = \"b\"\nparquet = { data_page_version = 3 }\n[[fields]]\nname = \"a\"\ntype = \"int64\"\nconstant = 1\n".to_string(),
            "`parquet.data_page_version` = 3: expected 1 or 2",
        ),
        (
            "name = \"b\"\n[[fields]]\nname = \"a\"\ntype = \"int64\"\nconstant = 1\nparquet_dictionary = true\nparquet = { dictionary = false }\n".to_string(),
            "`parquet_dictionary` and `parquet = { dictionary }` disagree",
        ),
    ] {
        let e = Spec::parse(&text, "b.toml").unwrap_err().to_string();
        assert!(e.contains(want), "{e}\nwant: {want}\n{text}");
    }
    // A struct's encoding reaches a leaf that cannot take it: the leaf is named.
    let text = "name = \"b\"\n[[fields]]\nname = \"s\"\ntype = \"struct\"\nparquet = { encoding = \"delta_length_byte_array\" }\nfields = [{ name = \"n\", type = \"int32\", constant = 1 }]\n";
    let e = Spec::parse(text, "b.toml").unwrap_err().to_string();
    assert!(
        e.contains(
            "field `s.n`: `parquet.encoding` = \"delta_length_byte_array\" takes strings and binary"
        ),
        "{e}"
    );
}

/// `layout = { ... }` is read as written (its text checked against the
/// table where files are written); its values of the wrong kind are
/// refused with the line, and a dataset's table is named.
#[test]
fn layouts_are_read_and_bad_values_refused() {
    let spec = |layout: &str| {
        format!(
            "name = \"b\"\nlayout = {layout}\n[[fields]]\nname = \"a\"\ntype = \"int64\"\nconstant = 1\n"
        )
    };
    let s = Spec::parse(
        &spec("{ partition_by = \"bucket(4, a)\", sort_by = [\"a:desc\"], target_file_size = \"1MiB\", row_group_size = 1000, page_size = 65536, partition_columns = \"keep\" }"),
        "b.toml",
    )
    .unwrap();
    assert_eq!(s.layout.line, 2);
    assert_eq!(s.layout.partition_by, ["bucket(4, a)"]);
    assert_eq!(s.layout.sort_by, ["a:desc"]);
    assert_eq!(s.layout.target_file_size, Some(1 << 20));
    assert_eq!(
        s.layout.row_group_size,
        Some(strata_gen::RowGroupSize::Rows(1000))
    );
    assert_eq!(s.layout.page_size, Some(65536));
    assert_eq!(s.layout.keep_partition_columns, Some(true));
    let s = Spec::parse(&spec("{ row_group_size = \"128MiB\" }"), "b.toml").unwrap();
    assert_eq!(
        s.layout.row_group_size,
        Some(strata_gen::RowGroupSize::Bytes(128 << 20))
    );
    for (layout, want) in [
        (
            "{ partition_by = 3 }",
            "b.toml:2: `layout.partition_by` must be a string or an array of strings, not an integer",
        ),
        (
            "{ sort_by = [\"a\", 1] }",
            "`layout.sort_by` must be a string or an array of strings, not an array holding an integer",
        ),
        (
            "{ sort_by = [\" \"] }",
            "`layout.sort_by` holds an empty name",
        ),
        (
            "{ target_file_size = 0 }",
            "`layout.target_file_size` = 0: must be at least 1",
        ),
        (
            "{ target_file_size = \"lots\" }",
            "`layout.target_file_size`: bad size 'lots'",
        ),
        (
            "{ page_size = true }",
            "`layout.page_size` must be a number or text with a unit",
        ),
        (
            "{ partition_columns = \"both\" }",
            "`layout.partition_columns` = \"both\": expected keep or drop",
        ),
        ("{ partition = \"a\" }", "partition"),
        ("\"a\"", "`layout` must be a table"),
    ] {
        let e = Spec::parse(&spec(layout), "b.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{layout}: {want:?} not in {e:?}");
    }
    let dataset = "name = \"d\"\n[[tables]]\nname = \"t\"\nrows = 5\nlayout = { sort_by = 2 }\n[[tables.fields]]\nname = \"a\"\ntype = \"int64\"\nconstant = 1\n";
    let e = strata_gen::Dataset::parse(dataset, "d.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("d.toml:5: field `t`: `layout.sort_by` must be a string"),
        "{e}"
    );
}
