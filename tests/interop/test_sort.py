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


def test_external_sort_matches_duckdb_order_by(generate, strata_bin, tmp_path):
    """Inputs many times `--memory-limit`, sorted in spilled runs (one
    file, and a directory of files), give DuckDB's ORDER BY on the same
    keys (descending, nulls first and last; `event_id` makes the order
    total), with the input's schema, read back by pyarrow."""
    out, _ = generate("--preset", "events", "--target-records", "60000", "--num-writers", "3")
    table = pq.ParquetDataset(out).read()
    keys = "kind:desc,amount:nulls_last,user_id:desc:nulls_first,event_id"
    order = "kind DESC, amount ASC NULLS LAST, user_id DESC NULLS FIRST, event_id"
    con = duckdb.connect()
    want = [r[0] for r in con.execute(f"SELECT event_id FROM read_parquet('{out}/*.parquet') ORDER BY {order}").fetchall()]
    assert len(want) == 60000
    spill = tmp_path / "spill"
    spill.mkdir()
    for dst, extra in [
        (tmp_path / "sorted.parquet", []),
        (tmp_path / "sorted", ["--target-file-mb", "1", "--threads", "2"]),
    ]:
        run = subprocess.run(
            [strata_bin, "sort", str(out), "--by", keys, "--memory-limit", "1MiB", "--spill-dir", str(spill), "-o", str(dst), *extra],
            check=True,
            capture_output=True,
            text=True,
        )
        assert "external: read and sort" in run.stdout, run.stdout
        got = pq.ParquetDataset(dst).read() if dst.is_dir() else pq.read_table(dst)
        if dst.is_dir():
            assert len(list(dst.iterdir())) > 1
        assert got.schema.remove_metadata() == table.schema.remove_metadata()
        assert got.column("event_id").to_pylist() == want, dst
        assert sorted(got.to_pylist(), key=lambda r: r["event_id"]) == sorted(table.to_pylist(), key=lambda r: r["event_id"])
    assert list(spill.iterdir()) == []
