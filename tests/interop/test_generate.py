"""Files written by `strata generate` as pyarrow (Arrow C++) and DuckDB read them."""

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

ROWS = 200_000


def column(summary, name):
    return next(c for c in summary["columns"] if c["name"] == name)


def expected_schema():
    entry = pa.struct(
        [
            pa.field("number", pa.string()),
            pa.field("phone_type", pa.dictionary(pa.uint8(), pa.string())),
        ]
    )
    return pa.schema([pa.field("name", pa.string()), pa.field("phones", pa.list_(pa.field("item", entry)))])


def test_pyarrow_reads_parquet_and_agrees_with_summary(generate):
    out, summary = generate("--target-records", str(ROWS), "--num-writers", "3", "--row-group-rows", "50000")
    files = sorted(out.glob("*.parquet"))
    assert [f.name for f in files] == ["contacts_0.parquet", "contacts_1.parquet", "contacts_2.parquet"]
    assert not list(out.glob(".*")), "temporaries left behind"

    table = pq.read_table(files)
    assert table.schema.remove_metadata() == expected_schema()
    assert table.num_rows == summary["records"] == ROWS
    assert table["name"].null_count == column(summary, "name")["nulls"]
    phones = table["phones"]
    assert phones.null_count == column(summary, "phones")["nulls"]
    assert pc.sum(pc.list_value_length(phones)).as_py() == column(summary, "phones")["list_values"]

    # Metadata a reader relies on: statistics on every chunk, the seed.
    meta = pq.ParquetFile(files[0]).metadata
    assert meta.num_row_groups == 2  # 66,666 rows in 50,000-row groups
    for rg in range(meta.num_row_groups):
        for c in range(meta.num_columns):
            chunk = meta.row_group(rg).column(c)
            assert chunk.is_stats_set and chunk.statistics.has_min_max
    assert meta.metadata[b"strata.seed"] == b"42"
    assert sum(f["bytes"] for f in summary["files"]) == summary["bytes"]


def test_duckdb_reads_parquet_and_agrees_with_summary(generate):
    out, summary = generate("--target-records", str(ROWS), "--num-writers", "2")
    con = duckdb.connect()
    glob = str(out / "*.parquet")
    rows, names, lists, entries = con.execute(
        f"SELECT count(*), count(name), count(phones), sum(len(phones)) FROM read_parquet('{glob}')"
    ).fetchone()
    assert rows == ROWS
    assert names == ROWS - column(summary, "name")["nulls"]
    assert lists == ROWS - column(summary, "phones")["nulls"]
    assert entries == column(summary, "phones")["list_values"]

    numbers, distinct, typed = con.execute(
        f"""SELECT count(p.number), count(DISTINCT p.number), count(p.phone_type)
            FROM (SELECT unnest(phones) AS p FROM read_parquet('{glob}'))"""
    ).fetchone()
    assert numbers == distinct, "phone numbers are unique"
    assert abs(numbers / entries - 0.95) < 0.005
    assert abs(typed / entries - 0.94) < 0.005
    shares = dict(
        con.execute(
            f"""SELECT p.phone_type, count(*) / sum(count(*)) OVER ()
                FROM (SELECT unnest(phones) AS p FROM read_parquet('{glob}'))
                WHERE p.phone_type IS NOT NULL GROUP BY 1"""
        ).fetchall()
    )
    for kind, p in {"Mobile": 0.55, "Work": 0.35, "Home": 0.10}.items():
        assert abs(shares[kind] - p) < 0.01, shares
    # Row-group statistics let DuckDB prune: the max number is the last id.
    assert con.execute(f"SELECT max(name) IS NOT NULL FROM read_parquet('{glob}')").fetchone()[0]


def test_ipc_output_holds_the_same_rows_as_parquet(generate, tmp_path):
    pq_out, _ = generate("--target-records", "30000", "--num-writers", "2")
    pq_out.rename(tmp_path / "pq")
    ipc_out, summary = generate(
        "--target-records", "30000", "--num-writers", "2", "--format", "ipc", "--compression", "zstd"
    )
    files = sorted(ipc_out.glob("*.arrow"))
    assert [f.name for f in files] == ["contacts_0.arrow", "contacts_1.arrow"]
    ipc_table = pa.concat_tables([ipc.open_file(f).read_all() for f in files])
    assert ipc_table.num_rows == summary["records"] == 30000
    assert ipc_table.schema == expected_schema()
    pq_table = pq.read_table(sorted((tmp_path / "pq").glob("*.parquet")))
    assert ipc_table.to_pylist() == pq_table.to_pylist()


def test_compressed_parquet_reads_back_identically(generate, tmp_path):
    plain, _ = generate("--target-records", "20000", "--num-writers", "1")
    plain.rename(tmp_path / "plain")
    # Uncompressed files come from strata's direct encoder, compressed ones
    # from parquet's Arrow writer: the rows must be the same (dictionary
    # page order may differ, so compare values, not dictionary layouts).
    reference = pq.read_table(tmp_path / "plain" / "contacts_0.parquet").to_pylist()
    # pyarrow names Parquet's LZ4_RAW codec "LZ4".
    for codec, name in [("snappy", "SNAPPY"), ("lz4", "LZ4"), ("zstd:3", "ZSTD")]:
        out, _ = generate("--target-records", "20000", "--num-writers", "1", "--compression", codec, "--overwrite")
        path = out / "contacts_0.parquet"
        assert pq.read_table(path).to_pylist() == reference, codec
        meta = pq.ParquetFile(path).metadata
        assert {meta.row_group(0).column(i).compression for i in range(meta.num_columns)} == {name}
