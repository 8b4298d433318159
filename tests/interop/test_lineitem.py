"""The `lineitem` preset as pyarrow reads it: TPC-H's 16 columns with the
types `tpchgen-cli` 4.0.0 writes (`tpchgen-cli parquet --tables lineitem`),
so that the two generators' files compare column for column. The expected
types are written out here; the test does not need tpchgen-cli."""

import decimal

import pyarrow as pa
import pyarrow.parquet as pq

ROWS = 30_000

# tpchgen-cli 4.0.0's lineitem, all columns non-null. Its strings are
# Utf8View in the embedded Arrow schema (pyarrow reads `string_view`);
# strata's are Utf8: the Parquet columns are the same (BYTE_ARRAY, String).
TPCHGEN_TYPES = [
    ("l_orderkey", pa.int64()),
    ("l_partkey", pa.int64()),
    ("l_suppkey", pa.int64()),
    ("l_linenumber", pa.int32()),
    ("l_quantity", pa.decimal128(15, 2)),
    ("l_extendedprice", pa.decimal128(15, 2)),
    ("l_discount", pa.decimal128(15, 2)),
    ("l_tax", pa.decimal128(15, 2)),
    ("l_returnflag", pa.string_view()),
    ("l_linestatus", pa.string_view()),
    ("l_shipdate", pa.date32()),
    ("l_commitdate", pa.date32()),
    ("l_receiptdate", pa.date32()),
    ("l_shipinstruct", pa.string_view()),
    ("l_shipmode", pa.string_view()),
    ("l_comment", pa.string_view()),
]

# The Parquet columns of tpchgen-cli's file: physical and logical types.
TPCHGEN_PARQUET = [
    ("INT64", "None"),
    ("INT64", "None"),
    ("INT64", "None"),
    ("INT32", "None"),
    *[("INT64", "Decimal(precision=15, scale=2)")] * 4,
    ("BYTE_ARRAY", "String"),
    ("BYTE_ARRAY", "String"),
    *[("INT32", "Date")] * 3,
    *[("BYTE_ARRAY", "String")] * 3,
]


def strata_type(t):
    return pa.string() if t == pa.string_view() else t


def test_lineitem_has_tpchgen_clis_columns(generate):
    for codec in ["snappy", "zstd"]:
        out, summary = generate(
            "--preset", "lineitem", "--target-records", str(ROWS), "--num-writers", "1",
            "--compression", codec, "--overwrite",
        )
        path = out / "lineitem_0.parquet"
        schema = pq.read_schema(path)
        assert [(f.name, f.type) for f in schema] == [(n, strata_type(t)) for n, t in TPCHGEN_TYPES]
        assert not any(f.nullable for f in schema)

        meta = pq.ParquetFile(path).metadata
        assert meta.created_by.startswith("strata version "), "the direct encoder wrote it"
        columns = [meta.schema.column(i) for i in range(meta.num_columns)]
        assert [(c.physical_type, str(c.logical_type)) for c in columns] == TPCHGEN_PARQUET
        assert {meta.row_group(0).column(i).compression for i in range(meta.num_columns)} == {codec.upper()}

        table = pq.read_table(path)
        assert table.num_rows == summary["records"] == ROWS
        rows = table.to_pydict()
        # TPC-H's domains.
        assert set(rows["l_quantity"]) <= {decimal.Decimal(q) for q in range(1, 51)}
        assert all(decimal.Decimal("901.00") <= p <= decimal.Decimal("104949.50") for p in rows["l_extendedprice"])
        assert {d.as_tuple().exponent for d in rows["l_extendedprice"]} == {-2}
        assert set(rows["l_discount"]) == {decimal.Decimal(d) / 100 for d in range(11)}
        assert set(rows["l_tax"]) == {decimal.Decimal(d) / 100 for d in range(9)}
        assert set(rows["l_returnflag"]) == {"A", "N", "R"}
        assert set(rows["l_linestatus"]) == {"F", "O"}
        assert set(rows["l_shipmode"]) == {"REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"}
        assert rows["l_orderkey"][:3] == [1, 2, 3]
