"""Laid-out output read by DuckDB and pyarrow: `lineitem` partitioned by
month(l_shipdate) and l_returnflag, sorted by (l_shipdate, l_orderkey),
in files of a target size. The rows are the plain run's; every file holds
its own partition's values only, in sort order, over a range of the first
key no other file of its partition touches; `sorting_columns` is in every
row group; sizes are within 10% of the target but for each partition's
last file."""

import subprocess
from collections import defaultdict
from pathlib import Path

import duckdb
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from conftest import check_same_rows

ROWS = "600000"
TARGET = 64 * 1024


@pytest.fixture(scope="module")
def runs(strata_bin, tmp_path_factory):
    root = tmp_path_factory.mktemp("layout")
    base = [strata_bin, "generate", "--preset", "lineitem", "--target-records", ROWS, "--compression", "zstd", "-q"]
    subprocess.run([*base, "--output-dir", str(root / "plain")], check=True)
    subprocess.run(
        [*base, "--output-dir", str(root / "laid"), "--partition-by", "month(l_shipdate),l_returnflag",
         "--sort-by", "l_shipdate,l_orderkey", "--target-file-size", str(TARGET)],
        check=True,
    )
    return root


def columns(con, root):
    return [r[0] for r in con.sql(f"DESCRIBE SELECT * FROM read_parquet('{root / 'plain'}/*.parquet')").fetchall()]


def test_readers_see_the_plain_runs_rows(runs):
    con = duckdb.connect()
    names = columns(con, runs)
    cols = ", ".join(names)
    laid = f"SELECT {cols} FROM read_parquet('{runs / 'laid'}/**/*.parquet', hive_partitioning = true)"
    plain = f"SELECT {cols} FROM read_parquet('{runs / 'plain'}/*.parquet')"
    check_same_rows(con, laid, plain, "partitioned and sorted against plain")
    table = ds.dataset(runs / "laid", format="parquet", partitioning="hive").to_table()
    assert table.num_rows == int(ROWS)
    assert set(table.column_names) == set(names) | {"l_shipdate_month", "l_returnflag"}
    # The flag lives in the directory names only.
    first = next((runs / "laid").rglob("*.parquet"))
    assert "l_returnflag" not in pq.read_schema(first).names


def test_every_file_holds_its_partition_in_sort_order(runs):
    con = duckdb.connect()
    src = f"read_parquet('{runs / 'laid'}/**/*.parquet', hive_partitioning = true, filename = true, file_row_number = true)"
    wrong = con.execute(
        f"SELECT count(*) FROM {src} WHERE strftime(l_shipdate, '%Y-%m') <> l_shipdate_month"
    ).fetchone()[0]
    assert wrong == 0
    # Each file's directory names one flag; the flags read back are the plain run's.
    flags = con.execute(f"SELECT count(DISTINCT l_returnflag) FROM {src} GROUP BY filename ORDER BY 1 DESC LIMIT 1").fetchone()[0]
    assert flags == 1
    unsorted = con.execute(
        f"""SELECT count(*) FROM (
              SELECT l_shipdate, l_orderkey,
                     lag(l_shipdate) OVER w AS d0, lag(l_orderkey) OVER w AS k0
              FROM {src} WINDOW w AS (PARTITION BY filename ORDER BY file_row_number))
            WHERE d0 > l_shipdate OR (d0 = l_shipdate AND k0 > l_orderkey)"""
    ).fetchone()[0]
    assert unsorted == 0


def test_files_of_a_partition_do_not_overlap_and_have_the_target_size(runs):
    by_dir = defaultdict(list)
    for f in (runs / "laid").rglob("*.parquet"):
        by_dir[f.parent].append(f)
    assert len(by_dir) > 100
    sized = 0
    for d, files in by_dir.items():
        files.sort(key=lambda p: int(p.stem.rsplit("_", 1)[1]))
        last_max = None
        for k, f in enumerate(files):
            pf = pq.ParquetFile(f)
            md = pf.metadata
            for g in range(md.num_row_groups):
                sc = md.row_group(g).sorting_columns
                assert [(c.column_index, c.descending) for c in sc] == [(9, False), (0, False)], f
            days = pf.read(columns=["l_shipdate"]).column(0).to_pylist()
            lo, hi = min(days), max(days)
            if last_max is not None:
                assert last_max < lo, f"{f} starts on {lo}, not after {last_max}"
            last_max = hi
            if k + 1 < len(files):
                size = f.stat().st_size
                assert abs(size - TARGET) <= 0.10 * TARGET, f"{f}: {size} bytes"
                sized += 1
    assert sized > 50


def test_parts_and_kept_partition_columns(strata_bin, tmp_path):
    out = tmp_path / "parts"
    for part in ["1", "2", "3"]:
        subprocess.run(
            [strata_bin, "generate", "--preset", "lineitem", "--target-records", "60000", "-q", "--parts", "3",
             "--part", part, "--output-dir", str(out), "--partition-by", "l_returnflag,bucket(4, l_orderkey)",
             "--partition-columns", "keep"],
            check=True,
        )
    subprocess.run(
        [strata_bin, "generate", "--preset", "lineitem", "--target-records", "60000", "-q",
         "--output-dir", str(tmp_path / "plain")],
        check=True,
    )
    names = {p.name for p in out.rglob("*.parquet")}
    assert {"lineitem_part1of3_0.parquet", "lineitem_part3of3_0.parquet"} <= names
    con = duckdb.connect()
    cols = ", ".join(r[0] for r in duckdb.connect().sql(f"DESCRIBE SELECT * FROM read_parquet('{tmp_path / 'plain'}/*.parquet')").fetchall())
    check_same_rows(
        con,
        f"SELECT {cols} FROM read_parquet('{out}/**/*.parquet', hive_partitioning = false)",
        f"SELECT {cols} FROM read_parquet('{tmp_path / 'plain'}/*.parquet')",
        "parts against the whole",
    )
    # Kept in the files, the flag agrees with its directory.
    for f in out.rglob("*.parquet"):
        flag = f.parent.parent.name.split("=", 1)[1]
        assert set(pq.read_table(f, columns=["l_returnflag"]).column(0).to_pylist()) == {flag}


def test_null_partitions_read_back_as_null(strata_bin, tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(
        """
name = "n"
layout = { partition_by = ["kind"] }
[[fields]]
name = "id"
type = "int64"
sequence = { start = 1 }
[[fields]]
name = "kind"
type = "utf8"
null_rate = 0.2
weighted = { values = ["a/b", "c=d", "plain"] }
"""
    )
    out = tmp_path / "out"
    subprocess.run([strata_bin, "generate", "--spec", str(spec), "--target-records", "5000", "-q", "--output-dir", str(out)], check=True)
    dirs = sorted(p.name for p in out.iterdir())
    assert dirs == ["kind=__HIVE_DEFAULT_PARTITION__", "kind=a%2Fb", "kind=c%3Dd", "kind=plain"]
    con = duckdb.connect()
    got = dict(con.sql(f"SELECT kind, count(*) FROM read_parquet('{out}/**/*.parquet', hive_partitioning = true) GROUP BY kind").fetchall())
    assert set(got) == {None, "a/b", "c=d", "plain"}
    assert sum(got.values()) == 5000
    table = ds.dataset(out, format="parquet", partitioning="hive").to_table()
    assert table.column("kind").null_count == got[None]
