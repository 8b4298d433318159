"""Files written by `strata sort` as pyarrow and DuckDB read them."""

import subprocess

import duckdb
import pyarrow.compute as pc
import pyarrow.ipc as ipc
import pyarrow.parquet as pq


def test_sorted_outputs_match_pyarrows_stable_sort(generate, strata_bin, tmp_path):
    out, _ = generate("--target-records", "20000", "--num-writers", "1")
    src = out / "contacts_0.parquet"
    table = pq.read_table(src)
    # pyarrow's sort is stable too, so the whole row order must agree.
    want = table.take(pc.sort_indices(table, [("name", "descending", "at_end")])).to_pylist()
    for name in ["sorted.arrow", "sorted.parquet"]:
        dst = tmp_path / name
        subprocess.run([strata_bin, "sort", "-q", str(src), "--by", "name:desc:nulls_last", "-o", str(dst)], check=True)
        got = ipc.open_file(dst).read_all() if name.endswith(".arrow") else pq.read_table(dst)
        assert got.schema == table.schema, name
        assert got.to_pylist() == want, name

    con = duckdb.connect()
    names = [r[0] for r in con.execute(f"SELECT name FROM read_parquet('{tmp_path / 'sorted.parquet'}')").fetchall()]
    present = [n for n in names if n is not None]
    assert present == sorted(present, reverse=True)
    assert names[len(present):] == [None] * (len(names) - len(present))
