"""`strata scan` on Parquet files pyarrow writes with each of its codecs,
gzip and brotli included: the rows must be pyarrow's own."""

import subprocess

import pyarrow as pa
import pyarrow.parquet as pq
import pytest


@pytest.mark.parametrize("codec", ["gzip", "brotli", "zstd", "lz4", "snappy", "none"])
def test_scan_reads_every_pyarrow_codec(strata_bin, tmp_path, codec):
    rows = 20_000
    table = pa.table(
        {
            "id": pa.array(range(rows), pa.int64()),
            "name": pa.array([None if i % 7 == 0 else f"name-{i % 113}" for i in range(rows)]),
            "score": pa.array([i / 8 for i in range(rows)], pa.float64()),
        }
    )
    src = tmp_path / f"{codec}.parquet"
    pq.write_table(table, src, compression=codec, row_group_size=6_000)
    if codec in ("gzip", "brotli", "zstd", "snappy"):
        assert pq.ParquetFile(src).metadata.row_group(0).column(0).compression == codec.upper()
    dst = tmp_path / "out.parquet"
    r = subprocess.run(
        [strata_bin, "scan", str(src), "--columns", "name,id,score", "-o", str(dst)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert pq.read_table(dst).to_pylist() == table.select(["name", "id", "score"]).to_pylist()
