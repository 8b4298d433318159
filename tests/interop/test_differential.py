"""The pyarrow and DuckDB half of the direct encoder's differential test.

`crates/parquet/tests/differential.rs` writes the rows of hundreds of
random specs twice, through strata's direct encoder and through parquet's
`ArrowWriter`, into `STRATA_DIFFERENTIAL_DIR` (`scripts/test` sets it and
runs that test first). Here pyarrow and DuckDB must read each pair as the
same rows, pyarrow must see the same statistics in every column chunk
(decimals of every storage among them), and the direct file must name
strata as its writer.
"""

import math
import os
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

DIR = os.environ.get("STRATA_DIFFERENTIAL_DIR")


def pairs():
    if not DIR or not Path(DIR).is_dir():
        return []
    return sorted(
        (p, p.with_name(p.name.replace(".direct.", ".arrow.")))
        for p in Path(DIR).glob("*.direct.parquet")
    )


def chunk_statistics(path):
    md = pq.ParquetFile(path).metadata
    out = []
    for g in range(md.num_row_groups):
        rg = md.row_group(g)
        for c in range(rg.num_columns):
            col = rg.column(c)
            s = col.statistics
            if s is None:
                out.append((g, col.path_in_schema, None))
                continue
            out.append(
                (
                    g,
                    col.path_in_schema,
                    s.has_min_max,
                    s.min_raw if s.has_min_max else None,
                    s.max_raw if s.has_min_max else None,
                    s.null_count,
                    s.has_distinct_count and s.distinct_count,
                )
            )
    return out


def plain(t):
    """`t` with timestamps, times and durations as their integer values
    (Python's datetime has no nanoseconds)."""
    if pa.types.is_timestamp(t) or pa.types.is_time64(t) or pa.types.is_duration(t):
        return pa.int64()
    if pa.types.is_time32(t):
        return pa.int32()
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(plain(t.key_type)), t.item_field.with_type(plain(t.item_type)))
    if pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(plain(t.value_type)))
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(plain(t.value_type)))
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(plain(t.field(i).type)) for i in range(t.num_fields)])
    return t


def values(table):
    """The table's rows as Python values. Dictionaries are compared by the
    values they decode to (which unused entries a dictionary holds is not
    data, and parquet's writer may leave it empty under null parents)."""
    columns = [c if not temporal(c.type) else c.cast(plain(c.type)) for c in table.columns]
    return pa.table(columns, names=table.column_names).to_pylist()


def temporal(t):
    """Whether `t` holds a timestamp, time or duration at any depth (only
    those columns are cast: a cast rebuilds map types without their
    entries' names)."""
    if pa.types.is_timestamp(t) or pa.types.is_time(t) or pa.types.is_duration(t):
        return True
    if pa.types.is_map(t):
        return temporal(t.key_type) or temporal(t.item_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return temporal(t.value_type)
    if pa.types.is_struct(t):
        return any(temporal(t.field(i).type) for i in range(t.num_fields))
    return False


def same(a, b):
    """Equality that takes NaN for NaN (statistics of float columns)."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def test_the_differential_files_exist():
    if not DIR:
        pytest.skip("STRATA_DIFFERENTIAL_DIR is not set: run through scripts/test")
    assert len(pairs()) >= 500, f"expected the Rust test's files in {DIR}"


def test_the_differential_files_hold_decimals_of_every_storage():
    """Decimals stored as INT32, INT64 and fixed-length bytes are among
    the pairs read below, so that pyarrow and DuckDB check all three."""
    if not DIR:
        pytest.skip("STRATA_DIFFERENTIAL_DIR is not set: run through scripts/test")
    seen = set()
    for direct, _ in pairs():
        schema = pq.ParquetFile(direct).metadata.schema
        for i in range(len(schema)):
            column = schema.column(i)
            if column.logical_type.type == "DECIMAL":
                seen.add(column.physical_type)
    assert seen == {"INT32", "INT64", "FIXED_LEN_BYTE_ARRAY"}, seen


def chunks_encoded(encoding):
    """How many column chunks of the direct files list `encoding`."""
    n = 0
    for direct, _ in pairs():
        md = pq.ParquetFile(direct).metadata
        for g in range(md.num_row_groups):
            for c in range(md.num_columns):
                n += encoding in md.row_group(g).column(c).encodings
    return n


def test_the_differential_files_hold_byte_stream_split_floats():
    """Float chunks written BYTE_STREAM_SPLIT by both writers are among
    the pairs read below."""
    if not DIR:
        pytest.skip("STRATA_DIFFERENTIAL_DIR is not set: run through scripts/test")
    assert chunks_encoded("BYTE_STREAM_SPLIT") > 0


def test_the_differential_files_hold_delta_length_byte_arrays():
    """Byte-string chunks written DELTA_LENGTH_BYTE_ARRAY (with the
    dictionary off, and after a dictionary's fall-back) are among the pairs
    read below."""
    if not DIR:
        pytest.skip("STRATA_DIFFERENTIAL_DIR is not set: run through scripts/test")
    assert chunks_encoded("DELTA_LENGTH_BYTE_ARRAY") > 0


@pytest.mark.parametrize("direct,arrow", pairs(), ids=lambda p: p.name)
def test_pyarrow_and_duckdb_read_both_writers_the_same(direct, arrow):
    d, a = pq.read_table(direct), pq.read_table(arrow)
    assert d.schema == a.schema
    assert values(d) == values(a)
    sd, sa = chunk_statistics(direct), chunk_statistics(arrow)
    assert len(sd) == len(sa)
    for x, y in zip(sd, sa):
        assert same(x, y), (x, y)
    assert pq.ParquetFile(direct).metadata.created_by.startswith("strata version ")
    # Every chunk has an offset index; a column index wherever parquet's
    # writer writes one, and none where the chunk keeps no statistics (the
    # Rust half checks the column index against each column's setting).
    md, ma = pq.ParquetFile(direct).metadata, pq.ParquetFile(arrow).metadata
    for g in range(md.num_row_groups):
        for c in range(md.num_columns):
            col = md.row_group(g).column(c)
            assert col.has_offset_index, (g, col.path_in_schema)
            if ma.row_group(g).column(c).has_column_index:
                assert col.has_column_index, (g, col.path_in_schema)
            if not col.is_stats_set:
                assert not col.has_column_index, (g, col.path_in_schema)

    con = duckdb.connect()
    rd = con.sql(f"SELECT * FROM read_parquet('{direct}')").to_arrow_table()
    ra = con.sql(f"SELECT * FROM read_parquet('{arrow}')").to_arrow_table()
    assert rd.equals(ra)
    assert rd.num_rows == d.num_rows
