"""Per-column Parquet settings (`parquet = { ... }` on a spec, a table and
its fields): pyarrow's metadata shows each column chunk's requested codec,
encoding, statistics, column index and Bloom filter, handed down from the
spec to struct leaves; the direct encoder's files hold the same values as
parquet's Arrow writer's (`--encoder arrow`), read by pyarrow and DuckDB."""

import subprocess

import duckdb
import pyarrow.parquet as pq

SPEC = """
name = "cols"
parquet = { compression = "zstd", level = 3 }
[[fields]]
name = "id"
type = "int64"
sequence = { start = 1 }
parquet = { encoding = "plain", statistics = "chunk" }
[[fields]]
name = "qty"
type = "int32"
uniform = { min = 1, max = 50 }
parquet = { compression = "snappy", bloom_filter = { ndv = 100, fpp = 0.01 } }
[[fields]]
name = "price"
type = "float64"
normal = { mean = 100.0, std = 10.0 }
parquet = { encoding = "byte_stream_split", dictionary = false, statistics = "none" }
[[fields]]
name = "score"
type = "int64"
zipf = { s = 1.1, n = 100000 }
parquet = { encoding = "byte_stream_split", dictionary = false }
[[fields]]
name = "code"
type = "utf8"
template = "ORDER-{seq:08}"
parquet = { encoding = "delta_byte_array", dictionary = false }
[[fields]]
name = "s"
type = "struct"
parquet = { compression = "lz4", page_index = false }
fields = [
  { name = "a", type = "utf8", words = { min = 1, max = 3 }, parquet = { encoding = "delta_length_byte_array", dictionary = false } },
  { name = "b", type = "date32", uniform = { min = 2020-01-01, max = 2020-12-31 }, parquet = { compression = "none" } },
]
"""

# path: (codec, value encoding, statistics kept, column index, Bloom filter)
WANT = {
    "id": ("ZSTD", "PLAIN", True, False, False),
    "qty": ("SNAPPY", "RLE_DICTIONARY", True, True, True),
    "price": ("ZSTD", "BYTE_STREAM_SPLIT", False, False, False),
    "score": ("ZSTD", "BYTE_STREAM_SPLIT", True, True, False),
    "code": ("ZSTD", "DELTA_BYTE_ARRAY", True, True, False),
    "s.a": ("LZ4", "DELTA_LENGTH_BYTE_ARRAY", True, False, False),
    "s.b": ("UNCOMPRESSED", "RLE_DICTIONARY", True, False, False),
}


def test_columns_take_the_specs_parquet_settings(strata_bin, tmp_path):
    spec = tmp_path / "cols.toml"
    spec.write_text(SPEC)
    for encoder in ["auto", "arrow"]:
        subprocess.run(
            [strata_bin, "generate", "--spec", str(spec), "--target-records", "30000", "--num-writers", "2",
             "--encoder", encoder, "--output-dir", str(tmp_path / encoder), "-q"],
            check=True,
        )
    files = sorted((tmp_path / "auto").glob("*.parquet"))
    assert len(files) == 2
    for f in files:
        md = pq.ParquetFile(f).metadata
        assert md.created_by.startswith("strata version ")
        for g in range(md.num_row_groups):
            for c in range(md.num_columns):
                col = md.row_group(g).column(c)
                codec, encoding, stats, index, bloom = WANT[col.path_in_schema]
                assert col.compression == codec, col.path_in_schema
                assert encoding in col.encodings, (col.path_in_schema, col.encodings)
                assert col.is_stats_set == stats, col.path_in_schema
                assert col.has_column_index == index, col.path_in_schema
                assert (col.bloom_filter_offset is not None and col.bloom_filter_offset > 0) == bloom, col.path_in_schema
    direct = pq.read_table(tmp_path / "auto")
    arrow = pq.read_table(tmp_path / "arrow")
    assert direct.num_rows == 30000
    assert direct.equals(arrow)
    con = duckdb.connect()
    q = "SELECT * FROM read_parquet('{}/*.parquet') EXCEPT ALL SELECT * FROM read_parquet('{}/*.parquet')"
    assert con.sql(q.format(tmp_path / "auto", tmp_path / "arrow")).fetchall() == []
    assert con.sql(q.format(tmp_path / "arrow", tmp_path / "auto")).fetchall() == []
    # The filter finds a quantity that is there, through DuckDB's reader too.
    n = con.sql(f"SELECT count(*) FROM read_parquet('{tmp_path / 'auto'}/*.parquet') WHERE qty = 7").fetchall()[0][0]
    assert n > 0


V2_SPEC = """
name = "v2"
parquet = { data_page_version = 2, compression = "zstd" }
[[fields]]
name = "id"
type = "int64"
sequence = { start = 1 }
[[fields]]
name = "word"
type = "utf8"
null_rate = 0.2
words = { min = 1, max = 3 }
[[fields]]
name = "tags"
type = "list"
null_rate = 0.1
length = { uniform = { min = 0, max = 4 } }
[fields.item]
type = "int32"
null_rate = 0.1
uniform = { min = 0, max = 9 }
"""


def test_data_pages_v2_read_back_as_the_arrow_writers(strata_bin, tmp_path):
    spec = tmp_path / "v2.toml"
    spec.write_text(V2_SPEC)
    for encoder in ["auto", "arrow"]:
        subprocess.run(
            [strata_bin, "generate", "--spec", str(spec), "--target-records", "20000", "--num-writers", "1",
             "--encoder", encoder, "--output-dir", str(tmp_path / encoder), "-q"],
            check=True,
        )
    direct = pq.read_table(tmp_path / "auto")
    assert direct.num_rows == 20000
    assert direct.equals(pq.read_table(tmp_path / "arrow"))
    con = duckdb.connect()
    q = "SELECT * FROM read_parquet('{}/*.parquet') EXCEPT ALL SELECT * FROM read_parquet('{}/*.parquet')"
    assert con.execute(q.format(tmp_path / "auto", tmp_path / "arrow")).fetchall() == []
    assert con.execute(q.format(tmp_path / "arrow", tmp_path / "auto")).fetchall() == []
    # pyarrow reports the page kinds each chunk holds in its encoding stats.
    md = pq.ParquetFile(next((tmp_path / "auto").glob("*.parquet"))).metadata
    col = md.row_group(0).column(0).to_dict()
    assert md.format_version == "2.6" or md.format_version.startswith("2"), md.format_version
    assert col["compression"] == "ZSTD"
