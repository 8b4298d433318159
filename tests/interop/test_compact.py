"""Datasets compacted by `strata compact run` as pyarrow and DuckDB read them."""

import json
import subprocess

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq


def test_compacted_files_hold_the_rows_in_key_order(strata_bin, tmp_path):
    ds = tmp_path / "ds"
    ds.mkdir()
    # Five sorted files whose key ranges overlap their neighbours': an
    # integer key (written delta-encoded by the merge), a nullable second
    # key column and a list of strings.
    rows = []
    for f in range(5):
        keys = [(f * 700 + (i * 7919) % 2000, None if i % 6 == 0 else i % 3) for i in range(3000)]
        part = [
            {"k": k, "k2": k2, "v": f"f{f}-{i}", "tags": [f"t{i % 4}"] * (i % 3)}
            for i, (k, k2) in enumerate(keys)
        ]
        rows.extend(part)
        schema = pa.schema(
            [
                pa.field("k", pa.int64(), nullable=False),
                pa.field("k2", pa.int32()),
                pa.field("v", pa.string()),
                pa.field("tags", pa.list_(pa.string())),
            ]
        )
        table = pa.Table.from_pylist(part, schema=schema)
        # Sorted by (k, k2) with nulls first, as the row encoding orders them.
        order = sorted(range(len(part)), key=lambda i: (part[i]["k"], part[i]["k2"] is not None, part[i]["k2"] or 0))
        pq.write_table(table.take(order), ds / f"in-{f}.parquet", row_group_size=1000)

    subprocess.run([strata_bin, "compact", "init", str(ds), "--key", "k,k2", "--verify"], check=True)
    out = subprocess.run(
        [strata_bin, "compact", "run", str(ds), "--budget-mb", "64", "--target-file-mb", "1"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert "merged 5 files" in out, out

    outputs = sorted(ds.glob("part-*.parquet"))
    assert outputs and not list(ds.glob("in-*.parquet"))
    got = pa.concat_tables([pq.read_table(p) for p in outputs]).to_pylist()

    def order(r):
        return (r["k"], r["k2"] is not None, r["k2"] or 0)

    # The multiset of rows is kept, and the rows are in key order.
    def canon(rs):
        return sorted((r["k"], r["k2"] is not None, r["k2"] or 0, r["v"], tuple(r["tags"] or ())) for r in rs)

    assert canon(got) == canon(rows)
    assert all(order(a) <= order(b) for a, b in zip(got, got[1:]))
    md = pq.ParquetFile(outputs[0]).metadata
    assert "DELTA_BINARY_PACKED" in md.row_group(0).column(0).encodings

    con = duckdb.connect()
    files = ", ".join(f"'{p}'" for p in outputs)
    count, total = con.execute(f"SELECT count(*), sum(k) FROM read_parquet([{files}])").fetchone()
    assert count == len(rows)
    assert total == sum(r["k"] for r in rows)


def test_a_stopped_compaction_leaves_a_glob_duckdb_counts_whole(strata_bin, tmp_path):
    """A run interrupted at any moment leaves `DIR/*.parquet` with the old
    files or the new ones: DuckDB's glob counts every row once. A run killed
    with SIGKILL does too, except inside the switch (a few renames, the
    manifest's rename and sync, a few removals), where the glob may see both
    sets; the files the manifest lists are exact at every moment, and the
    next run leaves the glob exact again."""
    import random
    import shutil
    import signal
    import time

    src = tmp_path / "src"
    src.mkdir()
    total = 0
    for f in range(4):
        n = 100_000
        keys = sorted((i * 7919 + f * 104_729) % 1_000_000 for i in range(n))
        # Values that do not compress, so each merge thread rolls several
        # outputs.
        rng = random.Random(f)
        values = [f"{rng.getrandbits(64):016x}" for _ in range(n)]
        table = pa.table({"k": pa.array(keys, pa.int64()), "v": pa.array(values)})
        pq.write_table(table, src / f"in-{f}.parquet", row_group_size=10_000)
        total += n
    subprocess.run([strata_bin, "compact", "init", str(src), "--key", "k"], check=True, capture_output=True)
    run = [strata_bin, "compact", "run", "DIR", "--budget-mb", "64", "--target-file-mb", "1"]

    def glob_count(ds):
        return duckdb.connect().execute(f"SELECT count(*) FROM '{ds}/*.parquet'").fetchone()[0]

    def manifest_count(ds):
        listed = json.loads((ds / "_strata_manifest.json").read_text())["files"]
        files = ", ".join(f"'{ds / f['name']}'" for f in listed)
        return duckdb.connect().execute(f"SELECT count(*) FROM read_parquet([{files}])").fetchone()[0]

    # Stops spread over an uninterrupted run's length.
    ref = tmp_path / "ref"
    shutil.copytree(src, ref)
    started = time.monotonic()
    subprocess.run([str(ref) if a == "DIR" else a for a in run], check=True, capture_output=True)
    took = time.monotonic() - started
    assert glob_count(ref) == total
    for i, fraction in enumerate([0.2, 0.35, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]):
        delay = took * fraction
        ds = tmp_path / f"ds{i}"
        shutil.copytree(src, ds)
        p = subprocess.Popen([str(ds) if a == "DIR" else a for a in run], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        interrupted = i % 2 == 1
        p.send_signal(signal.SIGINT if interrupted else signal.SIGKILL)
        p.wait()
        names = sorted(x.name for x in ds.iterdir())
        assert manifest_count(ds) == total, (delay, names)
        if glob_count(ds) != total:
            # Only a kill inside the switch: new outputs and replaced inputs
            # both visible.
            assert not interrupted, (delay, names)
            assert any(n.startswith("part-") for n in names), (delay, names)
            assert any(n.startswith("in-") for n in names), (delay, names)
        subprocess.run([str(ds) if a == "DIR" else a for a in run], check=True, capture_output=True)
        assert glob_count(ds) == total
        assert not [x.name for x in ds.iterdir() if x.name.startswith(".")]
