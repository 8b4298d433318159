"""Page checksums and the scan filters on decimals and timestamps, against
pyarrow (Arrow C++) and DuckDB.

strata's pages carry a CRC-32 by default: pyarrow, told to verify them,
reads the files, and finds a flipped byte; DuckDB reads them. Filters on
decimal, date and timestamp columns keep the rows DuckDB's WHERE keeps."""

import subprocess

import duckdb
import pyarrow.parquet as pq
import pytest

from conftest import check_same_rows

SPEC = """
name = "times"

[[fields]]
name = "id"
type = "int64"
sequence = { start = 1 }

[[fields]]
name = "price"
type = "decimal(15, 2)"
null_rate = 0.1
uniform = { min = -50.00, max = 50.00 }

[[fields]]
name = "day"
type = "date32"
uniform = { min = 2024-01-01, max = 2024-03-01 }

[[fields]]
name = "at_ms"
type = "timestamp(ms, +05:30)"
uniform = { min = 2024-01-01T00:00:00Z, max = 2024-01-03T00:00:00Z }

[[fields]]
name = "at_s"
type = "timestamp(s)"
null_rate = 0.2
uniform = { min = 2024-01-01T00:00:00Z, max = 2024-01-03T00:00:00Z }
"""


def data_page(path):
    """The offset of a byte in the middle of the first column chunk of
    l_extendedprice (PLAIN decimals: a flip there changes a value)."""
    col = pq.ParquetFile(path).metadata.row_group(0).column(5)
    return col.data_page_offset + col.total_compressed_size // 2


@pytest.mark.parametrize("compression", ["none", "zstd", "snappy"])
def test_pyarrow_and_duckdb_read_files_with_checksums(generate, tmp_path, compression):
    out, _ = generate("--preset", "lineitem", "--target-records", "20000", "--num-writers", "1",
                      "--row-group-rows", "7000", "--compression", compression)
    (path,) = sorted(out.glob("*.parquet"))
    checked = pq.read_table(path, page_checksum_verification=True)
    assert checked.equals(pq.read_table(path))
    assert checked.num_rows == 20000
    con = duckdb.connect()
    assert con.execute(f"SELECT count(*) FROM '{path}'").fetchall() == [(20000,)]
    con.register("checked", checked)
    check_same_rows(con, f"SELECT * FROM '{path}'", "SELECT * FROM checked", compression)

    # A flipped byte inside a page: pyarrow's check finds it.
    bad = tmp_path / "bad.parquet"
    data = bytearray(path.read_bytes())
    data[data_page(path)] ^= 0x10
    bad.write_bytes(bytes(data))
    with pytest.raises(OSError, match="(?i)crc|checksum"):
        pq.read_table(bad, page_checksum_verification=True)


def test_no_page_checksums_writes_none(strata_bin, tmp_path):
    out = tmp_path / "out"
    subprocess.run([strata_bin, "generate", "-q", "--preset", "lineitem", "--target-records", "5000",
                    "--num-writers", "1", "--output-dir", str(out), "--no-page-checksums"], check=True)
    (path,) = sorted(out.glob("*.parquet"))
    data = bytearray(path.read_bytes())
    data[data_page(path)] ^= 0x10
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(bytes(data))
    # Without a checksum nothing tells the damage from data.
    damaged = pq.read_table(bad, page_checksum_verification=True)
    assert damaged.num_rows == 5000
    assert not damaged.equals(pq.read_table(path))


FILTERS = [
    "price < 2.505",
    "price <= -0.5",
    "price = 10.5",
    "price != 10.50",
    "price >= 1e1",
    "price > -100",
    "day >= '2024-02-10'",
    "day < '2024-01-05'",
    "at_ms >= '2024-01-02 12:00:00+00:00'",
    "at_ms < '2024-01-01 18:30:00.5'",
    "at_s > '2024-01-02T06:00:00.25Z'",
    "at_s <= '2024-01-01 20:00:00'",
    "at_s = '2024-01-01 20:00:00'",
]

# DuckDB's spelling of each filter: the same literal, typed.
DUCKDB = {
    "at_ms < '2024-01-01 18:30:00.5'": "at_ms < TIMESTAMPTZ '2024-01-01 18:30:00.5+05:30'",
}


def duckdb_where(f: str) -> str:
    if f in DUCKDB:
        return DUCKDB[f]
    column = f.split()[0]
    if column.startswith("at_") and "'" in f:
        # A literal with its offset, or (at_s has no zone) UTC. at_s (Arrow
        # seconds) is an INT64 without a logical type in Parquet.
        lhs, lit = f.split("'")[0], f.split("'")[1]
        if column == "at_s":
            lhs = lhs.replace("at_s", "to_timestamp(at_s)")
        return f"{lhs} TIMESTAMPTZ '{lit}'"
    if column == "day":
        lhs, lit = f.split("'")[0], f.split("'")[1]
        return f"{lhs} DATE '{lit}'"
    return f


def test_scan_filters_on_decimals_and_timestamps_match_duckdb(strata_bin, tmp_path):
    spec = tmp_path / "times.toml"
    spec.write_text(SPEC)
    out = tmp_path / "out"
    subprocess.run([strata_bin, "generate", "-q", "--spec", str(spec), "--target-records", "30000",
                    "--num-writers", "1", "--row-group-rows", "3000", "--output-dir", str(out)], check=True)
    (path,) = sorted(out.glob("*.parquet"))
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    for f in FILTERS:
        dst = tmp_path / "f.parquet"
        r = subprocess.run([strata_bin, "scan", str(path), "--filter", f, "-o", str(dst), "--overwrite"],
                           capture_output=True, text=True)
        assert r.returncode == 0, (f, r.stderr)
        check_same_rows(con, f"SELECT * FROM '{dst}'", f"SELECT * FROM '{path}' WHERE {duckdb_where(f)}", f)
